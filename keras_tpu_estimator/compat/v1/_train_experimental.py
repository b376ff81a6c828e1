"""`tf.compat.v1.train.experimental`: `enable_mixed_precision_graph_rewrite`.

```python
optimizer = tf1.train.experimental.enable_mixed_precision_graph_rewrite(optimizer)
```
"""

from keras_tpu_estimator.compat.v1._optimizers_extra import enable_mixed_precision_graph_rewrite

__all__ = ["enable_mixed_precision_graph_rewrite"]
