"""`tf.compat.v1.layers` on Keras layers, with TF1's variable names.

`tf1.layers.dense(x, 10)` creates (on the first call of `model_fn`) and
finds again (on every later call) a Keras `Dense` layer whose variables are
`dense/kernel` and `dense/bias`, as in a TF1 checkpoint. Unnamed layers are
numbered per base name within their variable scope (`dense`, `dense_1`, ...),
from zero on every call of `model_fn`, so every trace sees the same names;
`name=` and `reuse=` behave as in TF1.

```python
def model_fn(features, labels, mode, params):
    training = mode == tf1.estimator.ModeKeys.TRAIN
    x = tf1.layers.conv2d(features["image"], 32, 3, activation=tf1.nn.relu)
    x = tf1.layers.batch_normalization(x, training=training)
    x = tf1.layers.max_pooling2d(x, 2, 2)
    x = tf1.layers.dropout(tf1.layers.flatten(x), rate=0.4, training=training)
    logits = tf1.layers.dense(x, 10)        # conv2d/kernel, ..., dense/kernel
```

Differences from TF1, by design:

- `training` must be a Python bool (e.g. `mode == ModeKeys.TRAIN`), not a
  tensor: it decides what is compiled.
- Batch normalization updates its moving statistics inside the training step
  (`GraphKeys.UPDATE_OPS` is empty), and its batch statistics are those of
  the whole global batch (the step sees the global batch), like TPU
  cross-replica batch norm. As in TF1, the fused form (4D inputs, `fused`
  None or True) updates the moving variance with the unbiased batch variance
  (`n / (n - 1)` times the biased one, `n` the elements per channel) and
  normalizes with the biased one; the non-fused form uses the biased one.
- `dropout` draws from the model's seed generator (`keras.utils.
  set_random_seed`), not from TF1's graph seed; its `seed` is ignored.
- Regularizers' penalties go to `GraphKeys.REGULARIZATION_LOSSES` and count
  only where the program adds them to its loss (`tf1.losses.
  get_regularization_loss()`), as in TF1.
"""

import math

import keras

from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.compat.v1 import initializers  # noqa: F401  (`tf1.layers.initializers`)
# Imported so that `tf1.keras_backend` (TF1's `tf.keras.backend` learning phase) exists.
from keras_tpu_estimator.compat.v1 import keras_backend as _keras_backend  # noqa: F401
from keras_tpu_estimator.compat.v1._batch_normalization import FUSED_MIN_EPSILON  # noqa: F401
from keras_tpu_estimator.compat.v1._layer_base import Layer

# Private aliases: this module is `tf1.layers`, and the converter reads its
# public names as TF1's (`convert.names.compat_v1_names`).
from keras_tpu_estimator.compat.v1._batch_normalization import TF1BatchNormalization as _TF1BatchNormalization  # noqa: E501,I001
from keras_tpu_estimator.compat.v1._batch_norm_step import check_renorm_clipping as _check_renorm_clipping  # noqa: E501,I001
from keras_tpu_estimator.compat.v1._layer_base import _check_training, _padding, _sizes  # noqa: I001
from keras_tpu_estimator.compat.v1._op_helpers import resolve_initializer as _resolve_initializer  # noqa: I001


def _init(value, default):
    value = _resolve_initializer(value)
    return default if value is None else value


class Dense(Layer):
    """TF1 `tf.layers.Dense`: `outputs = activation(inputs @ kernel + bias)`.

    Variables `<name>/kernel` (`[in, units]`) and `<name>/bias`.
    """

    base_name = "dense"

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 trainable=True, name=None, _reuse=None, _scope=None, **kwargs):
        super().__init__(
            name=name, trainable=trainable, _reuse=_reuse, _scope=_scope, units=units,
            activation=activation, use_bias=use_bias,
            kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint,
        )

    def _make(self):
        c = self._config
        return keras.layers.Dense(
            c["units"], activation=c["activation"], use_bias=c["use_bias"],
            kernel_initializer=_init(c["kernel_initializer"], "glorot_uniform"),
            bias_initializer=_init(c["bias_initializer"], "zeros"),
            kernel_constraint=c["kernel_constraint"], bias_constraint=c["bias_constraint"],
            dtype=self._dtype,
        )


class _Conv(Layer):
    rank = 2
    keras_class = None

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 _reuse=None, _scope=None, **kwargs):
        super().__init__(
            name=name, trainable=trainable, _reuse=_reuse, _scope=_scope, filters=filters,
            kernel_size=_sizes(kernel_size), strides=_sizes(strides),
            padding=_padding(padding, self.base_name), data_format=data_format,
            dilation_rate=_sizes(dilation_rate), activation=activation, use_bias=use_bias,
            kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint,
        )

    def _make(self):
        c = dict(self._config)
        for key in ("kernel_regularizer", "bias_regularizer", "activity_regularizer"):
            del c[key]
        c["kernel_initializer"] = _init(c["kernel_initializer"], "glorot_uniform")
        c["bias_initializer"] = _init(c["bias_initializer"], "zeros")
        if self.keras_class is keras.layers.Conv2DTranspose:
            del c["dilation_rate"]
        return self.keras_class(**c, dtype=self._dtype)


class Conv1D(_Conv):
    """TF1 `tf.layers.Conv1D`; variables `<name>/kernel` (`[w, in, filters]`), `<name>/bias`."""

    base_name = "conv1d"
    keras_class = keras.layers.Conv1D


class Conv2D(_Conv):
    """TF1 `tf.layers.Conv2D`; variables `<name>/kernel` (`[h, w, in, filters]`), `<name>/bias`."""

    base_name = "conv2d"
    keras_class = keras.layers.Conv2D


class Conv2DTranspose(_Conv):
    """TF1 `tf.layers.Conv2DTranspose`; kernel `[h, w, filters, in]`."""

    base_name = "conv2d_transpose"
    keras_class = keras.layers.Conv2DTranspose


class BatchNormalization(Layer):
    """TF1 `tf.layers.BatchNormalization` (momentum 0.99, epsilon 1e-3).

    Variables `<name>/gamma`, `<name>/beta`, `<name>/moving_mean`,
    `<name>/moving_variance`. Call it with `training=` a Python bool. With
    `fused` None (TF1's default) or True and a 4D input with the channels on
    axis 1 or 3, the moving variance is updated with the unbiased batch
    variance, as TF1's fused kernel does; `fused=False`, or any other input
    (where TF1 fell back to its non-fused path, `fused=True` included),
    updates it with the biased one.

    TF1's `renorm` (with `renorm_clipping` and `renorm_momentum`; adds
    `<name>/moving_stddev`, `<name>/renorm_mean`, `<name>/renorm_stddev`),
    `virtual_batch_size` (parameters of TF1's shape `[1, 1, ..., C]`) and
    `adjustment` take TF1's non-fused path, as in TF1 (see
    `_batch_norm_step`). `renorm_clipping` values may be tensors of the
    current step (a schedule on the global step).
    """

    base_name = "batch_normalization"
    float32_parameters = True

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=None, gamma_initializer=None,
                 moving_mean_initializer=None, moving_variance_initializer=None,
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None,
                 adjustment=None, name=None, _reuse=None, _scope=None, **kwargs):
        if renorm:
            _check_renorm_clipping(renorm_clipping)
        super().__init__(
            name=name, trainable=trainable, _reuse=_reuse, _scope=_scope, axis=axis,
            momentum=momentum,
            epsilon=epsilon, center=center, scale=scale, beta_initializer=beta_initializer,
            gamma_initializer=gamma_initializer,
            moving_mean_initializer=moving_mean_initializer,
            moving_variance_initializer=moving_variance_initializer,
            beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
            beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, fused=fused,
            renorm=renorm, renorm_clipping=renorm_clipping, renorm_momentum=renorm_momentum,
            virtual_batch_size=virtual_batch_size, adjustment=adjustment,
        )

    def _make(self):
        c = self._config
        return _TF1BatchNormalization(
            fused=c["fused"], renorm=c["renorm"], renorm_momentum=c["renorm_momentum"],
            virtual_batch_size=c["virtual_batch_size"], adjustment=c["adjustment"],
            axis=c["axis"], momentum=c["momentum"], epsilon=c["epsilon"],
            center=c["center"], scale=c["scale"],
            beta_initializer=_init(c["beta_initializer"], "zeros"),
            gamma_initializer=_init(c["gamma_initializer"], "ones"),
            moving_mean_initializer=_init(c["moving_mean_initializer"], "zeros"),
            moving_variance_initializer=_init(c["moving_variance_initializer"], "ones"),
            beta_constraint=c["beta_constraint"], gamma_constraint=c["gamma_constraint"],
            dtype=self._dtype,
        )

    def __call__(self, inputs, training=False):
        training = _check_training(training, "batch_normalization")
        first = self._keras_layer(inputs)
        # This call's clipping and adjustment: they may be tensors of this step.
        outputs = self.keras_layer(inputs, training=training,
                                   renorm_clipping=self._config["renorm_clipping"],
                                   adjustment=self._config["adjustment"])
        if first:
            self._add_regularization(outputs)
        return outputs


class _Stateless(Layer):
    """A layer without variables: a function of its inputs, no store entry."""

    def __call__(self, inputs, training=None):
        return self._apply(inputs, training)


class _Pooling(_Stateless):
    keras_op = None
    rank = 2

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name)
        self.pool_size, self.strides = _sizes(pool_size), _sizes(strides)
        self.padding = _padding(padding, self.base_name)
        self.data_format = data_format

    def _apply(self, inputs, training):
        return self.keras_op(inputs, self.pool_size, self.strides, self.padding, self.data_format)


class MaxPooling1D(_Pooling):
    """TF1 `tf.layers.MaxPooling1D`."""

    base_name = "max_pooling1d"
    keras_op = staticmethod(keras.ops.max_pool)


class MaxPooling2D(_Pooling):
    """TF1 `tf.layers.MaxPooling2D`."""

    base_name = "max_pooling2d"
    keras_op = staticmethod(keras.ops.max_pool)


class AveragePooling1D(_Pooling):
    """TF1 `tf.layers.AveragePooling1D`."""

    base_name = "average_pooling1d"
    keras_op = staticmethod(keras.ops.average_pool)


class AveragePooling2D(_Pooling):
    """TF1 `tf.layers.AveragePooling2D` (padding excluded from the average)."""

    base_name = "average_pooling2d"
    keras_op = staticmethod(keras.ops.average_pool)


class MaxPooling3D(_Pooling):
    """TF1 `tf.layers.MaxPooling3D`."""

    base_name = "max_pooling3d"
    keras_op = staticmethod(keras.ops.max_pool)


class AveragePooling3D(_Pooling):
    """TF1 `tf.layers.AveragePooling3D` (padding excluded from the average)."""

    base_name = "average_pooling3d"
    keras_op = staticmethod(keras.ops.average_pool)


class Flatten(_Stateless):
    """TF1 `tf.layers.Flatten`: `[batch, ...] -> [batch, prod(...)]`.

    With `data_format='channels_first'` the channels axis is moved last
    before flattening, as TF1 did, so the order matches a channels-last model.
    """

    base_name = "flatten"

    def __init__(self, data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name)
        self.data_format = data_format

    def _apply(self, inputs, training):
        shape = tuple(inputs.shape)
        if self.data_format == "channels_first" and len(shape) > 2:
            inputs = keras.ops.moveaxis(inputs, 1, -1)
        return keras.ops.reshape(inputs, (-1, math.prod(shape[1:])))


class Dropout(_Stateless):
    """TF1 `tf.layers.Dropout`: drops `rate` of the units when `training`.

    Kept units are scaled by `1 / (1 - rate)`. Draws from the model's seed
    generator; `seed` is accepted and ignored.
    """

    base_name = "dropout"

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name)
        if not 0 <= rate < 1:
            raise ValueError(
                f"Argument `rate` of tf1.layers.dropout must be in [0, 1). Received: rate={rate!r}"
            )
        self.rate, self.noise_shape = rate, noise_shape

    def _apply(self, inputs, training):
        if not _check_training(training, "dropout") or self.rate == 0:
            return inputs
        generator = store_lib.get_seed_generator()
        if isinstance(inputs, keras.KerasTensor):
            return inputs  # Building: shapes only.
        return keras.random.dropout(inputs, self.rate, self.noise_shape, seed=generator)


def _functional(layer_class, doc):
    def apply(inputs, *args, training=None, reuse=None, name=None, **kwargs):
        # TF1's functional forms: `name` is the scope itself, not made unique.
        layer = layer_class(*args, _reuse=reuse, name=name, _scope=name, **kwargs)
        return layer(inputs, training=training)

    apply.__name__ = apply.__qualname__ = layer_class.base_name
    apply.__doc__ = doc
    return apply


dense = _functional(Dense, """`tf.layers.dense(inputs, units, activation=None, ..., name=None, reuse=None)`.

Returns `activation(inputs @ kernel + bias)`; variables `<name>/kernel`,
`<name>/bias`, named `dense`, `dense_1`, ... when `name` is None.

Example:

```python
hidden = tf1.layers.dense(x, 256, activation=tf1.nn.relu)
logits = tf1.layers.dense(hidden, 10, name="logits")
```
""")
conv1d = _functional(Conv1D, "`tf.layers.conv1d(inputs, filters, kernel_size, ...)`; see `Conv1D`.")
conv2d = _functional(Conv2D, """`tf.layers.conv2d(inputs, filters, kernel_size, strides=(1, 1), padding='valid', ...)`.

Variables `<name>/kernel` (`[h, w, in, filters]`) and `<name>/bias`, named
`conv2d`, `conv2d_1`, ... when `name` is None.
""")
conv2d_transpose = _functional(Conv2DTranspose, "`tf.layers.conv2d_transpose`; see `Conv2DTranspose`.")
batch_normalization = _functional(BatchNormalization, """`tf.layers.batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, ..., training=False)`.

`training` (a Python bool) normalizes with the batch's statistics and
updates the moving ones; otherwise the moving statistics are used.

Example:

```python
x = tf1.layers.batch_normalization(x, training=mode == tf1.estimator.ModeKeys.TRAIN)
```
""")
max_pooling1d = _functional(MaxPooling1D, "`tf.layers.max_pooling1d(inputs, pool_size, strides, padding='valid')`.")
max_pooling2d = _functional(MaxPooling2D, "`tf.layers.max_pooling2d(inputs, pool_size, strides, padding='valid')`.")
average_pooling1d = _functional(AveragePooling1D, "`tf.layers.average_pooling1d(inputs, pool_size, strides)`.")
average_pooling2d = _functional(AveragePooling2D, "`tf.layers.average_pooling2d(inputs, pool_size, strides)`.")
max_pooling3d = _functional(MaxPooling3D, "`tf.layers.max_pooling3d(inputs, pool_size, strides, padding='valid')`.")
average_pooling3d = _functional(AveragePooling3D, "`tf.layers.average_pooling3d(inputs, pool_size, strides)`.")
flatten = _functional(Flatten, "`tf.layers.flatten(inputs)`: `[batch, ...] -> [batch, n]`.")
dropout = _functional(Dropout, """`tf.layers.dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False)`.

Identity unless `training` is True.
""")

# Separable and 3D convolutions, `InputSpec` and `instance_norm` live in their own module.
from keras_tpu_estimator.compat.v1._layers_conv_extra import Conv3D  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._layers_conv_extra import Conv3DTranspose  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._layers_conv_extra import InputSpec  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._layers_conv_extra import SeparableConv1D  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._layers_conv_extra import SeparableConv2D  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._layers_conv_extra import conv3d  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._layers_conv_extra import conv3d_transpose  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._layers_conv_extra import instance_norm  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._layers_conv_extra import separable_conv1d  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._layers_conv_extra import separable_conv2d  # noqa: E402,F401
