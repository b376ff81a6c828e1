"""`tf.compat.v1.compat`: the `tf.compat.v2` a TF1 program reaches from `tf.compat.v1`.

`tf.compat.v2.summary` (TensorFlow 2's summaries) works inside `model_fn`:

```python
import keras_tpu_estimator.compat.v1 as tf1
tf2 = tf1.compat.v2

with tf2.summary.create_file_writer(logdir).as_default():
    tf2.summary.scalar("lr", learning_rate, step=tf1.train.get_global_step())
```

Layering: as `compat.v1` (may import `summary` and `compat.v1`'s own modules).
"""

from keras_tpu_estimator.compat.v1.compat import v2  # noqa: F401

__all__ = ["v2"]
