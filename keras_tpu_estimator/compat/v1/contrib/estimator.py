"""`tf.contrib.estimator`: `clip_gradients_by_norm`, an optimizer wrapper.

```python
optimizer = tf1.contrib.estimator.clip_gradients_by_norm(optimizer, clip_norm=5.0)
```
"""

from keras_tpu_estimator.compat.v1._optimizers_extra import clip_gradients_by_norm

__all__ = ["clip_gradients_by_norm"]
