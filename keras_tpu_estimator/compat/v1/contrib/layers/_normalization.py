"""`tf.contrib.layers.batch_norm`: batch normalization with TF1's variable names.

`batch_norm` creates `<scope>/beta` (unless `center=False`), `<scope>/gamma`
(only with `scale=True`: TF1's default is False), `<scope>/moving_mean` and
`<scope>/moving_variance` in scope `BatchNorm` (`BatchNorm_1`, ...; inside
`conv2d(..., normalizer_fn=slim.batch_norm)` that is `<conv scope>/BatchNorm`).

(`layer_norm` is in `_layer_norm`.)

```python
net = slim.batch_norm(net, decay=0.9997, epsilon=0.001, scale=True, is_training=training)
```
"""

import keras
from keras import ops

from keras_tpu_estimator.compat.v1 import initializers
from keras_tpu_estimator.compat.v1 import nn
from keras_tpu_estimator.compat.v1 import _batch_norm_step as step
from keras_tpu_estimator.compat.v1._batch_normalization import FUSED_MIN_EPSILON
from keras_tpu_estimator.compat.v1._moving_averages import assign_moving_average
from keras_tpu_estimator.compat.v1._op_helpers import resolve_initializer
from keras_tpu_estimator.compat.v1._variable_views import keras_variable
from keras_tpu_estimator.compat.v1.contrib._arg_scope import add_arg_scope
from keras_tpu_estimator.compat.v1.contrib.layers import _common
from keras_tpu_estimator.compat.v1.graph import GraphKeys
from keras_tpu_estimator.compat.v1.variables import get_variable
from keras_tpu_estimator.compat.v1.variables import variable_scope

_HALF = ("float16", "bfloat16")


def _weighted_moments(x, axes, weights):
    """`tf.nn.weighted_moments` of `x` over `axes`, `weights` one per example (axis 0)."""
    weights = ops.reshape(ops.cast(weights, x.dtype), (-1,) + (1,) * (len(x.shape) - 1))
    total = ops.sum(weights * ops.ones_like(x), axis=axes)
    mean = ops.sum(weights * x, axis=axes) / total
    shape = [1] * len(x.shape)
    for a in range(len(x.shape)):
        if a not in axes:
            shape[a] = -1
    centered = x - ops.reshape(mean, shape)
    variance = ops.sum(weights * ops.square(centered), axis=axes) / total
    return mean, variance


def _paths(rank, fused, batch_weights, renorm, adjustment, zero_debias, in_update_ops):
    """TF1's choice among its three implementations: 'fused', 'layer' or 'plain'.

    The fused kernel for inputs of rank 2 or 4 without batch weights, renorm
    or adjustment, when the moving mean is zero-debiased, the input is 2D
    or the updates are made in place; `tf.layers.BatchNormalization` (itself
    fused for 4D inputs, without renorm or adjustment) with `UPDATE_OPS`,
    no batch weights and no zero-debiasing; hand-written moments otherwise
    (where `adjustment` was ignored).

    Raises:
        ValueError: for `renorm` on the hand-written path (TF1's message).
    """
    fused = fused is None or bool(fused)
    if fused and rank in (2, 4) and batch_weights is None and not renorm and (
            adjustment is None) and (zero_debias or rank == 2 or not in_update_ops):
        return "fused"
    if batch_weights is None and in_update_ops and not zero_debias:
        return "fused" if fused and rank == 4 and not renorm and adjustment is None else "layer"
    if renorm:
        raise ValueError("renorm is not supported with batch_weights, updates_collections or "
                         "zero_debias_moving_mean")
    return "plain"


@add_arg_scope
def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
               param_initializers=None, param_regularizers=None,
               updates_collections=GraphKeys.UPDATE_OPS, is_training=True, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format=_common.NHWC,
               zero_debias_moving_mean=False, scope=None, renorm=False, renorm_clipping=None,
               renorm_decay=0.99, adjustment=None):
    """Batch normalization, as `tf.contrib.layers.batch_norm` (`slim.batch_norm`).

    With `is_training`, normalizes with the batch's mean and variance over
    every axis but the channels' and moves the moving statistics by
    `decay`; otherwise normalizes with the moving statistics. As in TF1:

    - the fused form (`fused` None or True, inputs of rank 2 or 4) raises
      `epsilon` to 1.001e-5 and moves `moving_variance` toward the
      unbiased batch variance (`n / (n - 1)` times the biased one, `n` the
      values per channel); `fused=False` (or another rank) uses the biased
      one throughout;
    - parameters are float32 for float16/bfloat16 inputs, whose output
      keeps their dtype;
    - `renorm` and `adjustment` take TF1's `tf.layers.BatchNormalization`
      path (see `tf1.layers.batch_normalization`): `renorm` adds the model
      variables `moving_stddev`, `renorm_mean`, `renorm_stddev`, moved by
      `renorm_decay`; with `batch_weights`, `updates_collections` other
      than `UPDATE_OPS` or `zero_debias_moving_mean`, `renorm` is TF1's
      ValueError and `adjustment` is ignored, as in TF1;
    - `batch_weights` (one per example) weight the batch's moments;
    - `zero_debias_moving_mean` moves `moving_mean` through a zero-debiased
      average, with TF1's variables `<scope>/<scope>/moving_mean/biased`
      and `.../local_step`, created by the first training call.

    The moving statistics are updated inside the training step whatever
    `updates_collections` is: TF1's `UPDATE_OPS` (run by the program's
    `control_dependencies`) and None (in place) give the same step here.

    Args:
        inputs: a tensor of rank >= 2, channels last ('NHWC') or second
            ('NCHW').
        decay: the moving averages' decay.
        center: add `beta`.
        scale: multiply by `gamma` (TF1's default: False).
        epsilon: added to the variance.
        activation_fn: applied to the result, if given.
        param_initializers: `{"beta", "gamma", "moving_mean",
            "moving_variance": initializer}`, each optional.
        param_regularizers: `{"beta", "gamma": regularizer}`.
        updates_collections: accepted (see above).
        is_training: a Python bool (e.g. `mode == ModeKeys.TRAIN`).
        reuse: share the variables of an existing `scope`.
        variables_collections: a list of collections, or a dict by
            variable name, the variables join.
        outputs_collections: collections the output joins.
        trainable: whether `beta`/`gamma` are trained.
        fused: None/True (fused where possible) or False.
        data_format: 'NHWC' or 'NCHW'.
        scope: the variable scope's name (default `BatchNorm`, made unique).
        batch_weights: None, or a weight per example (shape `[batch]`).
        zero_debias_moving_mean: zero-debias the moving mean's average.
        renorm: batch renormalization.
        renorm_clipping: a dict of `rmax`, `rmin`, `dmax` clipping the
            renorm correction (numbers or scalar tensors).
        renorm_decay: the decay of the renorm statistics.
        adjustment: None, or `adjustment(shape) -> (scale, bias)`, applied
            in training.

    Returns:
        The normalized tensor.

    Raises:
        ValueError: for an invalid `data_format`, an `is_training` known
            only at run time, inputs of rank < 2, an unknown
            `renorm_clipping` key, or `renorm` where TF1 rejected it.

    Example:

    ```python
    with slim.arg_scope([slim.batch_norm], is_training=training, decay=0.997, scale=True):
        net = slim.conv2d(images, 32, [3, 3], normalizer_fn=slim.batch_norm)
    ```
    """
    _common.image_data_format(data_format, "batch_norm")
    training = _common.is_training_argument(is_training, "batch_norm")
    if renorm:
        step.check_renorm_clipping(renorm_clipping)
    with variable_scope(scope, default_name="BatchNorm", reuse=reuse):
        inputs = _common.as_tensor(inputs)
        rank = len(inputs.shape)
        if rank < 2:
            raise ValueError(f"batch_norm takes inputs of rank >= 2; received shape "
                             f"{tuple(inputs.shape)}")
        path = _paths(rank, fused, batch_weights, renorm, adjustment, zero_debias_moving_mean,
                      updates_collections == GraphKeys.UPDATE_OPS)
        axis = 1 if data_format == _common.NCHW else rank - 1
        params_shape = (int(inputs.shape[axis]),)
        dtype = _common.dtype_of(inputs)
        param_dtype = "float32" if dtype in _HALF else dtype
        initializers_ = param_initializers or {}
        regularizers = param_regularizers or {}

        def parameter(name, default, trainable_, regularizer=None):
            return _common.model_variable(
                name, params_shape, param_dtype, initializers_.get(name, default), regularizer,
                trainable_, _common.variable_collections(variables_collections, name))

        # TF1's order: its tf.layers.BatchNormalization made gamma first.
        keras_layer_order = path == "layer" or (
            path == "fused" and rank == 4 and updates_collections == GraphKeys.UPDATE_OPS
            and not zero_debias_moving_mean)
        made = {}
        for name in (("gamma", "beta") if keras_layer_order else ("beta", "gamma")):
            if (name == "beta" and center) or (name == "gamma" and scale):
                default = initializers.zeros_initializer() if name == "beta" else (
                    initializers.ones_initializer())
                made[name] = parameter(name, default, trainable, regularizers.get(name))
        moving_mean = parameter("moving_mean", initializers.zeros_initializer(), False)
        moving_variance = parameter("moving_variance", initializers.ones_initializer(), False)
        if renorm:
            # TF1's layer's renorm variables: model variables outside `variables_collections`.
            stddev_initializer = _sqrt_of(initializers_.get(
                "moving_variance", initializers.ones_initializer()))
            for name, initializer in (
                    ("moving_stddev", stddev_initializer),
                    ("renorm_mean", initializers_.get("moving_mean",
                                                      initializers.zeros_initializer())),
                    ("renorm_stddev", stddev_initializer)):
                made[name] = _common.model_variable(name, params_shape, param_dtype,
                                                    initializer, None, False)

        x = ops.cast(inputs, param_dtype) if dtype != param_dtype else inputs
        beta = made.get("beta", ops.zeros(params_shape, param_dtype))
        gamma = made.get("gamma", ops.ones(params_shape, param_dtype))
        updating = training and not isinstance(inputs, keras.KerasTensor)
        mean = variance = None
        if path == "layer" and (renorm or adjustment is not None):
            variables = {**made, "moving_mean": moving_mean, "moving_variance": moving_variance}
            values = {name: ops.convert_to_tensor(keras_variable(v))
                      for name, v in variables.items()}
            outputs, updates = step.normalize(
                x, values, axis, epsilon, decay, training, renorm=renorm, renorm_clipping=renorm_clipping,
                renorm_momentum=renorm_decay, adjustment=adjustment)
            for name, value in updates.items() if updating else ():
                target = keras_variable(variables[name])
                target.assign(ops.cast(value, target.dtype))
        elif path == "fused":
            outputs, mean, variance = _fused(x, gamma, beta, moving_mean, moving_variance,
                                             max(epsilon, FUSED_MIN_EPSILON), data_format,
                                             training)
        else:
            outputs, mean, variance = _plain(x, made.get("gamma"), made.get("beta"),
                                             moving_mean, moving_variance, epsilon, axis,
                                             training, batch_weights)
        if updating and mean is not None:
            if zero_debias_moving_mean:
                assign_moving_average(moving_mean, mean, decay, zero_debias=True)
            else:
                assign_moving_average(moving_mean, mean, decay, zero_debias=False)
            assign_moving_average(moving_variance, variance, decay, zero_debias=False)
        outputs = ops.cast(outputs, dtype) if dtype != param_dtype else outputs
        return _common.finish(outputs, None, None, activation_fn, outputs_collections)


def _fused(x, gamma, beta, moving_mean, moving_variance, epsilon, data_format, training):
    """TF1's fused kernel (a rank-2 input as `[n, 1, 1, c]`): the output, the batch mean
    and the unbiased batch variance (the moving statistics' targets)."""
    shape = tuple(x.shape)
    if len(shape) == 2:
        x = ops.reshape(x, (-1, shape[1], 1, 1) if data_format == _common.NCHW
                        else (-1, 1, 1, shape[1]))
    if training:
        outputs, mean, variance = nn.fused_batch_norm(
            x, gamma, beta, epsilon=epsilon, data_format=data_format, is_training=True)
    else:
        outputs, mean, variance = nn.fused_batch_norm(
            x, gamma, beta, mean=moving_mean, variance=moving_variance, epsilon=epsilon,
            data_format=data_format, is_training=False)
    if len(shape) == 2:
        outputs = ops.reshape(outputs, (-1, shape[1]))
    return outputs, mean, variance


def _sqrt_of(initializer):
    """An initializer giving the square root of `initializer`'s values (TF1's stddevs)."""
    initializer = resolve_initializer(initializer)

    def stddev_initializer(shape, dtype=None, **kwargs):
        return ops.sqrt(initializer(shape, dtype=dtype))

    return stddev_initializer


def _plain(x, gamma, beta, moving_mean, moving_variance, epsilon, axis, training,
           batch_weights=None):
    """TF1's non-fused form: the output, the batch mean and the biased batch variance
    (weighted by `batch_weights`, one per example, when given)."""
    rank = len(x.shape)
    axes = tuple(a for a in range(rank) if a != axis)
    if training and batch_weights is not None:
        mean, variance = _weighted_moments(x, axes, _common.as_tensor(batch_weights))
    elif training:
        mean, variance = ops.moments(x, axes=axes)
    else:
        mean, variance = moving_mean, moving_variance
    shape = [1] * rank
    shape[axis] = -1

    def broadcast(value):
        return None if value is None else ops.reshape(value, shape)

    outputs = nn.batch_normalization(x, broadcast(mean), broadcast(variance), broadcast(beta),
                                     broadcast(gamma), epsilon)
    return outputs, mean, variance
