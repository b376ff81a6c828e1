"""TF1 math operations beyond `ops`: `tf.div_no_nan`, `tf.reduce_std`, `tf.cumprod`, ...

Same conventions as `ops`: TF1's argument names and defaults
(`keep_dims`/`reduction_indices` aliases included), `name` accepted and
ignored. Also under `tf1.math`.

```python
accuracy = tf1.div_no_nan(correct, total)
```
"""

import jax
import jax.numpy as jnp
from keras import ops

from keras_tpu_estimator.compat.v1 import dtypes
# Private aliases: `math_ops` is star-imported into `compat.v1`.
from keras_tpu_estimator.compat.v1._op_helpers import as_tensor as _as_tensor
from keras_tpu_estimator.compat.v1._op_helpers import axis_argument as _axis
from keras_tpu_estimator.compat.v1._op_helpers import keepdims_argument as _keepdims
from keras_tpu_estimator.compat.v1._op_helpers import unary_op as _unary
from keras_tpu_estimator.compat.v1._symbolic import symbolic_ops as _symbolic_ops


def div_no_nan(x, y, name=None):
    """`x / y`, and 0 where `y` is 0 (even for `x` 0 or infinite)."""
    x, y = ops.convert_to_tensor(x), ops.convert_to_tensor(y)
    zero = ops.equal(y, 0)
    safe = ops.where(zero, ops.ones_like(y), y)
    return ops.where(zero, ops.zeros_like(ops.true_divide(x, safe)), ops.true_divide(x, safe))


divide_no_nan = div_no_nan


def realdiv(x, y, name=None):
    """`x / y` for real tensors."""
    return ops.true_divide(x, y)


def xdivy(x, y, name=None):
    """`x / y`, and 0 where `x` is 0."""
    return ops.where(ops.equal(x, 0), ops.zeros_like(ops.true_divide(x, y)), ops.true_divide(x, y))


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The (biased) variance over `axis` (all axes when None)."""
    return ops.var(input_tensor, axis=_axis(axis), keepdims=bool(keepdims))


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The (biased) standard deviation over `axis` (all axes when None)."""
    return ops.std(input_tensor, axis=_axis(axis), keepdims=bool(keepdims))


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype="int64", name=None,
                  reduction_indices=None, keep_dims=None, input=None):  # noqa: A002
    """The number of nonzero elements over `axis` (int64 computed in 32 bits without x64)."""
    tensor = input if input_tensor is None else input_tensor
    count = ops.sum(ops.cast(ops.not_equal(tensor, 0), "int32"),
                    axis=_axis(axis, reduction_indices), keepdims=_keepdims(keepdims, keep_dims))
    return ops.cast(count, "int32" if dtype in (None, "int64") else str(dtypes.as_dtype(dtype)))


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """The cumulative product along `axis` (`exclusive`: shifted by one; `reverse`: from the end)."""
    if reverse:
        x = ops.flip(x, axis)
    out = ops.cumprod(x, axis=axis)
    if exclusive:
        out = _shift_right(out, axis)
    return ops.flip(out, axis) if reverse else out


def _shift_right(x, axis):
    """`[1, x[0], ..., x[n - 2]]` along `axis` (the exclusive cumulative product)."""
    axis = axis % len(x.shape)
    ones = ops.ones_like(ops.take(x, [0], axis=axis))
    head = ops.take(x, list(range(x.shape[axis] - 1)), axis=axis)
    return ops.concatenate([ones, head], axis=axis)


def log_sigmoid(x, name=None):
    """`log(sigmoid(x))`, computed stably."""
    return ops.log_sigmoid(x)


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """`values` sorted along `axis` ('ASCENDING' or 'DESCENDING')."""
    out = ops.sort(values, axis=axis)
    return ops.flip(out, axis) if direction == "DESCENDING" else out


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The indices that sort `values` along `axis`."""
    if direction == "DESCENDING":
        return ops.cast(ops.argsort(ops.negative(values), axis=axis), "int32")
    return ops.cast(ops.argsort(values, axis=axis), "int32")


def searchsorted(sorted_sequence, values, side="left", out_type="int32", name=None):
    """Where each of `values` would go in the sorted last axis of `sorted_sequence`.

    Args:
        sorted_sequence: a tensor sorted ascending along its last axis.
        values: a tensor with `sorted_sequence`'s leading axes (its last
            axis may differ).
        side: 'left' (the first position at which a value fits) or 'right'
            (the last).
        out_type: int32 (default) or int64 (computed in 32 bits without x64).
        name: ignored.

    Returns:
        Integer indices of `values`' shape.

    Raises:
        ValueError: for another `side`, or leading axes that differ.

    Example:

    ```python
    bucket = tf1.searchsorted(boundaries, lengths, side="right")
    ```
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted(): side must be 'left' or 'right'. Received: {side!r}")
    sequence, values = _as_tensor(sorted_sequence), _as_tensor(values)
    if not sequence.shape or len(sequence.shape) != len(values.shape) or (
            tuple(sequence.shape[:-1]) != tuple(values.shape[:-1])):
        raise ValueError("searchsorted(): sorted_sequence and values must have the same rank "
                         "(at least 1) and the same leading axes. Received shapes: "
                         f"{tuple(sequence.shape)} and {tuple(values.shape)}")
    found = jax.vmap(lambda s, v: jnp.searchsorted(s, v, side=side))(
        sequence.reshape(-1, sequence.shape[-1]), values.reshape(-1, values.shape[-1]))
    out_type = str(dtypes.as_dtype(out_type))
    return ops.cast(found.reshape(values.shape), "int32" if out_type == "int64" else out_type)


def scalar_mul(scalar, x, name=None):
    """`scalar * x`, the scalar converted to `x`'s dtype.

    Raises:
        ValueError: for a `scalar` that is not 0-D.
        TypeError: for a Python float given an integer `x`.
    """
    x = _as_tensor(x)
    scalar = _as_tensor(scalar, x.dtype)
    if scalar.shape:
        raise ValueError(f"scalar_mul(): scalar must be 0-D. Received shape: {tuple(scalar.shape)}")
    return scalar * x


def tensordot(a, b, axes, name=None):
    """Contraction of `a` and `b` over `axes` (an int or a pair of lists)."""
    return ops.tensordot(a, b, axes=axes)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):  # noqa: A002
    """The norm of `tensor` ('euclidean'/'fro' or a number `ord`) over `axis` (all when None)."""
    keep = _keepdims(keepdims, keep_dims)
    axis = _axis(axis)
    if ord in ("euclidean", "fro", 2) and (axis is None or isinstance(axis, int) or len(axis) <= 2):
        return ops.sqrt(ops.sum(ops.square(tensor), axis=axis, keepdims=keep))
    return ops.norm(tensor, ord=ord, axis=axis, keepdims=keep)


expm1 = _unary(ops.expm1, "`exp(x) - 1`, accurate near 0.")
acos = _unary(ops.arccos, "Inverse cosine.")
asin = _unary(ops.arcsin, "Inverse sine.")
atan = _unary(ops.arctan, "Inverse tangent.")
cosh = _unary(ops.cosh, "Hyperbolic cosine.")
sinh = _unary(ops.sinh, "Hyperbolic sine.")
tan = _unary(ops.tan, "Tangent.")
rint = _unary(ops.round, "Round half to even.")


def atan2(y, x, name=None):
    """The angle of the point `(x, y)`, elementwise."""
    return ops.arctan2(y, x)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """The elementwise sum of a list of tensors (TF1's `accumulate_n`, as `add_n`)."""
    from keras_tpu_estimator.compat.v1.ops import add_n

    return add_n(inputs)


__all__ = [n for n in dir() if not n.startswith("_")
           and n not in ("ops", "dtypes", "jax", "jnp")]

# Every op runs in the symbolic build pass as in the step (see `_symbolic`).
_symbolic_ops(globals())
