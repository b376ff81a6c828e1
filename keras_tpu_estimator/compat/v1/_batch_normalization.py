"""Keras batch normalization with TF1's fused moving-variance update.

`tf1.layers.batch_normalization` and `tf1.layers.BatchNormalization` build
this layer: TF1's fused kernel (4D inputs, `fused` None or True) updates the
moving variance with the unbiased batch variance and normalizes with the
biased one, and raises epsilon to cuDNN's minimum; Keras's own layer is
TF1's non-fused path, which TF1 took for `fused=False` and, whatever
`fused` says, for inputs the kernel cannot take (not 4D, or the channels
on another axis than 1 or 3).
"""

import math

import keras

from keras_tpu_estimator import _keras_internals

FUSED_MIN_EPSILON = 1.001e-5


class TF1BatchNormalization(keras.layers.BatchNormalization):
    """Keras batch normalization with TF1's moving-variance update.

    TF1's fused kernel (4D inputs; `fused` None or True) returns the
    unbiased batch variance, which updates `moving_variance`, while the
    output is normalized with the biased one. `fused=False`, and as in TF1
    any input the kernel cannot take (not 4D, or the channels on another
    axis than 1 or 3) even with `fused=True`, is TF1's non-fused path:
    biased throughout, as Keras.

    Args:
        fused: TF1's `fused` argument (None or True: fused for 4D inputs
            with the channels on axis 1 or 3; False: never).
        **kwargs: `keras.layers.BatchNormalization`'s arguments.
    """

    def __init__(self, fused=None, **kwargs):
        super().__init__(**kwargs)
        self.fused = fused

    def _is_fused(self, inputs):
        # TF1's rule (its V1 layer, `BatchNormalizationBase.build`): `fused`
        # None or True uses the fused kernel where it can, a 4D input with
        # the channels on axis 1 or 3, and the non-fused path elsewhere.
        if self.fused is not None and not self.fused:
            return False
        rank = len(inputs.shape)
        axes = [a % rank for a in ([self.axis] if isinstance(self.axis, int) else self.axis)]
        return rank == 4 and len(axes) == 1 and axes[0] in (1, 3)

    def call(self, inputs, training=None, mask=None):
        if not self._is_fused(inputs):
            return super().call(inputs, training=training, mask=mask)
        inputs = keras.ops.cast(inputs, keras.backend.result_type(inputs.dtype, "float32"))
        if training and self.trainable:
            mean, variance = _keras_internals.batch_moments(self, inputs, mask)
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
        else:
            mean = keras.ops.cast(self.moving_mean, inputs.dtype)
            variance = keras.ops.cast(self.moving_variance, inputs.dtype)
        outputs = keras.ops.batch_normalization(
            inputs, mean, variance, axis=self.axis,
            offset=keras.ops.cast(self.beta, inputs.dtype) if self.center else None,
            scale=keras.ops.cast(self.gamma, inputs.dtype) if self.scale else None,
            # TF1's fused kernel raises epsilon to 1.001e-5 at least (cuDNN's minimum).
            epsilon=max(self.epsilon, FUSED_MIN_EPSILON),
        )
        return keras.ops.cast(outputs, self.compute_dtype)

    def get_config(self):
        return {**super().get_config(), "fused": self.fused}
