"""`tf.contrib.layers` initializers: `variance_scaling_initializer`, `xavier_initializer`.

Contrib's `variance_scaling_initializer(factor, mode, uniform)` is not
`tf.variance_scaling_initializer(scale, mode, distribution)`: its modes are
upper-case, and its normal draw is a normal of standard deviation
`sqrt(1.3 * factor / n)` truncated at two standard deviations (Keras's
`VarianceScaling` aims the *truncated* deviation at `sqrt(scale / n)`).
Its uniform draw lies in `±sqrt(3 * factor / n)`. `n` is `fan_in`,
`fan_out` or their mean, with the kernel's receptive field counted in both.

```python
w = tf1.get_variable("w", [3, 3, 16, 32],
                     initializer=tf1.contrib.layers.variance_scaling_initializer())
```
"""

import keras

from keras_tpu_estimator.compat.v1 import dtypes as _dtypes

_MODES = ("FAN_IN", "FAN_OUT", "FAN_AVG")
# A normal truncated at two standard deviations keeps this fraction of its
# deviation; Keras's `VarianceScaling` divides by it, contrib does not.
_TRUNCATED_STDDEV = 0.87962566103423978


def _check_floating(dtype):
    if dtype is not None and not _dtypes.as_dtype(dtype).is_floating:
        raise TypeError(
            "Cannot create initializer for non-floating point type: "
            f"dtype={_dtypes.as_dtype(dtype).name}"
        )


class _ContribVarianceScaling(keras.initializers.VarianceScaling):
    """Contrib's draw, on Keras's `VarianceScaling` (same fans, Keras's seeding)."""

    def __init__(self, factor, mode, uniform, seed):
        self.factor, self.contrib_mode, self.uniform = factor, mode, uniform
        if uniform:  # Keras: limit = sqrt(3 * scale / n).
            scale, distribution = factor, "uniform"
        else:  # Keras: deviation before truncation = sqrt(scale / n) / 0.8796...
            scale, distribution = 1.3 * factor * _TRUNCATED_STDDEV**2, "truncated_normal"
        super().__init__(scale=scale, mode=mode.lower(),
                         distribution=distribution, seed=seed)

    def __call__(self, shape, dtype=None, partition_info=None):
        del partition_info
        _check_floating(dtype)
        return super().__call__(shape, dtype=dtype)

    def get_config(self):
        return {"factor": self.factor, "mode": self.contrib_mode, "uniform": self.uniform,
                **super(keras.initializers.VarianceScaling, self).get_config()}


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None,
                                 dtype=_dtypes.float32):
    """`tf.contrib.layers.variance_scaling_initializer`: He initialization by default.

    Args:
        factor: the multiplicative factor (2.0: He; 1.0 with `'FAN_AVG'`:
            Glorot).
        mode: `'FAN_IN'`, `'FAN_OUT'` or `'FAN_AVG'`.
        uniform: uniform in `±sqrt(3 * factor / n)` if True, else a normal of
            deviation `sqrt(1.3 * factor / n)` truncated at two deviations.
        seed: an integer seed (None: Keras's seeding,
            `keras.utils.set_random_seed`).
        dtype: a floating-point dtype (the variable's dtype decides).

    Returns:
        An initializer `(shape, dtype=None, partition_info=None) -> tensor`.

    Raises:
        TypeError: for an unknown `mode` or a non-floating `dtype`.

    Example:

    ```python
    with slim.arg_scope([slim.conv2d],
                        weights_initializer=slim.variance_scaling_initializer()):
        net = slim.conv2d(images, 64, [7, 7])
    ```
    """
    _check_floating(dtype)
    if mode not in _MODES:
        raise TypeError(f"Unknown mode {mode!r} of variance_scaling_initializer: "
                        f"expected one of {list(_MODES)}.")
    return _ContribVarianceScaling(factor, mode, uniform, seed)


def xavier_initializer(uniform=True, seed=None, dtype=_dtypes.float32):
    """Glorot (Xavier) initialization, as `tf.contrib.layers.xavier_initializer`.

    `variance_scaling_initializer(factor=1.0, mode='FAN_AVG', uniform=uniform)`:
    uniform in `±sqrt(6 / (fan_in + fan_out))`, or (with `uniform=False`)
    contrib's truncated normal of deviation `sqrt(1.3 * 2 / (fan_in + fan_out))`.

    Raises:
        TypeError: for a non-floating `dtype`.

    Example:

    ```python
    x = tf1.layers.conv2d(x, 64, 3, kernel_initializer=tf1.contrib.layers.xavier_initializer())
    ```
    """
    return variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=uniform,
                                        seed=seed, dtype=dtype)


# TF1's name for the same initializer, used for convolution kernels.
xavier_initializer_conv2d = xavier_initializer
