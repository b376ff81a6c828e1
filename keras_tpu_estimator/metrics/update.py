"""`MetricUpdate`: one streaming update of a Keras metric, and `keras_metric`.

What every metric function returns: the model creates the metric once
(`update.factory()`) and applies each batch's update inside `jax.jit`.
"""

import collections

import keras


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



def weighted_update(factory, *args, sample_weight=None):
    """A `MetricUpdate` of `factory`'s metric with `args` and `sample_weight`.

    Args:
        factory: zero-argument callable returning a new `keras.metrics.Metric`.
        *args: positional arguments of the metric's `update_state`.
        sample_weight: the `sample_weight` of `update_state`, or `None`.

    Returns:
        `MetricUpdate(factory, args, {"sample_weight": sample_weight})`.

    Example:

    ```python
    weighted_update(keras.metrics.Mean, values, sample_weight=None)
    ```
    """
    return MetricUpdate(factory, tuple(args), {"sample_weight": sample_weight})
