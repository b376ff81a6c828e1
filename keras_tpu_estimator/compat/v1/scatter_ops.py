"""TF1's index-tuple ops: `tf.gather_nd`, `tf.scatter_nd`, `tf.tensor_scatter_nd_update`, ...

An index tuple is the last axis of `indices`: with `k = indices.shape[-1]`,
`indices[..., :]` addresses the slice `tensor[i0, ..., ik-1]` of rank
`rank(tensor) - k`. `gather_nd` reads those slices; `scatter_nd` adds
`updates` into zeros of `shape` at them; `tensor_scatter_nd_*` update a copy
of `tensor` at them (set, add, subtract, minimum, maximum). Same
conventions as `ops`: TF1's argument names, `name` accepted and ignored.

Duplicate index tuples: `scatter_nd`, `tensor_scatter_nd_add` and `_sub`
accumulate every update (TF's sum), `_min`/`_max` keep the extreme;
`tensor_scatter_nd_update` keeps one of them (which one is unspecified, as
in TF).

Out-of-range index tuples (negative ones included) are handled as
TensorFlow does on TPU, where XLA compiles these ops: a scatter ignores the
update, a gather reads the nearest slice in range (the index clamped). TF
on CPU raises an error instead, and TF's GPU gathers read zeros.

```python
# Mask 15% of the tokens: ids at `positions` become the [MASK] id.
masked = tf1.tensor_scatter_nd_update(ids, positions, tf1.fill([n], 103))
counts = tf1.scatter_nd(ids[:, None], tf1.ones_like(ids), [vocab_size])
```
"""

import jax
import jax.numpy as jnp
import numpy as np
from keras import ops

from keras_tpu_estimator.compat.v1._op_helpers import as_tensor as _as_tensor
from keras_tpu_estimator.compat.v1._op_helpers import shape_tuple as _shape
from keras_tpu_estimator.compat.v1._symbolic import symbolic_ops as _symbolic_ops


def _batched(fn, batch_dims, *arrays):
    """`fn` applied to each of the leading `batch_dims` axes' slices of `arrays` alike."""
    for _ in range(batch_dims):
        fn = jax.vmap(fn)
    return fn(*arrays)


def _batch_dims(batch_dims, indices, most):
    """`batch_dims` (negative: from the end of `indices`' axes), checked to be at most `most`."""
    rank = len(indices.shape)
    batch_dims = batch_dims + rank if batch_dims < 0 else batch_dims
    if not 0 <= batch_dims <= most:
        raise ValueError(f"batch_dims={batch_dims} must be in [0, {most}] for indices of rank "
                         f"{rank}.")
    return batch_dims


def batched_take(params, indices, axis=None, batch_dims=0):
    """TF's `gather(params, indices, axis=axis, batch_dims=batch_dims)` with `batch_dims` > 0.

    Each of the leading `batch_dims` axes' elements gathers along `axis`
    (default: `batch_dims`) of its own `params` slice; indices are clamped
    into range. Returns `params.shape[:axis] + indices.shape[batch_dims:] +
    params.shape[axis + 1:]`.
    """
    params, indices = _as_tensor(params), _as_tensor(indices)
    batch_dims = _batch_dims(batch_dims, indices, len(indices.shape))
    axis = batch_dims if axis is None else axis
    axis = axis + len(params.shape) if axis < 0 else axis
    if axis < batch_dims:
        raise ValueError(f"gather(): axis {axis} must not be less than batch_dims {batch_dims}.")
    inner = axis - batch_dims

    def take(p, i):
        return jnp.take(p, jnp.clip(i, 0, p.shape[inner] - 1), axis=inner)

    return _batched(take, batch_dims, params, indices)


def _index_tuple(indices, dims, clamp):
    """The columns of `indices` (last axis) as index arrays into axes of sizes `dims`.

    `clamp`: clamp each column into `[0, dim)` (gather); else map negative
    indices past the end, where a scatter in mode 'drop' ignores them.
    """
    columns = []
    for axis, dim in enumerate(dims):
        column = indices[..., axis]
        if clamp:
            column = jnp.clip(column, 0, dim - 1)
        else:
            column = jnp.where(column < 0, dim, column)
        columns.append(column)
    return tuple(columns)


def _check_depth(indices, tensor):
    depth = indices.shape[-1]
    if depth is None or depth > len(tensor.shape):
        raise ValueError(
            f"The index tuples of indices {tuple(indices.shape)} are longer than the "
            f"rank of the tensor {tuple(tensor.shape)}."
        )
    return depth


def gather_nd(params, indices, name=None, batch_dims=0):
    """The slices of `params` at the index tuples in the last axis of `indices`.

    Args:
        params: a tensor.
        indices: integer index tuples, shape `[..., k]` (`k <= rank(params)`).
        name: ignored.
        batch_dims: the number of leading axes `params` and `indices` share:
            each batch element gathers from its own `params` slice.

    Returns:
        A tensor of shape `indices.shape[:-1] + params.shape[batch_dims + k:]`.
    """
    params, indices = _as_tensor(params), _as_tensor(indices)
    batch_dims = _batch_dims(batch_dims, indices, len(indices.shape) - 1)

    def gather(p, i):
        depth = _check_depth(i, p)
        return p[_index_tuple(i, p.shape[:depth], clamp=True)]

    return _batched(gather, batch_dims, params, indices)


def batch_gather(params, indices, name=None):
    """`gather(params, indices, batch_dims=rank(indices) - 1)`: per-row gathers.

    Args:
        params: a tensor `[B..., N, ...]`.
        indices: integer ids `[B..., M]` into the axis after the batch axes.
        name: ignored.

    Returns:
        A tensor `[B..., M, ...]`.
    """
    indices = _as_tensor(indices)
    return batched_take(params, indices, batch_dims=len(indices.shape) - 1)


def _scatter(method, doc):
    def scatter(tensor, indices, updates, name=None):
        tensor, indices = _as_tensor(tensor), _as_tensor(indices)
        python = isinstance(updates, (np.ndarray, np.generic)) or not hasattr(updates, "dtype")
        updates = _as_tensor(updates, tensor.dtype if python else None)
        if updates.dtype != tensor.dtype:
            raise TypeError(f"updates ({updates.dtype}) and tensor ({tensor.dtype}) must have "
                            "the same dtype.")
        depth = _check_depth(indices, tensor)
        at = tensor.at[_index_tuple(indices, tensor.shape[:depth], clamp=False)]
        if method == "sub":
            return at.add(ops.negative(updates), mode="drop")
        return getattr(at, method)(updates, mode="drop")

    scatter.__doc__ = doc + """

    Args:
        tensor: the tensor to update (it is not changed: a copy is returned).
        indices: integer index tuples, shape `[..., k]` (`k <= rank(tensor)`).
        updates: the values, shape `indices.shape[:-1] + tensor.shape[k:]`
            and `tensor`'s dtype.
        name: ignored.

    Returns:
        The updated copy of `tensor`.
    """
    return scatter


tensor_scatter_nd_update = _scatter(
    "set", "`tensor` with the slices at `indices` replaced by `updates`.")
tensor_scatter_nd_add = _scatter(
    "add", "`tensor` with `updates` added at `indices` (duplicates each added).")
tensor_scatter_nd_sub = _scatter(
    "sub", "`tensor` with `updates` subtracted at `indices` (duplicates each subtracted).")
tensor_scatter_nd_min = _scatter(
    "min", "`tensor` with the minimum of it and `updates` at `indices`.")
tensor_scatter_nd_max = _scatter(
    "max", "`tensor` with the maximum of it and `updates` at `indices`.")
# TF1's earlier names.
tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub


def scatter_nd(indices, updates, shape, name=None):
    """Zeros of `shape` with `updates` added at the index tuples `indices`.

    Duplicate index tuples add up, as in TF.

    Args:
        indices: integer index tuples, shape `[..., k]` (`k <= len(shape)`).
        updates: the values, shape `indices.shape[:-1] + shape[k:]`; the
            result has their dtype (TF's inference for Python values).
        shape: the result's shape (a list, tuple or `shape()` array).
        name: ignored.

    Returns:
        A tensor of `shape`.
    """
    updates = _as_tensor(updates)
    zeros = jnp.zeros(_shape(shape), updates.dtype)
    return tensor_scatter_nd_add(zeros, indices, updates)


__all__ = [
    "batch_gather", "gather_nd", "scatter_nd", "tensor_scatter_add", "tensor_scatter_nd_add",
    "tensor_scatter_nd_max", "tensor_scatter_nd_min", "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update", "tensor_scatter_sub", "tensor_scatter_update",
]

# Every op runs in the symbolic build pass as in the step (see `_symbolic`).
_symbolic_ops(globals())
