"""What a `metric_fn` may return, checked: `check_metric_values`.

Each value of the dict is a `MetricUpdate` (what `kte.metrics.*` and
`compat.v1.metrics.*` return: one streaming update of a Keras metric) or a
scalar tensor (averaged over the examples). A TF1 `(value, update_op)` pair
is refused: in TensorFlow, `update_op` updated local variables every batch
and `value` read them once at the end. Made of plain tensors, as TF1
programs' own metric helpers often are, there is nothing to accumulate, and
TensorFlow reported `value` evaluated one more time after the last batch:
not the mean over the evaluation, and not something this runtime can
reproduce (there is no session to run it in). Rather than report a number
that means something else, the error says how to write the metric.
"""

from keras_tpu_estimator.metrics.update import MetricUpdate
from keras_tpu_estimator.spec.checks import describe
from keras_tpu_estimator.spec.checks import is_tensor

_HOW = (
    "Return the per-batch value itself (a scalar tensor, averaged over the "
    "examples of the evaluation), or a streaming metric of kte.metrics "
    "(compat.v1.metrics): e.g. kte.metrics.mean(values) instead of a "
    "hand-written (mean, update_op), or kte.metrics.keras_metric(...) for any "
    "Keras metric."
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
    if isinstance(value, MetricUpdate) or is_tensor(value):
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
    if not isinstance(values, dict):
        raise ValueError(
            "metric_fn must return a dict of metric name to value. "
            f"Received: {describe(values)}"
        )
    for name, value in values.items():
        if not isinstance(name, str):
            raise TypeError(
                "metric_fn must return a dict of metric name (a str) to value. "
                f"Received the key {name!r} of type {type(name).__name__} in "
                f"{describe(values)}"
            )
        check_metric_value(name, value)
    return values
