"""`tf.contrib.stateless`: random numbers determined by a seed pair (see `tf1.random`).

The numbers are JAX's, not TensorFlow's; the same seed gives the same ones.

```python
color_ordering = tf1.contrib.stateless.stateless_random_normal(
    shape=[batch], seed=tf1.cast(tf1.stack([0, seed]), tf1.int32))
```
"""

from keras_tpu_estimator.compat.v1._stateless_random import stateless_normal as stateless_random_normal  # noqa: E501
from keras_tpu_estimator.compat.v1._stateless_random import stateless_truncated_normal
from keras_tpu_estimator.compat.v1._stateless_random import stateless_uniform as stateless_random_uniform  # noqa: E501

__all__ = ["stateless_random_normal", "stateless_random_uniform", "stateless_truncated_normal"]
