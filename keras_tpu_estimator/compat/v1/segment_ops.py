"""TF1's segment reductions: `tf.segment_sum`, `tf.unsorted_segment_mean`, ...

A segment op reduces the rows of `data` that share an id of `segment_ids`
(sums, means, extremes, products) into one row per id. Also under `tf1.math`.

- `unsorted_segment_*(data, segment_ids, num_segments)`: ids in any order;
  `segment_ids.shape` is a prefix of `data.shape` (those axes are reduced);
  the result has `num_segments` rows. Ids outside `[0, num_segments)`
  (negative ones included) are dropped, as TensorFlow on TPU does.
- `segment_*(data, segment_ids)`: 1-D ids sorted ascending; the result has
  `max(segment_ids) + 1` rows, so the ids must be known when the step
  compiles (a constant, not a value computed in the step).

An id no row has gives TF's value for an empty segment: 0 for sums, means,
`segment_max` and `segment_min`, 1 for products, and the lowest (highest)
value of the dtype for `unsorted_segment_max` (`_min`).

```python
# Mean embedding of each sentence of a packed batch.
sentence = tf1.unsorted_segment_mean(token_vectors, sentence_ids, num_sentences)
```
"""

import jax
import jax.numpy as jnp
import numpy as np

from keras_tpu_estimator.compat.v1._op_helpers import as_tensor as _as_tensor
from keras_tpu_estimator.compat.v1._op_helpers import computed_dtype as _computed_dtype
from keras_tpu_estimator.compat.v1._op_helpers import static_value as _static_value
from keras_tpu_estimator.compat.v1._symbolic import symbolic_ops as _symbolic_ops

# TF's true division of integers: small ones to float32, others to float64.
_INT_QUOTIENT = {"int8": "float32", "uint8": "float32", "int16": "float32", "uint16": "float32"}


def _operands(data, segment_ids, op):
    """`data` and its ids flattened to 1-D over the id axes (int32 ids)."""
    data, ids = _as_tensor(data), _as_tensor(segment_ids)
    if not jnp.issubdtype(ids.dtype, jnp.integer):
        raise TypeError(f"{op}(): segment_ids must be int32 or int64. Received dtype: "
                        f"{ids.dtype}")
    rank = len(ids.shape)
    if tuple(data.shape[:rank]) != tuple(ids.shape):
        raise ValueError(f"{op}(): segment_ids.shape {tuple(ids.shape)} must be a prefix of "
                         f"data.shape {tuple(data.shape)}.")
    ids = ids.astype("int32")
    if rank == 1:
        return data, ids
    return data.reshape((-1,) + tuple(data.shape[rank:])), ids.reshape(-1)


def _num_segments(num_segments, op):
    value = _static_value(num_segments)
    if value is None or value.size != 1:
        raise ValueError(f"{op}(): num_segments must be a scalar known when the step compiles "
                         f"(it sets the output's shape). Received: {num_segments!r}")
    return int(value.reshape(()))


def _reduce(kind, data, ids, num_segments):
    """`jax.ops.segment_<kind>`; ids out of range are dropped."""
    return getattr(jax.ops, f"segment_{kind}")(data, ids, num_segments=num_segments)


def _counts(ids, num_segments, like):
    """The number of rows of each segment, shaped to divide `like`'s rows."""
    counts = jax.ops.segment_sum(jnp.ones(ids.shape, "int32"), ids, num_segments=num_segments)
    return counts.reshape((num_segments,) + (1,) * (len(like.shape) - 1))


def _empty_as(out, counts, value):
    """`out` with the segments that have no row set to `value`."""
    return jnp.where(counts > 0, out, jnp.asarray(value, out.dtype))


def _lowest(dtype):
    return jnp.finfo(dtype).min if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype).min


def _highest(dtype):
    return jnp.finfo(dtype).max if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype).max


def _true_divide(total, n):
    """`total / n` with TF's `/` on tensors: integers give floats."""
    dtype = str(total.dtype)
    if jnp.issubdtype(total.dtype, jnp.integer):
        dtype = _computed_dtype(_INT_QUOTIENT.get(dtype, "float64"))
        total = _as_tensor(total, dtype)
    return total / _as_tensor(n, dtype)


def _unsorted(kind, doc, empty):
    def op(data, segment_ids, num_segments, name=None):
        data, ids = _operands(data, segment_ids, f"unsorted_segment_{kind}")
        num_segments = _num_segments(num_segments, f"unsorted_segment_{kind}")
        out = _reduce(kind, data, ids, num_segments)
        if empty is None:
            return out
        return _empty_as(out, _counts(ids, num_segments, out), empty(out.dtype))

    op.__name__ = f"unsorted_segment_{kind}"
    op.__doc__ = doc + """

    Args:
        data: a tensor.
        segment_ids: integer ids, a prefix of `data.shape`; ids outside
            `[0, num_segments)` are dropped.
        num_segments: the number of output rows (a static int).
        name: ignored.

    Returns:
        A tensor `[num_segments] + data.shape[rank(segment_ids):]`, `data`'s dtype.
    """
    return op


unsorted_segment_sum = _unsorted(
    "sum", "Sums of the rows of `data` per id of `segment_ids`.", None)
unsorted_segment_max = _unsorted(
    "max", "Maxima of the rows of `data` per id (an empty segment: the dtype's lowest value).",
    _lowest)
unsorted_segment_min = _unsorted(
    "min", "Minima of the rows of `data` per id (an empty segment: the dtype's highest value).",
    _highest)
unsorted_segment_prod = _unsorted(
    "prod", "Products of the rows of `data` per id (an empty segment: 1).", None)


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """Means of the rows of `data` per id of `segment_ids` (an empty segment: 0).

    Args:
        data: a tensor (integers give TF's true quotient: float32 for 8- and
            16-bit ones, float64 for the others).
        segment_ids: integer ids, a prefix of `data.shape`; ids outside
            `[0, num_segments)` are dropped.
        num_segments: the number of output rows (a static int).
        name: ignored.

    Returns:
        A tensor `[num_segments] + data.shape[rank(segment_ids):]`.
    """
    data, ids = _operands(data, segment_ids, "unsorted_segment_mean")
    num_segments = _num_segments(num_segments, "unsorted_segment_mean")
    counts = _counts(ids, num_segments, data)
    return _true_divide(_reduce("sum", data, ids, num_segments), jnp.maximum(counts, 1))


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """Sums of the rows of `data` per id divided by the square root of their number.

    Args:
        data: a floating-point tensor.
        segment_ids: integer ids, a prefix of `data.shape`; ids outside
            `[0, num_segments)` are dropped.
        num_segments: the number of output rows (a static int).
        name: ignored.

    Returns:
        A tensor `[num_segments] + data.shape[rank(segment_ids):]`, `data`'s
        dtype; 0 for an empty segment.

    Raises:
        TypeError: for integer `data` (TF has no integer square root).
    """
    data, ids = _operands(data, segment_ids, "unsorted_segment_sqrt_n")
    if not jnp.issubdtype(data.dtype, jnp.inexact):
        raise TypeError("unsorted_segment_sqrt_n(): data must be a floating-point tensor. "
                        f"Received dtype: {data.dtype}")
    num_segments = _num_segments(num_segments, "unsorted_segment_sqrt_n")
    counts = jnp.maximum(_counts(ids, num_segments, data), 1).astype(data.dtype)
    return _reduce("sum", data, ids, num_segments) / jnp.sqrt(counts)


def _sorted_ids(segment_ids, op):
    """The static, sorted 1-D ids and the number of segments they make."""
    ids = _static_value(segment_ids)
    if ids is None:
        raise ValueError(
            f"{op}() needs segment ids known when the step compiles (its output size "
            f"depends on them): use unsorted_{op} with num_segments."
        )
    ids = ids.reshape(-1) if ids.ndim == 0 else ids
    if ids.ndim != 1:
        raise ValueError(f"{op}(): segment_ids must be a vector. Received shape: {ids.shape}")
    if ids.size and (np.any(np.diff(ids) < 0) or ids[0] < 0):
        raise ValueError(f"{op}(): segment ids must be sorted ascending and not negative. "
                         f"Received: {ids.tolist()}")
    return ids, int(ids.max()) + 1 if ids.size else 0


def _sorted(kind, doc, empty):
    def op(data, segment_ids, name=None):
        ids, num_segments = _sorted_ids(segment_ids, f"segment_{kind}")
        data, ids = _operands(data, ids, f"segment_{kind}")
        out = getattr(jax.ops, f"segment_{kind}")(data, ids, num_segments=num_segments,
                                                  indices_are_sorted=True)
        if empty is None:
            return out
        return _empty_as(out, _counts(ids, num_segments, out), empty)

    op.__name__ = f"segment_{kind}"
    op.__doc__ = doc + """

    Args:
        data: a tensor.
        segment_ids: sorted integer ids, one per row of `data`, known when
            the step compiles.
        name: ignored.

    Returns:
        A tensor `[max(segment_ids) + 1] + data.shape[1:]`, `data`'s dtype.

    Raises:
        ValueError: for ids known only inside the compiled step, or not sorted.
    """
    return op


segment_sum = _sorted("sum", "Sums of the rows of `data` per sorted id (an empty segment: 0).",
                      None)
segment_max = _sorted("max", "Maxima of the rows of `data` per sorted id (an empty segment: 0).",
                      0)
segment_min = _sorted("min", "Minima of the rows of `data` per sorted id (an empty segment: 0).",
                      0)
segment_prod = _sorted(
    "prod", "Products of the rows of `data` per sorted id (an empty segment: 1).", None)


def segment_mean(data, segment_ids, name=None):
    """Means of the rows of `data` per sorted id (an empty segment: 0).

    Integer `data` gives integer means, truncated toward zero, as in TF.

    Args:
        data: a tensor.
        segment_ids: sorted integer ids, one per row of `data`, known when
            the step compiles.
        name: ignored.

    Returns:
        A tensor `[max(segment_ids) + 1] + data.shape[1:]`, `data`'s dtype.

    Raises:
        ValueError: for ids known only inside the compiled step, or not sorted.
    """
    ids, num_segments = _sorted_ids(segment_ids, "segment_mean")
    data, ids = _operands(data, ids, "segment_mean")
    total = jax.ops.segment_sum(data, ids, num_segments=num_segments, indices_are_sorted=True)
    counts = jnp.maximum(_counts(ids, num_segments, total), 1).astype(total.dtype)
    if jnp.issubdtype(total.dtype, jnp.integer):
        return jax.lax.div(total, counts)  # Truncates toward zero, as C++ and TF.
    return total / counts


__all__ = [
    "segment_max", "segment_mean", "segment_min", "segment_prod", "segment_sum",
    "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_min",
    "unsorted_segment_prod", "unsorted_segment_sqrt_n", "unsorted_segment_sum",
]

# Every op runs in the symbolic build pass as in the step (see `_symbolic`).
_symbolic_ops(globals())
