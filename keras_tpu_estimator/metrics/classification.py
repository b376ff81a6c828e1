"""Metrics of class ids: `mean_per_class_accuracy`, `mean_iou`, `recall_at_k`."""

import functools

import keras
from keras import ops

from keras_tpu_estimator.metrics.arguments import FLOAT
from keras_tpu_estimator.metrics.arguments import INT
from keras_tpu_estimator.metrics.arguments import check_integer
from keras_tpu_estimator.metrics.arguments import flat_weights
from keras_tpu_estimator.metrics.arguments import flatten
from keras_tpu_estimator.metrics.arguments import shape_of
from keras_tpu_estimator.metrics.arguments import squeeze_pair
from keras_tpu_estimator.metrics.arguments import to_tensor
from keras_tpu_estimator.metrics.pairs import weighted_pair


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
        labels = ops.reshape(ops.cast(labels, INT), [-1])
        predictions = ops.reshape(ops.cast(predictions, INT), [-1])
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


class _RecallAtK(keras.metrics.Metric):
    """TF1's `recall_at_k` for one label per example: `tp / (tp + fn)`.

    The `k` classes of each example are those of `top_k`, which breaks ties
    by the lower class id, as TF1 does (a label tied with the k-th largest
    prediction but of a higher id is a miss). `0 / 0` is NaN, as in TF1.
    """

    def __init__(self, k, class_id=None, name="recall_at_k", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.k = k
        self.class_id = class_id
        self.true_positives = self.add_variable(
            shape=(), initializer="zeros", dtype=self.dtype, name="true_positives"
        )
        self.false_negatives = self.add_variable(
            shape=(), initializer="zeros", dtype=self.dtype, name="false_negatives"
        )

    def update_state(self, labels, predictions, sample_weight=None):
        labels = ops.cast(labels, INT)
        _, top = ops.top_k(predictions, self.k)
        hit = ops.cast(ops.any(ops.equal(top, labels[:, None]), axis=-1), self.dtype)
        weights = ops.ones_like(hit) if sample_weight is None else ops.cast(
            sample_weight, self.dtype)
        if self.class_id is not None:
            weights = weights * ops.cast(ops.equal(labels, self.class_id), self.dtype)
        self.true_positives.assign_add(ops.sum(hit * weights))
        self.false_negatives.assign_add(ops.sum((1.0 - hit) * weights))

    def result(self):
        tp = self.true_positives
        return tp / (tp + self.false_negatives)

    def get_config(self):
        return {**super().get_config(), "k": self.k, "class_id": self.class_id}


def _class_ids(fn_name, labels, predictions, num_classes, weights):
    num_classes = check_integer(fn_name, "num_classes", num_classes, 1)
    labels = to_tensor(fn_name, "labels", labels, INT)
    predictions = to_tensor(fn_name, "predictions", predictions, INT)
    labels, predictions = squeeze_pair(fn_name, labels, predictions)
    sample_weight = flat_weights(fn_name, weights, labels)
    return num_classes, flatten(labels), flatten(predictions), sample_weight


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
        A `MetricPair` (TF1's `(value, update_op)`).
    """
    fn_name = "mean_per_class_accuracy"
    num_classes, labels, predictions, sample_weight = _class_ids(
        fn_name, labels, predictions, num_classes, weights)
    factory = functools.partial(_MeanPerClassAccuracy, num_classes=num_classes,
                                name="mean_accuracy")
    return weighted_pair(factory, labels, predictions, sample_weight=sample_weight)


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """Mean intersection-over-union over the classes that occur.

    Args:
        labels, predictions: integer class ids in [0, num_classes), same shape.
        num_classes: the number of classes.
        weights: optional; broadcastable to `labels`.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`) streaming a `keras.metrics.MeanIoU`.
    """
    fn_name = "mean_iou"
    num_classes, labels, predictions, sample_weight = _class_ids(
        fn_name, labels, predictions, num_classes, weights)
    # Float counts: Keras's default integer confusion matrix would truncate weights.
    factory = functools.partial(keras.metrics.MeanIoU, num_classes=num_classes, name=fn_name,
                                dtype=FLOAT)
    return weighted_pair(factory, labels, predictions, sample_weight=sample_weight)


def recall_at_k(labels, predictions, k, class_id=None, weights=None,
                metrics_collections=None, updates_collections=None, name=None):
    """Fraction of examples whose label is among the `k` largest predictions.

    With one label per example this is TF1's `recall_at_k` (and top-k
    accuracy). With `class_id`, only the examples labelled `class_id` count.
    The top `k` are `top_k`'s, ties broken by the lower class id, and a
    label outside [0, num_classes) is a miss, as in TF1; with no example
    (or weight) counted the value is NaN, as in TF1.

    Args:
        labels: integer class ids, shape `[D1, ..., DN]` or `[D1, ..., DN, 1]`.
        predictions: scores, shape `[D1, ..., DN, num_classes]`.
        k: int in [1, num_classes].
        class_id: optional class id in [0, num_classes).
        weights: optional; broadcastable to `[D1, ..., DN]`.

    Returns:
        A `MetricPair`.

    Raises:
        ValueError: on bad shapes, `k` or `class_id`.
        NotImplementedError: for several labels per example.
    """
    fn_name = "recall_at_k"
    labels = to_tensor(fn_name, "labels", labels, INT)
    predictions = to_tensor(fn_name, "predictions", predictions, FLOAT)
    if len(predictions.shape) < 1:
        raise ValueError(f"{fn_name}: `predictions` must have a class dimension; got a scalar.")
    num_classes = predictions.shape[-1]
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
    k = check_integer(fn_name, "k", k, 1)
    if k > num_classes:
        raise ValueError(
            f"{fn_name}: `k` must not exceed the number of classes ({num_classes}). "
            f"Received: k={k}"
        )
    sample_weight = flat_weights(fn_name, weights, labels)
    if class_id is not None:
        class_id = check_integer(fn_name, "class_id", class_id, 0)
        if class_id >= num_classes:
            raise ValueError(
                f"{fn_name}: `class_id` must be in [0, {num_classes}). Received: {class_id}"
            )
    factory = functools.partial(_RecallAtK, k=k, class_id=class_id, name=fn_name)
    return weighted_pair(
        factory, flatten(labels), ops.reshape(predictions, [-1, num_classes]),
        sample_weight=sample_weight,
    )

