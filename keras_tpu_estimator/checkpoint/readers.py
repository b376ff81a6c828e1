"""Reading any checkpoint: the reader seam.

`checkpoint_reader(path)` returns an object with `names()` and `read(name)`
for a TensorFlow checkpoint: one of this library's `model_dir`, or one
written by `tf.compat.v1.train.Saver` or `tf.train.Checkpoint`, so that
`list_variables`, `load_variable` and `warm_start` work on all.

```python
kte.checkpoint.list_variables("tf1_run/model.ckpt-5000")
kte.checkpoint.load_variable("runs/mnist", "hidden/kernel")
```
"""

import contextlib

import numpy as np

from keras_tpu_estimator.checkpoint import tf_files
from keras_tpu_estimator.checkpoint.common import few
from keras_tpu_estimator.checkpoint.paths import checkpoint_prefix
from keras_tpu_estimator.checkpoint.paths import read_latest

# A TF2 object-based checkpoint names a variable `<object path>/` + this.
_TF_VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_TF_OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"


class DamagedCheckpointError(ValueError):
    """A complete checkpoint whose files cannot be read: truncated, corrupted or partly removed.

    Attributes:
        path: the checkpoint's prefix (`model_dir/model.ckpt-<step>`).
    """

    def __init__(self, path, cause):
        self.path = path
        first_line = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
        super().__init__(
            f"The checkpoint {path} is damaged: its files cannot be read "
            f"({type(cause).__name__}: {first_line[:300]}). Remove its files "
            f"{path}.* to use the checkpoint before it (training resumes from it), "
            "or put back an intact copy."
        )


@contextlib.contextmanager
def reading(path):
    """Reports a failed read of the checkpoint `path` as a `DamagedCheckpointError`.

    Only while its `.index` exists: a checkpoint deleted while it was read (by
    another process's `keep_checkpoint_max`) is not damaged, and the original
    error is raised.
    """
    try:
        yield
    except Exception as error:
        if isinstance(error, DamagedCheckpointError) or not tf_files.exists(path):
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


class TensorFlowReader(CheckpointReader):
    """Reads a TensorFlow checkpoint prefix, with `tf.train.load_checkpoint`.

    This library's checkpoints and TF1's keep their names (`dense/kernel`,
    `global_step`); a TF2 object-based name `w/.ATTRIBUTES/VARIABLE_VALUE` is
    shown as `w`. Reads on this process only (no collective).

    Args:
        prefix: the checkpoint prefix (`model_dir/model.ckpt-100`).

    Raises:
        DamagedCheckpointError: if the index cannot be read.

    Example:

    ```python
    TensorFlowReader("runs/mnist/model.ckpt-100").names_and_dtypes()
    # {"hidden/kernel": ((784, 256), dtype('float32')), ...}
    ```
    """

    def __init__(self, prefix):
        self.path = prefix
        with reading(prefix):
            self._reader = tf_files.tf().train.load_checkpoint(prefix)
        dtypes = self._reader.get_variable_to_dtype_map()
        self._keys = {}
        for key, shape in self._reader.get_variable_to_shape_map().items():
            if key == _TF_OBJECT_GRAPH:
                continue
            name = key[: -len(_TF_VALUE_SUFFIX)] if key.endswith(_TF_VALUE_SUFFIX) else key
            self._keys[name] = (key, tuple(shape), np.dtype(dtypes[key].as_numpy_dtype))

    def names_and_dtypes(self):
        """Returns `{name: (shape, numpy dtype)}` for every value, from the index only."""
        return {name: (shape, dtype) for name, (_, shape, dtype) in self._keys.items()}

    def names(self):
        return {name: shape for name, (_, shape, _) in self._keys.items()}

    def read(self, name):
        if name not in self._keys:
            raise self._unknown(name)
        with reading(self.path):
            return np.asarray(self._reader.get_tensor(self._keys[name][0]))


def checkpoint_reader(path):
    """Returns a `CheckpointReader` for the checkpoint at `path`.

    Args:
        path: one of
            - a checkpoint prefix (`model_dir/model.ckpt-1000`, with
              `model.ckpt-1000.index` beside it), written by this library
              or by TensorFlow;
            - a `model_dir` (with a `checkpoint` state file): its latest.

    Returns:
        A reader with `names()` (`{name: shape}`) and `read(name)`.

    Raises:
        ValueError: if `path` names no complete checkpoint.
        DamagedCheckpointError: (a ValueError) if its index cannot be read.

    Example:

    ```python
    reader = checkpoint_reader("runs/mnist")
    reader.names()                 # {"hidden/kernel": (784, 256), ...}
    reader.read("hidden/kernel")   # numpy array
    ```
    """
    return TensorFlowReader(checkpoint_prefix(path))


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
    return sorted(_read_latest(checkpoint_path, lambda reader: reader.names()).items())


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
    return _read_latest(checkpoint_path, lambda reader: reader.read(name))


def _read_latest(path, read):
    """`read(reader)` of the checkpoint `path` names; of a model_dir's newest, while a trainer deletes."""
    return read_latest(path, lambda prefix: read(TensorFlowReader(prefix)))
