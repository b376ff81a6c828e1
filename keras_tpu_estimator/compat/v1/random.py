"""`tf.random`: TF's newer path for the random tensors of `random_ops`.

```python
noise = tf1.random.uniform([batch, 1, 1, 1], dtype=tf1.float32)
```
"""

from keras_tpu_estimator.compat.v1.random_ops import multinomial
from keras_tpu_estimator.compat.v1.random_ops import random_normal as normal
from keras_tpu_estimator.compat.v1.random_ops import random_shuffle as shuffle
from keras_tpu_estimator.compat.v1.random_ops import random_uniform as uniform
from keras_tpu_estimator.compat.v1.random_ops import truncated_normal


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """`num_samples` class ids per row of `logits` (`tf.random.categorical`)."""
    return multinomial(logits, num_samples, output_dtype=dtype)


__all__ = ["categorical", "multinomial", "normal", "shuffle", "truncated_normal", "uniform"]

# Stateless draws and the graph seed live in their own module.
from keras_tpu_estimator.compat.v1._stateless_random import set_seed  # noqa: E402
from keras_tpu_estimator.compat.v1._stateless_random import stateless_normal  # noqa: E402
from keras_tpu_estimator.compat.v1._stateless_random import stateless_truncated_normal  # noqa: E402
from keras_tpu_estimator.compat.v1._stateless_random import stateless_uniform  # noqa: E402

__all__ += ["set_seed", "stateless_normal", "stateless_truncated_normal", "stateless_uniform"]

# Keep last: on TensorFlow tensors (input_fn), TensorFlow's own functions run (see `_sides`).
from keras_tpu_estimator.compat.v1._sides import run_where_called as _run_where_called  # noqa: E402,E501

_run_where_called(globals())
