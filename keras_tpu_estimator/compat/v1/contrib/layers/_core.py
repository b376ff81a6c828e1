"""`tf.contrib.layers` core layers: `fully_connected`, `dropout`, `flatten`, `softmax`, ...

As in TF1, `fully_connected` creates `<scope>/weights` and `<scope>/biases`
(scope `fully_connected`, `fully_connected_1`, ... unnamed), `dropout`
takes `keep_prob` and `is_training`, and `repeat`/`stack` call a layer
several times in numbered scopes.

```python
net = slim.flatten(net)
net = slim.dropout(net, keep_prob=0.8, is_training=training)
logits = slim.fully_connected(net, 10, activation_fn=None, scope="logits")
```
"""

import functools

import numpy as np
from keras import ops

from keras_tpu_estimator.compat.v1 import initializers
from keras_tpu_estimator.compat.v1 import layers as _layers_v1
from keras_tpu_estimator.compat.v1 import nn
from keras_tpu_estimator.compat.v1.contrib._arg_scope import add_arg_scope
from keras_tpu_estimator.compat.v1.contrib.layers import _common
from keras_tpu_estimator.compat.v1.contrib.layers._initializers import xavier_initializer
from keras_tpu_estimator.compat.v1.ops import one_hot
from keras_tpu_estimator.compat.v1.variables import variable_scope


def _last_dimension(inputs, min_rank, function):
    if len(inputs.shape) < min_rank or inputs.shape[-1] is None:
        raise ValueError(f"{function} takes inputs of rank >= {min_rank} with a known last "
                         f"dimension; received shape {tuple(inputs.shape)}")
    return int(inputs.shape[-1])


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=nn.relu, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=xavier_initializer(),
                    weights_regularizer=None, biases_initializer=initializers.zeros_initializer(),
                    biases_regularizer=None, reuse=None, variables_collections=None,
                    outputs_collections=None, trainable=True, scope=None):
    """A dense layer on the last axis, as `tf.contrib.layers.fully_connected`.

    `activation_fn(normalizer_fn(inputs @ weights) or inputs @ weights + biases)`
    with `<scope>/weights` (`[in, num_outputs]`) and `<scope>/biases`
    (none with a `normalizer_fn` or `biases_initializer=None`).

    Args:
        inputs: a tensor of rank >= 2 (the last axis is contracted).
        num_outputs: the output units (an int).
        activation_fn: ReLU by default; None for a linear output.
        Others: as `tf.contrib.layers.conv2d` (scope default `fully_connected`).

    Returns:
        The output tensor, `[..., num_outputs]`.

    Raises:
        ValueError: for a `num_outputs` that is not an int, or inputs of
            rank < 2.

    Example:

    ```python
    logits = slim.fully_connected(net, num_classes, activation_fn=None, scope="logits")
    ```
    """
    if not isinstance(num_outputs, (int, np.integer)) or isinstance(num_outputs, bool):
        raise ValueError("Argument `num_outputs` of fully_connected must be an int. "
                         f"Received: num_outputs={num_outputs!r}")
    with variable_scope(scope, default_name="fully_connected", reuse=reuse):
        inputs = _common.as_tensor(inputs)
        units = _last_dimension(inputs, 2, "fully_connected")
        dtype = _common.dtype_of(inputs)
        weights = _common.model_variable(
            "weights", (units, int(num_outputs)), dtype, weights_initializer,
            weights_regularizer, trainable,
            _common.variable_collections(variables_collections, "weights"))
        outputs = ops.matmul(inputs, weights)
        if _common.use_bias(normalizer_fn, biases_initializer):
            biases = _common.model_variable(
                "biases", (int(num_outputs),), dtype, biases_initializer, biases_regularizer,
                trainable, _common.variable_collections(variables_collections, "biases"))
            outputs = nn.bias_add(outputs, biases)
        return _common.finish(outputs, normalizer_fn, normalizer_params, activation_fn,
                              outputs_collections)


# TF1's shorthands of `fully_connected` with a fixed activation.
linear = functools.partial(fully_connected, activation_fn=None)
relu = functools.partial(fully_connected, activation_fn=nn.relu)
relu6 = functools.partial(fully_connected, activation_fn=nn.relu6)


@add_arg_scope
def bias_add(inputs, activation_fn=None, initializer=initializers.zeros_initializer(),
             regularizer=None, reuse=None, variables_collections=None, outputs_collections=None,
             trainable=True, data_format=_common.NHWC, scope=None):
    """Adds `<scope>/biases` (one per channel) to `inputs`, as `tf.contrib.layers.bias_add`.

    Args:
        inputs: a tensor of rank >= 2 ('NCHW' only for 4D ones).
        activation_fn: applied after, if given.
        initializer, regularizer: of `biases`.
        data_format: 'NHWC' (channels last) or 'NCHW'.
        Others: as `fully_connected` (scope default `BiasAdd`).

    Returns:
        The output tensor.

    Raises:
        ValueError: for an invalid `data_format`, or 'NCHW' with inputs
            that are not 4D.
    """
    _common.image_data_format(data_format, "bias_add")
    with variable_scope(scope, default_name="BiasAdd", reuse=reuse):
        inputs = _common.as_tensor(inputs)
        if data_format == _common.NCHW and len(inputs.shape) != 4:
            raise ValueError("bias_add: data_format='NCHW' takes 4D inputs; received shape "
                             f"{tuple(inputs.shape)}")
        channels = inputs.shape[1 if data_format == _common.NCHW else -1]
        biases = _common.model_variable(
            "biases", (int(channels),), _common.dtype_of(inputs), initializer, regularizer,
            trainable, _common.variable_collections(variables_collections, "biases"))
        outputs = nn.bias_add(inputs, biases, data_format=data_format)
        return _common.finish(outputs, None, None, activation_fn, outputs_collections)


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None,
            scope=None, seed=None):
    """Keeps each unit with probability `keep_prob`, scaled by `1 / keep_prob`, when training.

    As `tf.contrib.layers.dropout`; the identity when `is_training` is
    False. Draws from the model's seed generator (`seed` is ignored), as
    `tf1.layers.dropout`.

    Args:
        inputs: a tensor.
        keep_prob: the probability to keep a unit, in (0, 1].
        noise_shape: the shape of the keep/drop mask (broadcast), if not
            that of `inputs`.
        is_training: a Python bool.
        outputs_collections: collections the output joins.
        scope: the variable scope's name (default `Dropout`).
        seed: ignored.

    Returns:
        The output tensor.

    Raises:
        ValueError: for `keep_prob` outside (0, 1], or an `is_training`
            known only at run time.

    Example:

    ```python
    net = slim.dropout(net, keep_prob=0.5, is_training=is_training, scope="Dropout_1b")
    ```
    """
    training = _common.is_training_argument(is_training, "dropout")
    if not isinstance(keep_prob, (int, float, np.floating, np.integer)) or not 0 < keep_prob <= 1:
        raise ValueError("Argument `keep_prob` of dropout must be a number in (0, 1]. "
                         f"Received: keep_prob={keep_prob!r}")
    with variable_scope(scope, default_name="Dropout"):
        layer = _layers_v1.Dropout(rate=1.0 - float(keep_prob), noise_shape=noise_shape)
        outputs = layer(_common.as_tensor(inputs), training=training)
        return _common.collect_outputs(outputs_collections, outputs)


@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    """`[batch, ...] -> [batch, k]`, as `tf.contrib.layers.flatten`.

    Raises:
        ValueError: for inputs of rank < 2.
    """
    inputs = _common.as_tensor(inputs)
    if len(inputs.shape) < 2:
        raise ValueError(f"flatten takes inputs of rank >= 2; received shape {tuple(inputs.shape)}")
    return _common.collect_outputs(outputs_collections, _layers_v1.flatten(inputs))


@add_arg_scope
def one_hot_encoding(labels, num_classes, on_value=1.0, off_value=0.0, outputs_collections=None,
                     scope=None):
    """`labels` `[batch]` as one-hot rows `[batch, num_classes]` (float32), as TF1's.

    Example:

    ```python
    onehot_labels = slim.one_hot_encoding(labels, 1001)
    ```
    """
    outputs = one_hot(labels, num_classes, on_value=on_value, off_value=off_value)
    return _common.collect_outputs(outputs_collections, outputs)


@add_arg_scope
def softmax(logits, scope=None):
    """Softmax over the last axis of N-D `logits` (N >= 2), as `tf.contrib.layers.softmax`.

    Raises:
        ValueError: for logits of rank < 2 or an unknown last dimension.
    """
    with variable_scope(scope, default_name="softmax"):
        logits = _common.as_tensor(logits)
        _last_dimension(logits, 2, "softmax")
        return ops.softmax(logits, axis=-1)


@add_arg_scope
def unit_norm(inputs, dim, epsilon=1e-7, scope=None):
    """`inputs / sqrt(epsilon + sum(inputs ** 2, dim))`, as `tf.contrib.layers.unit_norm`.

    Raises:
        ValueError: for a `dim` outside `[0, rank)`.
    """
    with variable_scope(scope, default_name="UnitNorm"):
        inputs = _common.as_tensor(inputs)
        rank = len(inputs.shape)
        if not isinstance(dim, (int, np.integer)) or not 0 <= dim < rank:
            raise ValueError(f"Argument `dim` of unit_norm must be in [0, {rank}) for inputs of "
                             f"rank {rank}. Received: dim={dim!r}")
        lengths = ops.sqrt(epsilon + ops.sum(ops.square(inputs), axis=int(dim), keepdims=True))
        return inputs / lengths


def _layer_name(layer):
    if hasattr(layer, "__name__"):
        return layer.__name__
    if hasattr(layer, "func") and hasattr(layer.func, "__name__"):
        return layer.func.__name__  # A functools.partial.
    return None


def repeat(inputs, repetitions, layer, *args, **kwargs):
    """Applies `layer(outputs, *args, **kwargs)` `repetitions` times, as `slim.repeat`.

    The calls get the scopes `<scope>/<scope>_1`, `<scope>/<scope>_2`, ...;
    without `scope`, `Repeat/<layer name>_1`, ... (`convolution2d_1` for
    `conv2d`), as in TF1.

    Args:
        inputs: the first call's input.
        repetitions: how many calls.
        layer: a layer function such as `slim.conv2d`.
        *args, **kwargs: its other arguments (`scope` names the block).

    Returns:
        The last call's output.

    Example:

    ```python
    net = slim.repeat(net, 2, slim.conv2d, 64, [3, 3], scope="conv1")
    # conv1/conv1_1/weights, conv1/conv1_2/weights
    ```
    """
    scope = kwargs.pop("scope", None)
    with variable_scope(scope, default_name="Repeat"):
        prefix = scope if scope is not None else (_layer_name(layer) or "repeat")
        outputs = inputs
        for i in range(repetitions):
            outputs = layer(outputs, *args, **{**kwargs, "scope": f"{prefix}_{i + 1}"})
        return outputs


def stack(inputs, layer, stack_args, **kwargs):
    """Applies `layer` once per entry of `stack_args` (its arguments), as `slim.stack`.

    Scopes as `repeat` (`Stack/...` without `scope`).

    Raises:
        ValueError: if `stack_args` is not a list or a tuple.

    Example:

    ```python
    net = slim.stack(net, slim.fully_connected, [32, 64, 128], scope="fc")
    # fc/fc_1, fc/fc_2, fc/fc_3
    ```
    """
    scope = kwargs.pop("scope", None)
    if not isinstance(stack_args, (list, tuple)):
        raise ValueError(f"Argument `stack_args` of stack must be a list or a tuple. "
                         f"Received: stack_args={stack_args!r}")
    with variable_scope(scope, default_name="Stack"):
        prefix = scope if scope is not None else (_layer_name(layer) or "stack")
        outputs = inputs
        for i, layer_args in enumerate(stack_args):
            if not isinstance(layer_args, (list, tuple)):
                layer_args = [layer_args]
            outputs = layer(outputs, *layer_args, **{**kwargs, "scope": f"{prefix}_{i + 1}"})
        return outputs
