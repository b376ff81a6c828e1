"""Metrics computed from other metrics' values: `DerivedMetric`.

TF1 programs compute a metric from the values of others and return it with
their update ops, as ALBERT computes CoLA's Matthews correlation:

```python
tp, tp_op = tf1.metrics.true_positives(labels, predictions)
...
mcc = tf1.div_no_nan(tp * tn - fp * fn, tf1.pow((tp + fp) * ... , 0.5))
return {"matthew_corr": (mcc, tf1.group(tp_op, tn_op, fp_op, fn_op))}
```

In TensorFlow, the value tensor read the metric variables once, after the
last batch's update. A `DerivedMetric` keeps its own copy of every metric
`metric_fn` creates, and at each batch calls `metric_fn` again with them
(`Calls.update`): each metric is updated with the batch and its value read
after the update, so the value the `DerivedMetric` keeps after the last batch
is TensorFlow's. `depends_on_metrics` tells such a pair from a pair of plain
tensors, which has nothing to stream.
"""

import jax
import keras
import numpy as np
from keras import ops

from keras_tpu_estimator.metrics.pairs import Calls


def call_metric_fn(metric_fn, tensors):
    """`metric_fn(**tensors)` for a dict of tensors, else `metric_fn(*tensors)`."""
    return metric_fn(**tensors) if isinstance(tensors, dict) else metric_fn(*tensors)


class DerivedMetric(keras.metrics.Metric):
    """The value of `metric_fn(...)[key][0]`, after the last batch's updates.

    Args:
        metric_fn: the `metric_fn` of the spec's `eval_metrics`.
        key: the name of the metric in the dict `metric_fn` returns.
        factories: the factories of the metrics `metric_fn` creates, in
            creation order.
        shape: the shape of the value.
    """

    def __init__(self, metric_fn, key, factories, shape=(), name=None, dtype=None):
        super().__init__(name=name or key, dtype=dtype)
        self._metric_fn = metric_fn
        self._key = key
        self.parts = [factory() for factory in factories]
        self.value = self.add_variable(
            shape=tuple(shape), initializer="zeros", dtype="float32", name="value"
        )

    def update_state(self, tensors):
        """Updates every metric of `metric_fn` with `tensors`; keeps the value."""
        with Calls.update(self.parts) as calls:
            values = call_metric_fn(self._metric_fn, tensors)
        if len(calls.pairs) != len(self.parts):
            raise RuntimeError(
                f"metric_fn created {len(calls.pairs)} metrics, and {len(self.parts)} on "
                "its first call: it must create the same metrics, in the same order, "
                "on every call."
            )
        self.value.assign(ops.cast(values[self._key][0], "float32"))

    def result(self):
        return self.value


def _abstract(leaf):
    """A `jax.ShapeDtypeStruct` for an array-like leaf, else `None`."""
    shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
    if shape is None or dtype is None:
        return None
    try:
        dtype = np.dtype(getattr(dtype, "name", dtype))
    except TypeError:
        return None
    if dtype.kind not in "biuf":
        return None
    return jax.ShapeDtypeStruct(tuple(1 if d is None else d for d in shape), dtype)


def depends_on_metrics(metric_fn, tensors, key, pairs):
    """Whether `metric_fn(...)[key][0]` is computed from the metrics' values.

    Traces `metric_fn` (with abstract tensors of the shapes of `tensors`)
    with the values of the metrics it creates as inputs (`Calls.substitute`),
    and follows the value back to them.

    Args:
        metric_fn: the spec's `metric_fn`.
        tensors: its tensors (a list or a dict).
        key: the name of the metric to follow.
        pairs: the `MetricPair`s of a first call of `metric_fn`.

    Returns:
        A bool.
    """
    leaves, treedef = jax.tree.flatten(tensors)
    abstract = [_abstract(leaf) for leaf in leaves]
    where = [i for i, a in enumerate(abstract) if a is not None]

    def value_of(results, arrays):
        filled = list(leaves)
        for i, array in zip(where, arrays):
            filled[i] = array
        with Calls.substitute(results):
            values = call_metric_fn(metric_fn, jax.tree.unflatten(treedef, filled))
        value = values[key][0]
        return ops.convert_to_tensor(value)

    results = [jax.ShapeDtypeStruct(tuple(pair[0].shape), "float32") for pair in pairs]
    closed = jax.make_jaxpr(value_of)(results, [abstract[i] for i in where])
    jaxpr = closed.jaxpr
    reached = set(jaxpr.invars[: len(jax.tree.leaves(results))])
    for eqn in jaxpr.eqns:
        if any(_is_var(v) and v in reached for v in eqn.invars):
            reached.update(eqn.outvars)
    return any(_is_var(v) and v in reached for v in jaxpr.outvars)


def _is_var(atom):
    return not isinstance(atom, jax.extend.core.Literal)
