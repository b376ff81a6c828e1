"""`tf.contrib.layers`: `layer_norm`, regularizers, `xavier_initializer` (and `_conv2d`).

```python
def layer_norm(x, name=None):     # as BERT writes it
    return tf1.contrib.layers.layer_norm(
        inputs=x, begin_norm_axis=-1, begin_params_axis=-1, scope=name)
```
"""

import keras
from keras import ops

from keras_tpu_estimator.compat.v1 import initializers
from keras_tpu_estimator.compat.v1 import nn
from keras_tpu_estimator.compat.v1.variables import get_variable
from keras_tpu_estimator.compat.v1.variables import variable_scope


def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """Layer normalization with TF1's variables `<scope>/beta` and `<scope>/gamma`.

    The scope defaults to `LayerNorm` (`LayerNorm_1`, ... when repeated), as
    in TF1, so BERT-style checkpoints and the `LayerNorm` weight-decay
    exclusion see the same names. Normalizes over the axes from
    `begin_norm_axis` on, with epsilon 1e-12, in float32 for bfloat16 inputs.

    Args:
        inputs: a tensor of rank >= 2.
        center: add `beta`.
        scale: multiply by `gamma`.
        activation_fn: applied to the result when given.
        reuse: `variable_scope` reuse.
        trainable: whether `beta`/`gamma` are trained.
        begin_norm_axis: first axis normalized over.
        begin_params_axis: first axis of the parameters' shape.
        scope: the variable scope's name.

    Returns:
        The normalized tensor, with the dtype of `inputs`.

    Raises:
        ValueError: for an axis outside the rank of `inputs`.
    """
    rank = len(inputs.shape)
    norm_axis = begin_norm_axis % rank if -rank <= begin_norm_axis < rank else None
    params_axis = begin_params_axis % rank if -rank <= begin_params_axis < rank else None
    if norm_axis is None or params_axis is None:
        raise ValueError(
            f"layer_norm: begin_norm_axis={begin_norm_axis} and begin_params_axis="
            f"{begin_params_axis} must lie in [-{rank}, {rank}) for inputs of rank {rank}."
        )
    params_shape = tuple(inputs.shape[params_axis:])
    with variable_scope(scope, default_name="LayerNorm", reuse=reuse):
        beta = get_variable("beta", params_shape, initializer=initializers.zeros_initializer(),
                            trainable=trainable) if center else None
        gamma = get_variable("gamma", params_shape, initializer=initializers.ones_initializer(),
                             trainable=trainable) if scale else None
    dtype = inputs.dtype
    x = ops.cast(inputs, "float32") if dtype in ("bfloat16", "float16") else inputs
    mean, variance = ops.moments(x, axes=tuple(range(norm_axis, rank)), keepdims=True)
    outputs = nn.batch_normalization(x, mean, variance, beta, gamma, 1e-12)
    outputs = ops.cast(outputs, dtype)
    return activation_fn(outputs) if activation_fn is not None else outputs


def l2_regularizer(scale, scope=None):
    """`fn(weights) = scale * sum(weights ** 2) / 2` (TF1's, with its half).

    Raises:
        ValueError: for a negative `scale`.
    """
    if scale < 0:
        raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale}")

    def regularizer(weights):
        return scale * nn.l2_loss(weights)

    return regularizer


def l1_regularizer(scale, scope=None):
    """`fn(weights) = scale * sum(|weights|)`."""
    if scale < 0:
        raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale}")

    def regularizer(weights):
        return scale * ops.sum(ops.abs(weights))

    return regularizer


def xavier_initializer(uniform=True, seed=None, dtype=None):
    """Glorot uniform (or truncated normal with `uniform=False`)."""
    if uniform:
        return initializers.glorot_uniform_initializer(seed=seed)
    return initializers.glorot_normal_initializer(seed=seed)


# TF1's name for the same initializer, used for convolution kernels.
xavier_initializer_conv2d = xavier_initializer


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    """`fn(weights) = scale_l1 * sum(|weights|) + scale_l2 * sum(weights ** 2) / 2`.

    Raises:
        ValueError: for a negative scale.
    """
    l1, l2 = l1_regularizer(scale_l1), l2_regularizer(scale_l2)
    return lambda weights: l1(weights) + l2(weights)


def sum_regularizer(regularizer_list, scope=None):
    """`fn(weights)`: the sum of the regularizers of `regularizer_list` (None ones skipped)."""
    regularizers = [r for r in regularizer_list if r is not None]
    return lambda weights: sum(r(weights) for r in regularizers)


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None, dtype=None):
    """`tf.contrib.layers.variance_scaling_initializer` (He by default)."""
    return keras.initializers.VarianceScaling(
        scale=factor, mode=mode.lower(), distribution="uniform" if uniform else "truncated_normal",
        seed=seed,
    )
