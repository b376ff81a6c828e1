"""Keras batch normalization with TF1's fused moving-variance update.

`tf1.layers.batch_normalization` and `tf1.layers.BatchNormalization` build
this layer: TF1's fused kernel (4D inputs, `fused` None or True) updates the
moving variance with the unbiased batch variance and normalizes with the
biased one, and raises epsilon to cuDNN's minimum; Keras's own layer is
TF1's non-fused path, which TF1 took for `fused=False` and, whatever
`fused` says, for inputs the kernel cannot take (not 4D, or the channels
on another axis than 1 or 3). TF1's `renorm`, `virtual_batch_size` and
`adjustment` take the non-fused path too (`_batch_norm_step`), with TF1's
variables (`moving_stddev`, `renorm_mean`, `renorm_stddev`) and shapes.
"""

import math

import keras

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.compat.v1 import _batch_norm_step as step

FUSED_MIN_EPSILON = 1.001e-5


class TF1BatchNormalization(keras.layers.BatchNormalization):
    """Keras batch normalization with TF1's moving-variance update and arguments.

    TF1's fused kernel (4D inputs; `fused` None or True) returns the
    unbiased batch variance, which updates `moving_variance`, while the
    output is normalized with the biased one. `fused=False`, and as in TF1
    any input the kernel cannot take (not 4D, or the channels on another
    axis than 1 or 3) even with `fused=True`, is TF1's non-fused path:
    biased throughout, as Keras. `renorm`, `virtual_batch_size` and
    `adjustment` take the non-fused path whatever `fused` says, as in TF1.

    Args:
        fused: TF1's `fused` argument (None or True: fused for 4D inputs
            with the channels on axis 1 or 3; False: never).
        renorm: batch renormalization; adds the variables `moving_stddev`,
            `renorm_mean` and `renorm_stddev`.
        renorm_clipping: a dict of `rmax`, `rmin`, `dmax` (numbers or
            scalar tensors) clipping the renorm correction.
        renorm_momentum: the decay of `renorm_mean` and `renorm_stddev`.
        virtual_batch_size: None, or the size of TF1's virtual (ghost)
            batches; the parameters then have TF1's shape `[1, 1, ..., C]`.
        adjustment: None, or `adjustment(shape) -> (scale, bias)`, applied
            in training.
        **kwargs: `keras.layers.BatchNormalization`'s other arguments.

    Raises:
        ValueError: for an unknown `renorm_clipping` key, or a
            `virtual_batch_size` TF1 rejected (not positive, with
            `adjustment`, or with axis 0).

    Example:

    ```python
    layer = TF1BatchNormalization(renorm=True, renorm_clipping={"rmax": 3.0, "dmax": 5.0})
    y = layer(x, training=True)
    ```
    """

    def __init__(self, fused=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                 virtual_batch_size=None, adjustment=None, **kwargs):
        super().__init__(**kwargs)
        self.fused = fused
        self.tf1_renorm = bool(renorm)
        self.renorm_clipping = step.check_renorm_clipping(renorm_clipping) if renorm else {}
        self.renorm_momentum = renorm_momentum
        self.virtual_batch_size = virtual_batch_size
        self.adjustment = adjustment

    def _extended(self):
        """Whether an argument of TF1's non-fused path only is set."""
        return self.tf1_renorm or self.virtual_batch_size is not None or (
            self.adjustment is not None)

    def build(self, input_shape):
        if self.virtual_batch_size is None:
            super().build(input_shape)
            shape = (input_shape[self.axis],)
        else:
            step.check_virtual_batch_size(self.virtual_batch_size, self.axis, len(input_shape),
                                          self.adjustment)
            shape = step.parameter_shape(input_shape, self.axis, self.virtual_batch_size)
            self.gamma = self._parameter("gamma", shape, self.gamma_initializer, True,
                                         self.gamma_regularizer, self.gamma_constraint) if (
                self.scale) else None
            self.beta = self._parameter("beta", shape, self.beta_initializer, True,
                                        self.beta_regularizer, self.beta_constraint) if (
                self.center) else None
            self.moving_mean = self._parameter("moving_mean", shape,
                                               self.moving_mean_initializer)
            self.moving_variance = self._parameter("moving_variance", shape,
                                                   self.moving_variance_initializer)
            self.input_spec = keras.layers.InputSpec(
                ndim=len(input_shape), axes={self.axis: input_shape[self.axis]})
        if self.tf1_renorm:
            variance_initializer = self.moving_variance_initializer

            def stddev_initializer(shape, dtype=None):
                return keras.ops.sqrt(variance_initializer(shape, dtype=dtype))

            # TF1's names and order; the stddevs start at sqrt(moving_variance's start).
            self.moving_stddev = self._parameter("moving_stddev", shape, stddev_initializer)
            self.renorm_mean = self._parameter("renorm_mean", shape,
                                               self.moving_mean_initializer)
            self.renorm_stddev = self._parameter("renorm_stddev", shape, stddev_initializer)

    def _parameter(self, name, shape, initializer, trainable=False, regularizer=None,
                   constraint=None):
        return self.add_weight(shape=shape, name=name, initializer=initializer,
                               regularizer=regularizer, constraint=constraint,
                               trainable=trainable, autocast=False)

    def _is_fused(self, inputs):
        # TF1's rule (its V1 layer, `BatchNormalizationBase.build`): `fused`
        # None or True uses the fused kernel where it can, a 4D input with
        # the channels on axis 1 or 3, and the non-fused path elsewhere.
        if (self.fused is not None and not self.fused) or self._extended():
            return False
        rank = len(inputs.shape)
        axes = [a % rank for a in ([self.axis] if isinstance(self.axis, int) else self.axis)]
        return rank == 4 and len(axes) == 1 and axes[0] in (1, 3)

    def call(self, inputs, training=None, mask=None, renorm_clipping=None, adjustment=None):
        """Normalizes `inputs`; `renorm_clipping`/`adjustment` given here replace the layer's.

        TF1 code may compute them from tensors of the current step (a
        schedule of `rmax` on the global step): each call passes its own.
        """
        if self._extended():
            return self._extended_call(inputs, training, mask, renorm_clipping, adjustment)
        fused = self._is_fused(inputs)
        if not fused and (self.trainable or not training):
            return super().call(inputs, training=training, mask=mask)
        # TF1's layer: `training` picks the batch's moments whether or not the
        # layer is `trainable`; a frozen layer only never updates its moving ones.
        inputs = keras.ops.cast(inputs, keras.backend.result_type(inputs.dtype, "float32"))
        if training:
            mean, variance = _keras_internals.batch_moments(self, inputs, mask)
        if training and self.trainable:
            axes = _keras_internals.batch_reduction_axes(self)
            n = math.prod(inputs.shape[a] for a in axes)
            unbiased = variance * (n / max(n - 1, 1))
            momentum = self.momentum
            self.moving_mean.assign(
                keras.ops.cast(self.moving_mean, inputs.dtype) * momentum
                + mean * (1.0 - momentum)
            )
            self.moving_variance.assign(
                keras.ops.cast(self.moving_variance, inputs.dtype) * momentum
                + unbiased * (1.0 - momentum)
            )
        elif not training:
            mean = keras.ops.cast(self.moving_mean, inputs.dtype)
            variance = keras.ops.cast(self.moving_variance, inputs.dtype)
        outputs = keras.ops.batch_normalization(
            inputs, mean, variance, axis=self.axis,
            offset=keras.ops.cast(self.beta, inputs.dtype) if self.center else None,
            scale=keras.ops.cast(self.gamma, inputs.dtype) if self.scale else None,
            # TF1's fused kernel raises epsilon to 1.001e-5 at least (cuDNN's minimum).
            epsilon=max(self.epsilon, FUSED_MIN_EPSILON) if fused else self.epsilon,
        )
        return keras.ops.cast(outputs, self.compute_dtype)

    def _extended_call(self, inputs, training, mask, renorm_clipping, adjustment):
        if mask is not None:
            raise NotImplementedError(
                "TF1BatchNormalization takes no `mask` with renorm, virtual_batch_size or "
                "adjustment (TF1's layers were called without one).")
        inputs = keras.ops.cast(inputs, keras.backend.result_type(inputs.dtype, "float32"))
        names = ["gamma", "beta", "moving_mean", "moving_variance"]
        names += list(step.RENORM_VARIABLES) if self.tf1_renorm else []
        values = {name: None if getattr(self, name, None) is None
                  else keras.ops.cast(getattr(self, name), inputs.dtype) for name in names}
        training = bool(training)
        outputs, updates = step.normalize(
            inputs, values, self.axis, self.epsilon, self.momentum, training,
            renorm=self.tf1_renorm,
            renorm_clipping=self.renorm_clipping if renorm_clipping is None else renorm_clipping,
            renorm_momentum=self.renorm_momentum, virtual_batch_size=self.virtual_batch_size,
            adjustment=self.adjustment if adjustment is None else adjustment,
        )
        for name, value in updates.items() if self.trainable else ():  # Frozen: no updates.
            variable = getattr(self, name)
            variable.assign(keras.ops.cast(value, variable.dtype))
        return keras.ops.cast(outputs, self.compute_dtype)

    def get_config(self):
        config = {**super().get_config(), "fused": self.fused,
                  "virtual_batch_size": self.virtual_batch_size}
        if self.tf1_renorm:
            config.update(renorm=True, renorm_clipping=self.renorm_clipping,
                          renorm_momentum=self.renorm_momentum)
        return config
