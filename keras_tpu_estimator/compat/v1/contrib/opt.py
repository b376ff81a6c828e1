"""`tf.contrib.opt`: `LARSOptimizer` (layer-wise adaptive rate scaling), TF1's update and names.

```python
optimizer = tf1.contrib.opt.LARSOptimizer(
    learning_rate, momentum=0.9, weight_decay=1e-4, skip_list=["batch_normalization", "bias"])
```
"""

from keras_tpu_estimator.compat.v1._optimizers_extra import LARSOptimizer

__all__ = ["LARSOptimizer"]
