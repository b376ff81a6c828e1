"""Max pooling over non-overlapping windows as a reshape and a max, on XLA:CPU.

Keras pools with `lax.reduce_window`, whose gradient (`select_and_scatter_add`)
is slow on XLA:CPU: in the corpus's mnist CNN (two 2x2 stride-2 poolings,
batch 64) it takes about half of a training step. When the windows do not
overlap (`strides == pool_size`), `tiled_max_pool` splits every spatial axis
into (output position, offset in the window) and takes the max over the
offsets; its gradient goes, like `select_and_scatter_add`'s, to the first
maximum of each window (in row-major window order), as an elementwise select.

`routing` sends Keras's `keras.ops.max_pool` (and
`keras.layers.MaxPooling1D/2D/3D`) to it on the CPU backend, while
`lowering.enabled()`.

```python
out = tiled_max_pool(x, (2, 2), "same")    # NHWC -> N, ceil(H/2), ceil(W/2), C
```
"""

import itertools

import jax
from jax import lax
from jax import numpy as jnp

from keras_tpu_estimator._backend import lowering


def _window_pads(size, window, padding):
    if padding == "valid":
        return 0, -(size % window)  # crop the last, partial window
    total = -size % window
    return total // 2, total - total // 2


def _split(x, window, axes):
    """`x` with spatial axis `a` split into (output position, window offset)."""
    shape = []
    for axis, dim in enumerate(x.shape):
        if axis in axes:
            k = window[axes.index(axis)]
            shape += [dim // k, k]
        else:
            shape.append(dim)
    return x.reshape(shape)


def _offset_axes(axes):
    # After `_split`, spatial axis axes[i] has its offsets at axes[i] + i + 1.
    return tuple(a + i + 1 for i, a in enumerate(axes))


def _tiled_max_value(x, window, axes):
    return jnp.max(_split(x, window, axes), axis=_offset_axes(axes))


def _tiled_max_fwd(x, window, axes):
    out = _tiled_max_value(x, window, axes)
    return out, (x, out)


def _tiled_max_bwd(window, axes, res, g):
    x, out = res
    split = _split(x, window, axes)
    offset_axes = _offset_axes(axes)
    out_b = jnp.expand_dims(out, offset_axes)
    g_b = jnp.expand_dims(g, offset_axes)
    taken = jnp.zeros(out_b.shape, bool)
    pieces = []
    for offsets in itertools.product(*(range(k) for k in window)):
        index = [slice(None)] * split.ndim
        for axis, o in zip(offset_axes, offsets):
            index[axis] = slice(o, o + 1)
        first = (split[tuple(index)] == out_b) & ~taken
        taken = taken | first
        pieces.append(jnp.where(first, g_b, jnp.zeros((), g.dtype)))
    # Put the pieces back at their offsets: nested concatenation, last axis first.
    grid = pieces
    for axis_pos in reversed(range(len(axes))):
        k = window[axis_pos]
        grid = [jnp.concatenate(grid[i:i + k], axis=offset_axes[axis_pos])
                for i in range(0, len(grid), k)]
    return (grid[0].reshape(x.shape),)


_tiled_max = jax.custom_vjp(_tiled_max_value, nondiff_argnums=(1, 2))
_tiled_max.defvjp(_tiled_max_fwd, _tiled_max_bwd)


def tiled_max_pool(inputs, pool_size, padding="valid", data_format="channels_last"):
    """Max pooling with `strides == pool_size`, as Keras's `max_pool` computes it.

    Args:
        inputs: `[batch, *spatial, channels]` or `[batch, channels, *spatial]`.
        pool_size: one int per spatial dimension (or one int for all).
        padding: `"valid"` (partial windows dropped) or `"same"` (padded
            with -inf to whole windows, as `lax.reduce_window` pads).
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        The pooled tensor, in `data_format`.

    Raises:
        ValueError: for an unknown `padding` or `data_format`, or a
            `pool_size` that is not one positive int per spatial dimension.
    """
    if padding not in ("valid", "same"):
        raise ValueError(f"Argument `padding` must be 'valid' or 'same', received {padding!r}.")
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(
            "Argument `data_format` must be 'channels_last' or 'channels_first', "
            f"received {data_format!r}."
        )
    rank = inputs.ndim - 2
    window = lowering.spatial_tuple(pool_size, rank, "pool_size")
    if any(k < 1 for k in window):
        raise ValueError(f"Argument `pool_size` must be positive, received {pool_size!r}.")
    axes = tuple(range(1, rank + 1)) if data_format == "channels_last" else tuple(
        range(2, rank + 2))
    config = [(0, 0, 0)] * inputs.ndim
    for axis, k in zip(axes, window):
        lo, hi = _window_pads(inputs.shape[axis], k, padding)
        config[axis] = (lo, hi, 0)
    if any(c != (0, 0, 0) for c in config):
        inputs = lax.pad(inputs, jnp.array(-jnp.inf, inputs.dtype), config)
    return _tiled_max(inputs, window, axes)


def use_tiled(inputs, pool_size, strides, padding):
    """Whether `max_pool` uses `tiled_max_pool`: CPU, float, windows that do not overlap."""
    if not lowering.enabled():
        return False
    if padding not in ("valid", "same") or not jnp.issubdtype(inputs.dtype, jnp.floating):
        return False
    rank = inputs.ndim - 2
    try:
        window = lowering.spatial_tuple(pool_size, rank, "pool_size")
        steps = window if strides is None else lowering.spatial_tuple(strides, rank, "strides")
    except ValueError:
        return False
    return window == steps and all(k >= 1 for k in window)
