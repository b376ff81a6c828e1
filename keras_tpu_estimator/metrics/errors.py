"""Errors between labels and predictions: squared, absolute, relative, cosine."""

import functools
import numbers

import keras
from keras import ops

from keras_tpu_estimator.metrics.arguments import FLOAT
from keras_tpu_estimator.metrics.arguments import flat_weights
from keras_tpu_estimator.metrics.arguments import flatten
from keras_tpu_estimator.metrics.arguments import float_pair
from keras_tpu_estimator.metrics.arguments import shape_of
from keras_tpu_estimator.metrics.arguments import to_tensor
from keras_tpu_estimator.metrics.means import mean_of
from keras_tpu_estimator.metrics.pairs import weighted_pair


class _OneMinusMean(keras.metrics.Mean):
    """`1 - mean(values)`: TF1's `mean_cosine_distance` result."""

    def result(self):
        return 1.0 - super().result()


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """Mean of `(labels - predictions) ** 2` over every element.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`) streaming a `keras.metrics.Mean`.
    """
    fn_name = "mean_squared_error"
    labels, predictions = float_pair(fn_name, labels, predictions)
    return mean_of(fn_name, ops.square(labels - predictions), weights)


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """Square root of `mean_squared_error`.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`) streaming a `keras.metrics.RootMeanSquaredError`, fed
        flattened inputs so that it averages over every element.
    """
    fn_name = "root_mean_squared_error"
    labels, predictions = float_pair(fn_name, labels, predictions)
    sample_weight = flat_weights(fn_name, weights, predictions)
    factory = functools.partial(keras.metrics.RootMeanSquaredError, name=fn_name)
    return weighted_pair(
        factory, flatten(labels), flatten(predictions), sample_weight=sample_weight
    )


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """Mean of `|labels - predictions|` over every element.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`) streaming a `keras.metrics.Mean`.
    """
    fn_name = "mean_absolute_error"
    labels, predictions = float_pair(fn_name, labels, predictions)
    return mean_of(fn_name, ops.abs(labels - predictions), weights)


def mean_relative_error(labels, predictions, normalizer, weights=None,
                        metrics_collections=None, updates_collections=None, name=None):
    """Mean of `|labels - predictions| / normalizer` (0 where normalizer is 0).

    Args:
        labels, predictions: tensors of the same shape.
        normalizer: broadcastable to `predictions` (e.g. `labels` or a scalar).
        weights: optional; broadcastable to `predictions`.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`) streaming a `keras.metrics.Mean`.

    Raises:
        ValueError: if `normalizer` does not broadcast to `predictions`.
    """
    fn_name = "mean_relative_error"
    labels, predictions = float_pair(fn_name, labels, predictions)
    normalizer = to_tensor(fn_name, "normalizer", normalizer, FLOAT)
    nr, pr = len(normalizer.shape), len(predictions.shape)
    if nr - pr == 1 and normalizer.shape[-1] == 1:
        normalizer = ops.squeeze(normalizer, axis=-1)
    n_shape, p_shape = shape_of(normalizer), shape_of(predictions)
    if len(n_shape) > len(p_shape) or any(
        n not in (1, p) for n, p in zip(reversed(n_shape), reversed(p_shape))
    ):
        raise ValueError(
            f"{fn_name}: `normalizer` of shape {n_shape} cannot be broadcast to "
            f"`predictions` of shape {p_shape}."
        )
    errors = ops.divide_no_nan(ops.abs(labels - predictions), normalizer)
    return mean_of(fn_name, errors, weights)


def mean_cosine_distance(labels, predictions, dim, weights=None,
                         metrics_collections=None, updates_collections=None, name=None):
    """`1 - mean(sum(labels * predictions, axis=dim))`.

    As in TF1, `labels` and `predictions` are expected to be unit-normalized
    along `dim`; `weights` broadcast to the per-vector values (shape of
    `labels` with `dim` of size 1).

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`) streaming a `keras.metrics.Mean` reporting `1 - mean`.

    Raises:
        ValueError: if `dim` is not an axis of `labels`.
    """
    fn_name = "mean_cosine_distance"
    labels, predictions = float_pair(fn_name, labels, predictions)
    rank = len(labels.shape)
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or not -rank <= dim < rank:
        raise ValueError(
            f"{fn_name}: `dim` must be an axis of `labels` (rank {rank}). Received: dim={dim!r}"
        )
    radial = ops.sum(labels * predictions, axis=int(dim), keepdims=True)
    sample_weight = flat_weights(fn_name, weights, radial)
    return weighted_pair(
        functools.partial(_OneMinusMean, name=fn_name), flatten(radial),
        sample_weight=sample_weight,
    )

