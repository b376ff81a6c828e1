"""Evaluation metrics for `eval_metrics`, shaped like `tf.compat.v1.metrics`.

In TPUEstimator a model's `eval_metrics` is `(metric_fn, tensors)`, and
`metric_fn` returns a dict of metric name to metric. Here `metric_fn` runs
inside the compiled evaluation step, once per batch, so a metric function
cannot own state. Each function of this module returns a `MetricPair`: it
unpacks as TF1's `(value, update_op)`, and carries a `MetricUpdate`, a
description of one streaming update of a Keras metric. The model creates the
metric once (`update.factory()`), applies every batch's update inside
`jax.jit` (`metric.stateless_update_state(vars, *update.args,
**update.kwargs)`) and reads `metric.result()` at the end.

```python
import keras_tpu_estimator as kte

def metric_fn(labels, logits):
    predictions = keras.ops.argmax(logits, axis=-1)
    precision, precision_op = kte.metrics.precision(labels, predictions)
    recall, recall_op = kte.metrics.recall(labels, predictions)
    return {
        "accuracy": kte.metrics.accuracy(labels=labels, predictions=predictions),
        "recall_at_5": kte.metrics.recall_at_k(labels, logits, k=5),
        "f1": (2 * precision * recall / (precision + recall),
               kte.compat.v1.group(precision_op, recall_op)),
        "top5": kte.metrics.keras_metric(
            lambda: keras.metrics.SparseTopKCategoricalAccuracy(k=5),
            labels, logits),
    }

spec = kte.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
```

Every `tf.compat.v1.metrics` function is here, with its argument names,
defaults and numbers (inputs cast, squeezed, flattened and `weights`
broadcast as TF1 does; metrics average over every element, not per row;
ties and `0 / 0` as TF1). A pair whose value is computed from metric
values (F1 above) is reported as TensorFlow read it, from the metrics'
values after the last batch (`derived`). `metrics_collections`,
`updates_collections` and `name` are accepted and ignored (the metric is
named by its key in the dict). A pair of plain tensors is refused
(`values`). TF1's runtime checks that predictions lie in [0, 1] (`auc`,
`*_at_thresholds`) are not made inside the compiled step.

Modules, one concept each: `pairs` (`MetricPair`, the calls of one
`metric_fn`), `update` (`MetricUpdate`, `keras_metric`), `values` (what
`metric_fn` may return, and what the model streams for it), `derived`
(metrics computed from metric values), `arguments` (TF1's handling of labels,
predictions and weights), `means`, `errors`, `confusion`, `thresholds`
(`*_at_thresholds`, `auc`), `operating_point` (sensitivity at specificity and
back), `classification` (`mean_per_class_accuracy`, `mean_iou`), `topk`
(`recall_at_k`, `precision_at_k`, ...), `streaming` (`tf.contrib.metrics`'
Pearson correlation, covariance, concat).

Layering: may import `spec` only; the engine's steps update these metrics.
"""

from keras_tpu_estimator.metrics.classification import mean_iou
from keras_tpu_estimator.metrics.classification import mean_per_class_accuracy
from keras_tpu_estimator.metrics.confusion import false_negatives
from keras_tpu_estimator.metrics.confusion import false_positives
from keras_tpu_estimator.metrics.confusion import precision
from keras_tpu_estimator.metrics.confusion import recall
from keras_tpu_estimator.metrics.confusion import true_negatives
from keras_tpu_estimator.metrics.confusion import true_positives
from keras_tpu_estimator.metrics.errors import mean_absolute_error
from keras_tpu_estimator.metrics.errors import mean_cosine_distance
from keras_tpu_estimator.metrics.errors import mean_relative_error
from keras_tpu_estimator.metrics.errors import mean_squared_error
from keras_tpu_estimator.metrics.errors import root_mean_squared_error
from keras_tpu_estimator.metrics.means import accuracy
from keras_tpu_estimator.metrics.means import mean
from keras_tpu_estimator.metrics.means import mean_tensor
from keras_tpu_estimator.metrics.means import percentage_below
from keras_tpu_estimator.metrics.operating_point import sensitivity_at_specificity
from keras_tpu_estimator.metrics.operating_point import specificity_at_sensitivity
from keras_tpu_estimator.metrics.pairs import MetricPair
from keras_tpu_estimator.metrics.thresholds import auc
from keras_tpu_estimator.metrics.thresholds import false_negatives_at_thresholds
from keras_tpu_estimator.metrics.thresholds import false_positives_at_thresholds
from keras_tpu_estimator.metrics.thresholds import precision_at_thresholds
from keras_tpu_estimator.metrics.thresholds import recall_at_thresholds
from keras_tpu_estimator.metrics.thresholds import true_negatives_at_thresholds
from keras_tpu_estimator.metrics.thresholds import true_positives_at_thresholds
from keras_tpu_estimator.metrics.topk import average_precision_at_k
from keras_tpu_estimator.metrics.topk import precision_at_k
from keras_tpu_estimator.metrics.topk import precision_at_top_k
from keras_tpu_estimator.metrics.topk import recall_at_k
from keras_tpu_estimator.metrics.topk import recall_at_top_k
from keras_tpu_estimator.metrics.topk import sparse_average_precision_at_k
from keras_tpu_estimator.metrics.topk import sparse_precision_at_k
from keras_tpu_estimator.metrics.update import MetricUpdate
from keras_tpu_estimator.metrics.update import keras_metric

__all__ = [
    "MetricPair",
    "MetricUpdate",
    "accuracy",
    "auc",
    "average_precision_at_k",
    "false_negatives",
    "false_negatives_at_thresholds",
    "false_positives",
    "false_positives_at_thresholds",
    "keras_metric",
    "mean",
    "mean_absolute_error",
    "mean_cosine_distance",
    "mean_iou",
    "mean_per_class_accuracy",
    "mean_relative_error",
    "mean_squared_error",
    "mean_tensor",
    "percentage_below",
    "precision",
    "precision_at_k",
    "precision_at_thresholds",
    "precision_at_top_k",
    "recall",
    "recall_at_k",
    "recall_at_thresholds",
    "recall_at_top_k",
    "root_mean_squared_error",
    "sensitivity_at_specificity",
    "sparse_average_precision_at_k",
    "sparse_precision_at_k",
    "specificity_at_sensitivity",
    "true_negatives",
    "true_negatives_at_thresholds",
    "true_positives",
    "true_positives_at_thresholds",
]
