"""`tf.compat.v1.metrics`: the streaming metrics of `kte.metrics`.

Each returns TF1's `(value, update_op)` pair (a `MetricPair`, which also
carries the streaming update the model applies to every batch). A
`metric_fn` returns them as they are, or computes a metric from their values
and returns it with their update ops, as TF1 programs did; see
`keras_tpu_estimator.metrics` for the semantics.

```python
def metric_fn(labels, logits):
    predictions = tf1.argmax(logits, 1)
    precision, precision_op = tf1.metrics.precision(labels, predictions)
    recall, recall_op = tf1.metrics.recall(labels, predictions)
    f1 = 2 * precision * recall / (precision + recall)
    return {"accuracy": tf1.metrics.accuracy(labels, predictions),
            "f1": (f1, tf1.group(precision_op, recall_op))}
```
"""

from keras_tpu_estimator.metrics import MetricPair  # noqa: F401
from keras_tpu_estimator.metrics import MetricUpdate  # noqa: F401
from keras_tpu_estimator.metrics import accuracy  # noqa: F401
from keras_tpu_estimator.metrics import auc  # noqa: F401
from keras_tpu_estimator.metrics import average_precision_at_k  # noqa: F401
from keras_tpu_estimator.metrics import false_negatives  # noqa: F401
from keras_tpu_estimator.metrics import false_negatives_at_thresholds  # noqa: F401
from keras_tpu_estimator.metrics import false_positives  # noqa: F401
from keras_tpu_estimator.metrics import false_positives_at_thresholds  # noqa: F401
from keras_tpu_estimator.metrics import keras_metric  # noqa: F401
from keras_tpu_estimator.metrics import mean  # noqa: F401
from keras_tpu_estimator.metrics import mean_absolute_error  # noqa: F401
from keras_tpu_estimator.metrics import mean_cosine_distance  # noqa: F401
from keras_tpu_estimator.metrics import mean_iou  # noqa: F401
from keras_tpu_estimator.metrics import mean_per_class_accuracy  # noqa: F401
from keras_tpu_estimator.metrics import mean_relative_error  # noqa: F401
from keras_tpu_estimator.metrics import mean_squared_error  # noqa: F401
from keras_tpu_estimator.metrics import mean_tensor  # noqa: F401
from keras_tpu_estimator.metrics import percentage_below  # noqa: F401
from keras_tpu_estimator.metrics import precision  # noqa: F401
from keras_tpu_estimator.metrics import precision_at_k  # noqa: F401
from keras_tpu_estimator.metrics import precision_at_thresholds  # noqa: F401
from keras_tpu_estimator.metrics import precision_at_top_k  # noqa: F401
from keras_tpu_estimator.metrics import recall  # noqa: F401
from keras_tpu_estimator.metrics import recall_at_k  # noqa: F401
from keras_tpu_estimator.metrics import recall_at_thresholds  # noqa: F401
from keras_tpu_estimator.metrics import recall_at_top_k  # noqa: F401
from keras_tpu_estimator.metrics import root_mean_squared_error  # noqa: F401
from keras_tpu_estimator.metrics import sensitivity_at_specificity  # noqa: F401
from keras_tpu_estimator.metrics import sparse_average_precision_at_k  # noqa: F401
from keras_tpu_estimator.metrics import sparse_precision_at_k  # noqa: F401
from keras_tpu_estimator.metrics import specificity_at_sensitivity  # noqa: F401
from keras_tpu_estimator.metrics import true_negatives  # noqa: F401
from keras_tpu_estimator.metrics import true_negatives_at_thresholds  # noqa: F401
from keras_tpu_estimator.metrics import true_positives  # noqa: F401
from keras_tpu_estimator.metrics import true_positives_at_thresholds  # noqa: F401
