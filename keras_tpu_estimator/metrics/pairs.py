"""`MetricPair`: TF1's `(value, update_op)`, and the calls of one `metric_fn`.

Every metric function returns a `MetricPair`: it unpacks as TF1's
`(value, update_op)` and carries the `MetricUpdate` the model streams. What
`value` is depends on who calls `metric_fn` (a `Calls` context):

- recording (the model's own call, `Calls.record()`): zeros of the result's
  shape, and each call's `MetricUpdate` is noted in creation order, as TF1's
  graph noted each metric's local variables;
- updating (`Calls.update(metrics)`, inside a `DerivedMetric`'s update): the
  `i`-th call updates `metrics[i]` with its batch and returns its result
  after the update, as TF1's value tensor read the variables the update
  ops had just changed;
- substituting (`Calls.substitute(results)`): the `i`-th call returns
  `results[i]`, to see what a value is computed from.

Outside any context (in `model_fn`, for `eval_metric_ops`), the value is zeros,
and the pair is kept among the last `LOOSE_PAIRS` made so (`loose_pairs`):
a `(value, update_op)` repacked from one of them is known as that metric.
"""

import collections
import contextlib
import threading

from keras import ops

from keras_tpu_estimator.metrics.update import MetricUpdate
from keras_tpu_estimator.metrics.update import weighted_update

_STATE = threading.local()


class MetricPair(tuple):
    """TF1's `(value, update_op)` pair of a streaming metric.

    Unpacks as `value, update_op = tf1.metrics.accuracy(...)`; `value` and
    `update_op` are tensors (the same one: the metric's value after this
    batch's update). `update` is the `MetricUpdate` the model applies to
    every batch; `factory`, `args` and `kwargs` are its fields.
    """

    def __new__(cls, value, update_op, update):
        pair = super().__new__(cls, (value, update_op))
        pair.update = update
        return pair

    @property
    def factory(self):
        return self.update.factory

    @property
    def args(self):
        return self.update.args

    @property
    def kwargs(self):
        return self.update.kwargs

    def __repr__(self):
        name = getattr(self.update.factory, "keywords", {}).get("name", "metric")
        return f"MetricPair({name}, value={self[0]!r})"


class Calls:
    """The metric function calls of one `metric_fn` call, in creation order."""

    def __init__(self, mode, metrics=None, results=None):
        self.mode = mode
        self.metrics = metrics
        self.results = results
        self.pairs = []

    @staticmethod
    @contextlib.contextmanager
    def _entered(calls):
        stack = _STATE.__dict__.setdefault("stack", [])
        stack.append(calls)
        try:
            yield calls
        finally:
            stack.pop()

    @classmethod
    def record(cls):
        """A context noting each call's `MetricUpdate`; yields the `Calls`."""
        return cls._entered(cls("record"))

    @classmethod
    def update(cls, metrics):
        """A context in which the `i`-th call updates and reads `metrics[i]`."""
        return cls._entered(cls("update", metrics=metrics))

    @classmethod
    def substitute(cls, results):
        """A context in which the `i`-th call's value is `results[i]`."""
        return cls._entered(cls("substitute", results=results))

    def _next(self, update):
        i = len(self.pairs)
        known = self.metrics if self.mode == "update" else self.results
        if self.mode == "record":
            return i
        name = getattr(update.factory, "keywords", {}).get("name")
        if i >= len(known) or (self.mode == "update" and name not in (None, known[i].name)):
            raise RuntimeError(
                f"metric_fn's metric #{i + 1} ({name}) is not the one it created on "
                "its first call: metric_fn must create the same metrics, in the same "
                "order, on every call."
            )
        return i

    def value(self, update, result_shape):
        """The value of the next metric call, whose update is `update`."""
        i = self._next(update)
        if self.mode == "update":
            metric = self.metrics[i]
            metric.update_state(*update.args, **update.kwargs)
            return metric.result()
        if self.mode == "substitute":
            return self.results[i]
        return ops.zeros(result_shape, "float32")


LOOSE_PAIRS = 1024


def loose_pairs():
    """The last `LOOSE_PAIRS` pairs made outside any `Calls` context, oldest first."""
    if not hasattr(_STATE, "loose"):
        _STATE.loose = collections.deque(maxlen=LOOSE_PAIRS)
    return _STATE.loose


def current_calls():
    """The innermost `Calls` context, or `None`."""
    stack = getattr(_STATE, "stack", None)
    return stack[-1] if stack else None


def metric_pair(update, result_shape=()):
    """The `MetricPair` a metric function returns for `update`.

    Args:
        update: the `MetricUpdate` of this batch.
        result_shape: the shape of the metric's result (`()` but for vector
            metrics).

    Returns:
        A `MetricPair` whose value is given by the current `Calls` context
        (zeros without one).
    """
    if not isinstance(update, MetricUpdate):
        raise TypeError(f"metric_pair() takes a MetricUpdate. Received: {update!r}")
    calls = current_calls()
    value = ops.zeros(result_shape, "float32") if calls is None else calls.value(
        update, result_shape
    )
    pair = MetricPair(value, value, update)
    (loose_pairs() if calls is None else calls.pairs).append(pair)
    return pair


def weighted_pair(factory, *args, sample_weight=None, result_shape=()):
    """`metric_pair` of `weighted_update(factory, *args, sample_weight=...)`.

    Example:

    ```python
    weighted_pair(keras.metrics.Mean, values, sample_weight=None)
    ```
    """
    return metric_pair(weighted_update(factory, *args, sample_weight=sample_weight), result_shape)
