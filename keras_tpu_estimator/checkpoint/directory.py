"""`CheckpointDirectory`: the checkpoints of one directory, in TensorFlow's format.

A checkpoint is a flat dict `name -> array` saved at a training step, as
the files TensorFlow's `Saver` wrote (`model.ckpt-<step>.index`, `.data-*`,
`.meta`, listed in the `checkpoint` state file; see `kte.checkpoint.paths`).
A save is written under a temporary prefix, its files renamed when complete
(the `.index` last), and the state file written last: a process killed
mid-save leaves the previous checkpoint the latest.

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

from keras_tpu_estimator.checkpoint import tf_files
from keras_tpu_estimator.checkpoint.common import check_step
from keras_tpu_estimator.checkpoint.common import directory_string
from keras_tpu_estimator.checkpoint.common import few
from keras_tpu_estimator.checkpoint.common import join
from keras_tpu_estimator.checkpoint.common import logger
from keras_tpu_estimator.checkpoint.common import short_repr
from keras_tpu_estimator.checkpoint.paths import finished_steps
from keras_tpu_estimator.checkpoint.paths import listed_checkpoints
from keras_tpu_estimator.checkpoint.paths import read_newest
from keras_tpu_estimator.checkpoint.paths import tf_style_path
from keras_tpu_estimator.checkpoint.readers import TensorFlowReader

# In the names of the files of a save in progress (or killed): never a checkpoint.
UNFINISHED = "_temp"


class CheckpointDirectory:
    """Checkpoints of a `model_dir`, written as TensorFlow's `Saver` wrote them.

    Each checkpoint is a flat dict of named arrays saved at a step, in the
    files `model.ckpt-<step>.*` (written by `tf.raw_ops.SaveV2`) listed in the
    state file `checkpoint`. Saving is synchronous and atomic: the files are
    written under a temporary name and renamed when complete, the `.index`
    last, and the state file names the checkpoint last; a process killed
    mid-save leaves nothing that `latest_step()` returns or `restore()` loads.
    Leftover temporary files are ignored (`TrainerLock` removes them).

    With several processes (`jax.distributed`), create the directory and call
    `save` on every process: it is collective. Each process writes the
    slices of the sharded arrays it holds, and process 0 merges them
    (`tf.raw_ops.MergeV2Checkpoints`) into one checkpoint.

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
    directory.latest_checkpoint()     # "/tmp/run/model.ckpt-100"
    directory.restore()["w"]          # numpy array
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
        if jax.process_index() == 0:
            tf_files.tf().io.gfile.makedirs(self._directory)

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
                A `global_step` is written as int64, as TensorFlow has it.

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
        prefix = tf_style_path(self._directory, step)
        logger.info("Saving checkpoints for %d into %s.", step, prefix)
        _write(prefix, values)
        if jax.process_index() == 0:
            self._commit(prefix)
        _barrier(f"kte_checkpoint_saved_{step}")
        return True

    def _commit(self, prefix):
        """Lists the complete checkpoint `prefix` in the state file, then deletes the oldest."""
        listed = [p for p in listed_checkpoints(self._directory) if p != prefix] + [prefix]
        kept = listed[-self.max_to_keep:] if self.max_to_keep else listed
        tf_files.write_state(self._directory, kept)
        for old in listed[: len(listed) - len(kept)]:
            tf_files.remove(old)

    def all_steps(self):
        """The steps of the complete checkpoints, ascending (read from disk)."""
        return finished_steps(self._directory)

    def latest_step(self):
        """The step of the newest complete checkpoint, or None when there is none."""
        steps = self.all_steps()
        return steps[-1] if steps else None

    def path(self, step):
        """The prefix of the checkpoint of `step`: `directory/model.ckpt-<step>`.

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
        return tf_style_path(self._directory, step)

    def latest_checkpoint(self):
        """The prefix of the newest complete checkpoint, or None."""
        step = self.latest_step()
        return None if step is None else tf_style_path(self._directory, step)

    def restore(self, step=None, targets=None):
        """Reads the checkpoint of `step`.

        Args:
            step: the step to read; None reads the latest (the newest left
                when another process's `keep_checkpoint_max` deletes it
                meanwhile: see `paths.read_newest`).
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
        if step is not None:
            return restore_prefix(self.path(step), targets)
        return read_newest(self._latest_to_restore, lambda prefix: restore_prefix(prefix, targets))

    def _latest_to_restore(self):
        step = self.latest_step()
        if step is None:
            raise ValueError(
                f"No checkpoint to restore in {self._directory}: the "
                "directory holds no complete checkpoint."
            )
        return tf_style_path(self._directory, step)

    def close(self):
        """Nothing to release; kept so that `with CheckpointDirectory(...)` reads well."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __repr__(self):
        return f"CheckpointDirectory({self._directory!r}, max_to_keep={self.max_to_keep})"


def restore_prefix(prefix, targets=None, reader=None):
    """Reads the checkpoint `prefix`, laid out like `targets` (see `CheckpointDirectory.restore`).

    Reads on this process only: every process reads what it needs.

    Args:
        prefix: a complete checkpoint's prefix.
        targets: as `CheckpointDirectory.restore`'s.
        reader: None, or a `TensorFlowReader` of `prefix` already open.
    """
    reader = reader or TensorFlowReader(prefix)
    saved = reader.names_and_dtypes()
    if targets is None:
        return {name: reader.read(name) for name in saved}
    if not isinstance(targets, dict):
        raise ValueError(
            "Argument `targets` must be None or a dict name -> "
            f"variable or array. Received: targets={short_repr(targets)}"
        )
    missing = sorted(set(targets) - set(saved))
    if missing:
        raise ValueError(
            f"The checkpoint {prefix} has no values named {few(missing)}. "
            f"It holds: {few(sorted(saved))}"
        )
    return {
        name: _placed(name, target, reader, saved[name][0], prefix)
        for name, target in targets.items()
    }


def _placed(name, target, reader, saved_shape, prefix):
    """The saved value `name` with `target`'s shape, dtype and sharding."""
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
            f"{prefix} holds shape {tuple(saved_shape)}."
        )
    value = reader.read(name).astype(dtype)
    if sharding is None:
        return value
    return jax.make_array_from_callback(tuple(shape), sharding, lambda index: value[index])


def _write(prefix, values):
    """Writes the complete files of the checkpoint `prefix` (every process calls it).

    Each process saves its pieces under `prefix_temp/part-<i>-of-<n>`;
    process 0 merges them into `prefix_temp/merged`, then renames the files
    to `prefix.*`, the `.index` last.
    """
    gfile = tf_files.tf().io.gfile
    temporary = prefix + UNFINISHED
    count, index = jax.process_count(), jax.process_index()
    if index == 0 and gfile.exists(temporary):
        gfile.rmtree(temporary)  # A killed save of this step.
    _barrier(f"kte_checkpoint_start_{os.path.basename(prefix)}")
    pieces = []
    for name, value in values.items():
        for spec, array in tf_files.slices_of(_savable(name, value)):
            pieces.append((name, spec, array))
    part = join(temporary, f"part-{index:05d}-of-{count:05d}")
    tf_files.save_pieces(part, pieces)
    _barrier(f"kte_checkpoint_parts_{os.path.basename(prefix)}")
    if index != 0:
        return
    parts = sorted(p[: -len(".index")] for p in gfile.glob(join(temporary, "part-*.index")))
    merged = join(temporary, "merged")
    tf_files.merge(parts, merged)
    tf_files.write_meta(merged)
    tf_files.rename(merged, prefix)
    gfile.rmtree(temporary)


def _savable(name, value):
    if isinstance(value, keras.Variable):
        value = value.value
    if name == "global_step":  # TensorFlow's programs and Savers read an int64.
        return np.asarray(value, dtype=np.int64)  # (Replicated: every process has it.)
    if isinstance(value, jax.Array):
        return value
    return np.asarray(value)


def _barrier(name):
    """Waits for every process (nothing to wait for with one)."""
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(name)
