"""Metrics of the top `k` classes: `recall_at_k`, `precision_at_k`, `*_at_top_k`,
`average_precision_at_k`.

One label per example (a class id), as in TF1's sparse form. The top `k`
classes are `top_k`'s, which breaks ties by the lower class id, as TF1 does:
a label tied with the k-th largest prediction but of a higher id is a miss.
A label outside [0, num_classes) is never among them. With nothing counted
the value is `0 / 0`, NaN, as in TF1.
"""

import functools

import keras
from keras import ops

from keras_tpu_estimator.metrics.arguments import FLOAT
from keras_tpu_estimator.metrics.arguments import INT
from keras_tpu_estimator.metrics.arguments import check_integer
from keras_tpu_estimator.metrics.arguments import flat_weights
from keras_tpu_estimator.metrics.arguments import flatten
from keras_tpu_estimator.metrics.arguments import shape_of
from keras_tpu_estimator.metrics.arguments import to_tensor
from keras_tpu_estimator.metrics.pairs import weighted_pair


class _TopKRatio(keras.metrics.Metric):
    """TF1's sparse `precision` or `recall` at k: `tp / (tp + fp)` or `tp / (tp + fn)`.

    Updated with the labels and the top `k` class ids of each example.
    """

    def __init__(self, kind, k, class_id=None, name=None, dtype=None):
        super().__init__(name=name or f"{kind}_at_k", dtype=dtype)
        self.kind, self.k, self.class_id = kind, k, class_id
        self.true_positives = self.add_variable(
            shape=(), initializer="zeros", dtype=self.dtype, name="true_positives")
        self.misses = self.add_variable(  # False positives (precision) or negatives (recall).
            shape=(), initializer="zeros", dtype=self.dtype, name="misses")

    def update_state(self, labels, top, sample_weight=None):
        labels = ops.cast(labels, INT)
        top = ops.cast(top, INT)
        weights = ops.ones(ops.shape(labels), self.dtype) if sample_weight is None else ops.cast(
            sample_weight, self.dtype)
        if self.class_id is None:
            hit = ops.cast(ops.any(ops.equal(top, labels[:, None]), axis=-1), self.dtype)
            # Precision: each of the k predicted classes that is not the label is a miss.
            misses = (self.k - hit) if self.kind == "precision" else (1.0 - hit)
        else:
            labelled = ops.cast(ops.equal(labels, self.class_id), self.dtype)
            predicted = ops.cast(ops.any(ops.equal(top, self.class_id), axis=-1), self.dtype)
            hit = labelled * predicted
            misses = (1.0 - labelled) * predicted if self.kind == "precision" else (
                labelled * (1.0 - predicted))
        self.true_positives.assign_add(ops.sum(hit * weights))
        self.misses.assign_add(ops.sum(misses * weights))

    def result(self):
        tp = self.true_positives
        return tp / (tp + self.misses)

    def get_config(self):
        return {**super().get_config(), "kind": self.kind, "k": self.k,
                "class_id": self.class_id}


class _AveragePrecisionAtK(keras.metrics.Metric):
    """TF1's `average_precision_at_k` for one label per example.

    An example's average precision is `1 / rank` when its label is the
    `rank`-th of its top `k`, else 0; the value is their weighted sum over
    the summed weight (0 when that is 0).
    """

    def __init__(self, k, name="average_precision_at_k", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.k = k
        self.total = self.add_variable(shape=(), initializer="zeros", dtype=self.dtype,
                                       name="total")
        self.max = self.add_variable(shape=(), initializer="zeros", dtype=self.dtype,
                                     name="max")

    def update_state(self, labels, top, sample_weight=None):
        labels = ops.cast(labels, INT)
        found = ops.cast(ops.equal(ops.cast(top, INT), labels[:, None]), self.dtype)
        ranks = ops.arange(1, self.k + 1, dtype=self.dtype)
        precision = ops.sum(found / ranks, axis=-1)
        weights = ops.ones_like(precision) if sample_weight is None else ops.cast(
            sample_weight, self.dtype)
        self.total.assign_add(ops.sum(precision * weights))
        self.max.assign_add(ops.sum(weights))

    def result(self):
        return ops.divide_no_nan(self.total, self.max)

    def get_config(self):
        return {**super().get_config(), "k": self.k}


def _labels(fn_name, labels, predictions):
    """Labels of shape `predictions.shape[:-1]` (a trailing 1 removed), as ints."""
    labels = to_tensor(fn_name, "labels", labels, INT)
    if len(predictions.shape) < 1:
        raise ValueError(f"{fn_name}: `predictions` must have a class dimension; got a scalar.")
    if len(labels.shape) == len(predictions.shape):
        if labels.shape[-1] != 1:
            raise NotImplementedError(
                f"{fn_name}: several labels per example (labels of shape "
                f"{shape_of(labels)}) are not supported; give one class id per "
                "example, or use keras_metric() with a metric of your own."
            )
        labels = ops.squeeze(labels, axis=-1)
    if shape_of(labels) != shape_of(predictions)[:-1]:
        raise ValueError(
            f"{fn_name}: `labels` of shape {shape_of(labels)} must have the shape of "
            f"`predictions` ({shape_of(predictions)}) without its last dimension."
        )
    return labels


def _check_class_id(fn_name, class_id, num_classes):
    if class_id is None:
        return None
    class_id = check_integer(fn_name, "class_id", class_id, 0)
    if num_classes is not None and class_id >= num_classes:
        raise ValueError(
            f"{fn_name}: `class_id` must be in [0, {num_classes}). Received: {class_id}"
        )
    return class_id


def _at_k(fn_name, kind, labels, predictions, k, class_id, weights):
    predictions = to_tensor(fn_name, "predictions", predictions, FLOAT)
    labels = _labels(fn_name, labels, predictions)
    num_classes = predictions.shape[-1]
    k = check_integer(fn_name, "k", k, 1)
    if k > num_classes:
        raise ValueError(
            f"{fn_name}: `k` must not exceed the number of classes ({num_classes}). "
            f"Received: k={k}"
        )
    class_id = _check_class_id(fn_name, class_id, num_classes)
    _, top = ops.top_k(ops.reshape(predictions, [-1, num_classes]), k)
    return _update(fn_name, kind, labels, top, k, class_id, weights)


def _at_top_k(fn_name, kind, labels, predictions_idx, k, class_id, weights):
    top = to_tensor(fn_name, "predictions_idx", predictions_idx, INT)
    labels = _labels(fn_name, labels, top)
    k = top.shape[-1] if k is None else check_integer(fn_name, "k", k, 1)
    if k > top.shape[-1]:
        raise ValueError(
            f"{fn_name}: `k` must not exceed the last dimension of `predictions_idx` "
            f"({top.shape[-1]}). Received: k={k}"
        )
    class_id = _check_class_id(fn_name, class_id, None)
    top = ops.reshape(top, [-1, top.shape[-1]])[:, :k]
    return _update(fn_name, kind, labels, top, k, class_id, weights)


def _update(fn_name, kind, labels, top, k, class_id, weights):
    sample_weight = flat_weights(fn_name, weights, labels)
    if kind == "average_precision":
        factory = functools.partial(_AveragePrecisionAtK, k, name=fn_name)
    else:
        factory = functools.partial(_TopKRatio, kind, k, class_id=class_id, name=fn_name)
    return weighted_pair(factory, flatten(labels), top, sample_weight=sample_weight)


def recall_at_k(labels, predictions, k, class_id=None, weights=None,
                metrics_collections=None, updates_collections=None, name=None):
    """Fraction of labels among the `k` largest predictions of their example.

    With one label per example this is TF1's `recall_at_k` (and top-k
    accuracy). With `class_id`, only the examples labelled `class_id` count.

    Args:
        labels: integer class ids, shape `[D1, ..., DN]` or `[D1, ..., DN, 1]`.
        predictions: scores, shape `[D1, ..., DN, num_classes]`.
        k: int in [1, num_classes].
        class_id: optional class id in [0, num_classes).
        weights: optional; broadcastable to `[D1, ..., DN]`.
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`).

    Raises:
        ValueError: on bad shapes, `k` or `class_id`.
        NotImplementedError: for several labels per example.
    """
    return _at_k("recall_at_k", "recall", labels, predictions, k, class_id, weights)


def precision_at_k(labels, predictions, k, class_id=None, weights=None,
                   metrics_collections=None, updates_collections=None, name=None):
    """Fraction of the `k` largest predictions of each example that are its label.

    Without `class_id`: `hits / (k * examples)` (weighted). With `class_id`:
    of the examples whose top `k` hold `class_id`, the fraction labelled so.

    Args:
        labels, predictions, k, class_id, weights: as `recall_at_k`.
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`).
    """
    return _at_k("precision_at_k", "precision", labels, predictions, k, class_id, weights)


def sparse_precision_at_k(labels, predictions, k, class_id=None, weights=None,
                          metrics_collections=None, updates_collections=None, name=None):
    """TF1's deprecated name of `precision_at_k`."""
    return _at_k("sparse_precision_at_k", "precision", labels, predictions, k, class_id, weights)


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                    metrics_collections=None, updates_collections=None, name=None):
    """`recall_at_k` from the top class ids themselves.

    Args:
        labels: integer class ids, shape `[D1, ..., DN]` or `[D1, ..., DN, 1]`.
        predictions_idx: the top class ids, shape `[D1, ..., DN, k]`.
        k: optional; the first `k` of `predictions_idx` are used.
        class_id, weights: as `recall_at_k`.
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`).
    """
    return _at_top_k("recall_at_top_k", "recall", labels, predictions_idx, k, class_id, weights)


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                       metrics_collections=None, updates_collections=None, name=None):
    """`precision_at_k` from the top class ids themselves; see `recall_at_top_k`.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`).
    """
    return _at_top_k("precision_at_top_k", "precision", labels, predictions_idx, k, class_id,
                     weights)


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """Mean over the examples of the average precision of their top `k` classes.

    With one label per example, an example scores `1 / rank` when its label
    is the `rank`-th largest prediction (rank <= k), else 0; weights weight
    the examples; 0 when no example is counted.

    Args:
        labels: integer class ids, shape `[D1, ..., DN]` or `[D1, ..., DN, 1]`.
        predictions: scores, shape `[D1, ..., DN, num_classes]`.
        k: int in [1, num_classes].
        weights: optional; broadcastable to `[D1, ..., DN]`.
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`).
    """
    return _at_k("average_precision_at_k", "average_precision", labels, predictions, k, None,
                 weights)


def sparse_average_precision_at_k(labels, predictions, k, weights=None,
                                  metrics_collections=None, updates_collections=None,
                                  name=None):
    """TF1's deprecated name of `average_precision_at_k`."""
    return _at_k("sparse_average_precision_at_k", "average_precision", labels, predictions, k,
                 None, weights)
