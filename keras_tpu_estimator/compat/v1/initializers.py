"""TF1 initializers (`tf.truncated_normal_initializer(stddev=0.02)`, ...).

Each is a Keras initializer with TF1's name, arguments and defaults, so it
goes to `get_variable(initializer=...)`, to the `*_initializer` arguments of
`tf1.layers`, and to Keras layers alike. Like TF1's, they are classes: both
`initializer=tf1.zeros_initializer()` and `initializer=tf1.zeros_initializer`
work. The `dtype` argument is accepted and ignored (the variable's dtype
decides). Random initializers draw from Keras's seeding
(`keras.utils.set_random_seed`), not from TF1's graph seed.

```python
w = tf1.get_variable("w", [768, 2],
                     initializer=tf1.truncated_normal_initializer(stddev=0.02))
```
"""

import keras
import numpy as np

# Lower-case class names are TF1's own spelling of these classes.
# ruff: noqa: N801


class zeros_initializer(keras.initializers.Zeros):
    """All zeros (TF1 `tf.zeros_initializer`)."""

    def __init__(self, dtype=None):
        super().__init__()


class ones_initializer(keras.initializers.Ones):
    """All ones (TF1 `tf.ones_initializer`)."""

    def __init__(self, dtype=None):
        super().__init__()


class constant_initializer(keras.initializers.Initializer):
    """A constant: a scalar, or an array reshaped to the variable's shape.

    Args:
        value: a number, or a list/array with as many elements as the
            variable (TF1 reshapes it, in row-major order).
    """

    def __init__(self, value=0, dtype=None, verify_shape=False):
        self.value = np.asarray(value)

    def __call__(self, shape, dtype=None):
        value = self.value
        if value.size == 1:
            value = np.full(shape, value.reshape(()))
        elif value.size == int(np.prod(shape)):
            value = value.reshape(shape)
        else:
            raise ValueError(
                f"constant_initializer got {value.size} values for a variable of "
                f"shape {tuple(shape)}: give one value, or one per element."
            )
        return keras.ops.convert_to_tensor(value, dtype=dtype)

    def get_config(self):
        return {"value": self.value.tolist()}


class random_normal_initializer(keras.initializers.RandomNormal):
    """Normal samples (TF1 `tf.random_normal_initializer`, stddev 1.0)."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=None):
        super().__init__(mean=mean, stddev=stddev, seed=seed)


class truncated_normal_initializer(keras.initializers.TruncatedNormal):
    """Normal samples redrawn beyond two standard deviations, as TF1's."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=None):
        super().__init__(mean=mean, stddev=stddev, seed=seed)


class random_uniform_initializer(keras.initializers.RandomUniform):
    """Uniform samples in `[minval, maxval)` (TF1 defaults 0 and 1)."""

    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=None):
        super().__init__(minval=minval, maxval=1.0 if maxval is None else maxval, seed=seed)


class glorot_uniform_initializer(keras.initializers.GlorotUniform):
    """Glorot (Xavier) uniform: the default of `get_variable` and `tf1.layers`."""

    def __init__(self, seed=None, dtype=None):
        super().__init__(seed=seed)


class glorot_normal_initializer(keras.initializers.GlorotNormal):
    """Glorot (Xavier) truncated normal."""

    def __init__(self, seed=None, dtype=None):
        super().__init__(seed=seed)


class variance_scaling_initializer(keras.initializers.VarianceScaling):
    """TF1 `tf.variance_scaling_initializer` (`distribution` 'truncated_normal',
    'untruncated_normal' or 'uniform'; TF1's 'normal' means truncated)."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal",
                 seed=None, dtype=None):
        if distribution == "normal":
            distribution = "truncated_normal"
        super().__init__(scale=scale, mode=mode.lower(), distribution=distribution, seed=seed)


class orthogonal_initializer(keras.initializers.Orthogonal):
    """A (scaled) orthogonal matrix."""

    def __init__(self, gain=1.0, seed=None, dtype=None):
        super().__init__(gain=gain, seed=seed)


class identity_initializer(keras.initializers.Identity):
    """`gain` times the identity matrix (TF1 `tf.initializers.identity`)."""

    def __init__(self, gain=1.0, dtype=None):
        super().__init__(gain=gain)


class uniform_unit_scaling_initializer(keras.initializers.VarianceScaling):
    """TF1's `uniform_unit_scaling_initializer`: uniform in `±factor * sqrt(3 / fan_in)`.

    `fan_in` is the product of all but the last dimension, as
    `variance_scaling_initializer(factor ** 2, 'fan_in', 'uniform')` reads it.
    """

    def __init__(self, factor=1.0, seed=None, dtype=None):
        super().__init__(scale=factor**2, mode="fan_in", distribution="uniform", seed=seed)


def lecun_normal(seed=None):
    """LeCun normal: `variance_scaling_initializer(1.0, 'fan_in', 'truncated_normal')`."""
    return variance_scaling_initializer(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    """LeCun uniform: `variance_scaling_initializer(1.0, 'fan_in', 'uniform')`."""
    return variance_scaling_initializer(1.0, "fan_in", "uniform", seed)


def he_normal(seed=None):
    """He normal: `variance_scaling_initializer(2.0, 'fan_in', 'truncated_normal')`."""
    return variance_scaling_initializer(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    """He uniform: `variance_scaling_initializer(2.0, 'fan_in', 'uniform')`."""
    return variance_scaling_initializer(2.0, "fan_in", "uniform", seed)


# `tf.initializers.*`: TF1's short names of the same classes.
zeros = zeros_initializer
ones = ones_initializer
constant = constant_initializer
random_normal = random_normal_initializer
random_uniform = random_uniform_initializer
truncated_normal = truncated_normal_initializer
glorot_uniform = glorot_uniform_initializer
glorot_normal = glorot_normal_initializer
variance_scaling = variance_scaling_initializer
orthogonal = orthogonal_initializer
identity = identity_initializer
uniform_unit_scaling = uniform_unit_scaling_initializer


__all__ = [
    "constant", "constant_initializer", "glorot_normal", "glorot_normal_initializer",
    "glorot_uniform", "glorot_uniform_initializer", "he_normal", "he_uniform", "identity",
    "identity_initializer", "lecun_normal",
    "lecun_uniform", "ones", "ones_initializer", "orthogonal", "orthogonal_initializer",
    "random_normal", "random_normal_initializer", "random_uniform", "random_uniform_initializer",
    "truncated_normal", "truncated_normal_initializer",
    "uniform_unit_scaling", "uniform_unit_scaling_initializer", "variance_scaling",
    "variance_scaling_initializer", "zeros", "zeros_initializer",
]
