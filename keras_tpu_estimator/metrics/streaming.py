"""`tf.contrib.metrics`'s streaming statistics: covariance, Pearson's r, concat.

Served to converted programs as `keras_tpu_estimator.compat.v1.contrib.metrics`
(ALBERT's STS-B `metric_fn` uses `streaming_pearson_correlation` and
`streaming_concat`). Each returns a `MetricPair`, TF1's `(value, update_op)`.
"""

import functools
import math

import keras
import numpy as np
from keras import ops

from keras_tpu_estimator.metrics.arguments import FLOAT
from keras_tpu_estimator.metrics.arguments import flat_weights
from keras_tpu_estimator.metrics.arguments import flatten
from keras_tpu_estimator.metrics.arguments import float_pair
from keras_tpu_estimator.metrics.arguments import to_tensor
from keras_tpu_estimator.metrics.pairs import metric_pair
from keras_tpu_estimator.metrics.pairs import weighted_pair
from keras_tpu_estimator.metrics.update import MetricUpdate


class _CoMoments(keras.metrics.Metric):
    """Streaming weighted co-moments of `(x, y)` pairs, updated as TF1 updates them.

    Keeps the weighted count, the means and the co-moments `C_xy`, `C_xx`,
    `C_yy`, merged batch by batch with the parallel update
    `C_AB = C_A + C_B + (mean_A - mean_B)_x (mean_A - mean_B)_y n_A n_B / n_AB`
    (`tf.contrib.metrics.streaming_covariance`).
    """

    def __init__(self, name="covariance", dtype=None):
        super().__init__(name=name, dtype=dtype)
        for variable in ("count", "mean_x", "mean_y", "c_xy", "c_xx", "c_yy"):
            setattr(self, variable, self.add_variable(
                shape=(), initializer="zeros", dtype=FLOAT, name=variable))

    def update_state(self, x, y, sample_weight=None):
        if sample_weight is None:
            batch_count = ops.cast(ops.size(x), FLOAT)
            w = ops.ones_like(x)
        else:
            w = sample_weight
            batch_count = ops.sum(w)
        count = self.count + batch_count
        prev_count = count - batch_count
        batch_mean_x = ops.divide_no_nan(ops.sum(x * w), batch_count)
        batch_mean_y = ops.divide_no_nan(ops.sum(y * w), batch_count)
        delta_x = ops.divide_no_nan((batch_mean_x - self.mean_x) * batch_count, count)
        delta_y = ops.divide_no_nan((batch_mean_y - self.mean_y) * batch_count, count)
        prev_mean_x, prev_mean_y = self.mean_x.value, self.mean_y.value
        factor = ops.divide_no_nan(prev_count * batch_count, count)
        rx, ry = x - batch_mean_x, y - batch_mean_y
        dx, dy = prev_mean_x - batch_mean_x, prev_mean_y - batch_mean_y
        self.c_xy.assign_add(ops.sum(rx * ry * w) + dx * dy * factor)
        self.c_xx.assign_add(ops.sum(rx * rx * w) + dx * dx * factor)
        self.c_yy.assign_add(ops.sum(ry * ry * w) + dy * dy * factor)
        self.mean_x.assign_add(delta_x)
        self.mean_y.assign_add(delta_y)
        self.count.assign(count)

    def result(self):
        return ops.where(self.count <= 1.0, math.nan, self.c_xy / (self.count - 1.0))


class _PearsonR(_CoMoments):
    """TF1's `streaming_pearson_correlation`: `cov(x, y) / (sd(x) sd(y))`."""

    def result(self):
        n = self.count - 1.0
        r = (self.c_xy / n) / (ops.sqrt(self.c_xx / n) * ops.sqrt(self.c_yy / n))
        return ops.where(self.count <= 1.0, math.nan, r)


def _pair_and_weights(fn_name, predictions, labels, weights):
    labels, predictions = float_pair(fn_name, labels, predictions)
    sample_weight = flat_weights(fn_name, weights, labels)
    return flatten(predictions), flatten(labels), sample_weight


def streaming_covariance(predictions, labels, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """The unbiased (weighted) covariance of `predictions` and `labels`.

    As TF1: `C / (n - 1)` with `n` the sum of the weights, NaN while `n <= 1`.

    Args:
        predictions, labels: tensors of the same shape (a trailing dimension
            of size 1 on one of them is removed).
        weights: optional; broadcastable to `labels`.
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`).
    """
    x, y, w = _pair_and_weights("streaming_covariance", predictions, labels, weights)
    return weighted_pair(functools.partial(_CoMoments, name="covariance"), x, y, sample_weight=w)


def streaming_pearson_correlation(predictions, labels, weights=None, metrics_collections=None,
                                  updates_collections=None, name=None):
    """Pearson's correlation coefficient of `predictions` and `labels`.

    TF1's `cov(predictions, labels) / (sqrt(var(predictions)) sqrt(var(labels)))`
    from weighted streaming co-moments; NaN while the summed weight is <= 1.

    Args:
        predictions, labels: tensors of the same shape (a trailing dimension
            of size 1 on one of them is removed).
        weights: optional; broadcastable to `labels`.
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`).
    """
    x, y, w = _pair_and_weights("streaming_pearson_correlation", predictions, labels, weights)
    return weighted_pair(functools.partial(_PearsonR, name="pearson_r"), x, y, sample_weight=w)


DEFAULT_CONCAT_ELEMENTS = 1 << 20  # What `streaming_concat` keeps without `max_size`.


class _Concat(keras.metrics.Metric):
    """The rows of every batch, in order: a buffer of `capacity` rows and a count.

    Rows past `capacity` are dropped; the count goes on, so that `result`
    can tell `max_size`'s truncation (TF1's) from an overflowed default.
    """

    def __init__(self, row_shape, value_dtype, capacity, max_size, name="streaming_concat",
                 dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.capacity, self.max_size = capacity, max_size
        self.rows = self.add_variable(shape=(capacity,) + tuple(row_shape), initializer="zeros",
                                      dtype=value_dtype, name="rows")
        self.count = self.add_variable(shape=(), initializer="zeros", dtype="int32",
                                       name="count")

    def update_state(self, values):
        n = ops.shape(values)[0]
        index = self.count + ops.arange(n, dtype="int32")
        # Rows past the capacity go to index `capacity`: out of bounds, dropped.
        index = ops.where(index < self.capacity, index, self.capacity)
        buffer = self.rows.value.at[index].set(ops.cast(values, self.rows.dtype), mode="drop")
        self.rows.assign(buffer)
        self.count.assign(self.count + n)

    def result(self):
        count = int(np.asarray(self.count.value))
        if count > self.capacity and self.max_size is None:
            raise ValueError(
                f"streaming_concat: the evaluation gave {count} rows, more than the "
                f"{self.capacity} kept without `max_size`: pass `max_size` (rows past it "
                "are dropped, as in TF1)."
            )
        return self.rows.value[: min(count, self.capacity)]


def streaming_concat(values, axis=0, max_size=None, metrics_collections=None,
                     updates_collections=None, name=None):
    """Every batch's `values`, concatenated along the first axis.

    As TF1: with `max_size`, rows past it are dropped. Without it, up to
    `DEFAULT_CONCAT_ELEMENTS` elements are kept (the evaluation's state has
    a fixed size on the device); more is a `ValueError` when the value is
    read, asking for `max_size`.

    Args:
        values: a tensor of rank >= 1.
        axis: 0 (the batch axis) only.
        max_size: optional number of rows kept.
        metrics_collections, updates_collections, name: ignored.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`); the value has shape
        `[rows, ...]` (a NumPy array in `evaluate`'s results).

    Raises:
        ValueError: for a scalar `values`, or a bad `max_size`.
        NotImplementedError: for `axis` other than 0.
    """
    fn_name = "streaming_concat"
    values = to_tensor(fn_name, "values", values)
    if axis not in (0, -len(values.shape)):
        raise NotImplementedError(
            f"{fn_name}: only `axis=0` (the batch axis) is supported. Received: axis={axis!r}"
        )
    if len(values.shape) < 1:
        raise ValueError(f"{fn_name}: `values` must have rank >= 1; got a scalar.")
    row_shape = tuple(values.shape[1:])
    if max_size is not None and (isinstance(max_size, bool) or not isinstance(max_size, int)
                                 or max_size < 1):
        raise ValueError(f"{fn_name}: `max_size` must be an integer >= 1. Received: {max_size!r}")
    capacity = max_size or max(1, DEFAULT_CONCAT_ELEMENTS // max(1, math.prod(row_shape)))
    dtype = np.dtype(getattr(values.dtype, "name", values.dtype))
    value_dtype = "int32" if dtype.kind in "biu" else FLOAT
    factory = functools.partial(_Concat, row_shape, value_dtype, capacity, max_size, name=fn_name)
    return metric_pair(MetricUpdate(factory, (values,), {}), (0,) + row_shape)
