"""Evaluation metrics for `eval_metrics`, shaped like `tf.compat.v1.metrics`.

In TPUEstimator a model's `eval_metrics` is `(metric_fn, tensors)`, and
`metric_fn` returns a dict of metric name to metric. Here `metric_fn` runs
inside the compiled evaluation step, once per batch, so a metric function
cannot own state. Each function of this module returns a `MetricUpdate`
instead: a description of one streaming update of a Keras metric. The model
creates the metric once (`update.factory()`), applies every batch's update
inside `jax.jit` (`metric.stateless_update_state(vars, *update.args,
**update.kwargs)`) and reads `metric.result()` at the end.

```python
import keras_tpu_estimator as kte

def metric_fn(labels, logits):
    predictions = keras.ops.argmax(logits, axis=-1)
    return {
        "accuracy": kte.metrics.accuracy(labels=labels, predictions=predictions),
        "recall_at_5": kte.metrics.recall_at_k(labels, logits, k=5),
        "top5": kte.metrics.keras_metric(
            lambda: keras.metrics.SparseTopKCategoricalAccuracy(k=5),
            labels, logits),
    }

spec = kte.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
```

Supported, with the argument names, defaults and semantics of
`tf.compat.v1.metrics` (inputs cast, squeezed, flattened and `weights`
broadcast as TF1 does; metrics average over every element, not per row):

- `accuracy`, `mean`, `percentage_below`;
- `precision`, `recall`, `true_positives`, `false_positives`,
  `true_negatives`, `false_negatives` (labels and predictions cast to bool);
- `precision_at_thresholds`, `recall_at_thresholds` (a vector result);
- `auc` (`curve` 'ROC' or 'PR'; every TF1 `summation_method`);
- `mean_squared_error`, `root_mean_squared_error`, `mean_absolute_error`,
  `mean_relative_error`, `mean_cosine_distance`;
- `mean_per_class_accuracy`, `mean_iou`;
- `recall_at_k` (one label per example; `class_id` supported);
- `keras_metric`: any Keras metric, for everything else.

The one difference from TF1: a function returns a `MetricUpdate`, not a
`(value, update_op)` tuple; the library streams the update over the batches
and reports the final value. A `metric_fn` returning a TF1 pair of its own
(plain tensors, no local variables) gets a `TypeError` naming the metric:
read once at the end, such a pair would report the last batch, not the
evaluation. `metrics_collections`, `updates_collections` and
`name` are accepted and ignored (the metric is named by its key in the dict).

Smaller differences, all in degenerate cases: ratios whose denominator is 0
give 0 (TF1 gave 0 or NaN depending on the metric), `recall_at_k` counts a
label tied with the k-th largest prediction as a hit, and TF1's runtime
checks that predictions lie in [0, 1] (`auc`, `*_at_thresholds`) are not
made inside the compiled step.

Modules, one concept each: `update` (`MetricUpdate`, `keras_metric`),
`values` (what `metric_fn` may return: TF1 `(value, update_op)` pairs are
refused with an error saying what to write instead),
`arguments` (TF1's handling of labels, predictions and weights), `means`,
`errors`, `confusion`, `thresholds` (`*_at_thresholds`, `auc`) and
`classification` (`mean_per_class_accuracy`, `mean_iou`, `recall_at_k`).
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
from keras_tpu_estimator.metrics.thresholds import precision_at_thresholds
from keras_tpu_estimator.metrics.thresholds import false_negatives_at_thresholds
from keras_tpu_estimator.metrics.thresholds import false_positives_at_thresholds
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
