"""Metrics of scores at thresholds: `*_at_thresholds` and `auc`."""

import functools

import keras
from keras import ops

from keras_tpu_estimator.metrics.arguments import FLOAT
from keras_tpu_estimator.metrics.arguments import check_integer
from keras_tpu_estimator.metrics.arguments import check_thresholds
from keras_tpu_estimator.metrics.arguments import flat_weights
from keras_tpu_estimator.metrics.arguments import flatten
from keras_tpu_estimator.metrics.arguments import squeeze_pair
from keras_tpu_estimator.metrics.arguments import to_tensor
from keras_tpu_estimator.metrics.pairs import weighted_pair


class _PrecisionAtThresholds(keras.metrics.Precision):
    """TF1's `precision_at_thresholds`: `tp / (tp + fp + 1e-7)`, a vector."""

    def result(self):
        tp = self.true_positives
        return ops.reshape(tp / (tp + self.false_positives + 1e-7), [-1])


class _RecallAtThresholds(keras.metrics.Recall):
    """TF1's `recall_at_thresholds`: `tp / (tp + fn_name + 1e-7)`, a vector."""

    def result(self):
        tp = self.true_positives
        return ops.reshape(tp / (tp + self.false_negatives + 1e-7), [-1])


class _TF1PRAUC(keras.metrics.AUC):
    """PR-AUC summed as TF1 sums it for 'trapezoidal', 'minoring', 'majoring'.

    TF1 computes `precision = (tp + 1e-7) / (tp + fp + 1e-7)` (1, not 0, where
    nothing is predicted positive) and, for 'trapezoidal', applies the
    trapezoidal rule to (recall, precision). Keras's 'interpolation' for PR is
    TF1's 'careful_interpolation', which the plain `keras.metrics.AUC` serves.
    """

    def result(self):
        epsilon = 1e-7
        tp, fp, fn_name = self.true_positives, self.false_positives, self.false_negatives
        x = (tp + epsilon) / (tp + fn_name + epsilon)
        y = (tp + epsilon) / (tp + fp + epsilon)
        method = getattr(self.summation_method, "value", self.summation_method)
        if method == "minoring":
            heights = ops.minimum(y[:-1], y[1:])
        elif method == "majoring":
            heights = ops.maximum(y[:-1], y[1:])
        else:  # TF1's 'trapezoidal'.
            heights = (y[:-1] + y[1:]) / 2.0
        return ops.sum((x[:-1] - x[1:]) * heights)


def _at_thresholds(fn_name, metric_class, labels, predictions, thresholds, weights):
    thresholds = check_thresholds(fn_name, thresholds)
    labels = ops.cast(to_tensor(fn_name, "labels", labels, "bool"), FLOAT)
    predictions = to_tensor(fn_name, "predictions", predictions, FLOAT)
    labels, predictions = squeeze_pair(fn_name, labels, predictions)
    sample_weight = flat_weights(fn_name, weights, predictions)
    factory = functools.partial(metric_class, thresholds=thresholds, name=fn_name)
    return weighted_pair(
        factory, flatten(labels), flatten(predictions), sample_weight=sample_weight,
        result_shape=(len(thresholds),),
    )


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
        A `MetricPair`; the value has shape `[len(thresholds)]` and is
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
        A `MetricPair`; the value has shape `[len(thresholds)]` and is
        `tp / (tp + fn_name + 1e-7)` as in TF1.
    """
    return _at_thresholds("recall_at_thresholds", _RecallAtThresholds,
                          labels, predictions, thresholds, weights)


def true_positives_at_thresholds(labels, predictions, thresholds, weights=None,
                                 metrics_collections=None, updates_collections=None, name=None):
    """Weighted count of positives with `predictions > t`, for every `t`: a vector.

    Args:
        labels: ground truth, cast to bool.
        predictions: floats in [0, 1], the shape of `labels`.
        thresholds: a list of floats in [0, 1].
        weights: optional; broadcastable to `labels`.
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricPair`; the value has shape `[len(thresholds)]`.
    """
    return _at_thresholds("true_positives_at_thresholds", keras.metrics.TruePositives,
                          labels, predictions, thresholds, weights)


def false_positives_at_thresholds(labels, predictions, thresholds, weights=None,
                                  metrics_collections=None, updates_collections=None, name=None):
    """Weighted count of negatives with `predictions > t`; see `true_positives_at_thresholds`."""
    return _at_thresholds("false_positives_at_thresholds", keras.metrics.FalsePositives,
                          labels, predictions, thresholds, weights)


def true_negatives_at_thresholds(labels, predictions, thresholds, weights=None,
                                 metrics_collections=None, updates_collections=None, name=None):
    """Weighted count of negatives with `predictions <= t`; see `true_positives_at_thresholds`."""
    return _at_thresholds("true_negatives_at_thresholds", keras.metrics.TrueNegatives,
                          labels, predictions, thresholds, weights)


def false_negatives_at_thresholds(labels, predictions, thresholds, weights=None,
                                  metrics_collections=None, updates_collections=None, name=None):
    """Weighted count of positives with `predictions <= t`; see `true_positives_at_thresholds`."""
    return _at_thresholds("false_negatives_at_thresholds", keras.metrics.FalseNegatives,
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
        A `MetricPair` (TF1's `(value, update_op)`) streaming a `keras.metrics.AUC`.

    Raises:
        ValueError: on an unknown `curve` or `summation_method`, or a bad
            `num_thresholds` or `thresholds`.
    """
    fn_name = "auc"
    if curve not in ("ROC", "PR"):
        raise ValueError(f"{fn_name}: `curve` must be 'ROC' or 'PR'. Received: curve={curve!r}")
    if summation_method not in _SUMMATION_METHODS:
        raise ValueError(
            f"{fn_name}: `summation_method` must be one of {sorted(_SUMMATION_METHODS)}. "
            f"Received: summation_method={summation_method!r}"
        )
    if thresholds is None:
        num_thresholds = check_integer(fn_name, "num_thresholds", num_thresholds, 2)
    else:
        thresholds = check_thresholds(fn_name, thresholds)
    metric_class = keras.metrics.AUC
    if curve == "PR" and summation_method != "careful_interpolation":
        metric_class = _TF1PRAUC
    factory = functools.partial(
        metric_class,
        num_thresholds=num_thresholds,
        curve=curve,
        summation_method=_SUMMATION_METHODS[summation_method],
        thresholds=thresholds,
        name=fn_name,
    )
    labels = ops.cast(to_tensor(fn_name, "labels", labels, "bool"), FLOAT)
    predictions = to_tensor(fn_name, "predictions", predictions, FLOAT)
    labels, predictions = squeeze_pair(fn_name, labels, predictions)
    sample_weight = flat_weights(fn_name, weights, predictions)
    return weighted_pair(
        factory, flatten(labels), flatten(predictions), sample_weight=sample_weight
    )

