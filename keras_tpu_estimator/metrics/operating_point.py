"""`sensitivity_at_specificity`, `specificity_at_sensitivity`, as TF1 computes them.

Both count true/false positives/negatives of `predictions > t` at
`num_thresholds` thresholds (TF1's: evenly spaced inside (0, 1), plus one
just below 0 and one just above 1, or just below 1 for
`specificity_at_sensitivity`), pick the threshold whose specificity (or
sensitivity) is closest to the one asked, and report the other rate there.
Keras's `SensitivityAtSpecificity` answers a different question (the best
rate under a constraint), so these are TF1's own.
"""

import functools
import numbers

import keras
from keras import ops

from keras_tpu_estimator.metrics.arguments import FLOAT
from keras_tpu_estimator.metrics.arguments import check_integer
from keras_tpu_estimator.metrics.arguments import flat_weights
from keras_tpu_estimator.metrics.arguments import flatten
from keras_tpu_estimator.metrics.arguments import squeeze_pair
from keras_tpu_estimator.metrics.arguments import to_tensor
from keras_tpu_estimator.metrics.pairs import weighted_pair

_EPSILON = 1e-7  # TF1's `kepsilon`.


class _RateAtRate(keras.metrics.Metric):
    """Confusion counts at TF1's thresholds; the result picks the operating point.

    Args:
        target: the specificity (`kind="sensitivity"`) or sensitivity
            (`kind="specificity"`) to match.
        kind: the rate reported.
        num_thresholds: the number of thresholds.
    """

    def __init__(self, kind, target, num_thresholds, name=None, dtype=None):
        super().__init__(name=name or f"{kind}_at_rate", dtype=dtype)
        self.kind, self.target, self.num_thresholds = kind, target, num_thresholds
        inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        last = 1.0 + _EPSILON if kind == "sensitivity" else 1.0 - _EPSILON
        self.thresholds = [0.0 - _EPSILON] + inner + [last]
        for count in ("tp", "fp", "tn", "fn"):
            setattr(self, count, self.add_variable(
                shape=(num_thresholds,), initializer="zeros", dtype=FLOAT, name=count))

    def update_state(self, labels, predictions, sample_weight=None):
        positive = ops.cast(labels, FLOAT)[:, None]
        above = ops.cast(predictions[:, None] > ops.convert_to_tensor(self.thresholds, FLOAT),
                         FLOAT)
        w = ops.ones_like(positive) if sample_weight is None else sample_weight[:, None]
        self.tp.assign_add(ops.sum(w * positive * above, axis=0))
        self.fp.assign_add(ops.sum(w * (1.0 - positive) * above, axis=0))
        self.tn.assign_add(ops.sum(w * (1.0 - positive) * (1.0 - above), axis=0))
        self.fn.assign_add(ops.sum(w * positive * (1.0 - above), axis=0))

    def result(self):
        tp, fp, tn, fn = self.tp.value, self.fp.value, self.tn.value, self.fn.value
        if self.kind == "sensitivity":
            distance = ops.abs(tn / (tn + fp + _EPSILON) - self.target)
            index = ops.argmin(distance)  # The first of equally close thresholds.
            return tp[index] / (tp[index] + fn[index] + _EPSILON)
        distance = ops.abs(tp / (tp + fn + _EPSILON) - self.target)
        index = self.num_thresholds - 1 - ops.argmin(ops.flip(distance))  # The last of them.
        return tn[index] / (tn[index] + fp[index] + _EPSILON)

    def get_config(self):
        return {**super().get_config(), "kind": self.kind, "target": self.target,
                "num_thresholds": self.num_thresholds}


def _rate_at_rate(fn_name, kind, labels, predictions, target_name, target, weights,
                  num_thresholds):
    if isinstance(target, bool) or not isinstance(target, numbers.Real) or not 0 <= target <= 1:
        raise ValueError(f"{fn_name}: `{target_name}` must be in [0, 1]. Received: {target!r}")
    num_thresholds = check_integer(fn_name, "num_thresholds", num_thresholds, 2)
    labels = ops.cast(to_tensor(fn_name, "labels", labels, "bool"), FLOAT)
    predictions = to_tensor(fn_name, "predictions", predictions, FLOAT)
    labels, predictions = squeeze_pair(fn_name, labels, predictions)
    sample_weight = flat_weights(fn_name, weights, predictions)
    factory = functools.partial(_RateAtRate, kind, float(target), num_thresholds, name=fn_name)
    return weighted_pair(factory, flatten(labels), flatten(predictions),
                         sample_weight=sample_weight)


def sensitivity_at_specificity(labels, predictions, specificity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """The sensitivity at the threshold whose specificity is closest to `specificity`.

    Args:
        labels: ground truth, cast to bool.
        predictions: floats in [0, 1], the shape of `labels`.
        specificity: a float in [0, 1].
        weights: optional; broadcastable to `labels`.
        num_thresholds: int >= 2.
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`).

    Raises:
        ValueError: for `specificity` outside [0, 1] or a bad `num_thresholds`.
    """
    return _rate_at_rate("sensitivity_at_specificity", "sensitivity", labels, predictions,
                         "specificity", specificity, weights, num_thresholds)


def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """The specificity at the threshold whose sensitivity is closest to `sensitivity`.

    Of equally close thresholds, the highest, as in TF1.

    Args:
        labels, predictions, weights, num_thresholds: as `sensitivity_at_specificity`.
        sensitivity: a float in [0, 1].
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`).
    """
    return _rate_at_rate("specificity_at_sensitivity", "specificity", labels, predictions,
                         "sensitivity", sensitivity, weights, num_thresholds)
