"""More `tf.compat.v1.layers`: separable and 3D convolutions, `InputSpec`, `instance_norm`.

Exported from `tf1.layers` (see `compat/v1/layers.py`). The layers keep TF1's
variable names: `separable_conv2d/depthwise_kernel`,
`separable_conv2d/pointwise_kernel`, `separable_conv2d/bias`,
`conv3d/kernel`, `conv3d_transpose/kernel`, ..., numbered `_1`, `_2`, ...
as TF1 numbered them.

```python
x = tf1.layers.separable_conv2d(x, 64, 3, padding="same", depth_multiplier=1)
v = tf1.layers.Conv3D(16, (3, 3, 3), padding="same")(volume)
v = tf1.layers.conv3d_transpose(v, 8, 2, strides=2)
```
"""

import keras
from keras import ops

from keras_tpu_estimator.compat.v1 import initializers
from keras_tpu_estimator.compat.v1._layer_base import Layer
from keras_tpu_estimator.compat.v1._layer_base import _padding
from keras_tpu_estimator.compat.v1._layer_base import _regularize
from keras_tpu_estimator.compat.v1._layer_base import _sizes
from keras_tpu_estimator.compat.v1._op_helpers import resolve_initializer
from keras_tpu_estimator.compat.v1.variables import get_variable
from keras_tpu_estimator.compat.v1.variables import variable_scope

# `tf.layers.InputSpec`: what a layer subclass says its inputs must be
# (`ndim`, `axes={-1: channels}`, ...); Keras 3's takes TF1's arguments.
InputSpec = keras.InputSpec


def _init(value, default):
    value = resolve_initializer(value)
    return default if value is None else value


def _data_format(data_format, layer):
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(
            f"Argument `data_format` of tf1.layers.{layer} must be 'channels_last' or "
            f"'channels_first'. Received: data_format={data_format!r}"
        )
    return data_format


class _Separable(Layer):
    keras_class = None

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, depth_multiplier=1,
                 activation=None, use_bias=True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=None,
                 depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, trainable=True, name=None,
                 _reuse=None, _scope=None, **kwargs):
        super().__init__(
            name=name, trainable=trainable, _reuse=_reuse, _scope=_scope, filters=filters,
            kernel_size=_sizes(kernel_size), strides=_sizes(strides),
            padding=_padding(padding, self.base_name),
            data_format=_data_format(data_format, self.base_name),
            dilation_rate=_sizes(dilation_rate), depth_multiplier=depth_multiplier,
            activation=activation, use_bias=use_bias,
            depthwise_initializer=depthwise_initializer,
            pointwise_initializer=pointwise_initializer, bias_initializer=bias_initializer,
            depthwise_regularizer=depthwise_regularizer,
            pointwise_regularizer=pointwise_regularizer, bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer,
            depthwise_constraint=depthwise_constraint,
            pointwise_constraint=pointwise_constraint, bias_constraint=bias_constraint,
        )

    def _make(self):
        c = {k: v for k, v in self._config.items() if not k.endswith("_regularizer")}
        c["depthwise_initializer"] = _init(c["depthwise_initializer"], "glorot_uniform")
        c["pointwise_initializer"] = _init(c["pointwise_initializer"], "glorot_uniform")
        c["bias_initializer"] = _init(c["bias_initializer"], "zeros")
        return self.keras_class(**c, dtype=self._dtype)

    def _add_regularization(self, outputs):
        for attribute in ("depthwise_kernel", "pointwise_kernel"):
            regularizer = self._config[attribute.replace("_kernel", "_regularizer")]
            _regularize(regularizer, getattr(self.keras_layer, attribute, None))
        super()._add_regularization(outputs)


class SeparableConv1D(_Separable):
    """TF1 `tf.layers.SeparableConv1D`: a depthwise then a pointwise 1-D convolution.

    Variables `<name>/depthwise_kernel` (`[w, in, depth_multiplier]`),
    `<name>/pointwise_kernel` (`[1, in * depth_multiplier, filters]`) and
    `<name>/bias` (`[filters]`).
    """

    base_name = "separable_conv1d"
    keras_class = keras.layers.SeparableConv1D


class SeparableConv2D(_Separable):
    """TF1 `tf.layers.SeparableConv2D`: a depthwise then a pointwise convolution.

    Variables `<name>/depthwise_kernel` (`[h, w, in, depth_multiplier]`),
    `<name>/pointwise_kernel` (`[1, 1, in * depth_multiplier, filters]`) and
    `<name>/bias` (`[filters]`).

    Example:

    ```python
    layer = tf1.layers.SeparableConv2D(64, 3, padding="same")
    y = layer(x)    # separable_conv2d/depthwise_kernel, .../pointwise_kernel, .../bias
    ```
    """

    base_name = "separable_conv2d"
    keras_class = keras.layers.SeparableConv2D


class _Conv3DBase(Layer):
    keras_class = None
    dilated = True

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1, 1), activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 _reuse=None, _scope=None, **kwargs):
        super().__init__(
            name=name, trainable=trainable, _reuse=_reuse, _scope=_scope, filters=filters,
            kernel_size=_sizes(kernel_size), strides=_sizes(strides),
            padding=_padding(padding, self.base_name),
            data_format=_data_format(data_format, self.base_name),
            dilation_rate=_sizes(dilation_rate), activation=activation, use_bias=use_bias,
            kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint,
        )

    def _make(self):
        c = {k: v for k, v in self._config.items() if not k.endswith("_regularizer")}
        c["kernel_initializer"] = _init(c["kernel_initializer"], "glorot_uniform")
        c["bias_initializer"] = _init(c["bias_initializer"], "zeros")
        if not self.dilated:
            del c["dilation_rate"]
        return self.keras_class(**c, dtype=self._dtype)


class Conv3D(_Conv3DBase):
    """TF1 `tf.layers.Conv3D`; variables `<name>/kernel` (`[d, h, w, in, filters]`), `<name>/bias`.

    Example:

    ```python
    y = tf1.layers.Conv3D(16, (3, 3, 3), padding="same", name="conv")(volume)
    ```
    """

    base_name = "conv3d"
    keras_class = keras.layers.Conv3D


class Conv3DTranspose(_Conv3DBase):
    """TF1 `tf.layers.Conv3DTranspose`; kernel `[d, h, w, filters, in]`, bias `[filters]`.

    With `padding='same'` each spatial size is multiplied by its stride; with
    'valid' it becomes `(size - 1) * stride + kernel` (or `size * stride` when
    the kernel is smaller than the stride), as in TF1.
    """

    base_name = "conv3d_transpose"
    keras_class = keras.layers.Conv3DTranspose
    dilated = False

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format="channels_last", activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(
            filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
            activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
            kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
            trainable=trainable, name=name, **kwargs,
        )


def _functional(layer_class, doc):
    def apply(inputs, *args, reuse=None, name=None, **kwargs):
        # TF1's functional forms: `name` is the scope itself, not made unique.
        layer = layer_class(*args, _reuse=reuse, name=name, _scope=name, **kwargs)
        return layer(inputs)

    apply.__name__ = apply.__qualname__ = layer_class.base_name
    apply.__doc__ = doc
    return apply


separable_conv1d = _functional(SeparableConv1D, """`tf.layers.separable_conv1d(inputs, filters, kernel_size, strides=1, padding='valid', ..., depth_multiplier=1)`.

Variables `<name>/depthwise_kernel`, `<name>/pointwise_kernel`,
`<name>/bias`, named `separable_conv1d`, `separable_conv1d_1`, ... when
`name` is None. See `SeparableConv1D`.
""")
separable_conv2d = _functional(SeparableConv2D, """`tf.layers.separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding='valid', ..., depth_multiplier=1)`.

Variables `<name>/depthwise_kernel` (`[h, w, in, depth_multiplier]`),
`<name>/pointwise_kernel` (`[1, 1, in * depth_multiplier, filters]`) and
`<name>/bias`, named `separable_conv2d`, `separable_conv2d_1`, ... when
`name` is None.

Example:

```python
conv = functools.partial(tf1.layers.separable_conv2d, depth_multiplier=1)
x = conv(x, 256, 3, padding="same", name="p3")   # p3/depthwise_kernel, ...
```
""")
conv3d = _functional(Conv3D, """`tf.layers.conv3d(inputs, filters, kernel_size, strides=(1, 1, 1), padding='valid', ...)`.

Variables `<name>/kernel` (`[d, h, w, in, filters]`) and `<name>/bias`,
named `conv3d`, `conv3d_1`, ... when `name` is None.
""")
conv3d_transpose = _functional(Conv3DTranspose, """`tf.layers.conv3d_transpose(inputs, filters, kernel_size, strides=(1, 1, 1), padding='valid', ...)`.

Variables `<name>/kernel` (`[d, h, w, filters, in]`) and `<name>/bias`; see
`Conv3DTranspose`.
""")


def instance_norm(inputs, center=True, scale=True, epsilon=1e-6, activation_fn=None,
                  param_initializers=None, reuse=None, variables_collections=None,
                  outputs_collections=None, trainable=True, data_format="NHWC", scope=None):
    """Instance normalization, as `tf.contrib.layers.instance_norm`.

    TF1 had no `tf.layers.instance_norm`; programs that call it (UNet 3D)
    mean contrib's: every example's every channel is normalized over its
    spatial axes, then scaled by `gamma` and shifted by `beta`, one per
    channel. Variables `<scope>/beta` and `<scope>/gamma`, the scope
    defaulting to `InstanceNorm` (`InstanceNorm_1`, ... when repeated).
    Statistics are computed in float32 for half-precision inputs.

    Args:
        inputs: a tensor of rank >= 3: `[batch, ..., channels]` (`NHWC`) or
            `[batch, channels, ...]` (`NCHW`).
        center: add `beta`.
        scale: multiply by `gamma`.
        epsilon: added to the variance.
        activation_fn: applied to the result when given.
        param_initializers: optional `{"beta": init, "gamma": init}`.
        reuse: `variable_scope` reuse.
        variables_collections, outputs_collections: ignored.
        trainable: whether `beta`/`gamma` are trained.
        data_format: `'NHWC'` (channels last) or `'NCHW'` (channels first).
        scope: the variable scope's name.

    Returns:
        The normalized tensor, with the dtype of `inputs`.

    Raises:
        ValueError: for inputs of rank < 3 or another `data_format`.

    Example:

    ```python
    x = tf1.layers.instance_norm(tf1.layers.conv3d(x, 16, 3, padding="same"))
    ```
    """
    del variables_collections, outputs_collections
    rank = len(inputs.shape)
    if rank < 3:
        raise ValueError(
            "instance_norm needs inputs of rank >= 3 ([batch, ..., channels]). Received: "
            f"inputs of shape {tuple(inputs.shape)}"
        )
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(
            "Argument `data_format` of instance_norm must be 'NHWC' or 'NCHW'. Received: "
            f"data_format={data_format!r}"
        )
    channel_axis = rank - 1 if data_format == "NHWC" else 1
    reduction_axes = tuple(a for a in range(1, rank) if a != channel_axis)
    params_shape = [1] * rank
    params_shape[channel_axis] = inputs.shape[channel_axis]
    initial = dict(param_initializers or {})
    with variable_scope(scope, default_name="InstanceNorm", reuse=reuse):
        beta = get_variable(
            "beta", (inputs.shape[channel_axis],),
            initializer=initial.get("beta", initializers.zeros_initializer()),
            trainable=trainable) if center else None
        gamma = get_variable(
            "gamma", (inputs.shape[channel_axis],),
            initializer=initial.get("gamma", initializers.ones_initializer()),
            trainable=trainable) if scale else None
    dtype = inputs.dtype
    x = ops.cast(inputs, "float32") if dtype in ("bfloat16", "float16") else inputs
    mean, variance = ops.moments(x, axes=reduction_axes, keepdims=True)
    outputs = (x - mean) * ops.rsqrt(variance + epsilon)
    if gamma is not None:
        outputs = outputs * ops.reshape(ops.cast(gamma, outputs.dtype), params_shape)
    if beta is not None:
        outputs = outputs + ops.reshape(ops.cast(beta, outputs.dtype), params_shape)
    outputs = ops.cast(outputs, dtype)
    return activation_fn(outputs) if activation_fn is not None else outputs
