"""`CheckpointDirectory`: the checkpoints of one directory, written by `orbax.checkpoint`.

A checkpoint is a flat dict `name -> array` saved at a training step, one
directory per step (see `kte.checkpoint.paths`). Orbax writes every save into
a temporary directory and renames it when done, so a process killed mid-save
leaves a temporary directory that is never taken for a checkpoint.

```python
with kte.checkpoint.CheckpointDirectory("runs/mnist", max_to_keep=3) as directory:
    directory.save(100, {"w": np.ones((2, 2))})
    directory.restore()["w"]
```
"""

import os

import jax
import keras
import numpy as np
import orbax.checkpoint as ocp

from keras_tpu_estimator.checkpoint.common import check_step
from keras_tpu_estimator.checkpoint.common import directory_string
from keras_tpu_estimator.checkpoint.common import few
from keras_tpu_estimator.checkpoint.common import join
from keras_tpu_estimator.checkpoint.common import logger
from keras_tpu_estimator.checkpoint.common import short_repr
from keras_tpu_estimator.checkpoint.readers import OrbaxReader
from keras_tpu_estimator.checkpoint.readers import reading


class CheckpointDirectory:
    """Checkpoints of a `model_dir`, written with `orbax.checkpoint.CheckpointManager`.

    Each checkpoint is a flat dict of named arrays saved at a step. Saving is
    synchronous and atomic: orbax writes a temporary directory and renames it
    when the save is complete, so a process killed mid-save leaves nothing
    that `latest_step()` returns or `restore()` loads. Leftover temporary
    directories are left alone (another process may be writing them) and
    ignored.

    With several processes (`jax.distributed`), create the directory and call
    `save` and `restore` on every process: they are collective.

    Args:
        directory: the directory holding the checkpoints (a `model_dir`); it
            is created if missing. Local paths and `gs://` paths work.
        max_to_keep: how many of the newest checkpoints to keep; older ones
            are deleted after each save. `None` or 0 keeps all.

    Raises:
        ValueError: for an empty `directory` or a negative or non-integer
            `max_to_keep`.

    Example:

    ```python
    directory = CheckpointDirectory("/tmp/run", max_to_keep=2)
    directory.save(100, {"w": np.ones((2, 2))})
    directory.latest_step()           # 100
    directory.restore()["w"]          # numpy array
    directory.close()
    ```
    """

    def __init__(self, directory, max_to_keep=5):
        self._directory = directory_string(directory, "directory")
        if "://" not in self._directory and os.path.isfile(self._directory):
            raise ValueError(
                "Argument `directory` must be a directory (existing or not), but "
                f"it is an existing file. Received: directory={self._directory!r}"
            )
        if max_to_keep is not None and (
            isinstance(max_to_keep, bool)
            or not isinstance(max_to_keep, (int, np.integer))
            or max_to_keep < 0
        ):
            raise ValueError(
                "Argument `max_to_keep` must be None or an int >= 0 (0 or None "
                f"keeps all). Received: max_to_keep={max_to_keep!r}"
            )
        self.max_to_keep = int(max_to_keep) if max_to_keep else None
        options = ocp.CheckpointManagerOptions(
            max_to_keep=self.max_to_keep,
            create=True,
            enable_async_checkpointing=False,
        )
        self._manager = ocp.CheckpointManager(self._directory, options=options)

    @property
    def directory(self):
        """The checkpoint directory, a string."""
        return self._directory

    def save(self, step, values):
        """Saves `values` as the checkpoint of `step`, and waits until it is written.

        A step is written once: saving a step that already has a checkpoint
        does nothing and returns False (the checkpoint on disk is kept). A
        step older than the latest checkpoint cannot be saved, since the
        newest checkpoints are the ones kept and resumed from.

        Args:
            step: the training step, an int >= 0.
            values: a dict `name -> array` (JAX arrays, numpy arrays, Python
                scalars or `keras.Variable`s, whose current value is saved).
                Sharded JAX arrays are written by the processes that hold them.

        Returns:
            True if the checkpoint was written, False if `step` already had one.

        Raises:
            ValueError: for a negative `step`, `values` that is not a dict of
                string names, or a `step` older than the latest checkpoint.
        """
        step = check_step(step)
        if not isinstance(values, dict) or not all(isinstance(k, str) and k for k in values):
            raise ValueError(
                "Argument `values` must be a dict of non-empty string names to "
                f"arrays. Received: values={short_repr(values)}"
            )
        steps = self.all_steps()
        if step in steps:
            logger.info("Checkpoint of step %d already exists in %s; not saved again.",
                        step, self._directory)
            return False
        if steps and step < steps[-1]:
            raise ValueError(
                f"Cannot save step {step} in {self._directory}: it already holds "
                f"a newer checkpoint (step {steps[-1]}). Restore or delete the "
                "newer checkpoints, or save into another directory."
            )
        logger.info("Saving checkpoints for %d into %s.", step, join(self._directory, str(step)))
        tree = {name: _savable(value) for name, value in values.items()}
        self._manager.save(step, args=ocp.args.PyTreeSave(tree), force=True)
        self._manager.wait_until_finished()
        return True

    def all_steps(self):
        """The steps of the complete checkpoints, ascending (read from disk)."""
        self._manager.reload()
        return sorted(int(s) for s in self._manager.all_steps())

    def latest_step(self):
        """The step of the newest complete checkpoint, or None when there is none."""
        steps = self.all_steps()
        return steps[-1] if steps else None

    def path(self, step):
        """The directory of the checkpoint of `step`, a string.

        Raises:
            ValueError: if there is no checkpoint of `step`.
        """
        step = check_step(step)
        steps = self.all_steps()
        if step not in steps:
            raise ValueError(
                f"No checkpoint of step {step} in {self._directory}. "
                f"Checkpoints: {steps}"
            )
        return join(self._directory, str(step))

    def latest_checkpoint(self):
        """The directory of the newest complete checkpoint, or None."""
        step = self.latest_step()
        return None if step is None else join(self._directory, str(step))

    def restore(self, step=None, targets=None):
        """Reads the checkpoint of `step`.

        Args:
            step: the step to read; None reads the latest.
            targets: None, or a dict `name -> target` naming the values to
                read and how to lay them out. A target is a `keras.Variable`
                or a JAX array (the value comes back with its shape, dtype
                and sharding: placed like the live variable), a
                `jax.ShapeDtypeStruct`, or a numpy array (a numpy array of
                its dtype comes back).

        Returns:
            A dict `name -> array`: every saved value as a numpy array
            without `targets`; exactly the names of `targets` with them.

        Raises:
            ValueError: if there is no checkpoint (naming the directory), no
                checkpoint of `step`, a target name is not in the checkpoint,
                or a target's shape differs from the saved one.
            DamagedCheckpointError: (a ValueError) if the checkpoint's files
                cannot be read.

        Example:

        ```python
        values = directory.restore(targets={"w": model_variable})
        model_variable.assign(values["w"])
        ```
        """
        if step is None:
            step = self.latest_step()
            if step is None:
                raise ValueError(
                    f"No checkpoint to restore in {self._directory}: the "
                    "directory holds no complete checkpoint."
                )
        path = self.path(step)  # Checks that `step` exists.
        saved = OrbaxReader(path).names_and_dtypes()
        if targets is None:
            restore_args = {
                name: ocp.RestoreArgs(restore_type=np.ndarray) for name in saved
            }
            args = ocp.args.PyTreeRestore(restore_args=restore_args)
        else:
            if not isinstance(targets, dict):
                raise ValueError(
                    "Argument `targets` must be None or a dict name -> "
                    f"variable or array. Received: targets={short_repr(targets)}"
                )
            missing = sorted(set(targets) - set(saved))
            if missing:
                raise ValueError(
                    f"The checkpoint {path} has no values named {few(missing)}. "
                    f"It holds: {few(sorted(saved))}"
                )
            restore_args = {
                name: _restore_args(name, target, saved[name][0], path)
                for name, target in targets.items()
            }
            args = ocp.args.PyTreeRestore(
                item={name: 0 for name in targets},
                restore_args=restore_args,
                partial_restore=True,
            )
        with reading(path):
            restored = self._manager.restore(step, args=args)
        return dict(restored)

    def close(self):
        """Waits for pending work and releases the orbax manager."""
        self._manager.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __repr__(self):
        return f"CheckpointDirectory({self._directory!r}, max_to_keep={self.max_to_keep})"


def _savable(value):
    if isinstance(value, keras.Variable):
        value = value.value
    if isinstance(value, jax.Array):
        return value
    return np.asarray(value)


def _restore_args(name, target, saved_shape, path):
    """Orbax's restore arguments giving `target`'s shape, dtype and sharding."""
    if isinstance(target, keras.Variable):
        target = target.value
    if isinstance(target, (jax.Array, jax.ShapeDtypeStruct)):
        shape, dtype = tuple(target.shape), np.dtype(target.dtype)
        sharding = getattr(target, "sharding", None)
    elif isinstance(target, np.ndarray):
        shape, dtype, sharding = target.shape, target.dtype, None
    else:
        raise ValueError(
            f"targets[{name!r}] must be a keras.Variable, a JAX array, a "
            f"jax.ShapeDtypeStruct or a numpy array. Received: {short_repr(target)}"
        )
    if tuple(shape) != tuple(saved_shape):
        raise ValueError(
            f"targets[{name!r}] has shape {tuple(shape)}, but the checkpoint "
            f"{path} holds shape {tuple(saved_shape)}."
        )
    if sharding is None:
        return ocp.RestoreArgs(restore_type=np.ndarray, dtype=dtype)
    return ocp.ArrayRestoreArgs(sharding=sharding, global_shape=tuple(shape), dtype=dtype)
