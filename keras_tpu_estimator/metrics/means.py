"""Means of elements: `accuracy`, `mean`, `percentage_below` (and `mean_of`), `mean_tensor`."""

import functools

import keras
from keras import ops

from keras_tpu_estimator.metrics.arguments import FLOAT
from keras_tpu_estimator.metrics.arguments import flat_weights
from keras_tpu_estimator.metrics.arguments import flatten
from keras_tpu_estimator.metrics.arguments import squeeze_pair
from keras_tpu_estimator.metrics.arguments import to_tensor
from keras_tpu_estimator.metrics.pairs import weighted_pair


def mean_of(fn_name, values, weights):
    """TF1's `mean`: the weighted mean of every element of `values`.

    Args:
        fn_name: the TF1 metric function's name; names the Keras metric and
            appears in error messages.
        values: a tensor, cast to float.
        weights: `None` or broadcastable to `values` (see `flat_weights`).

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`) streaming a `keras.metrics.Mean` named `fn_name`.

    Example:

    ```python
    mean_of("mean_absolute_error", keras.ops.abs(labels - predictions), weights)
    ```
    """
    values = ops.cast(values, FLOAT)
    sample_weight = flat_weights(fn_name, weights, values)
    return weighted_pair(
        functools.partial(keras.metrics.Mean, name=fn_name), flatten(values),
        sample_weight=sample_weight,
    )


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
        A `MetricPair` (TF1's `(value, update_op)`) streaming a `keras.metrics.Mean`.

    Raises:
        ValueError: if the shapes do not match.
    """
    fn_name = "accuracy"
    labels = to_tensor(fn_name, "labels", labels)
    predictions = to_tensor(fn_name, "predictions", predictions)
    labels, predictions = squeeze_pair(fn_name, labels, predictions)
    if predictions.dtype != labels.dtype:
        predictions = ops.cast(predictions, labels.dtype)
    return mean_of(fn_name, ops.equal(labels, predictions), weights)


def mean(values, weights=None, metrics_collections=None, updates_collections=None,
         name=None):
    """The (weighted) mean of every element of `values`.

    Args:
        values: a tensor of any shape.
        weights: optional; a scalar or a tensor broadcastable to `values`.
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`) streaming a `keras.metrics.Mean`.
    """
    return mean_of("mean", to_tensor("mean", "values", values), weights)


def percentage_below(values, threshold, weights=None, metrics_collections=None,
                     updates_collections=None, name=None):
    """Fraction of the elements of `values` below `threshold`.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`) streaming a `keras.metrics.Mean`.
    """
    fn_name = "percentage_below"
    values = to_tensor(fn_name, "values", values)
    return mean_of(fn_name, ops.less(values, threshold), weights)



class _MeanTensor(keras.metrics.Metric):
    """TF1's `mean_tensor`: the element-wise weighted mean of same-shaped tensors."""

    def __init__(self, shape, name="mean_tensor", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.shape = tuple(shape)
        self.total = self.add_variable(shape=self.shape, initializer="zeros", dtype=FLOAT,
                                       name="total")
        self.count = self.add_variable(shape=self.shape, initializer="zeros", dtype=FLOAT,
                                       name="count")

    def update_state(self, values, sample_weight=None):
        weights = ops.ones_like(values) if sample_weight is None else sample_weight
        self.total.assign_add(values * weights)
        self.count.assign_add(weights)

    def result(self):
        return ops.divide_no_nan(self.total, ops.maximum(self.count, 0.0))

    def get_config(self):
        return {**super().get_config(), "shape": self.shape}


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None,
                name=None):
    """The element-wise (weighted) mean of `values` over the batches.

    As TF1, every batch's `values` must have the same shape (the value's);
    an element whose weights sum to 0 is 0.

    Args:
        values: a tensor of a static shape.
        weights: optional; broadcastable to `values`.
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricPair`; the value has the shape of `values`.
    """
    fn_name = "mean_tensor"
    values = to_tensor(fn_name, "values", values, FLOAT)
    shape = tuple(values.shape)
    sample_weight = flat_weights(fn_name, weights, values)
    if sample_weight is not None:
        sample_weight = ops.reshape(sample_weight, shape)
    factory = functools.partial(_MeanTensor, shape, name=fn_name)
    return weighted_pair(factory, values, sample_weight=sample_weight, result_shape=shape)
