"""Convolutions as one matrix product (im2col) on XLA:CPU.

XLA:CPU's convolution kernel is slow at the small spatial sizes that the
deep layers of a CNN reach on small images (a 3x3 convolution over 512
channels at 1x1 pixels, batch 32, runs ~10x slower than the same arithmetic
as a matrix product). `im2col_conv` computes the convolution as the
concatenation of the shifted input windows that the kernel taps read,
multiplied once by the kernel reshaped to `[taps * in, out]`; taps that
only ever read padding (the 8 outer taps of a 3x3 "same" convolution at 1x1
pixels) are dropped, with their rows of the kernel. Its gradients are the
gradients of slices, a concatenation and a product: matrix products too.

`routing` uses it for the convolutions `use_im2col` accepts (on the CPU
backend, while `lowering.enabled()`).

```python
out = im2col_conv(x, kernel, strides=(1, 1), padding="same")   # NHWC, HWIO
```
"""

import itertools
import math

import numpy as np
from jax import lax
from jax import numpy as jnp

from keras_tpu_estimator._backend import lowering

# Up to this many output positions per image (2x2), the im2col product beat
# XLA:CPU's convolution on every ResNet-18 shape (1.3x to 24x, forward +
# backward); at 4x4 (16 positions) it lost (0.5x). benchmarks/bench_conv.py
# measures it.
MAX_OUTPUT_POSITIONS = 4


def _kept_taps(size, taps, stride, dilation, pad_lo, out_size):
    """Indices of the kernel taps that read real input for some output position."""
    kept = []
    for tap in range(taps):
        offset = tap * dilation - pad_lo
        if any(0 <= o * stride + offset < size for o in range(out_size)):
            kept.append(tap)
    return kept


def im2col_conv(inputs, kernel, strides=1, padding="valid", dilation_rate=1,
                data_format="channels_last"):
    """N-D convolution of `inputs` with `kernel` as one matrix product.

    Computes what `jax.lax.conv_general_dilated` computes for a convolution
    without feature groups, with Keras's layouts.

    Args:
        inputs: `[batch, *spatial, in]` (`"channels_last"`) or
            `[batch, in, *spatial]` (`"channels_first"`).
        kernel: `[*kernel_spatial, in, out]`.
        strides: int or one int per spatial dimension.
        padding: `"valid"` or `"same"` (either case).
        dilation_rate: int or one int per spatial dimension.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        The convolution, in `data_format`.

    Raises:
        ValueError: for an unknown `padding` or `data_format`, or a kernel
            whose input channels differ from the input's.

    Example:

    >>> x = jnp.ones((2, 5, 5, 3)); k = jnp.ones((3, 3, 3, 4))
    >>> im2col_conv(x, k, padding="same").shape
    (2, 5, 5, 4)
    """
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(
            "Argument `data_format` must be 'channels_last' or 'channels_first', "
            f"received {data_format!r}."
        )
    if not isinstance(padding, str) or padding.lower() not in ("valid", "same"):
        raise ValueError(f"Argument `padding` must be 'valid' or 'same', received {padding!r}.")
    rank = inputs.ndim - 2
    if data_format == "channels_first":
        inputs = jnp.moveaxis(inputs, 1, -1)
    if kernel.ndim != rank + 2 or kernel.shape[-2] != inputs.shape[-1]:
        raise ValueError(
            f"Argument `kernel` must have shape [*{rank} spatial, in={inputs.shape[-1]}, out], "
            f"received shape {tuple(kernel.shape)} for inputs of shape {tuple(inputs.shape)}."
        )
    strides = lowering.spatial_tuple(strides, rank, "strides")
    dilation = lowering.spatial_tuple(dilation_rate, rank, "dilation_rate")
    sizes = inputs.shape[1:-1]
    taps = kernel.shape[:rank]
    dilated = [(t - 1) * d + 1 for t, d in zip(taps, dilation)]
    pads = lax.padtype_to_pads(sizes, dilated, strides, padding.upper())
    outs = [(s + lo + hi - k) // st + 1 for s, (lo, hi), k, st in zip(sizes, pads, dilated, strides)]
    kept = [
        _kept_taps(s, t, st, d, lo, o)
        for s, t, st, d, (lo, _), o in zip(sizes, taps, strides, dilation, pads, outs)
    ]
    result = _windows_product(inputs, kernel, strides, dilation, pads, outs, kept)
    if data_format == "channels_first":
        result = jnp.moveaxis(result, -1, 1)
    return result


def _windows_product(inputs, kernel, strides, dilation, pads, outs, kept):
    rank = len(strides)
    batch, channels, filters = inputs.shape[0], inputs.shape[-1], kernel.shape[-1]
    if any(not k for k in kept):  # Every window reads only padding.
        return jnp.zeros((batch, *outs, filters), jnp.result_type(inputs, kernel))
    # Pad only as far as the kept taps read.
    pad_config = [(0, 0, 0)]
    for size, (lo, _), k, d, st, o in zip(inputs.shape[1:-1], pads, kept, dilation, strides, outs):
        first = k[0] * d - lo
        last = (o - 1) * st + k[-1] * d - lo
        pad_config.append((max(0, -first), max(0, last - size + 1), 0))
    pad_config.append((0, 0, 0))
    padded = lax.pad(inputs, jnp.zeros((), inputs.dtype), pad_config)
    origin = [k[0] * d - lo + p[0] for k, d, (lo, _), p in zip(kept, dilation, pads, pad_config[1:])]
    windows = []
    for tap in itertools.product(*kept):
        start = [o + (t - k[0]) * d for o, t, k, d in zip(origin, tap, kept, dilation)]
        limit = [s + (n - 1) * st + 1 for s, n, st in zip(start, outs, strides)]
        windows.append(lax.slice(
            padded, [0, *start, 0], [batch, *limit, channels], [1, *strides, 1]))
    patches = windows[0] if len(windows) == 1 else jnp.concatenate(windows, axis=-1)
    sub_kernel = kernel
    for axis, k in enumerate(kept):
        if len(k) != kernel.shape[axis]:
            sub_kernel = jnp.take(sub_kernel, np.asarray(k), axis=axis)
    columns = math.prod(len(k) for k in kept) * channels
    product = jnp.dot(
        patches.reshape(-1, columns), sub_kernel.reshape(columns, filters),
        preferred_element_type=None,
    )
    return product.reshape(batch, *outs, filters)


def use_im2col(inputs, kernel, strides, padding, dilation_rate, data_format):
    """Whether `conv` computes this convolution with `im2col_conv`.

    True on the CPU backend (unless `KTE_CPU_CONV` turns it off) for a
    floating-point convolution without feature groups whose output has at
    most `MAX_OUTPUT_POSITIONS` positions per image.
    """
    if not lowering.enabled():
        return False
    channels = inputs.shape[-1] if data_format == "channels_last" else inputs.shape[1]
    if kernel.ndim != inputs.ndim or kernel.shape[-2] != channels:  # Feature groups.
        return False
    if not jnp.issubdtype(jnp.result_type(inputs, kernel), jnp.floating):
        return False
    positions = lowering.output_positions(
        inputs.shape, kernel.shape, strides, padding, dilation_rate, data_format)
    return 0 < positions <= MAX_OUTPUT_POSITIONS
