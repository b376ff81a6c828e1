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
and reports the final value. `metrics_collections`, `updates_collections` and
`name` are accepted and ignored (the metric is named by its key in the dict).

Smaller differences, all in degenerate cases: ratios whose denominator is 0
give 0 (TF1 gave 0 or NaN depending on the metric), `recall_at_k` counts a
label tied with the k-th largest prediction as a hit, and TF1's runtime
checks that predictions lie in [0, 1] (`auc`, `*_at_thresholds`) are not
made inside the compiled step.
"""

import collections
import functools
import numbers

import keras
from keras import ops

_FLOAT = "float32"
_INT = "int32"


class MetricUpdate(
    collections.namedtuple("MetricUpdate", ["factory", "args", "kwargs"])
):
    """One streaming update of a Keras metric, returned by a `metric_fn`.

    Fields:
        factory: zero-argument callable returning a fresh
            `keras.metrics.Metric`; called once, when the model builds.
        args: tuple of positional arguments of the metric's `update_state`
            for this batch.
        kwargs: dict of keyword arguments of `update_state` for this batch.

    The model applies it as
    `metric.stateless_update_state(metric_vars, *update.args, **update.kwargs)`.
    """

    __slots__ = ()


def keras_metric(factory, *update_args, **update_kwargs):
    """Streams any Keras metric: `factory()` updated with the given arguments.

    Args:
        factory: a `keras.metrics.Metric` subclass, or a zero-argument
            callable returning a new metric (e.g. a `lambda`). Not a metric
            instance: the metric is created by the model, once.
        *update_args: positional arguments of the metric's `update_state`.
        **update_kwargs: keyword arguments of `update_state`
            (e.g. `sample_weight`).

    Returns:
        A `MetricUpdate`.

    Raises:
        TypeError: if `factory` is a metric instance or not callable.

    Example:

    ```python
    kte.metrics.keras_metric(
        lambda: keras.metrics.TopKCategoricalAccuracy(k=5), labels_onehot, logits)
    ```
    """
    if isinstance(factory, keras.metrics.Metric):
        raise TypeError(
            "keras_metric() needs a metric class or a zero-argument callable "
            "that creates a new metric, not a metric instance: metric_fn runs "
            "once per batch and cannot own state. Pass e.g. "
            f"`lambda: {type(factory).__name__}(...)`. Received: {factory!r}"
        )
    if not callable(factory):
        raise TypeError(
            "keras_metric() needs a metric class or a zero-argument callable "
            "returning a keras.metrics.Metric as `factory`. "
            f"Received: {factory!r} of type {type(factory).__name__}"
        )
    return MetricUpdate(factory, tuple(update_args), dict(update_kwargs))


# ----------------------------------------------------------------------
# Small Keras metrics for TF1 semantics that no Keras metric has.


class _OneMinusMean(keras.metrics.Mean):
    """`1 - mean(values)`: TF1's `mean_cosine_distance` result."""

    def result(self):
        return 1.0 - super().result()


class _TF1PRAUC(keras.metrics.AUC):
    """PR-AUC summed as TF1 sums it for 'trapezoidal', 'minoring', 'majoring'.

    TF1 computes `precision = (tp + 1e-7) / (tp + fp + 1e-7)` (1, not 0, where
    nothing is predicted positive) and, for 'trapezoidal', applies the
    trapezoidal rule to (recall, precision). Keras's 'interpolation' for PR is
    TF1's 'careful_interpolation', which the plain `keras.metrics.AUC` serves.
    """

    def result(self):
        epsilon = 1e-7
        tp, fp, fn = self.true_positives, self.false_positives, self.false_negatives
        x = (tp + epsilon) / (tp + fn + epsilon)
        y = (tp + epsilon) / (tp + fp + epsilon)
        method = getattr(self.summation_method, "value", self.summation_method)
        if method == "minoring":
            heights = ops.minimum(y[:-1], y[1:])
        elif method == "majoring":
            heights = ops.maximum(y[:-1], y[1:])
        else:  # TF1's 'trapezoidal'.
            heights = (y[:-1] + y[1:]) / 2.0
        return ops.sum((x[:-1] - x[1:]) * heights)


class _PrecisionAtThresholds(keras.metrics.Precision):
    """TF1's `precision_at_thresholds`: `tp / (tp + fp + 1e-7)`, a vector."""

    def result(self):
        tp = self.true_positives
        return ops.reshape(tp / (tp + self.false_positives + 1e-7), [-1])


class _RecallAtThresholds(keras.metrics.Recall):
    """TF1's `recall_at_thresholds`: `tp / (tp + fn + 1e-7)`, a vector."""

    def result(self):
        tp = self.true_positives
        return ops.reshape(tp / (tp + self.false_negatives + 1e-7), [-1])


class _MeanPerClassAccuracy(keras.metrics.Metric):
    """TF1's `mean_per_class_accuracy`: mean over classes of the accuracy.

    Keeps, per class (indexed by the label), the weighted count of examples
    (`total`) and of correct ones (`count`). A class never seen counts as 0,
    as in TF1.
    """

    def __init__(self, num_classes, name="mean_accuracy", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.num_classes = num_classes
        self.total = self.add_variable(
            shape=(num_classes,), initializer="zeros", dtype=self.dtype, name="total"
        )
        self.count = self.add_variable(
            shape=(num_classes,), initializer="zeros", dtype=self.dtype, name="count"
        )

    def update_state(self, labels, predictions, sample_weight=None):
        labels = ops.reshape(ops.cast(labels, _INT), [-1])
        predictions = ops.reshape(ops.cast(predictions, _INT), [-1])
        if sample_weight is None:
            weights = ops.ones(ops.shape(labels), self.dtype)
        else:
            weights = ops.reshape(ops.cast(sample_weight, self.dtype), [-1])
        correct = ops.cast(ops.equal(labels, predictions), self.dtype) * weights
        n = self.num_classes
        self.total.assign_add(ops.segment_sum(weights, labels, num_segments=n))
        self.count.assign_add(ops.segment_sum(correct, labels, num_segments=n))

    def result(self):
        per_class = ops.divide_no_nan(self.count, ops.maximum(self.total, 0.0))
        return ops.mean(per_class)

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes}


# ----------------------------------------------------------------------
# TF1 input handling.


def _tensor(fn, arg, value, dtype=None):
    if value is None:
        raise ValueError(f"{fn}: `{arg}` is required, got None.")
    value = ops.convert_to_tensor(value)
    return value if dtype is None else ops.cast(value, dtype)


def _shape(x):
    return tuple(x.shape)


def _flat(x):
    return ops.reshape(x, [-1])


def _squeeze_pair(fn, labels, predictions, names=("labels", "predictions")):
    """TF1's `remove_squeezable_dimensions`, then a shape check."""
    lr, pr = len(labels.shape), len(predictions.shape)
    if pr - lr == 1 and predictions.shape[-1] == 1:
        predictions = ops.squeeze(predictions, axis=-1)
    elif lr - pr == 1 and labels.shape[-1] == 1:
        labels = ops.squeeze(labels, axis=-1)
    if _shape(labels) != _shape(predictions):
        raise ValueError(
            f"{fn}: `{names[0]}` of shape {_shape(labels)} and `{names[1]}` of "
            f"shape {_shape(predictions)} must have the same shape (a trailing "
            "dimension of size 1 on one of them is removed first)."
        )
    return labels, predictions


def _weights(fn, weights, values):
    """TF1's weight squeezing and broadcasting; returns flat float weights.

    `weights` must be a scalar or, after removing or adding a trailing
    dimension of size 1, have the rank of `values` with every dimension 1 or
    equal to that of `values`.
    """
    if weights is None:
        return None
    weights = _tensor(fn, "weights", weights, _FLOAT)
    wr, vr = len(weights.shape), len(values.shape)
    if wr != 0:
        if wr - vr == 1 and weights.shape[-1] == 1:
            weights = ops.squeeze(weights, axis=-1)
        elif vr - wr == 1:
            weights = ops.expand_dims(weights, axis=-1)
        w_shape, v_shape = _shape(weights), _shape(values)
        if len(w_shape) != len(v_shape) or any(
            w not in (1, v) for w, v in zip(w_shape, v_shape)
        ):
            raise ValueError(
                f"{fn}: `weights` of shape {w_shape} cannot be broadcast to "
                f"the values of shape {v_shape}: weights must be a scalar or "
                "have the values' rank, each dimension 1 or equal to the "
                "values' one."
            )
    return _flat(ops.broadcast_to(weights, _shape(values)))


def _update(factory, *args, sample_weight=None):
    return MetricUpdate(factory, tuple(args), {"sample_weight": sample_weight})


def _mean_of(fn, values, weights):
    """TF1's `mean`: the weighted mean of every element of `values`."""
    values = ops.cast(values, _FLOAT)
    sample_weight = _weights(fn, weights, values)
    return _update(functools.partial(keras.metrics.Mean, name=fn), _flat(values),
                   sample_weight=sample_weight)


def _bool_pair(fn, labels, predictions, weights):
    """Labels and predictions cast to bool (nonzero is True), as floats 0/1."""
    labels = ops.cast(_tensor(fn, "labels", labels, "bool"), _FLOAT)
    predictions = ops.cast(_tensor(fn, "predictions", predictions, "bool"), _FLOAT)
    labels, predictions = _squeeze_pair(fn, labels, predictions)
    return _flat(labels), _flat(predictions), _weights(fn, weights, predictions)


def _float_pair(fn, labels, predictions):
    labels = _tensor(fn, "labels", labels, _FLOAT)
    predictions = _tensor(fn, "predictions", predictions, _FLOAT)
    return _squeeze_pair(fn, labels, predictions)


def _check_int(fn, arg, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{fn}: `{arg}` must be an integer >= {minimum}. Received: {value!r}")
    return int(value)


def _check_thresholds(fn, thresholds):
    if isinstance(thresholds, numbers.Real):
        thresholds = [thresholds]
    try:
        thresholds = [float(t) for t in thresholds]
    except (TypeError, ValueError):
        raise ValueError(
            f"{fn}: `thresholds` must be a list of floats in [0, 1]. "
            f"Received: {thresholds!r}"
        ) from None
    if not thresholds or any(not 0.0 <= t <= 1.0 for t in thresholds):
        raise ValueError(
            f"{fn}: `thresholds` must be a non-empty list of floats in [0, 1]. "
            f"Received: {thresholds!r}"
        )
    return thresholds


# ----------------------------------------------------------------------
# Functions of tf.compat.v1.metrics.


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """Fraction of elements where `labels == predictions`.

    As `tf.compat.v1.metrics.accuracy`: `predictions` are cast to the dtype of
    `labels` (a float prediction is truncated when the labels are integers).

    Args:
        labels: ground truth, any shape.
        predictions: same shape as `labels` (a trailing dimension of size 1
            on either is removed).
        weights: optional; a scalar or a tensor broadcastable to `labels`.
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricUpdate` of a `keras.metrics.Mean`.

    Raises:
        ValueError: if the shapes do not match.
    """
    fn = "accuracy"
    labels = _tensor(fn, "labels", labels)
    predictions = _tensor(fn, "predictions", predictions)
    labels, predictions = _squeeze_pair(fn, labels, predictions)
    if predictions.dtype != labels.dtype:
        predictions = ops.cast(predictions, labels.dtype)
    return _mean_of(fn, ops.equal(labels, predictions), weights)


def mean(values, weights=None, metrics_collections=None, updates_collections=None,
         name=None):
    """The (weighted) mean of every element of `values`.

    Args:
        values: a tensor of any shape.
        weights: optional; a scalar or a tensor broadcastable to `values`.
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricUpdate` of a `keras.metrics.Mean`.
    """
    return _mean_of("mean", _tensor("mean", "values", values), weights)


def percentage_below(values, threshold, weights=None, metrics_collections=None,
                     updates_collections=None, name=None):
    """Fraction of the elements of `values` below `threshold`.

    Returns:
        A `MetricUpdate` of a `keras.metrics.Mean`.
    """
    fn = "percentage_below"
    values = _tensor(fn, "values", values)
    return _mean_of(fn, ops.less(values, threshold), weights)


def _confusion_count(fn, metric_class, labels, predictions, weights):
    labels, predictions, sample_weight = _bool_pair(fn, labels, predictions, weights)
    return _update(functools.partial(metric_class, name=fn), labels, predictions,
                   sample_weight=sample_weight)


def precision(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
    """`true_positives / (true_positives + false_positives)`.

    As in TF1, labels and predictions are cast to bool: any nonzero value is
    positive (predictions are not thresholded at 0.5). 0 when nothing was
    predicted positive.

    Returns:
        A `MetricUpdate` of a `keras.metrics.Precision`.
    """
    return _confusion_count("precision", keras.metrics.Precision, labels, predictions, weights)


def recall(labels, predictions, weights=None, metrics_collections=None,
           updates_collections=None, name=None):
    """`true_positives / (true_positives + false_negatives)`, bool-cast inputs.

    Returns:
        A `MetricUpdate` of a `keras.metrics.Recall`.
    """
    return _confusion_count("recall", keras.metrics.Recall, labels, predictions, weights)


def true_positives(labels, predictions, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    """Weighted count of elements where both labels and predictions are nonzero."""
    return _confusion_count("true_positives", keras.metrics.TruePositives,
                            labels, predictions, weights)


def false_positives(labels, predictions, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    """Weighted count of elements where labels are 0 and predictions nonzero."""
    return _confusion_count("false_positives", keras.metrics.FalsePositives,
                            labels, predictions, weights)


def true_negatives(labels, predictions, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    """Weighted count of elements where both labels and predictions are 0."""
    return _confusion_count("true_negatives", keras.metrics.TrueNegatives,
                            labels, predictions, weights)


def false_negatives(labels, predictions, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    """Weighted count of elements where labels are nonzero and predictions 0."""
    return _confusion_count("false_negatives", keras.metrics.FalseNegatives,
                            labels, predictions, weights)


def _at_thresholds(fn, metric_class, labels, predictions, thresholds, weights):
    thresholds = _check_thresholds(fn, thresholds)
    labels = ops.cast(_tensor(fn, "labels", labels, "bool"), _FLOAT)
    predictions = _tensor(fn, "predictions", predictions, _FLOAT)
    labels, predictions = _squeeze_pair(fn, labels, predictions)
    sample_weight = _weights(fn, weights, predictions)
    factory = functools.partial(metric_class, thresholds=thresholds, name=fn)
    return _update(factory, _flat(labels), _flat(predictions), sample_weight=sample_weight)


def precision_at_thresholds(labels, predictions, thresholds, weights=None,
                            metrics_collections=None, updates_collections=None,
                            name=None):
    """Precision of `predictions > t` for every `t` in `thresholds`: a vector.

    Args:
        labels: ground truth, cast to bool.
        predictions: floats in [0, 1], the shape of `labels`.
        thresholds: a list of floats in [0, 1].
        weights: optional; broadcastable to `labels`.

    Returns:
        A `MetricUpdate`; the result has shape `[len(thresholds)]` and is
        `tp / (tp + fp + 1e-7)` as in TF1.

    Raises:
        ValueError: if `thresholds` is empty or outside [0, 1].
    """
    return _at_thresholds("precision_at_thresholds", _PrecisionAtThresholds,
                          labels, predictions, thresholds, weights)


def recall_at_thresholds(labels, predictions, thresholds, weights=None,
                         metrics_collections=None, updates_collections=None,
                         name=None):
    """Recall of `predictions > t` for every `t` in `thresholds`: a vector.

    Returns:
        A `MetricUpdate`; the result has shape `[len(thresholds)]` and is
        `tp / (tp + fn + 1e-7)` as in TF1.
    """
    return _at_thresholds("recall_at_thresholds", _RecallAtThresholds,
                          labels, predictions, thresholds, weights)


_SUMMATION_METHODS = {
    "trapezoidal": "interpolation",
    "careful_interpolation": "interpolation",
    "minoring": "minoring",
    "majoring": "majoring",
}


def auc(labels, predictions, weights=None, num_thresholds=200,
        metrics_collections=None, updates_collections=None, curve="ROC",
        name=None, summation_method="trapezoidal", thresholds=None):
    """Area under the ROC or PR curve, from counts at discrete thresholds.

    Maps onto `keras.metrics.AUC`, which uses TF1's thresholds: `num_thresholds`
    evenly spaced in [0, 1] (or `thresholds`, plus -epsilon and 1 + epsilon).

    Args:
        labels: ground truth, cast to bool.
        predictions: floats in [0, 1], the shape of `labels`.
        weights: optional; broadcastable to `labels`.
        num_thresholds: int > 1, ignored when `thresholds` is given.
        curve: 'ROC' or 'PR'.
        summation_method: 'trapezoidal' (default), 'careful_interpolation'
            (PR only; for ROC the same as 'trapezoidal'), 'minoring' or
            'majoring', as in TF1.
        thresholds: optional list of floats in [0, 1].
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricUpdate` of a `keras.metrics.AUC`.

    Raises:
        ValueError: on an unknown `curve` or `summation_method`, or a bad
            `num_thresholds` or `thresholds`.
    """
    fn = "auc"
    if curve not in ("ROC", "PR"):
        raise ValueError(f"{fn}: `curve` must be 'ROC' or 'PR'. Received: curve={curve!r}")
    if summation_method not in _SUMMATION_METHODS:
        raise ValueError(
            f"{fn}: `summation_method` must be one of {sorted(_SUMMATION_METHODS)}. "
            f"Received: summation_method={summation_method!r}"
        )
    if thresholds is None:
        num_thresholds = _check_int(fn, "num_thresholds", num_thresholds, 2)
    else:
        thresholds = _check_thresholds(fn, thresholds)
    metric_class = keras.metrics.AUC
    if curve == "PR" and summation_method != "careful_interpolation":
        metric_class = _TF1PRAUC
    factory = functools.partial(
        metric_class,
        num_thresholds=num_thresholds,
        curve=curve,
        summation_method=_SUMMATION_METHODS[summation_method],
        thresholds=thresholds,
        name=fn,
    )
    labels = ops.cast(_tensor(fn, "labels", labels, "bool"), _FLOAT)
    predictions = _tensor(fn, "predictions", predictions, _FLOAT)
    labels, predictions = _squeeze_pair(fn, labels, predictions)
    sample_weight = _weights(fn, weights, predictions)
    return _update(factory, _flat(labels), _flat(predictions), sample_weight=sample_weight)


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """Mean of `(labels - predictions) ** 2` over every element.

    Returns:
        A `MetricUpdate` of a `keras.metrics.Mean`.
    """
    fn = "mean_squared_error"
    labels, predictions = _float_pair(fn, labels, predictions)
    return _mean_of(fn, ops.square(labels - predictions), weights)


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """Square root of `mean_squared_error`.

    Returns:
        A `MetricUpdate` of a `keras.metrics.RootMeanSquaredError`, fed
        flattened inputs so that it averages over every element.
    """
    fn = "root_mean_squared_error"
    labels, predictions = _float_pair(fn, labels, predictions)
    sample_weight = _weights(fn, weights, predictions)
    factory = functools.partial(keras.metrics.RootMeanSquaredError, name=fn)
    return _update(factory, _flat(labels), _flat(predictions), sample_weight=sample_weight)


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """Mean of `|labels - predictions|` over every element.

    Returns:
        A `MetricUpdate` of a `keras.metrics.Mean`.
    """
    fn = "mean_absolute_error"
    labels, predictions = _float_pair(fn, labels, predictions)
    return _mean_of(fn, ops.abs(labels - predictions), weights)


def mean_relative_error(labels, predictions, normalizer, weights=None,
                        metrics_collections=None, updates_collections=None, name=None):
    """Mean of `|labels - predictions| / normalizer` (0 where normalizer is 0).

    Args:
        labels, predictions: tensors of the same shape.
        normalizer: broadcastable to `predictions` (e.g. `labels` or a scalar).
        weights: optional; broadcastable to `predictions`.

    Returns:
        A `MetricUpdate` of a `keras.metrics.Mean`.

    Raises:
        ValueError: if `normalizer` does not broadcast to `predictions`.
    """
    fn = "mean_relative_error"
    labels, predictions = _float_pair(fn, labels, predictions)
    normalizer = _tensor(fn, "normalizer", normalizer, _FLOAT)
    nr, pr = len(normalizer.shape), len(predictions.shape)
    if nr - pr == 1 and normalizer.shape[-1] == 1:
        normalizer = ops.squeeze(normalizer, axis=-1)
    n_shape, p_shape = _shape(normalizer), _shape(predictions)
    if len(n_shape) > len(p_shape) or any(
        n not in (1, p) for n, p in zip(reversed(n_shape), reversed(p_shape))
    ):
        raise ValueError(
            f"{fn}: `normalizer` of shape {n_shape} cannot be broadcast to "
            f"`predictions` of shape {p_shape}."
        )
    errors = ops.divide_no_nan(ops.abs(labels - predictions), normalizer)
    return _mean_of(fn, errors, weights)


def mean_cosine_distance(labels, predictions, dim, weights=None,
                         metrics_collections=None, updates_collections=None, name=None):
    """`1 - mean(sum(labels * predictions, axis=dim))`.

    As in TF1, `labels` and `predictions` are expected to be unit-normalized
    along `dim`; `weights` broadcast to the per-vector values (shape of
    `labels` with `dim` of size 1).

    Returns:
        A `MetricUpdate` of a `keras.metrics.Mean` reporting `1 - mean`.

    Raises:
        ValueError: if `dim` is not an axis of `labels`.
    """
    fn = "mean_cosine_distance"
    labels, predictions = _float_pair(fn, labels, predictions)
    rank = len(labels.shape)
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or not -rank <= dim < rank:
        raise ValueError(
            f"{fn}: `dim` must be an axis of `labels` (rank {rank}). Received: dim={dim!r}"
        )
    radial = ops.sum(labels * predictions, axis=int(dim), keepdims=True)
    sample_weight = _weights(fn, weights, radial)
    return _update(functools.partial(_OneMinusMean, name=fn), _flat(radial),
                   sample_weight=sample_weight)


def _class_ids(fn, labels, predictions, num_classes, weights):
    num_classes = _check_int(fn, "num_classes", num_classes, 1)
    labels = _tensor(fn, "labels", labels, _INT)
    predictions = _tensor(fn, "predictions", predictions, _INT)
    labels, predictions = _squeeze_pair(fn, labels, predictions)
    sample_weight = _weights(fn, weights, labels)
    return num_classes, _flat(labels), _flat(predictions), sample_weight


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None,
                            metrics_collections=None, updates_collections=None,
                            name=None):
    """Mean over the `num_classes` classes of the per-class accuracy.

    The accuracy of class `c` is the weighted fraction of elements labelled
    `c` that are predicted `c`; a class never seen contributes 0, as in TF1.

    Args:
        labels, predictions: integer class ids in [0, num_classes), same shape.
        num_classes: the number of classes.
        weights: optional; broadcastable to `labels`.

    Returns:
        A `MetricUpdate`.
    """
    fn = "mean_per_class_accuracy"
    num_classes, labels, predictions, sample_weight = _class_ids(
        fn, labels, predictions, num_classes, weights)
    factory = functools.partial(_MeanPerClassAccuracy, num_classes=num_classes,
                                name="mean_accuracy")
    return _update(factory, labels, predictions, sample_weight=sample_weight)


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """Mean intersection-over-union over the classes that occur.

    Args:
        labels, predictions: integer class ids in [0, num_classes), same shape.
        num_classes: the number of classes.
        weights: optional; broadcastable to `labels`.

    Returns:
        A `MetricUpdate` of a `keras.metrics.MeanIoU`.
    """
    fn = "mean_iou"
    num_classes, labels, predictions, sample_weight = _class_ids(
        fn, labels, predictions, num_classes, weights)
    # Float counts: Keras's default integer confusion matrix would truncate weights.
    factory = functools.partial(keras.metrics.MeanIoU, num_classes=num_classes, name=fn,
                                dtype=_FLOAT)
    return _update(factory, labels, predictions, sample_weight=sample_weight)


def recall_at_k(labels, predictions, k, class_id=None, weights=None,
                metrics_collections=None, updates_collections=None, name=None):
    """Fraction of examples whose label is among the `k` largest predictions.

    With one label per example this is TF1's `recall_at_k` (and top-k
    accuracy). With `class_id`, only the examples labelled `class_id` count.

    Args:
        labels: integer class ids, shape `[D1, ..., DN]` or `[D1, ..., DN, 1]`.
        predictions: scores, shape `[D1, ..., DN, num_classes]`.
        k: int in [1, num_classes].
        class_id: optional class id in [0, num_classes).
        weights: optional; broadcastable to `[D1, ..., DN]`.

    Returns:
        A `MetricUpdate` of a `keras.metrics.SparseTopKCategoricalAccuracy`.

    Raises:
        ValueError: on bad shapes, `k` or `class_id`.
        NotImplementedError: for several labels per example.
    """
    fn = "recall_at_k"
    labels = _tensor(fn, "labels", labels, _INT)
    predictions = _tensor(fn, "predictions", predictions, _FLOAT)
    if len(predictions.shape) < 1:
        raise ValueError(f"{fn}: `predictions` must have a class dimension; got a scalar.")
    num_classes = predictions.shape[-1]
    if len(labels.shape) == len(predictions.shape):
        if labels.shape[-1] != 1:
            raise NotImplementedError(
                f"{fn}: several labels per example (labels of shape "
                f"{_shape(labels)}) are not supported; give one class id per "
                "example, or use keras_metric() with a metric of your own."
            )
        labels = ops.squeeze(labels, axis=-1)
    if _shape(labels) != _shape(predictions)[:-1]:
        raise ValueError(
            f"{fn}: `labels` of shape {_shape(labels)} must have the shape of "
            f"`predictions` ({_shape(predictions)}) without its last dimension."
        )
    k = _check_int(fn, "k", k, 1)
    if k > num_classes:
        raise ValueError(
            f"{fn}: `k` must not exceed the number of classes ({num_classes}). "
            f"Received: k={k}"
        )
    sample_weight = _weights(fn, weights, labels)
    if class_id is not None:
        class_id = _check_int(fn, "class_id", class_id, 0)
        if class_id >= num_classes:
            raise ValueError(
                f"{fn}: `class_id` must be in [0, {num_classes}). Received: {class_id}"
            )
        selected = _flat(ops.cast(ops.equal(labels, class_id), _FLOAT))
        sample_weight = selected if sample_weight is None else selected * sample_weight
    factory = functools.partial(keras.metrics.SparseTopKCategoricalAccuracy, k=k, name=fn)
    return _update(factory, _flat(labels), ops.reshape(predictions, [-1, num_classes]),
                   sample_weight=sample_weight)


__all__ = [
    "MetricUpdate",
    "accuracy",
    "auc",
    "false_negatives",
    "false_positives",
    "keras_metric",
    "mean",
    "mean_absolute_error",
    "mean_cosine_distance",
    "mean_iou",
    "mean_per_class_accuracy",
    "mean_relative_error",
    "mean_squared_error",
    "percentage_below",
    "precision",
    "precision_at_thresholds",
    "recall",
    "recall_at_k",
    "recall_at_thresholds",
    "root_mean_squared_error",
    "true_negatives",
    "true_positives",
]
