"""TF1 array operations beyond `ops`: `tf.broadcast_to`, `tf.meshgrid`, `tf.reverse`, ...

Same conventions as `ops`: TF1's argument names and defaults, `name`
accepted and ignored, shapes static (Python ints).

```python
std = tf1.broadcast_to(std, tf1.shape(x))
w_i, h_i = tf1.meshgrid(tf1.range(width), tf1.range(width))
```
"""

import numpy as np
from keras import ops

from keras_tpu_estimator.compat.v1 import dtypes
# A private alias: `array_ops` is star-imported into `compat.v1`.
from keras_tpu_estimator.compat.v1._op_helpers import dimension as _dim
from keras_tpu_estimator.compat.v1._op_helpers import shape_tuple as _shape
from keras_tpu_estimator.compat.v1._symbolic import symbolic_ops as _symbolic_ops
from keras_tpu_estimator.model_fn.tensor_shape import Dimension  # noqa: F401
from keras_tpu_estimator.model_fn.tensor_shape import TensorShape  # noqa: F401
from keras_tpu_estimator.model_fn.tensor_shape import as_shape  # noqa: F401
from keras_tpu_estimator.model_fn.tensor_shape import dimension_value  # noqa: F401


def broadcast_to(input, shape, name=None):  # noqa: A002
    """`input` broadcast to `shape` (a list, tuple or `shape()` array)."""
    return ops.broadcast_to(input, _shape(shape))


def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D tensors; `indexing` 'xy' (TF1's default) or 'ij'.

    Raises:
        TypeError: for a keyword other than `indexing` and `name`.
    """
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"meshgrid() got unexpected keyword arguments {sorted(kwargs)}")
    return ops.meshgrid(*args, indexing=indexing)


def reverse(tensor, axis, name=None):
    """`tensor` reversed along each axis of the list `axis`."""
    axis = [int(a) for a in np.asarray(axis).reshape(-1)]
    return ops.flip(tensor, axis=tuple(axis)) if axis else ops.convert_to_tensor(tensor)


reverse_v2 = reverse


def roll(input, shift, axis, name=None):  # noqa: A002
    """Rotates `input` by `shift` along `axis` (ints or matching lists)."""
    shifts = np.asarray(shift).reshape(-1).tolist()
    axes = np.asarray(axis).reshape(-1).tolist()
    out = input
    for s, a in zip(shifts, axes):
        out = ops.roll(out, int(s), axis=int(a))
    return out


def linspace(start, stop, num, name=None, axis=0):
    """`num` evenly spaced values from `start` to `stop`, both included."""
    return ops.linspace(start, stop, int(num), axis=axis)


lin_space = linspace


def eye(num_rows, num_columns=None, batch_shape=None, dtype="float32", name=None):
    """The identity matrix `[num_rows, num_columns]` (stacked over `batch_shape`)."""
    matrix = ops.eye(int(num_rows), None if num_columns is None else int(num_columns),
                     dtype=str(dtypes.as_dtype(dtype)))
    if batch_shape is None:
        return matrix
    batch = _shape(batch_shape)
    return ops.broadcast_to(matrix, batch + tuple(matrix.shape))


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Keeps `num_lower` sub- and `num_upper` super-diagonals (-1: all) of the last two axes."""
    rows, cols = input.shape[-2], input.shape[-1]
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    keep = np.ones((rows, cols), bool)
    if num_lower >= 0:
        keep &= (i - j) <= num_lower
    if num_upper >= 0:
        keep &= (j - i) <= num_upper
    return ops.where(keep, input, ops.zeros_like(input))


def matrix_transpose(a, name=None, conjugate=False):
    """Swaps the last two axes."""
    return ops.swapaxes(a, -1, -2)


def shape_n(input, out_type="int32", name=None):  # noqa: A002
    """The static shapes of a list of tensors, as int32 numpy arrays."""
    from keras_tpu_estimator.compat.v1.ops import shape

    return [shape(t) for t in input]


def identity_n(input, name=None):  # noqa: A002
    """Each tensor of the list, unchanged."""
    return [ops.convert_to_tensor(t) for t in input]


__all__ = [
    "Dimension", "TensorShape", "as_shape", "broadcast_to", "dimension_value", "eye", "identity_n", "lin_space", "linspace",
    "matrix_band_part", "matrix_transpose", "meshgrid", "reverse", "reverse_v2", "roll", "shape_n",
]

# Every op runs in the symbolic build pass as in the step (see `_symbolic`).
_symbolic_ops(globals(), exclude=("shape_n", "dimension_value", "Dimension", "TensorShape", "as_shape"))
