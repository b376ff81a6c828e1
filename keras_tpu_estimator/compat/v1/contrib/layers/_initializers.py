"""`tf.contrib.layers` initializers: `xavier_initializer`, `variance_scaling_initializer`.

```python
w = tf1.get_variable("w", [3, 3, 16, 32], initializer=tf1.contrib.layers.xavier_initializer())
```
"""

import keras

from keras_tpu_estimator.compat.v1 import initializers


def xavier_initializer(uniform=True, seed=None, dtype=None):
    """Glorot uniform (or truncated normal with `uniform=False`)."""
    if uniform:
        return initializers.glorot_uniform_initializer(seed=seed)
    return initializers.glorot_normal_initializer(seed=seed)


# TF1's name for the same initializer, used for convolution kernels.
xavier_initializer_conv2d = xavier_initializer


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None, dtype=None):
    """`tf.contrib.layers.variance_scaling_initializer` (He by default)."""
    return keras.initializers.VarianceScaling(
        scale=factor, mode=mode.lower(), distribution="uniform" if uniform else "truncated_normal",
        seed=seed,
    )
