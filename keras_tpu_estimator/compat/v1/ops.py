"""TF1 tensor operations (`tf.reduce_mean`, `tf.one_hot`, ...) on `keras.ops`.

The argument names and defaults are TF1's (`keep_dims`/`reduction_indices`
aliases included), so `model_fn` code calls them unchanged; they run on JAX
arrays inside the compiled steps and on symbolic tensors while the model
builds. `name` arguments are accepted and ignored (JAX operations are
unnamed).

Shapes are static under JAX: `shape(x)` returns the shape as an int32 numpy
array, usable in `reshape`, indexing and arithmetic. Operations whose output
size depends on values (`where(cond)` with one argument, `boolean_mask`,
`unique`) cannot be compiled and raise an error that names the alternative.

```python
mask = tf1.sequence_mask(lengths, maxlen=128, dtype=tf1.float32)
mean = tf1.reduce_sum(x * mask[..., None], axis=1) / tf1.reduce_sum(mask, 1, keepdims=True)
```
"""

import builtins

import jax.numpy as jnp
import numpy as np
from keras import ops

from keras_tpu_estimator.compat.v1 import dtypes
# Private aliases: `ops` is star-imported into `compat.v1`.
from keras_tpu_estimator.compat.v1._op_helpers import as_tensor as _as_tensor
from keras_tpu_estimator.compat.v1._op_helpers import axis_argument as _axis
from keras_tpu_estimator.compat.v1._op_helpers import computed_dtype as _computed_dtype
from keras_tpu_estimator.compat.v1._op_helpers import dimension as _dimension
from keras_tpu_estimator.compat.v1._op_helpers import inferred_dtype as _inferred_dtype
from keras_tpu_estimator.compat.v1._op_helpers import is_symbolic_dim as _is_symbolic_dim
from keras_tpu_estimator.compat.v1._op_helpers import static_shape as _static_shape
from keras_tpu_estimator.compat.v1._op_helpers import static_values as _static_values
from keras_tpu_estimator.compat.v1._op_helpers import symbolic_dims_as_tensor as _dims_as_tensor
from keras_tpu_estimator.compat.v1._op_helpers import keepdims_argument as _keepdims
from keras_tpu_estimator.compat.v1._op_helpers import shape_tuple as _shape
from keras_tpu_estimator.compat.v1._op_helpers import unary_op as _unary
from keras_tpu_estimator.compat.v1._row_gather import take_rows as _take_rows
from keras_tpu_estimator.compat.v1._symbolic import symbolic_ops as _symbolic_ops
from keras_tpu_estimator.compat.v1._tensor import Tensor  # noqa: F401
from keras_tpu_estimator.compat.v1.scatter_ops import batched_take as _batched_take


def _reduction(keras_op, doc):
    def reduce(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
        return keras_op(
            input_tensor, axis=_axis(axis, reduction_indices),
            keepdims=_keepdims(keepdims, keep_dims),
        )

    reduce.__doc__ = doc
    return reduce


reduce_sum = _reduction(ops.sum, "Sum over `axis` (all axes when None).")
reduce_mean = _reduction(ops.mean, "Mean over `axis` (all axes when None).")
reduce_max = _reduction(ops.max, "Maximum over `axis` (all axes when None).")
reduce_min = _reduction(ops.min, "Minimum over `axis` (all axes when None).")
reduce_prod = _reduction(ops.prod, "Product over `axis` (all axes when None).")
reduce_any = _reduction(ops.any, "Logical or over `axis`.")
reduce_all = _reduction(ops.all, "Logical and over `axis`.")
reduce_logsumexp = _reduction(ops.logsumexp, "`log(sum(exp(x)))` over `axis`, computed stably.")


def _index_dtype(output_type):
    # Without jax_enable_x64, 64-bit integers are computed in 32 bits.
    return "int32" if output_type in (None, "int64") else str(dtypes.as_dtype(output_type))


def argmax(input, axis=None, name=None, dimension=None, output_type="int64"):  # noqa: A002
    """Index of the largest value along `axis` (TF1's default axis: 0)."""
    axis = _axis(axis, dimension)
    return ops.cast(ops.argmax(input, axis=0 if axis is None else axis), _index_dtype(output_type))


def argmin(input, axis=None, name=None, dimension=None, output_type="int64"):  # noqa: A002
    """Index of the smallest value along `axis` (TF1's default axis: 0)."""
    axis = _axis(axis, dimension)
    return ops.cast(ops.argmin(input, axis=0 if axis is None else axis), _index_dtype(output_type))


def cast(x, dtype, name=None):
    """`x` converted to `dtype` (a `tf1` dtype or dtype name)."""
    return ops.cast(_dims_as_tensor(x), str(dtypes.as_dtype(dtype)))


def to_float(x, name=None):
    """`cast(x, float32)`."""
    return ops.cast(x, "float32")


def to_int32(x, name=None):
    """`cast(x, int32)`."""
    return ops.cast(x, "int32")


def to_int64(x, name=None):
    """`cast(x, int64)` (computed in 32 bits unless JAX's x64 mode is on)."""
    return ops.cast(x, _index_dtype("int64"))


def _dtype_name(dtype):
    return None if dtype is None else str(dtypes.as_dtype(dtype))


def constant(value, dtype=None, shape=None, name=None, verify_shape=False):
    """A tensor holding `value`, broadcast to `shape` when given.

    Without `dtype`, TF's inference: Python ints int32, floats float32,
    numpy values their own dtype (see `convert_to_tensor`).
    """
    tensor = _as_tensor(value, _dtype_name(dtype))
    if shape is not None:
        shape = _shape(shape)
        size = int(np.prod(tensor.shape))
        tensor = ops.broadcast_to(tensor, shape) if size == 1 else ops.reshape(tensor, shape)
    return tensor


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, dtype_hint=None):
    """`value` as a tensor, its dtype inferred as TF infers it.

    Python ints are int32, floats float32, lists their elements' most
    general kind (`[1, 2.5]` float32); numpy values, tensors and variables
    keep their dtype (64-bit ones computed in 32 bits without JAX's x64).

    Args:
        value: a Python number or list, a numpy value, a tensor or a variable.
        dtype: the dtype to convert to (a Python float to an integer dtype
            raises TypeError, as in TF).
        name: ignored.
        preferred_dtype: the dtype to use when `value` converts to it
            losslessly, else the inferred one (`dtype_hint` in TF 2).
        dtype_hint: alias of `preferred_dtype`.

    Returns:
        A tensor.
    """
    hint = preferred_dtype if preferred_dtype is not None else dtype_hint
    if dtype is None and hint is not None and _inferred_dtype(value) is not None:
        if not isinstance(value, (np.ndarray, np.generic)) and not hasattr(value, "dtype"):
            try:
                return _as_tensor(value, _dtype_name(hint))
            except (TypeError, ValueError, OverflowError):
                pass  # As TF: the hint is only a preference.
    return _as_tensor(value, _dtype_name(dtype))


def zeros(shape, dtype="float32", name=None):
    return ops.zeros(_shape(shape), dtype=str(dtypes.as_dtype(dtype)))


def ones(shape, dtype="float32", name=None):
    return ops.ones(_shape(shape), dtype=str(dtypes.as_dtype(dtype)))


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """Zeros of `tensor`'s shape, in `dtype` or the dtype TF infers for `tensor`."""
    return ops.zeros_like(_as_tensor(tensor), dtype=_dtype_name(dtype))


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """Ones of `tensor`'s shape, in `dtype` or the dtype TF infers for `tensor`."""
    return ops.ones_like(_as_tensor(tensor), dtype=_dtype_name(dtype))


def fill(dims, value, name=None):
    """A tensor of shape `dims` filled with `value`, in `value`'s TF dtype (`fill(d, 4)` int32)."""
    value = _as_tensor(value)
    return ops.full(_shape(dims), value, dtype=value.dtype)


def shape(input, name=None, out_type="int32"):  # noqa: A002
    """The static shape of `input`, as an int32 numpy array.

    TF1 returned a tensor computed at run time; under JAX every shape is
    known when the step compiles, so the value is a constant. Under an
    export with a polymorphic batch size, the batch dimension is symbolic:
    the array then holds objects (ints and the symbolic dimension), which
    index, compute and reshape as the int32 array does.

    Raises:
        ValueError: for a dimension unknown at trace time.
    """
    dims = tuple(input.shape)
    if any(d is None for d in dims):
        raise ValueError(
            f"shape(): the shape {dims} of this tensor has unknown dimensions. "
            "Build the model with a concrete sample batch."
        )
    return _static_shape(dims)


def rank(input, name=None):  # noqa: A002
    """The number of dimensions of `input` (a Python int)."""
    return len(input.shape)


def size(input, name=None, out_type="int32"):  # noqa: A002
    """The number of elements of `input` (a Python int, or a symbolic dimension)."""
    total = 1
    for d in input.shape:
        total = total * _dimension(d)
    return total


def reshape(tensor, shape, name=None):
    return ops.reshape(tensor, _shape(shape))


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    return ops.squeeze(input, axis=_axis(axis, squeeze_dims))


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    return ops.expand_dims(input, _axis(axis, dim))


def transpose(a, perm=None, name=None, conjugate=False):
    return ops.transpose(a, axes=None if perm is None else tuple(perm))


def concat(values, axis, name=None):
    """`values` joined along `axis`; static shape values (from `shape()`) stay static."""
    static = _static_values(list(values))
    if static is not None:
        return np.concatenate(static, axis=axis)
    return ops.concatenate([_dims_as_tensor(v) for v in values], axis=axis)


def stack(values, axis=0, name=None):
    """`values` stacked on a new `axis`; static shape values (from `shape()`) stay static."""
    static = _static_values(list(values))
    if static is not None:
        return np.stack(static, axis=axis)
    return ops.stack([_dims_as_tensor(v) for v in values], axis=axis)


def unstack(value, num=None, axis=0, name=None):
    return ops.unstack(value, num=num, axis=axis)


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """Splits `value` into equal parts (an int) or parts of the given sizes (a list)."""
    if isinstance(num_or_size_splits, int):
        return ops.split(value, num_or_size_splits, axis=axis)
    sizes = [int(s) for s in num_or_size_splits]
    if -1 in sizes:
        sizes[sizes.index(-1)] = value.shape[axis] - (builtins.sum(sizes) + 1)
    return ops.split(value, list(np.cumsum(sizes)[:-1]), axis=axis)


def slice(input_, begin, size, name=None):  # noqa: A001
    """`input_[begin[i] : begin[i] + size[i]]` on every axis (`size` -1: to the end)."""
    index = []
    for axis, (start, length) in enumerate(zip(_shape(begin), _shape(size))):
        index.append(builtins.slice(start, None if length == -1 else start + length))
    return input_[tuple(index)]


def tile(input, multiples, name=None):  # noqa: A002
    return ops.tile(input, _shape(multiples))


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """Pads `tensor`; `mode` is 'CONSTANT', 'REFLECT' or 'SYMMETRIC' (any case)."""
    paddings = [tuple(int(p) for p in row) for row in np.asarray(paddings)]
    mode = mode.lower()
    if mode == "constant":
        return ops.pad(tensor, paddings, mode="constant", constant_values=constant_values)
    return ops.pad(tensor, paddings, mode=mode)


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """Rows (slices along `axis`, default 0) of `params` at `indices`.

    With `batch_dims` > 0, each element of the leading `batch_dims` axes
    (shared by `params` and `indices`) gathers from its own slice, along
    `axis` (default `batch_dims`).

    Gathering rows (axis 0) of a variable gives it TF1's `IndexedSlices`
    gradient norm in `global_norm` / `clip_by_global_norm`: the norm over
    the gathered rows, duplicates counted separately (the update itself is
    the same).
    """
    if batch_dims:
        return _batched_take(params, indices, axis=axis, batch_dims=batch_dims)
    if axis in (None, 0):
        return _take_rows(params, indices)
    return ops.take(params, indices, axis=axis)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot vectors of length `depth` (`on_value` 1, `off_value` 0 by default).

    Without `dtype`, TF's: that of `on_value` (else `off_value`), else float32.
    """
    if dtype is None:
        given = [v for v in (on_value, off_value) if v is not None]
        dtype = _computed_dtype(_inferred_dtype(given[0])) if given else "float32"
    dtype = str(dtypes.as_dtype(dtype))
    encoded = ops.one_hot(indices, depth, axis=-1 if axis is None else axis, dtype=dtype)
    if on_value is None and off_value is None:
        return encoded
    on = 1 if on_value is None else on_value
    off = 0 if off_value is None else off_value
    return ops.cast(encoded * (on - off) + off, dtype)


def where(condition, x=None, y=None, name=None):
    """`x` where `condition` holds, else `y` (both required under JAX).

    Raises:
        NotImplementedError: with `x` and `y` omitted (the coordinates of the
            true elements have a value-dependent size, which cannot compile).
    """
    if x is None and y is None:
        raise NotImplementedError(
            "where(condition) without x and y returns a value-dependent number "
            "of indices, which cannot be compiled. Use where(condition, x, y) "
            "or a mask (multiply by cast(condition, float32))."
        )
    return ops.where(condition, x, y)


where_v2 = where


def boolean_mask(tensor, mask, name=None, axis=None):
    """Not supported: its output size depends on the mask's values."""
    raise NotImplementedError(
        "boolean_mask() returns a value-dependent number of elements, which "
        "cannot be compiled. Multiply by the mask instead, e.g. "
        "reduce_sum(x * cast(mask, x.dtype)) / reduce_sum(cast(mask, x.dtype))."
    )


def sequence_mask(lengths, maxlen=None, dtype="bool", name=None):
    """`mask[..., j] = j < lengths[...]`, of length `maxlen`.

    Raises:
        ValueError: without `maxlen` on values unknown at trace time (the
            mask's length must be static).
    """
    if maxlen is None:
        try:
            maxlen = int(np.max(np.asarray(lengths)))
        except Exception as error:
            raise ValueError(
                "sequence_mask() needs `maxlen` inside a compiled step: the "
                "mask's length must be known when the step compiles."
            ) from error
    mask = ops.arange(int(maxlen)) < ops.expand_dims(ops.convert_to_tensor(lengths), -1)
    return ops.cast(mask, str(dtypes.as_dtype(dtype)))


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """Matrix product of the last two axes (batched over the leading ones)."""
    if transpose_a or adjoint_a:
        a = ops.swapaxes(a, -1, -2)
    if transpose_b or adjoint_b:
        b = ops.swapaxes(b, -1, -2)
    return ops.matmul(a, b)


def einsum(equation, *inputs, name=None, **kwargs):
    return ops.einsum(equation, *inputs)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """`[start, start + delta, ...)` below `limit` (`range(n)` is `[0, n)`)."""
    if limit is None:
        start, limit = 0, start
    if dtype is None:
        # TF's: the most general of the bounds' dtypes in int32 < int64 < float32 < float64.
        order = ("int32", "int64", "float32", "float64")
        found = [_inferred_dtype(v) for v in (start, limit, delta)]
        dtype = builtins.max(found, key=lambda d: order.index(d) if d in order else -1)
    dtype = _computed_dtype(str(dtypes.as_dtype(dtype)))
    if any(_is_symbolic_dim(v) for v in (start, limit, delta)):
        # An export's batch size: `keras.ops.arange` reads its bounds' Python types.
        return jnp.arange(start, limit, delta, dtype=dtype or "int32")
    return ops.arange(start, limit, delta, dtype=dtype)


def add_n(inputs, name=None):
    """The elementwise sum of a list of tensors.

    Raises:
        ValueError: for an empty list (TF1's error).
    """
    inputs = list(inputs)
    if not inputs:
        raise ValueError("add_n() needs a non-empty list of tensors.")
    total = inputs[0]
    for value in inputs[1:]:
        total = ops.add(total, value)
    return total


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    return ops.clip(t, clip_value_min, clip_value_max)


def identity(input, name=None):  # noqa: A002
    """`input` as a tensor (Python values in the dtype TF infers)."""
    return _as_tensor(input)


def stop_gradient(input, name=None):  # noqa: A002
    """`input`, with no gradient flowing back through it."""
    return ops.stop_gradient(input)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    if reverse:
        x = ops.flip(x, axis)
    out = ops.cumsum(x, axis=axis)
    if exclusive:
        out = out - x
    return ops.flip(out, axis) if reverse else out


def _binary(keras_op, doc):
    def apply(x, y, name=None):
        return keras_op(x, y)

    apply.__doc__ = doc
    return apply


add = _binary(ops.add, "`x + y`.")
subtract = _binary(ops.subtract, "`x - y`.")
multiply = _binary(ops.multiply, "`x * y`.")
divide = truediv = div = _binary(ops.true_divide, "`x / y`.")
floordiv = _binary(ops.floor_divide, "`x // y`.")
floormod = mod = _binary(ops.mod, "`x % y`.")
pow = _binary(ops.power, "`x ** y`.")  # noqa: A001
maximum = _binary(ops.maximum, "Elementwise maximum.")
minimum = _binary(ops.minimum, "Elementwise minimum.")
squared_difference = _binary(lambda x, y: ops.square(ops.subtract(x, y)), "`(x - y) ** 2`.")
equal = _binary(ops.equal, "`x == y`, elementwise.")
not_equal = _binary(ops.not_equal, "`x != y`, elementwise.")
less = _binary(ops.less, "`x < y`, elementwise.")
less_equal = _binary(ops.less_equal, "`x <= y`, elementwise.")
greater = _binary(ops.greater, "`x > y`, elementwise.")
greater_equal = _binary(ops.greater_equal, "`x >= y`, elementwise.")
logical_and = _binary(ops.logical_and, "Elementwise and.")
logical_or = _binary(ops.logical_or, "Elementwise or.")
logical_xor = _binary(ops.logical_xor, "Elementwise exclusive or.")

abs = _unary(ops.abs, "`|x|`.")  # noqa: A001
negative = _unary(ops.negative, "`-x`.")
sign = _unary(ops.sign, "The sign of `x` (-1, 0 or 1).")
square = _unary(ops.square, "`x ** 2`.")
sqrt = _unary(ops.sqrt, "Square root.")
rsqrt = _unary(ops.rsqrt, "`1 / sqrt(x)`.")
exp = _unary(ops.exp, "`e ** x`.")
log = _unary(ops.log, "Natural logarithm.")
log1p = _unary(ops.log1p, "`log(1 + x)`.")
floor = _unary(ops.floor, "Round down.")
ceil = _unary(ops.ceil, "Round up.")
round = _unary(ops.round, "Round half to even.")  # noqa: A001
reciprocal = _unary(ops.reciprocal, "`1 / x`.")
sin = _unary(ops.sin, "Sine.")
cos = _unary(ops.cos, "Cosine.")
tanh = _unary(ops.tanh, "Hyperbolic tangent.")
sigmoid = _unary(ops.sigmoid, "`1 / (1 + exp(-x))`.")
erf = _unary(ops.erf, "The error function.")
logical_not = _unary(ops.logical_not, "Elementwise not.")
is_nan = _unary(ops.isnan, "Whether each element is NaN.")
is_finite = _unary(ops.isfinite, "Whether each element is finite.")
is_inf = _unary(ops.isinf, "Whether each element is infinite.")


def _unsupported_value_dependent(name, alternative):
    def fail(*args, **kwargs):
        raise NotImplementedError(
            f"{name}() returns a value-dependent shape, which cannot be compiled. {alternative}"
        )

    fail.__name__ = name
    return fail


unique = _unsupported_value_dependent("unique", "Use a fixed-size representation (e.g. one_hot).")

__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "builtins", "jnp", "np", "ops", "dtypes")]

# Every op runs in the symbolic build pass as in the step; these return static values.
_symbolic_ops(globals(), exclude=("shape", "rank", "size"))
