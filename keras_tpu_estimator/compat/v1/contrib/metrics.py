"""`tf.contrib.metrics`: the streaming statistics TPU `metric_fn`s use.

ALBERT's STS-B evaluation, for one:

```python
def metric_fn(per_example_loss, label_ids, logits, is_real_example):
    pearson = tf1.contrib.metrics.streaming_pearson_correlation(
        logits, label_ids, weights=is_real_example)
    concat = tf1.contrib.metrics.streaming_concat(logits)
    return {"pearson": pearson, "pred": concat}
```

Each returns TF1's `(value, update_op)` (a `kte.metrics.MetricPair`); see
`keras_tpu_estimator.metrics.streaming` for the semantics.
"""

from keras_tpu_estimator.metrics.streaming import streaming_concat  # noqa: F401
from keras_tpu_estimator.metrics.streaming import streaming_covariance  # noqa: F401
from keras_tpu_estimator.metrics.streaming import streaming_pearson_correlation  # noqa: F401
