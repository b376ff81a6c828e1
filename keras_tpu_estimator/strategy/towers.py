"""Tower values and contexts: what code sees while towers run.

A tower (replica) is one device of the strategy's one-axis mesh
(`TOWER_AXIS`). Per-tower values are `PerReplica` objects (one global array
whose axis 0 is split over the towers); `VariableAggregation` names how
`reduce` combines them. While `call_for_each_tower` runs a function,
`get_tower_context()` gives its `TowerContext` (the tower's id,
`merge_call`, `all_reduce`); `MultiStepContext` is what
`run_steps_on_dataset`'s function records.

This module owns the stack of tower contexts: `tower_context_scope` enters
one, `get_tower_context` reads the innermost.

```python
def fn(x):
    context = kte.get_tower_context()
    return context.all_reduce(kte.VariableAggregation.SUM, x.sum())

totals = strategy.call_for_each_tower(fn, batch)   # a PerReplica
```
"""

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec

TOWER_AXIS = "batch"
"""The name of the mesh axis the towers are laid out on."""

_TOWERS = [None]  # The tower context of the code being traced, or None.


class VariableAggregation:
    """How `reduce` combines the towers' values (`tf.VariableAggregation`).

    Attributes:
        NONE: no aggregation (not accepted by `reduce`).
        SUM: the sum over towers.
        MEAN: the mean over towers.
        ONLY_FIRST_TOWER: the first tower's value.

    Example:

    ```python
    total = strategy.reduce(kte.VariableAggregation.SUM, per_tower_sums)
    ```
    """

    NONE = "NONE"
    SUM = "SUM"
    MEAN = "MEAN"
    ONLY_FIRST_TOWER = "ONLY_FIRST_TOWER"


_REDUCTIONS = ("SUM", "MEAN", "ONLY_FIRST_TOWER")


def aggregation_name(value):
    """The name of a reducing aggregation: `"SUM"`, `"MEAN"` or `"ONLY_FIRST_TOWER"`.

    Args:
        value: a `VariableAggregation` constant, its name (any case), or a
            `tf.VariableAggregation` (`ONLY_FIRST_REPLICA` is
            `ONLY_FIRST_TOWER`).

    Returns:
        The aggregation's name.

    Raises:
        ValueError: for `NONE` or anything else that does not reduce.

    Example:

    ```python
    aggregation_name("sum")  # "SUM"
    ```
    """
    name = getattr(value, "name", value)
    name = name.upper() if isinstance(name, str) else name
    name = {"ONLY_FIRST_REPLICA": "ONLY_FIRST_TOWER"}.get(name, name)
    if name not in _REDUCTIONS:
        raise ValueError(
            f"`aggregation` must be one of {list(_REDUCTIONS)} (a "
            f"kte.VariableAggregation or tf.VariableAggregation). Received: {value!r}"
        )
    return name


class PerReplica:
    """One value per tower, held as one global array.

    Args:
        values: an array whose axis 0 is split over the towers.
        stacked: True when axis 0 has one entry per tower (a tower's value
            is `values[i]`); False when it holds rows (a tower's value is its
            `len(values) // num_towers` rows, as in a distributed batch).
        num_towers: the number of towers.

    Example:

    ```python
    sums = strategy.call_for_each_tower(lambda x: x.sum(), batch)
    sums.per_tower()          # shape (num_towers,)
    ```
    """

    def __init__(self, values, stacked, num_towers):
        self.values = values
        self.stacked = stacked
        self.num_towers = num_towers

    def per_tower(self):
        """The values as one array `[num_towers, ...tower value shape]`.

        Returns:
            `values` itself when stacked, else its rows grouped by tower.
        """
        if self.stacked:
            return self.values
        shape = self.values.shape
        return jnp.reshape(self.values, (self.num_towers, shape[0] // self.num_towers) + shape[1:])

    def __repr__(self):
        return (
            f"PerReplica(num_towers={self.num_towers}, stacked={self.stacked}, "
            f"shape={tuple(self.values.shape)})"
        )


def check_callable(method, argument, value, what):
    """Returns `value` if callable; else a TypeError naming `method(argument=value)` and `what`.

    Example:

    ```python
    check_callable("call_for_each_tower", "fn", 5, "fn(*args, **kwargs) runs once per tower")
    # TypeError: Argument `fn` of call_for_each_tower must be callable ...
    ```
    """
    if callable(value):
        return value
    raise TypeError(
        f"Argument `{argument}` of {method} must be callable: {what}. Received: "
        f"{method}({argument}={value!r:.200}) of type {type(value).__name__}"
    )


def is_per_replica(value):
    """Whether `value` is a `PerReplica` (a leaf test for `jax.tree` functions).

    Args:
        value: any value.

    Returns:
        True for a `PerReplica`.
    """
    return isinstance(value, PerReplica)


def split_rows(array, mesh):
    """`array` placed on `mesh`, its rows split over the towers.

    Args:
        array: a host array of a batch; its leading dimension must divide
            by the number of towers.
        mesh: the `jax.sharding.Mesh` of the towers (axis `TOWER_AXIS`).

    Returns:
        A `PerReplica` of rows (`stacked=False`).

    Raises:
        ValueError: for a scalar, or rows that do not split evenly.

    Example:

    ```python
    split_rows(np.zeros((16, 3)), mesh)  # 2 rows per tower on 8 devices
    ```
    """
    array = np.asarray(array)
    num_towers = mesh.devices.size
    if array.ndim == 0 or array.shape[0] % num_towers:
        raise ValueError(
            f"A distributed batch must have a leading dimension divisible by "
            f"the number of towers ({num_towers}). Received shape: {array.shape}"
        )
    sharding = NamedSharding(mesh, PartitionSpec(TOWER_AXIS))
    return PerReplica(jax.device_put(array, sharding), False, num_towers)


@contextlib.contextmanager
def tower_context_scope(context):
    """Makes `context` the current tower context while the block runs.

    Args:
        context: a `TowerContext`, or None for the cross-tower context.

    Yields:
        `context`.

    Example:

    ```python
    with tower_context_scope(TowerContext(strategy)):
        out = fn(*args)      # get_tower_context() is that context
    ```
    """
    _TOWERS.append(context)
    try:
        yield context
    finally:
        _TOWERS.pop()


def get_tower_context():
    """The `TowerContext` of the tower being run, or None outside towers.

    Returns:
        The innermost `TowerContext`, or None in the cross-tower context
        (outside `call_for_each_tower`, or inside `merge_call`).

    Example:

    ```python
    strategy.call_for_each_tower(lambda: kte.get_tower_context().tower_id)
    ```
    """
    return _TOWERS[-1]


get_replica_context = get_tower_context
"""TensorFlow 2's name for `get_tower_context`: the same function."""


class TowerContext:
    """What `fn` sees while `call_for_each_tower` runs it on one tower.

    Created inside the traced tower program (it reads the tower's index
    from the mesh axis).

    Args:
        strategy: the `TPUStrategy` running the towers.

    Attributes:
        strategy: the `TPUStrategy`.
        tower_id: this tower's index (a traced int32 scalar).
        num_towers: the number of towers.

    Example:

    ```python
    def fn(x):
        context = kte.get_tower_context()
        return x * context.tower_id
    ```
    """

    def __init__(self, strategy):
        self.strategy = strategy
        self.tower_id = jax.lax.axis_index(TOWER_AXIS)
        self.num_towers = strategy.num_towers

    replica_id_in_sync_group = property(lambda self: self.tower_id)
    num_replicas_in_sync = property(lambda self: self.num_towers)

    def merge_call(self, merge_fn, *args, **kwargs):
        """Runs `merge_fn(strategy, *args, **kwargs)` once on all towers' values.

        Every array in `args`/`kwargs` becomes a `PerReplica` of the towers'
        values; `merge_fn`'s result is handed back to every tower.

        Args:
            merge_fn: `merge_fn(strategy, *args, **kwargs)`, run in the
                cross-tower context.
            *args: this tower's values.
            **kwargs: this tower's values.

        Returns:
            `merge_fn`'s result.
        """
        check_callable("merge_call", "merge_fn", merge_fn,
                       "merge_fn(strategy, *args, **kwargs) runs on all towers' values")
        gathered = jax.tree.map(
            lambda a: PerReplica(jax.lax.all_gather(a, TOWER_AXIS), True, self.num_towers),
            (args, kwargs),
        )
        with tower_context_scope(None):  # merge_fn runs in the cross-tower context.
            return merge_fn(self.strategy, *gathered[0], **gathered[1])

    def all_reduce(self, aggregation, value):
        """`value` combined over all towers, returned to every tower.

        Args:
            aggregation: `SUM`, `MEAN` or `ONLY_FIRST_TOWER`.
            value: this tower's value.

        Returns:
            The combined value.
        """
        return self.strategy.reduce(aggregation, value)


class MultiStepContext:
    """What `run_steps_on_dataset`'s `fn` records, and what it returns.

    Attributes:
        last_step_outputs: `{name: value}` set by `set_last_step_output`,
            the values of the last step once the loop has run.
        non_tensor_outputs: `{name: value}` set by `set_non_tensor_output`.
        aggregations: `{name: aggregation}` given to `set_last_step_output`.
        run_op: None (the loop has already run when the context is returned).

    Example:

    ```python
    def step(context, x):
        context.set_last_step_output("loss", loss, aggregation="MEAN")

    strategy.run_steps_on_dataset(step, iterator, 10).last_step_outputs["loss"]
    ```
    """

    def __init__(self):
        self.last_step_outputs = {}
        self.non_tensor_outputs = {}
        self.aggregations = {}
        self.run_op = None

    def set_last_step_output(self, name, output, aggregation=None):
        """Records `output` (reduced with `aggregation` if given) under `name`.

        Args:
            name: the output's name.
            output: an array or `PerReplica`.
            aggregation: None, or how to reduce a per-tower `output`.
        """
        self.last_step_outputs[name] = output
        self.aggregations[name] = aggregation

    def set_non_tensor_output(self, name, output):
        """Records a Python value under `name`.

        Args:
            name: the output's name.
            output: any Python value.
        """
        self.non_tensor_outputs[name] = output
