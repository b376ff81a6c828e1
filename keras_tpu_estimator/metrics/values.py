"""What a `metric_fn` may return, and what the model streams: `metric_values`.

Each value of the dict is one of:

- a TF1 `(value, update_op)` pair of a metric function (a `MetricPair`, or
  its two items repacked in a tuple): the model streams its `MetricUpdate`;
- a pair whose value is computed from metric functions' values (ALBERT's
  Matthews correlation from `true_positives`, ...): a `DerivedMetric`
  reports the value after the last batch's update, as TensorFlow read it;
- a `MetricUpdate` (`kte.metrics.keras_metric`): streamed;
- a scalar tensor: averaged over the examples.

A pair of plain tensors is refused: in TensorFlow, `update_op` updated local
variables every batch and `value` read them once at the end. Made of plain
tensors, as TF1 programs' own metric helpers often are, there is nothing to
accumulate, and TensorFlow reported `value` evaluated one more time after the
last batch: not the mean over the evaluation, and not something this runtime
can reproduce (there is no session to run it in). Rather than report a
number that means something else, the error says how to write the metric.
"""

import functools

from keras_tpu_estimator.metrics.derived import DerivedMetric
from keras_tpu_estimator.metrics.derived import call_metric_fn
from keras_tpu_estimator.metrics.derived import depends_on_metrics
from keras_tpu_estimator.metrics.pairs import Calls
from keras_tpu_estimator.metrics.pairs import MetricPair
from keras_tpu_estimator.metrics.pairs import loose_pairs
from keras_tpu_estimator.metrics.update import MetricUpdate
from keras_tpu_estimator.spec.checks import describe
from keras_tpu_estimator.spec.checks import is_tensor

_HOW = (
    "Return the per-batch value itself (a scalar tensor, averaged over the "
    "examples of the evaluation), or a streaming metric of kte.metrics "
    "(compat.v1.metrics): e.g. kte.metrics.mean(values) instead of a "
    "hand-written (mean, update_op), or kte.metrics.keras_metric(...) for any "
    "Keras metric. A value computed from the values of tf1.metrics functions "
    "called in eval_metrics' metric_fn, returned as (value, update_op), is "
    "streamed as TensorFlow did."
)


def check_metric_value(name, value):
    """Returns `value` if `metric_fn` may return it as metric `name`.

    Args:
        name: the metric's name (its key in the dict `metric_fn` returned).
        value: a `MetricUpdate`, or a tensor (its shape is checked where
            the metric is created).

    Returns:
        `value`, unchanged.

    Raises:
        TypeError: for a TF1 `(value, update_op)` pair (a tuple or list) or
            anything else that is neither; the message names the metric and
            says what to return instead.

    Example:

    ```python
    check_metric_value("accuracy", kte.metrics.accuracy(labels, predictions))
    check_metric_value("mean", (mean, mean))   # TypeError
    ```
    """
    if isinstance(value, (MetricUpdate, MetricPair)) or is_tensor(value):
        return value
    if isinstance(value, (tuple, list)) and len(value) == 2:
        raise TypeError(
            f"metric_fn returned '{name}' as a TF1 (value, update_op) pair: "
            f"{describe(value)}. Such a pair is a streaming metric of "
            "TensorFlow's local variables; made of plain tensors it has "
            "nothing to accumulate, and reading `value` once at the end would "
            "report one batch, not the evaluation. " + _HOW
        )
    raise TypeError(
        f"metric_fn returned '{name}' = {describe(value)} of type "
        f"{type(value).__name__}: a metric value must be a scalar tensor or "
        "what a kte.metrics function returns. " + _HOW
    )


def check_metric_values(values):
    """Returns the dict `metric_fn` returned, if every name and value is allowed.

    Args:
        values: what `metric_fn` returned.

    Returns:
        `values`, unchanged.

    Raises:
        ValueError: if `values` is not a dict.
        TypeError: for a name that is not a string, or a value
            `check_metric_value` refuses.
    """
    check_metric_names(values)
    for name, value in values.items():
        check_metric_value(name, value)
    return values


def check_metric_names(values):
    """Raises unless `values` is a dict whose keys are strings.

    Raises:
        ValueError: if `values` is not a dict.
        TypeError: for a name that is not a string.
    """
    if not isinstance(values, dict):
        raise ValueError(
            "metric_fn must return a dict of metric name to value. "
            f"Received: {describe(values)}"
        )
    for name in values:
        if not isinstance(name, str):
            raise TypeError(
                "metric_fn must return a dict of metric name (a str) to value. "
                f"Received the key {name!r} of type {type(name).__name__} in "
                f"{describe(values)}"
            )


def _stream(name, value, metric_fn, tensors, pairs):
    """What the model streams for metric `name`, or a `TypeError`."""
    if isinstance(value, MetricPair):
        return value.update
    if isinstance(value, (tuple, list)) and len(value) == 2:
        for pair in [*pairs, *loose_pairs()]:
            if value[0] is pair[0]:  # A metric's own pair, repacked.
                return pair.update
    if isinstance(value, (tuple, list)) and len(value) == 2 and pairs:
        if depends_on_metrics(metric_fn, tensors, name, pairs):
            factory = functools.partial(
                DerivedMetric, metric_fn, name, [pair.factory for pair in pairs],
                tuple(value[0].shape),
            )
            return MetricUpdate(factory, (tensors,), {})
    check_metric_value(name, value)
    return value


def metric_values(metric_fn, tensors):
    """Calls `metric_fn` on `tensors`: `{name: what the model streams}`.

    Args:
        metric_fn: the `metric_fn` of `eval_metrics`.
        tensors: its tensors: a list (`metric_fn(*tensors)`) or a dict
            (`metric_fn(**tensors)`).

    Returns:
        A dict of metric name to a `MetricUpdate` (applied to every batch)
        or a scalar tensor (averaged over the examples).

    Raises:
        ValueError: if `metric_fn` returns no dict.
        TypeError: for a name or value `metric_fn` may not return (see
            `check_metric_value`).

    Example:

    ```python
    def metric_fn(labels, predictions):
        tp, tp_op = tf1.metrics.true_positives(labels, predictions)
        fp, fp_op = tf1.metrics.false_positives(labels, predictions)
        return {"precision": (tf1.div_no_nan(tp, tp + fp), tf1.group(tp_op, fp_op))}

    metric_values(metric_fn, [labels, predictions])  # {"precision": MetricUpdate(...)}
    ```
    """
    with Calls.record() as calls:
        values = call_metric_fn(metric_fn, tensors)
    check_metric_names(values)
    return {
        name: _stream(name, value, metric_fn, tensors, calls.pairs)
        for name, value in values.items()
    }
