"""TensorFlow's CPU convolution kernels (oneDNN), called from compiled JAX steps.

On the CPU, XLA's convolutions reach a fifth to a half of the FLOP/s of the
oneDNN kernels TensorFlow runs (`benchmarks/bench_conv.py`), and TensorFlow is
already a dependency. `conv`, `depthwise_conv` and `conv_transpose` compute
what Keras's JAX backend computes, by calling TensorFlow's `Conv2D`,
`Conv2DBackpropInput` and `Conv2DBackpropFilter` kernels (their
`DepthwiseConv2dNative` family for depthwise convolutions): each op one
`tf_ffi` custom call where it is available, else through
`jax.experimental.buffer_callback` (arguments aliased, results written into
XLA's buffers); their gradients are
`jax.custom_vjp`s through the same kernels (the input's gradient only when the
input is differentiated: a first layer pays for its kernel's alone).

`supports(...)` says which convolutions qualify: float32, 1-D or 2-D, no
feature groups, `"valid"`/`"same"` padding, not both strides and dilation
above 1, outputs of at least `MIN_OUTPUT_POSITIONS` positions per image,
traced on the CPU backend (`lowering.enabled()`) for one device.
Everything else, and every GPU and TPU, keeps XLA's convolutions.

```python
y = tf_kernels.conv(x, kernel, strides=(1, 1), padding="same",
                    dilation_rate=(1, 1), data_format="channels_last")
```
"""

import functools
import math

import jax
import numpy as np
from jax import numpy as jnp
from jax.experimental import buffer_callback

from keras_tpu_estimator._backend import lowering
from keras_tpu_estimator._backend import tf_ffi
from keras_tpu_estimator._backend import warm_up
from keras_tpu_estimator._keras_internals import callback_cache


@functools.cache
def _tf():
    import tensorflow as tf  # noqa: PLC0415  (imported at trace time, never in a callback)

    return tf


# A call into TensorFlow costs about 0.4 ms (three per trained convolution),
# which XLA's own convolution beats at small outputs: at 8x8 (a ResNet stem at
# 16x16, batch 32) XLA took 0.34x the time, at 14x14 (MNIST's second
# convolution, batch 64) 2.2x (`benchmarks/bench_conv.py`).
MIN_OUTPUT_POSITIONS = 100


def _single_device():
    import keras  # noqa: PLC0415  (not at import: Keras may be reloaded on JAX first)

    distribution = keras.distribution.distribution()
    return distribution is None or distribution.device_mesh.devices.size <= 1


def supports(inputs, kernel, strides, padding, dilation_rate, data_format="channels_last",
             transpose=False, depthwise=False):
    """Whether `conv` (or `conv_transpose`) computes this convolution with TF's kernels.

    Args:
        inputs: the input (any array with `.shape`/`.dtype`).
        kernel: the kernel, `[*spatial, in, out]` (`[*spatial, out, in]` for
            a transposed convolution).
        strides, dilation_rate: int or one int per spatial dimension.
        padding: the padding argument as given to Keras.
        data_format: `"channels_last"` or `"channels_first"`.
        transpose: whether the convolution is transposed.
        depthwise: whether it is depthwise (kernel `[*spatial, in, multiplier]`;
            TensorFlow's depthwise kernels take no dilation).

    Returns:
        True when all of `lowering.enabled()`, one device, float32 values,
        1 or 2 spatial dimensions, no feature groups, `"valid"`/`"same"`
        padding, not both strides and dilation above 1, and at least
        `MIN_OUTPUT_POSITIONS` output positions per image hold.
    """
    rank = inputs.ndim - 2
    if rank not in (1, 2) or kernel.ndim != inputs.ndim:
        return False
    channels = inputs.shape[-1] if data_format == "channels_last" else inputs.shape[1]
    if kernel.shape[-1 if transpose else -2] != channels:  # Feature groups.
        return False
    if not isinstance(padding, str) or padding.lower() not in ("valid", "same"):
        return False
    if jnp.result_type(inputs.dtype, kernel.dtype) != jnp.float32:
        return False
    try:
        strides = lowering.spatial_tuple(strides, rank, "strides")
        dilation = lowering.spatial_tuple(dilation_rate, rank, "dilation_rate")
    except ValueError:
        return False
    if max(strides) > 1 and max(dilation) > 1:
        return False
    if (transpose or depthwise) and max(dilation) > 1:
        return False
    if transpose:  # The output of a transposed convolution: the input, times the strides.
        sizes = inputs.shape[1:-1] if data_format == "channels_last" else inputs.shape[2:]
        positions = math.prod(sizes) * math.prod(strides)
    else:
        positions = lowering.output_positions(
            inputs.shape, kernel.shape, strides, padding, dilation, data_format)
    if positions < MIN_OUTPUT_POSITIONS:
        return False
    if not lowering.enabled() or not _single_device():
        return False
    _tf()
    return True


class _Geometry(tuple):
    """(strides, padding, dilations) in TensorFlow's NHWC form, and whether the
    convolution is depthwise; hashable, static."""

    def __new__(cls, strides, padding, dilation, depthwise=False):
        return super().__new__(
            cls, ((1, *strides, 1), padding.upper(), (1, *dilation, 1), depthwise))

    @property
    def kwargs(self):
        strides, padding, dilations, _ = self
        return {"strides": strides, "padding": padding, "dilations": dilations}

    @property
    def depthwise(self):
        return self[3]


# (value, input gradient, kernel gradient): TensorFlow's kernels of each kind.
_OPS = {
    False: ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"),
    True: ("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
           "DepthwiseConv2dNativeBackpropFilter"),
}


def _op(geometry, which):
    return getattr(_tf().raw_ops, _OPS[geometry.depthwise][which])


_TF_ALIGNMENT = 64  # TensorFlow's CPU tensors alias only buffers aligned to 64 bytes.


def _tensor(buffer):
    """An XLA buffer as a TensorFlow tensor, aliased (DLPack) where TensorFlow allows.

    Aliasing saves a copy per argument (about a millisecond per 8 MB on a
    2-core CPU); the buffer lives while the callback runs.
    """
    tf = _tf()
    array = np.asarray(buffer)
    if array.flags.c_contiguous and array.ctypes.data % _TF_ALIGNMENT == 0:
        return tf.experimental.dlpack.from_dlpack(buffer.__dlpack__())
    return tf.constant(array)


_PREPARED = set()  # (what, geometry, shapes) whose kernels were warmed up.


def _kernels(key, fns, args):
    """A host function computing every `fn(*tensors)`, TensorFlow's ops run eagerly.

    Each op goes straight to its kernel (`tf.raw_ops`): a `tf.function`'s
    call cost 0.1-0.3 ms more per call (`benchmarks/bench_conv.py`), which
    counted on small convolutions (MNIST's, at 14x14). The ops of a gradient
    (the input's and the kernel's) run one after the other, each on all of
    TensorFlow's threads, in one callback: XLA:CPU runs host callbacks one
    at a time, so two callbacks would not overlap either (and on two threads
    of one callback the two ops gained at most 5%). The first time `key` (what
    `fns` compute, with which geometry) meets these shapes, the kernels run
    once on zeros on the warm-up thread: their first call instantiates them
    and generates oneDNN's code.
    """
    key = (key, tuple((tuple(a.shape), str(a.dtype)) for a in args))

    def run(*tensors):
        return [fn(*tensors) for fn in fns]

    if key not in _PREPARED:
        _PREPARED.add(key)
        if sum(math.prod(a.shape) * a.dtype.itemsize for a in args) <= MAX_WARM_UP_BYTES:
            warm_up.beside(_warm_up, run, [(tuple(a.shape), a.dtype) for a in args])
    return run


# Kernels whose arguments weigh more are not warmed up: their first call's
# set-up weighs less against their work, and zeros that size would take memory.
MAX_WARM_UP_BYTES = 64 << 20


def _warm_up(run, shapes):
    tf = _tf()
    run(*[tf.zeros(shape, dtype) for shape, dtype in shapes])


@functools.cache
def _sizes(shape):
    """`shape` as the int32 tensor TensorFlow's backprop kernels take (made once)."""
    return _tf().constant(shape, "int32")


def _host(run):
    """A `buffer_callback` running `run` into XLA's output buffers."""

    @callback_cache.mark  # Programs calling it are persistently cached.
    def on_host(ctx, out, *buffers):
        del ctx
        results = run(*[_tensor(b) for b in buffers])
        for buffer, result in zip(out if isinstance(out, (tuple, list)) else (out,), results):
            np.asarray(buffer)[...] = result

    return on_host


def _struct(shape, like):
    return jax.ShapeDtypeStruct(tuple(shape), like.dtype)


def _call(ops, out, *args, geometry):
    """Runs TensorFlow's `ops` (one per result in `out`) on `args` from compiled code.

    Each op is `(which, (i, j))`: the op of `_OPS` (0 the value, 1 the input
    gradient, 2 the kernel gradient) and the positions in `args` of its two
    tensor inputs; a backprop op's sizes are its result's shape. Through
    `tf_ffi` when it is available, each op is one custom call; else all of
    them run in one Python callback. The kernels of the same ops, geometry
    and shapes are warmed up once.
    """
    outs = out if isinstance(out, tuple) else (out,)
    fns = tuple(
        functools.partial(_tf_op, which, geometry, i, j, o.shape)
        for (which, (i, j)), o in zip(ops, outs))
    run = _kernels((ops, geometry, tuple(o.shape for o in outs)), fns, args)
    if tf_ffi.available():
        results = tuple(
            tf_ffi.call(_OPS[geometry.depthwise][which], args[i], args[j], o.shape,
                        sizes_at=(None, 0, 1)[which], **geometry.kwargs)
            for (which, (i, j)), o in zip(ops, outs))
        return results if isinstance(out, tuple) else results[0]
    return buffer_callback.buffer_callback(_host(run), out, vmap_method="sequential")(*args)


def _tf_op(which, geometry, i, j, shape, *tensors):
    """TensorFlow's op `which` on `tensors[i]` and `tensors[j]`, eagerly."""
    a, b = tensors[i], tensors[j]
    op = _op(geometry, which)
    if which == 0:
        return op(input=a, filter=b, **geometry.kwargs)
    if which == 1:
        return op(input_sizes=_sizes(tuple(shape)), filter=a, out_backprop=b, **geometry.kwargs)
    return op(input=a, filter_sizes=_sizes(tuple(shape)), out_backprop=b, **geometry.kwargs)


def _conv_shape(x, k, geometry):
    strides, padding, dilations, depthwise = geometry
    groups = x.shape[-1] if depthwise else 1
    kernel_shape = (*k.shape[:2], 1, k.shape[2] * k.shape[3]) if depthwise else k.shape
    return jax.eval_shape(
        lambda a, b: jax.lax.conv_general_dilated(
            a, b, strides[1:3], padding, rhs_dilation=dilations[1:3],
            dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=groups),
        x, jax.ShapeDtypeStruct(kernel_shape, k.dtype)).shape


# conv2d(x, k) = Conv2D; d/dx = Conv2DBackpropInput, d/dk = Conv2DBackpropFilter.
@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _conv2d(x, k, geometry):
    out = _struct(_conv_shape(x, k, geometry), x)
    return _call(((0, (0, 1)),), out, x, k, geometry=geometry)


def _conv2d_fwd(x, k, geometry):
    y = _conv2d(x.value, k.value, geometry)
    return y, (x.value, k.value, x.perturbed)


def _conv2d_bwd(geometry, residuals, g):
    x, k, input_needed = residuals
    if not input_needed:
        dk = _call(((2, (0, 1)),), _struct(k.shape, k), x, g, geometry=geometry)
        return jnp.zeros_like(x), dk
    return _call(((1, (1, 2)), (2, (0, 2))), (_struct(x.shape, x), _struct(k.shape, k)),
                 x, k, g, geometry=geometry)


_conv2d.defvjp(_conv2d_fwd, _conv2d_bwd, symbolic_zeros=True)


# conv2d_transpose(x, k) with output shape s = Conv2DBackpropInput(s, k, x);
# d/dx = Conv2D(g, k), d/dk = Conv2DBackpropFilter(g, k.shape, x).
@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3))
def _conv2d_transpose(x, k, out_shape, geometry):
    return _call(((1, (1, 0)),), _struct(out_shape, x), x, k, geometry=geometry)


def _conv2d_transpose_fwd(x, k, out_shape, geometry):
    y = _conv2d_transpose(x.value, k.value, out_shape, geometry)
    return y, (x.value, k.value, x.perturbed)


def _conv2d_transpose_bwd(out_shape, geometry, residuals, g):
    x, k, input_needed = residuals
    if not input_needed:
        dk = _call(((2, (0, 1)),), _struct(k.shape, k), g, x, geometry=geometry)
        return jnp.zeros_like(x), dk
    return _call(((0, (0, 1)), (2, (0, 2))), (_struct(x.shape, x), _struct(k.shape, k)),
                 g, k, x, geometry=geometry)


_conv2d_transpose.defvjp(_conv2d_transpose_fwd, _conv2d_transpose_bwd, symbolic_zeros=True)


def _as_2d(inputs, kernel, strides, dilation_rate, data_format):
    """NHWC input, HW.. kernel and 2-D geometry for a 1-D or 2-D convolution."""
    rank = inputs.ndim - 2
    if data_format == "channels_first":
        inputs = jnp.moveaxis(inputs, 1, -1)
    strides = lowering.spatial_tuple(strides, rank, "strides")
    dilation = lowering.spatial_tuple(dilation_rate, rank, "dilation_rate")
    if rank == 1:
        inputs, kernel = inputs[:, None], kernel[None]
        strides, dilation = (1, *strides), (1, *dilation)
    return inputs, kernel, strides, dilation


def _from_2d(outputs, rank, data_format):
    if rank == 1:
        outputs = outputs[:, 0]
    if data_format == "channels_first":
        outputs = jnp.moveaxis(outputs, -1, 1)
    return outputs


def conv(inputs, kernel, strides=1, padding="valid", dilation_rate=1,
         data_format="channels_last"):
    """Keras's `conv` (1-D or 2-D) by TensorFlow's CPU kernels.

    Args:
        inputs: `[batch, *spatial, in]` or `[batch, in, *spatial]`, float32.
        kernel: `[*spatial, in, out]`, float32.
        strides: int or one int per spatial dimension.
        padding: `"valid"` or `"same"`.
        dilation_rate: int or one int per spatial dimension.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        The convolution, in `data_format`; differentiable in both arguments.
    """
    rank = inputs.ndim - 2
    x, k, strides, dilation = _as_2d(inputs, kernel, strides, dilation_rate, data_format)
    y = _conv2d(x, k, _Geometry(strides, padding, dilation))
    return _from_2d(y, rank, data_format)


def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format="channels_last"):
    """Keras's `depthwise_conv` (1-D or 2-D, no dilation) by TensorFlow's CPU kernels.

    Args:
        inputs: `[batch, *spatial, in]` or `[batch, in, *spatial]`, float32.
        kernel: `[*spatial, in, multiplier]`, float32.
        strides: int or one int per spatial dimension.
        padding: `"valid"` or `"same"`.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        The depthwise convolution (`in * multiplier` channels), in `data_format`.
    """
    rank = inputs.ndim - 2
    x, k, strides, dilation = _as_2d(inputs, kernel, strides, 1, data_format)
    y = _conv2d(x, k, _Geometry(strides, padding, dilation, depthwise=True))
    return _from_2d(y, rank, data_format)


def conv_transpose(inputs, kernel, output_shape, strides=1, padding="valid",
                   data_format="channels_last"):
    """Keras's `conv_transpose` (1-D or 2-D, no dilation) by TensorFlow's CPU kernels.

    Args:
        inputs: `[batch, *spatial, in]` or `[batch, in, *spatial]`, float32.
        kernel: `[*spatial, out, in]`, float32.
        output_shape: the result's shape in `data_format` (what Keras's
            own `conv_transpose` gives for these arguments).
        strides: int or one int per spatial dimension.
        padding: `"valid"` or `"same"`.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        The transposed convolution, in `data_format`.
    """
    rank = inputs.ndim - 2
    x, k, strides, dilation = _as_2d(inputs, kernel, strides, 1, data_format)
    out = tuple(output_shape)
    if data_format == "channels_first":
        out = (out[0], *out[2:], out[1])
    if rank == 1:
        out = (out[0], 1, *out[1:])
    y = _conv2d_transpose(x, k, out, _Geometry(strides, padding, dilation))
    return _from_2d(y, rank, data_format)
