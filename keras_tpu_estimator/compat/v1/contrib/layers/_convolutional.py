"""`tf.contrib.layers` convolutions: `conv2d`, `separable_conv2d`, `conv2d_transpose`, ...

Each opens a variable scope (`Conv`, `Conv_1`, ... unnamed; `scope` as
given), creates TF1's variables in it (`weights`, `biases`;
`depthwise_weights`, `pointwise_weights`), then applies
`normalizer_fn(outputs, **normalizer_params)` in place of the biases and
`activation_fn` (ReLU unless given), as `tf.contrib.layers` did, so slim
checkpoints load by name.

```python
with slim.arg_scope([slim.conv2d], padding="SAME", normalizer_fn=slim.batch_norm,
                    normalizer_params={"is_training": training}):
    net = slim.conv2d(images, 32, [3, 3], stride=2, scope="Conv2d_1a_3x3")
    # Conv2d_1a_3x3/weights, Conv2d_1a_3x3/BatchNorm/beta, ...
```
"""

import numpy as np
from keras import ops

from keras_tpu_estimator.compat.v1 import initializers
from keras_tpu_estimator.compat.v1 import nn
from keras_tpu_estimator.compat.v1.contrib._arg_scope import add_arg_scope
from keras_tpu_estimator.compat.v1.contrib.layers import _common
from keras_tpu_estimator.compat.v1.contrib.layers._initializers import xavier_initializer
from keras_tpu_estimator.compat.v1.variables import variable_scope

_CONV_FORMATS = (None, "NWC", "NCW", "NHWC", "NCHW", "NDHWC", "NCDHW")


def _conv_format(data_format, function):
    if data_format not in _CONV_FORMATS:
        raise ValueError(
            f"Argument `data_format` of {function} must be one of {list(_CONV_FORMATS)}. "
            f"Received: data_format={data_format!r}")
    return "channels_first" if data_format and data_format.startswith("NC") else "channels_last"


def _channels(inputs, channels_first, function):
    channels = inputs.shape[1] if channels_first else inputs.shape[-1]
    if channels is None:
        raise ValueError(f"{function}: the channel dimension of the inputs must be known; "
                         f"received shape {tuple(inputs.shape)}")
    return int(channels)


def _check_num_outputs(num_outputs, function):
    if not isinstance(num_outputs, (int, np.integer)) or num_outputs <= 0:
        raise ValueError(f"Argument `num_outputs` of {function} must be a positive int. "
                         f"Received: num_outputs={num_outputs!r}")
    return int(num_outputs)


def _check_stride_and_rate(stride, rate, function):
    if any(s != 1 for s in stride) and any(r != 1 for r in rate):
        raise ValueError(
            f"{function}: `stride` and `rate` cannot both be other than 1 (TF1's atrous "
            f"convolutions take stride 1). Received: stride={stride}, rate={rate}")


def _biases(outputs, num_outputs, dtype, biases_initializer, biases_regularizer, trainable,
            variables_collections, data_format):
    biases = _common.model_variable(
        "biases", [num_outputs], dtype, biases_initializer, biases_regularizer, trainable,
        _common.variable_collections(variables_collections, "biases"))
    return nn.bias_add(outputs, biases, data_format="NC" if data_format == "channels_first" else None)


def _convolution(function, inputs, num_outputs, kernel_size, stride, padding, data_format, rate,
                 activation_fn, normalizer_fn, normalizer_params, weights_initializer,
                 weights_regularizer, biases_initializer, biases_regularizer, reuse,
                 variables_collections, outputs_collections, trainable, scope, conv_dims):
    format_ = _conv_format(data_format, function)
    padding = _common.padding_argument(padding, function)
    num_outputs = _check_num_outputs(num_outputs, function)
    with variable_scope(scope, default_name="Conv", reuse=reuse):
        inputs = _common.as_tensor(inputs)
        rank = len(inputs.shape)
        if conv_dims is not None and conv_dims + 2 != rank:
            raise ValueError(f"{function} expects inputs of rank {conv_dims + 2}; "
                             f"received shape {tuple(inputs.shape)}")
        if rank not in (3, 4, 5):
            raise ValueError(f"{function} takes inputs of rank 3, 4 or 5 (1 to 3 spatial "
                             f"dimensions); received shape {tuple(inputs.shape)}")
        spatial = rank - 2
        kernel = _common.sizes(kernel_size, spatial, "kernel_size", function)
        strides = _common.sizes(stride, spatial, "stride", function)
        rates = _common.sizes(rate, spatial, "rate", function)
        _check_stride_and_rate(strides, rates, function)
        dtype = _common.dtype_of(inputs)
        channels = _channels(inputs, format_ == "channels_first", function)
        weights = _common.model_variable(
            "weights", kernel + (channels, num_outputs), dtype, weights_initializer,
            weights_regularizer, trainable,
            _common.variable_collections(variables_collections, "weights"))
        outputs = ops.conv(inputs, weights, strides=strides, padding=padding,
                           data_format=format_, dilation_rate=rates)
        if _common.use_bias(normalizer_fn, biases_initializer):
            outputs = _biases(outputs, num_outputs, dtype, biases_initializer,
                              biases_regularizer, trainable, variables_collections, format_)
        return _common.finish(outputs, normalizer_fn, normalizer_params, activation_fn,
                              outputs_collections)


@add_arg_scope
def convolution(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None,
                rate=1, activation_fn=nn.relu, normalizer_fn=None, normalizer_params=None,
                weights_initializer=xavier_initializer(), weights_regularizer=None,
                biases_initializer=initializers.zeros_initializer(), biases_regularizer=None,
                reuse=None, variables_collections=None, outputs_collections=None,
                trainable=True, scope=None, conv_dims=None):
    """An N-D convolution (N from the rank of `inputs`), as `tf.contrib.layers.convolution`.

    Creates `<scope>/weights` (`kernel_size + [in_channels, num_outputs]`)
    and, without a `normalizer_fn` and with a `biases_initializer`,
    `<scope>/biases`; then applies `normalizer_fn` and `activation_fn`.

    Args:
        inputs: `[batch, *spatial, channels]` (or channels first with an
            'NC...' `data_format`), 1 to 3 spatial dimensions.
        num_outputs: the number of filters.
        kernel_size: an int or a list of one int per spatial dimension.
        stride: an int or a list; must be 1 where `rate` is not.
        padding: 'SAME' or 'VALID'.
        data_format: None, 'NWC', 'NHWC', 'NDHWC' (channels last) or 'NCW',
            'NCHW', 'NCDHW' (channels first).
        rate: the dilation rate (atrous convolution).
        activation_fn: applied last; None for a linear output.
        normalizer_fn: e.g. `batch_norm`, used instead of biases.
        normalizer_params: keyword arguments of `normalizer_fn`.
        weights_initializer, weights_regularizer: of `weights`.
        biases_initializer: of `biases`; None for no biases.
        biases_regularizer: of `biases`.
        reuse: share the variables of an existing `scope`.
        variables_collections: a list of collections, or a dict
            `{"weights": [...], "biases": [...]}`, the variables join.
        outputs_collections: collections the output joins.
        trainable: whether the optimizer updates the variables.
        scope: the variable scope's name (default `Conv`, made unique).
        conv_dims: the number of spatial dimensions expected, if given.

    Returns:
        The output tensor.

    Raises:
        ValueError: for an invalid `data_format`, `padding`, size, a
            `stride` and `rate` both other than 1, or inputs of another rank.

    Example:

    ```python
    net = slim.conv2d(images, 64, [3, 3], scope="conv1")   # conv1/weights, conv1/biases
    ```
    """
    return _convolution("convolution", inputs, num_outputs, kernel_size, stride, padding,
                        data_format, rate, activation_fn, normalizer_fn, normalizer_params,
                        weights_initializer, weights_regularizer, biases_initializer,
                        biases_regularizer, reuse, variables_collections, outputs_collections,
                        trainable, scope, conv_dims)


def _fixed_rank(conv_dims):
    name = f"convolution{conv_dims}d"

    def fixed(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None,
              rate=1, activation_fn=nn.relu, normalizer_fn=None, normalizer_params=None,
              weights_initializer=xavier_initializer(), weights_regularizer=None,
              biases_initializer=initializers.zeros_initializer(), biases_regularizer=None,
              reuse=None, variables_collections=None, outputs_collections=None,
              trainable=True, scope=None):
        return _convolution(name, inputs, num_outputs, kernel_size, stride, padding,
                            data_format, rate, activation_fn, normalizer_fn, normalizer_params,
                            weights_initializer, weights_regularizer, biases_initializer,
                            biases_regularizer, reuse, variables_collections,
                            outputs_collections, trainable, scope, conv_dims)

    # slim's `repeat`/`stack` name their scopes after the function (`convolution2d_1`).
    fixed.__name__ = fixed.__qualname__ = name
    fixed.__doc__ = (f"`convolution` of inputs with {conv_dims} spatial dimension(s), as "
                     f"`tf.contrib.layers.{name}`; see `convolution`.")
    return add_arg_scope(fixed)


convolution1d = _fixed_rank(1)
convolution2d = _fixed_rank(2)
convolution3d = _fixed_rank(3)


@add_arg_scope
def separable_convolution2d(inputs, num_outputs, kernel_size, depth_multiplier=1, stride=1,
                            padding="SAME", data_format=_common.NHWC, rate=1,
                            activation_fn=nn.relu, normalizer_fn=None, normalizer_params=None,
                            weights_initializer=xavier_initializer(), pointwise_initializer=None,
                            weights_regularizer=None,
                            biases_initializer=initializers.zeros_initializer(),
                            biases_regularizer=None, reuse=None, variables_collections=None,
                            outputs_collections=None, trainable=True, scope=None):
    """A depthwise-separable 2D convolution, as `tf.contrib.layers.separable_conv2d`.

    A depthwise convolution with `<scope>/depthwise_weights`
    (`[kh, kw, in_channels, depth_multiplier]`), then, when `num_outputs`
    is not None, a 1x1 convolution with `<scope>/pointwise_weights`
    (`[1, 1, in_channels * depth_multiplier, num_outputs]`); with
    `num_outputs=None` the output has `in_channels * depth_multiplier`
    channels (MobileNet's depthwise layer). `weights_regularizer` applies to
    both kernels; biases, normalizer and activation as in `convolution`.

    Args:
        inputs: a 4D tensor ('NHWC' or 'NCHW').
        num_outputs: the pointwise filters, or None for depthwise only.
        kernel_size: an int or `[kh, kw]`.
        depth_multiplier: depthwise output channels per input channel.
        pointwise_initializer: defaults to `weights_initializer`.
        Others: as `convolution`.

    Returns:
        The output tensor.

    Raises:
        ValueError: as `convolution`.

    Example:

    ```python
    net = slim.separable_conv2d(net, None, [3, 3], depth_multiplier=1, stride=2,
                                normalizer_fn=slim.batch_norm, scope="Conv2d_1_depthwise")
    ```
    """
    function = "separable_conv2d"
    format_ = _common.image_data_format(data_format, function)
    padding = _common.padding_argument(padding, function)
    if num_outputs is not None:
        num_outputs = _check_num_outputs(num_outputs, function)
    pointwise_initializer = pointwise_initializer or weights_initializer
    with variable_scope(scope, default_name="SeparableConv2d", reuse=reuse):
        inputs = _common.as_tensor(inputs)
        if len(inputs.shape) != 4:
            raise ValueError(f"{function} takes 4D inputs; received shape {tuple(inputs.shape)}")
        kernel = _common.sizes(kernel_size, 2, "kernel_size", function)
        strides = _common.sizes(stride, 2, "stride", function)
        rates = _common.sizes(rate, 2, "rate", function)
        _check_stride_and_rate(strides, rates, function)
        dtype = _common.dtype_of(inputs)
        channels = _channels(inputs, format_ == "channels_first", function)
        weights_collections = _common.variable_collections(variables_collections, "weights")
        depthwise = _common.model_variable(
            "depthwise_weights", kernel + (channels, depth_multiplier), dtype,
            weights_initializer, weights_regularizer, trainable, weights_collections)
        if num_outputs is None:
            outputs = ops.depthwise_conv(inputs, depthwise, strides=strides, padding=padding,
                                         data_format=format_, dilation_rate=rates)
            num_outputs = channels * depth_multiplier
        else:
            pointwise = _common.model_variable(
                "pointwise_weights", (1, 1, channels * depth_multiplier, num_outputs), dtype,
                pointwise_initializer, weights_regularizer, trainable, weights_collections)
            outputs = ops.separable_conv(inputs, depthwise, pointwise, strides=strides,
                                         padding=padding, data_format=format_,
                                         dilation_rate=rates)
        if _common.use_bias(normalizer_fn, biases_initializer):
            outputs = _biases(outputs, num_outputs, dtype, biases_initializer,
                              biases_regularizer, trainable, variables_collections, format_)
        return _common.finish(outputs, normalizer_fn, normalizer_params, activation_fn,
                              outputs_collections)


@add_arg_scope
def convolution2d_transpose(inputs, num_outputs, kernel_size, stride=1, padding="SAME",
                            data_format=_common.NHWC, activation_fn=nn.relu, normalizer_fn=None,
                            normalizer_params=None, weights_initializer=xavier_initializer(),
                            weights_regularizer=None,
                            biases_initializer=initializers.zeros_initializer(),
                            biases_regularizer=None, reuse=None, variables_collections=None,
                            outputs_collections=None, trainable=True, scope=None):
    """A transposed 2D convolution, as `tf.contrib.layers.conv2d_transpose`.

    Creates `<scope>/weights` (`[kh, kw, num_outputs, in_channels]`, TF1's
    layout) and `<scope>/biases` (scope default `Conv2d_transpose`). The
    output is `in * stride` large with 'SAME' padding and
    `in * stride + max(kernel - stride, 0)` with 'VALID', as in TF1.

    Args:
        As `convolution`, for 4D inputs ('NHWC' or 'NCHW').

    Returns:
        The output tensor.

    Raises:
        ValueError: as `convolution`.

    Example:

    ```python
    net = slim.conv2d_transpose(net, 64, [4, 4], stride=2, scope="deconv1")
    ```
    """
    function = "conv2d_transpose"
    format_ = _common.image_data_format(data_format, function)
    padding = _common.padding_argument(padding, function)
    num_outputs = _check_num_outputs(num_outputs, function)
    with variable_scope(scope, default_name="Conv2d_transpose", reuse=reuse):
        inputs = _common.as_tensor(inputs)
        if len(inputs.shape) != 4:
            raise ValueError(f"{function} takes 4D inputs; received shape {tuple(inputs.shape)}")
        kernel = _common.sizes(kernel_size, 2, "kernel_size", function)
        strides = _common.sizes(stride, 2, "stride", function)
        dtype = _common.dtype_of(inputs)
        channels = _channels(inputs, format_ == "channels_first", function)
        weights = _common.model_variable(
            "weights", kernel + (num_outputs, channels), dtype, weights_initializer,
            weights_regularizer, trainable,
            _common.variable_collections(variables_collections, "weights"))
        outputs = ops.conv_transpose(inputs, weights, strides=strides, padding=padding,
                                     data_format=format_)
        if _common.use_bias(normalizer_fn, biases_initializer):
            outputs = _biases(outputs, num_outputs, dtype, biases_initializer,
                              biases_regularizer, trainable, variables_collections, format_)
        return _common.finish(outputs, normalizer_fn, normalizer_params, activation_fn,
                              outputs_collections)


# TF1's short names: the same functions (one arg_scope entry serves both).
conv1d = convolution1d
conv2d = convolution2d
conv3d = convolution3d
separable_conv2d = separable_convolution2d
conv2d_transpose = convolution2d_transpose
