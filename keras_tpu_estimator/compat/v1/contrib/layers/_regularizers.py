"""`tf.contrib.layers` regularizers: `l1_regularizer`, `l2_regularizer`, `l1_l2_regularizer`, `sum_regularizer`.

```python
reg = tf1.contrib.layers.l2_regularizer(1e-4)
x = tf1.layers.dense(x, 64, kernel_regularizer=reg)
```
"""

from keras import ops

from keras_tpu_estimator.compat.v1 import nn


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
