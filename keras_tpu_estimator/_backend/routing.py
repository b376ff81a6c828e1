"""Keras's JAX-backend convolutions and `max_pool`, routed to the CPU lowerings.

`install()` (run when `keras_tpu_estimator` is imported) replaces `conv`,
`depthwise_conv`, `conv_transpose` and `max_pool` of Keras's JAX backend, so
`keras.ops`, `keras.layers.Conv*`, `DepthwiseConv*`, `SeparableConv*`,
`Conv*Transpose`, `MaxPooling*` and this library's `tf.compat.v1` layers all
reach them. Each traced call takes the first lowering that applies:

- `conv`: `im2col` (one matrix product) where the output has at most
  `im2col.MAX_OUTPUT_POSITIONS` positions per image, else TensorFlow's oneDNN
  kernels (`tf_kernels`) where `tf_kernels.supports` it, else Keras's own;
- `depthwise_conv` and `conv_transpose`: `tf_kernels`, else Keras's own;
- `max_pool`: `tiled_pool` for non-overlapping windows, else Keras's own.

None applies off the CPU backend, with `KTE_CPU_CONV=0`, or inside
`lowering.xla_only()` (see `lowering`).
"""

import jax
from jax import numpy as jnp

from keras_tpu_estimator._backend import im2col
from keras_tpu_estimator._backend import tf_kernels
from keras_tpu_estimator._backend import tiled_pool

_LAYOUTS = ("channels_last", "channels_first")


def _layout(data_format):
    import keras  # noqa: PLC0415  (not at import: Keras may be reloaded on JAX first)

    return data_format or keras.config.image_data_format()


def _operands(inputs, kernel, padding, layout):
    """`(inputs, kernel)` as arrays of the kernel's dtype where a lowering may
    apply (`"valid"`/`"same"` padding, a known layout); else None."""
    plain = isinstance(padding, str) and padding.lower() in ("valid", "same")
    if not plain or layout not in _LAYOUTS:
        return None
    kernel = jnp.asarray(kernel)
    return jnp.asarray(inputs, dtype=kernel.dtype), kernel


def make_conv(keras_conv):
    """Keras's backend `conv` with the CPU lowerings in front of `keras_conv`."""

    def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
        layout = _layout(data_format)
        operands = _operands(inputs, kernel, padding, layout)
        if operands is not None:
            inputs_t, kernel_t = operands
            args = (strides, padding.lower(), dilation_rate)
            if im2col.use_im2col(inputs_t, kernel_t, *args, layout):
                return im2col.im2col_conv(inputs_t, kernel_t, *args, layout)
            if tf_kernels.supports(inputs_t, kernel_t, *args, layout):
                return tf_kernels.conv(inputs_t, kernel_t, *args, layout)
        return keras_conv(inputs, kernel, strides=strides, padding=padding,
                          data_format=data_format, dilation_rate=dilation_rate)

    return conv


def make_depthwise_conv(keras_depthwise_conv):
    """Keras's backend `depthwise_conv` with TensorFlow's kernels in front."""

    def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None,
                       dilation_rate=1):
        layout = _layout(data_format)
        operands = _operands(inputs, kernel, padding, layout)
        if operands is not None:
            inputs_t, kernel_t = operands
            if tf_kernels.supports(inputs_t, kernel_t, strides, padding, dilation_rate,
                                   layout, depthwise=True):
                return tf_kernels.depthwise_conv(
                    inputs_t, kernel_t, strides, padding.lower(), layout)
        return keras_depthwise_conv(inputs, kernel, strides=strides, padding=padding,
                                    data_format=data_format, dilation_rate=dilation_rate)

    return depthwise_conv


def make_conv_transpose(keras_conv_transpose):
    """Keras's backend `conv_transpose` with TensorFlow's kernels in front."""

    def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None,
                       data_format=None, dilation_rate=1):
        def keras_own(a, b):
            return keras_conv_transpose(
                a, b, strides=strides, padding=padding, output_padding=output_padding,
                data_format=data_format, dilation_rate=dilation_rate)

        layout = _layout(data_format)
        operands = _operands(inputs, kernel, padding, layout)
        if output_padding is None and operands is not None:
            inputs_t, kernel_t = operands
            if tf_kernels.supports(inputs_t, kernel_t, strides, padding, dilation_rate,
                                   layout, transpose=True):
                shape = jax.eval_shape(keras_own, inputs_t, kernel_t).shape
                return tf_kernels.conv_transpose(
                    inputs_t, kernel_t, shape, strides, padding.lower(), layout)
        return keras_own(inputs, kernel)

    return conv_transpose


def make_max_pool(keras_max_pool):
    """Keras's backend `max_pool` with `tiled_pool` in front of `keras_max_pool`."""

    def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
        layout = _layout(data_format)
        x = jnp.asarray(inputs)
        if layout in _LAYOUTS and tiled_pool.use_tiled(x, pool_size, strides, padding):
            return tiled_pool.tiled_max_pool(x, pool_size, padding, layout)
        return keras_max_pool(inputs, pool_size, strides=strides, padding=padding,
                              data_format=data_format)

    return max_pool


_MAKERS = {
    "conv": make_conv,
    "depthwise_conv": make_depthwise_conv,
    "conv_transpose": make_conv_transpose,
    "max_pool": make_max_pool,
}


def install():
    """Routes Keras's JAX-backend functions through the lowerings (idempotent)."""
    from keras_tpu_estimator._keras_internals import backend_nn  # noqa: PLC0415

    for name, make in _MAKERS.items():
        backend_nn.install(name, make)


def uninstall():
    """Gives Keras its own backend functions back."""
    from keras_tpu_estimator._keras_internals import backend_nn  # noqa: PLC0415

    for name in _MAKERS:
        backend_nn.uninstall(name)
