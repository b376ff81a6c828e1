"""Reading any checkpoint, whatever wrote it: the reader seam.

`checkpoint_reader(path)` returns an object with `names()` and `read(name)`
for a checkpoint of this library or a TensorFlow checkpoint (a
`tf.compat.v1.train.Saver` or `tf.train.Checkpoint` prefix), so that
`list_variables`, `load_variable` and `warm_start` work on both.

```python
kte.checkpoint.list_variables("tf1_run/model.ckpt-5000")
kte.checkpoint.load_variable("runs/mnist", "hidden/kernel")
```
"""

import contextlib
import os

import numpy as np
import orbax.checkpoint as ocp
from etils import epath

from keras_tpu_estimator.checkpoint.common import directory_string
from keras_tpu_estimator.checkpoint.common import few
from keras_tpu_estimator.checkpoint.common import join
from keras_tpu_estimator.checkpoint.paths import finished_steps
from keras_tpu_estimator.checkpoint.paths import tf_style_step

# Orbax's layout: one item, named "default", inside each step directory.
_ITEM = "default"
_TMP_MARKER = ".orbax-checkpoint-tmp"
# A TF2 object-based checkpoint names a variable `<object path>/` + this.
_TF_VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_TF_OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"


class DamagedCheckpointError(ValueError):
    """A complete checkpoint whose files cannot be read: truncated, corrupted or partly removed.

    Attributes:
        path: the checkpoint's directory (`model_dir/<step>`).
    """

    def __init__(self, path, cause):
        self.path = path
        first_line = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
        super().__init__(
            f"The checkpoint {path} is damaged: its files cannot be read "
            f"({type(cause).__name__}: {first_line[:300]}). Remove the directory "
            f"{path} to use the checkpoint before it (training resumes from it), "
            "or put back an intact copy."
        )


@contextlib.contextmanager
def reading(path):
    """Reports a failed read of the checkpoint `path` as a `DamagedCheckpointError`.

    Only while `path` exists: a checkpoint deleted while it was read (by
    another process's `max_to_keep`) is not damaged, and the original error
    is raised.
    """
    try:
        yield
    except Exception as error:
        if isinstance(error, DamagedCheckpointError) or not epath.Path(path).exists():
            raise
        raise DamagedCheckpointError(path, error) from error


class CheckpointReader:
    """Reads named arrays from one checkpoint, whatever wrote it.

    `checkpoint_reader(path)` returns one; `list_variables`, `load_variable`
    and `warm_start` only use these methods, so a new checkpoint format
    needs only a new reader.

    Example:

    ```python
    reader = checkpoint_reader("runs/mnist")
    reader.names()                 # {"hidden/kernel": (784, 256), ...}
    reader.read("hidden/kernel")   # numpy array
    ```
    """

    path = None

    def names(self):
        """Returns `{name: shape}` for every value in the checkpoint."""
        raise NotImplementedError

    def read(self, name):
        """Returns the value `name` as a numpy array.

        Raises:
            ValueError: if the checkpoint has no value `name` (listing a few
                names it has).
        """
        raise NotImplementedError

    def read_many(self, names):
        """Returns `{name: numpy array}` for `names` (one read where possible)."""
        return {name: self.read(name) for name in names}

    def _unknown(self, name):
        known = sorted(self.names())
        return ValueError(
            f"The checkpoint {self.path} has no variable named {name!r}. "
            f"It has {len(known)} variables, e.g. {few(known)}"
        )


class OrbaxReader(CheckpointReader):
    """Reads a checkpoint written by `CheckpointDirectory` (one step directory).

    Reads on this process only (no collective), so one process may inspect a
    checkpoint while others do not.

    Args:
        path: the step directory (`model_dir/<step>`).

    Example:

    ```python
    OrbaxReader("runs/mnist/100").names_and_dtypes()
    # {"hidden/kernel": ((784, 256), dtype('float32')), ...}
    ```
    """

    def __init__(self, path):
        self.path = path
        self._item = epath.Path(path) / _ITEM
        self._metadata = None

    def names_and_dtypes(self):
        """Returns `{name: (shape, numpy dtype)}` for every value, from the metadata only."""
        if self._metadata is None:
            handler = ocp.PyTreeCheckpointHandler()
            try:
                with reading(self.path):
                    tree = handler.metadata(self._item).tree
            finally:
                handler.close()
            self._metadata = {
                name: (tuple(meta.shape), np.dtype(meta.dtype)) for name, meta in tree.items()
            }
        return self._metadata

    def names(self):
        return {name: shape for name, (shape, _) in self.names_and_dtypes().items()}

    def read(self, name):
        return self.read_many([name])[name]

    def read_many(self, names):
        names = list(names)
        known = self.names()
        for name in names:
            if name not in known:
                raise self._unknown(name)
        if not names:
            return {}
        handler = ocp.PyTreeCheckpointHandler()
        try:
            with reading(self.path):
                restored = handler.restore(
                    self._item,
                    args=ocp.args.PyTreeRestore(
                        item={name: 0 for name in names},
                        restore_args={
                            name: ocp.RestoreArgs(restore_type=np.ndarray) for name in names
                        },
                        partial_restore=True,
                    ),
                )
        finally:
            handler.close()
        return {name: np.asarray(restored[name]) for name in names}


class _TensorFlowReader(CheckpointReader):
    """A TensorFlow checkpoint prefix (`tf.compat.v1.train.Saver` or `tf.train.Checkpoint`).

    TF1 names (`dense/kernel`, `global_step`) are kept; a TF2 object-based
    name `w/.ATTRIBUTES/VARIABLE_VALUE` is shown as `w`.
    """

    def __init__(self, prefix):
        import tensorflow as tf  # Only for TensorFlow checkpoints.

        self.path = prefix
        self._reader = tf.train.load_checkpoint(prefix)
        self._keys = {}
        for key, shape in self._reader.get_variable_to_shape_map().items():
            if key == _TF_OBJECT_GRAPH:
                continue
            name = key[: -len(_TF_VALUE_SUFFIX)] if key.endswith(_TF_VALUE_SUFFIX) else key
            self._keys[name] = (key, tuple(shape))

    def names(self):
        return {name: shape for name, (_, shape) in self._keys.items()}

    def read(self, name):
        if name not in self._keys:
            raise self._unknown(name)
        return np.asarray(self._reader.get_tensor(self._keys[name][0]))


def checkpoint_reader(path):
    """Returns a `CheckpointReader` for the checkpoint at `path`.

    Args:
        path: one of
            - a checkpoint of this library (`directory.path(step)`,
              `latest_checkpoint(model_dir)`), or its TensorFlow-style name
              `model_dir/model.ckpt-<step>` (`tf_style_path`);
            - a directory of such checkpoints (a `model_dir`): its latest;
            - a TensorFlow checkpoint prefix (`model.ckpt-1000`, with
              `model.ckpt-1000.index` beside it);
            - a TensorFlow `model_dir` (with a `checkpoint` file): its latest.

    Returns:
        A reader with `names()` (`{name: shape}`) and `read(name)`.

    Raises:
        ValueError: if `path` holds no complete checkpoint, or is a
            temporary (unfinished) orbax directory.

    Example:

    ```python
    reader = checkpoint_reader("runs/mnist")
    reader.names()                 # {"hidden/kernel": (784, 256), ...}
    reader.read("hidden/kernel")   # numpy array
    ```
    """
    kind, resolved = _resolve(path)
    if kind == "tensorflow":
        return _TensorFlowReader(resolved)
    return OrbaxReader(resolved)


def _resolve(path):
    """`("orbax", step_dir)` or `("tensorflow", prefix)` for a checkpoint path."""
    path = directory_string(path, "checkpoint_path")
    base = os.path.basename(path.rstrip("/"))
    if _TMP_MARKER in base:
        raise ValueError(
            f"{path} is an unfinished (temporary) orbax checkpoint: a save "
            "that did not complete. Use a complete checkpoint."
        )
    p = epath.Path(path)
    if (p / _ITEM).is_dir():
        return "orbax", path
    if base == _ITEM and (p / "_METADATA").exists():  # The item inside a step.
        return "orbax", str(p.parent)
    if epath.Path(path + ".index").exists():
        return "tensorflow", path
    step = tf_style_step(path)
    if step is not None:
        directory = os.path.dirname(path.rstrip("/"))
        if step in finished_steps(directory):
            return "orbax", join(directory, str(step))
    if p.is_dir():
        steps = finished_steps(path)
        if steps:
            return "orbax", join(path, str(steps[-1]))
        if (p / "checkpoint").exists():
            import tensorflow as tf  # Only for TensorFlow checkpoints.

            prefix = tf.train.latest_checkpoint(path)
            if prefix is not None:
                return "tensorflow", prefix
    raise ValueError(
        f"No checkpoint found at {path}: expected a checkpoint directory of "
        "this library, a model_dir holding some, or a TensorFlow checkpoint "
        "prefix (with a '.index' file)."
    )


def list_variables(checkpoint_path):
    """Lists the values in a checkpoint, as `tf.train.list_variables`.

    Args:
        checkpoint_path: any path `checkpoint_reader` accepts.

    Returns:
        A list of `(name, shape)` sorted by name; `shape` is a tuple.

    Raises:
        ValueError: if there is no checkpoint at `checkpoint_path`.

    Example:

    ```python
    list_variables(latest_checkpoint("runs/mnist"))
    # [("global_step", ()), ("hidden/bias", (256,)), ...]
    ```
    """
    return sorted(checkpoint_reader(checkpoint_path).names().items())


def load_variable(checkpoint_path, name):
    """Reads one value of a checkpoint, as `tf.train.load_variable`.

    Args:
        checkpoint_path: any path `checkpoint_reader` accepts.
        name: the value's name, e.g. `"hidden/kernel"`.

    Returns:
        A numpy array.

    Raises:
        ValueError: if there is no checkpoint at `checkpoint_path`, or it has
            no value `name` (the message lists a few names it has).

    Example:

    ```python
    load_variable("runs/mnist", "hidden/kernel")   # numpy array
    ```
    """
    return checkpoint_reader(checkpoint_path).read(name)
