"""`tf.compat.v1.metrics`: the streaming metrics of `kte.metrics`.

Each returns a `MetricUpdate` for a `metric_fn` (not TF1's `(value,
update_op)` pair); see `keras_tpu_estimator.metrics` for the semantics.

```python
def metric_fn(labels, logits):
    return {"accuracy": tf1.metrics.accuracy(labels, tf1.argmax(logits, 1))}
```
"""

from keras_tpu_estimator.metrics import MetricUpdate  # noqa: F401
from keras_tpu_estimator.metrics import accuracy  # noqa: F401
from keras_tpu_estimator.metrics import auc  # noqa: F401
from keras_tpu_estimator.metrics import false_negatives  # noqa: F401
from keras_tpu_estimator.metrics import false_positives  # noqa: F401
from keras_tpu_estimator.metrics import keras_metric  # noqa: F401
from keras_tpu_estimator.metrics import mean  # noqa: F401
from keras_tpu_estimator.metrics import mean_absolute_error  # noqa: F401
from keras_tpu_estimator.metrics import mean_cosine_distance  # noqa: F401
from keras_tpu_estimator.metrics import mean_iou  # noqa: F401
from keras_tpu_estimator.metrics import mean_per_class_accuracy  # noqa: F401
from keras_tpu_estimator.metrics import mean_relative_error  # noqa: F401
from keras_tpu_estimator.metrics import mean_squared_error  # noqa: F401
from keras_tpu_estimator.metrics import percentage_below  # noqa: F401
from keras_tpu_estimator.metrics import precision  # noqa: F401
from keras_tpu_estimator.metrics import precision_at_thresholds  # noqa: F401
from keras_tpu_estimator.metrics import recall  # noqa: F401
from keras_tpu_estimator.metrics import recall_at_k  # noqa: F401
from keras_tpu_estimator.metrics import recall_at_thresholds  # noqa: F401
from keras_tpu_estimator.metrics import root_mean_squared_error  # noqa: F401
from keras_tpu_estimator.metrics import true_negatives  # noqa: F401
from keras_tpu_estimator.metrics import true_positives  # noqa: F401
