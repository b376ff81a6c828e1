"""Metrics of class ids: `mean_per_class_accuracy`, `mean_iou`."""

import functools

import keras
from keras import ops

from keras_tpu_estimator.metrics.arguments import FLOAT
from keras_tpu_estimator.metrics.arguments import INT
from keras_tpu_estimator.metrics.arguments import check_integer
from keras_tpu_estimator.metrics.arguments import flat_weights
from keras_tpu_estimator.metrics.arguments import flatten
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
