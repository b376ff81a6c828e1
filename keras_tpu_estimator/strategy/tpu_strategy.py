"""`TPUStrategy`: the strategy object, and which strategy's scope is active.

This module owns the stack of active strategies: `TPUStrategy.scope()`
enters one, `current_strategy()` reads the innermost. Towers run as one SPMD
program (`jax.shard_map` over `TOWER_AXIS`); `run_steps_on_dataset` runs many
steps as one compiled loop of `engine.loop.LoopPrograms`.

```python
strategy = kte.TPUStrategy(steps_per_run=10)
with strategy.scope():
    assert kte.strategy.current_strategy() is strategy
```
"""

import contextlib
import functools
import weakref

import jax
import jax.numpy as jnp
import keras
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.engine import loop as loop_lib
from keras_tpu_estimator.strategy.datasets import DistributedDataset
from keras_tpu_estimator.strategy.towers import TOWER_AXIS
from keras_tpu_estimator.strategy.towers import MultiStepContext
from keras_tpu_estimator.strategy.towers import PerReplica
from keras_tpu_estimator.strategy.towers import TowerContext
from keras_tpu_estimator.strategy.towers import VariableAggregation
from keras_tpu_estimator.strategy.towers import aggregation_name
from keras_tpu_estimator.strategy.towers import check_callable
from keras_tpu_estimator.strategy.towers import get_tower_context
from keras_tpu_estimator.strategy.towers import is_per_replica
from keras_tpu_estimator.strategy.towers import tower_context_scope

_STRATEGIES = []  # The strategies whose scope() is active, innermost last.


def current_strategy():
    """The innermost `TPUStrategy` whose `scope()` is active, or None.

    Returns:
        A `TPUStrategy`, or None outside every strategy's scope.

    Example:

    ```python
    with strategy.scope():
        assert current_strategy() is strategy
    ```
    """
    return _STRATEGIES[-1] if _STRATEGIES else None


class _TrackingDataParallel(keras.distribution.DataParallel):
    """A `DataParallel` that records the variables created in its scope."""

    def __init__(self, device_mesh):
        super().__init__(device_mesh=device_mesh, auto_shard_dataset=False)
        self.created = weakref.WeakValueDictionary()

    def get_variable_layout(self, variable):
        self.created[id(variable)] = variable
        return super().get_variable_layout(variable)


class TPUStrategy:
    """`tf.contrib.distribute.TPUStrategy` on the devices JAX sees.

    Args:
        tpu_cluster_resolver: kept for compatibility; JAX finds the devices
            (and, with several processes, `keras.distribution.initialize`
            joins them).
        steps_per_run: steps per on-device loop; an `EstimatorModel`
            compiled under `scope()` without `steps_per_execution` uses it.
        num_cores: how many devices to use; None for all.

    Raises:
        ValueError: if `steps_per_run` is not a positive int or `num_cores`
            is not between 1 and the number of devices.

    Example:

    ```python
    strategy = kte.TPUStrategy(steps_per_run=100)
    with strategy.scope():
        model = kte.EstimatorModel(model_fn, train_batch_size=1024)
        model.compile()          # steps_per_execution=100
    ```
    """

    def __init__(self, tpu_cluster_resolver=None, steps_per_run=1, num_cores=None):
        if isinstance(steps_per_run, bool) or not isinstance(steps_per_run, (int, np.integer)) or (
            steps_per_run < 1
        ):
            raise ValueError(
                f"`steps_per_run` must be a positive int. Received: {steps_per_run!r}"
            )
        devices = keras.distribution.list_devices()
        if num_cores is not None and (
            isinstance(num_cores, bool)
            or not isinstance(num_cores, (int, np.integer))
            or not 1 <= num_cores <= len(devices)
        ):
            raise ValueError(
                f"`num_cores` must be an int from 1 to the number of devices "
                f"({len(devices)}), or None. Received: {num_cores!r}"
            )
        devices = devices[: num_cores or len(devices)]
        self.tpu_cluster_resolver = tpu_cluster_resolver
        self.steps_per_run = int(steps_per_run)
        mesh = keras.distribution.DeviceMesh((len(devices),), (TOWER_AXIS,), devices)
        self.distribution = _TrackingDataParallel(mesh)
        self._mesh = mesh.backend_mesh
        self._programs = loop_lib.LoopPrograms()
        self._traced = {}
        self._session_config = None

    # ------------------------------------------------------------------
    # Properties.

    @property
    def num_towers(self):
        """The number of towers (devices) in sync."""
        return self._mesh.devices.size

    num_replicas_in_sync = num_towers

    @property
    def num_hosts(self):
        """The number of processes the towers live on."""
        return len({d.process_index for d in self._mesh.devices.flat})

    @property
    def num_towers_per_host(self):
        """The towers of each process."""
        return self.num_towers // self.num_hosts

    @property
    def worker_devices(self):
        """The devices the towers run on, as Keras names them (`"cpu:0"`)."""
        return tuple(f"{d.platform}:{d.id}" for d in self._mesh.devices.flat)

    parameter_devices = worker_devices

    @property
    def worker_device_index(self):
        """A `PerReplica` of each tower's index, for `call_for_each_tower`."""
        sharding = NamedSharding(self._mesh, PartitionSpec(TOWER_AXIS))
        index = jax.device_put(np.arange(self.num_towers, dtype="int32"), sharding)
        return PerReplica(index, True, self.num_towers)

    @property
    def is_single_tower(self):
        """Whether there is a single tower."""
        return self.num_towers == 1

    between_graph = False
    should_init = True
    should_checkpoint = True
    should_save_summary = True

    # ------------------------------------------------------------------
    # Scope and configuration.

    @contextlib.contextmanager
    def scope(self):
        """Makes this strategy current and its distribution Keras's.

        Variables created inside are laid out on the strategy's mesh.
        """
        _STRATEGIES.append(self)
        try:
            with self.distribution.scope():
                yield self
        finally:
            _STRATEGIES.pop()

    def configure(self, session_config=None, cluster_spec=None, task_type=None, task_id=None):
        """Kept for compatibility: JAX needs no session configuration."""
        del cluster_spec, task_type, task_id
        self._session_config = session_config

    def initialize(self):
        """Nothing to initialize: returns None, as TF does eagerly."""
        return None

    def finalize(self):
        """Nothing to finalize: returns None, as TF does eagerly."""
        return None

    def colocate_vars_with(self, colocate_with_variable):
        """A scope for variables placed like `colocate_with_variable`.

        Every variable of the strategy lives on the whole mesh, so this only
        checks that it is used inside `scope()`.
        """
        del colocate_with_variable
        if self not in _STRATEGIES:
            raise RuntimeError("colocate_vars_with may only be used inside strategy.scope().")
        return contextlib.nullcontext()

    def non_slot_devices(self, var_list):
        """The devices of non-slot variables: the parameter devices."""
        del var_list
        return self.parameter_devices

    def get_host_cpu_device(self, host_id):
        """The host device string of process `host_id`."""
        return f"/job:worker/task:{host_id}/device:CPU:0"

    # ------------------------------------------------------------------
    # Towers.

    def call_for_each_tower(self, fn, *args, **kwargs):
        """Runs `fn(*args, **kwargs)` once per tower; returns `PerReplica`s.

        `PerReplica` arguments give each tower its own value; other arrays
        are passed whole to every tower; other Python values are passed as
        they are. `fn` may call `get_tower_context()` for `tower_id` and
        `merge_call`. The result has `fn`'s structure with a `PerReplica`
        for every array.
        """
        check_callable("call_for_each_tower", "fn", fn, "fn(*args, **kwargs) runs once per tower")
        kwargs.pop("run_concurrently", None)  # TF's eager-only option.
        leaves, treedef = jax.tree.flatten((args, kwargs), is_leaf=is_per_replica)
        arrays = [i for i, x in enumerate(leaves) if is_per_replica(x) or _is_array(x)]
        in_specs = tuple(
            PartitionSpec(TOWER_AXIS) if is_per_replica(leaves[i]) else PartitionSpec()
            for i in arrays
        )
        stacked = {i: leaves[i].stacked for i in arrays if is_per_replica(leaves[i])}

        def tower(*values):
            local = list(leaves)
            for i, value in zip(arrays, values):
                local[i] = value[0] if stacked.get(i) else value
            call_args, call_kwargs = jax.tree.unflatten(treedef, local)
            with tower_context_scope(TowerContext(self)):
                out = fn(*call_args, **call_kwargs)
            return jax.tree.map(lambda a: jnp.expand_dims(jnp.asarray(a), 0), out)

        def program(*values):
            return jax.shard_map(
                tower, mesh=self._mesh, in_specs=in_specs, out_specs=PartitionSpec(TOWER_AXIS)
            )(*values)

        inputs = [leaves[i].values if is_per_replica(leaves[i]) else leaves[i] for i in arrays]
        out = program(*inputs) if _tracing(inputs) else jax.jit(program)(*inputs)
        return jax.tree.map(lambda a: PerReplica(a, True, self.num_towers), out)

    def run(self, fn, args=(), kwargs=None):
        """`call_for_each_tower(fn, *args, **kwargs)`, with TF2's signature."""
        check_callable("run", "fn", fn, "fn(*args, **kwargs) runs once per tower")
        return self.call_for_each_tower(fn, *args, **(kwargs or {}))

    # ------------------------------------------------------------------
    # Cross-tower values.

    def reduce(self, aggregation, value, destinations=None):
        """Combines the towers' values with `aggregation`.

        Args:
            aggregation: `SUM`, `MEAN` or `ONLY_FIRST_TOWER`.
            value: a `PerReplica`; inside a tower, that tower's value (then
                every tower receives the result); or an array that every
                tower holds (mirrored), for `MEAN`/`ONLY_FIRST_TOWER`.
            destinations: kept for compatibility: results live on every
                device of the mesh.

        Returns:
            The combined value, the same on every tower.

        Raises:
            ValueError: for another aggregation, or `SUM` of a mirrored value.
        """
        del destinations
        name = aggregation_name(aggregation)
        if is_per_replica(value):
            towers = value.per_tower()
            if name == "SUM":
                return jnp.sum(towers, axis=0)
            if name == "MEAN":
                return jnp.mean(towers, axis=0)
            return towers[0]
        if get_tower_context() is not None:
            if name == "SUM":
                return jax.lax.psum(value, TOWER_AXIS)
            if name == "MEAN":
                return jax.lax.pmean(value, TOWER_AXIS)
            return jax.lax.all_gather(value, TOWER_AXIS)[0]
        if name == "SUM" and self.num_towers > 1:
            raise ValueError(
                "reduce(SUM, value) needs one value per tower (a PerReplica from "
                "call_for_each_tower or distribute_dataset); received a single "
                f"value: {value!r}"
            )
        return value

    def batch_reduce(self, aggregation, value_destination_pairs):
        """`[reduce(aggregation, value, destinations) for each pair]`."""
        return [self.reduce(aggregation, v, d) for v, d in value_destination_pairs]

    def broadcast(self, tensor, destinations=None):
        """`tensor` copied to every device of the mesh (mirrored)."""
        del destinations
        if _tracing([tensor]):
            return tensor
        return jax.device_put(tensor, NamedSharding(self._mesh, PartitionSpec()))

    def unwrap(self, value):
        """The list of per-tower values of `value`; `[value]` for others."""
        if is_per_replica(value):
            return list(value.per_tower())
        return [value]

    def value_container(self, value):
        """The container of `value`: the value itself (values are global arrays)."""
        return value

    def read_var(self, tower_local_var):
        """The current value of a variable."""
        if isinstance(tower_local_var, keras.Variable):
            return tower_local_var.value
        return self.reduce(VariableAggregation.SUM, tower_local_var)

    def group(self, value, name=None):
        """Waits for the computations of `value`; returns its per-tower values."""
        del name
        return jax.block_until_ready(self.unwrap(value))

    def update(self, var, fn, *args, **kwargs):
        """Runs `fn(var, *args, **kwargs)` in the cross-tower context.

        Raises:
            RuntimeError: inside a tower (use `merge_call` to leave it).
            ValueError: if an argument is a `PerReplica` (reduce it first).
        """
        if get_tower_context() is not None:
            raise RuntimeError(
                "update() must be called in the cross-tower context: inside a tower, "
                "call it from a function given to get_tower_context().merge_call."
            )
        if any(is_per_replica(x) for x in jax.tree.leaves((args, kwargs), is_leaf=is_per_replica)):
            raise ValueError(
                "update() arguments may not be per-tower values (PerReplica); "
                "reduce them first, e.g. strategy.reduce(SUM, value)."
            )
        return fn(var, *args, **kwargs)

    def update_non_slot(self, colocate_with, fn, *args, **kwargs):
        """Runs `fn(*args, **kwargs)`; every device holds non-slot variables."""
        del colocate_with
        return self.update(None, lambda _, *a, **k: fn(*a, **k), *args, **kwargs)

    # ------------------------------------------------------------------
    # Input and loops.

    def distribute_dataset(self, dataset_fn):
        """Calls `dataset_fn()` and splits each of its batches over the towers.

        Args:
            dataset_fn: returns a `tf.data.Dataset` (or any iterable of
                batches) whose batch size divides by `num_towers`.

        Returns:
            A `DistributedDataset`: iterating it (or its
            `make_one_shot_iterator().get_next()`) gives batches whose arrays
            are `PerReplica` values.
        """
        check_callable("distribute_dataset", "dataset_fn", dataset_fn, "it returns the dataset")
        return DistributedDataset(self, dataset_fn())

    def run_steps_on_dataset(self, fn, iterator, iterations=1, initial_loop_values=None):
        """Runs `fn(context, *inputs)` on `iterations` batches as one compiled loop.

        The batches are read from `iterator` (of a `distribute_dataset`),
        stacked and sent to the devices once; the steps run in one
        `jax.lax.scan`. Variables created in `scope()` carry their values
        from step to step; `fn` updates them in the cross-tower context
        (`update`, `var.assign(...)`).

        Args:
            fn: `fn(context, *inputs)`, `context` a `MultiStepContext`;
                `inputs` the batch (a tuple batch is unpacked).
            iterator: an iterator of a `DistributedDataset`.
            iterations: steps to run, a positive int.
            initial_loop_values: kept for compatibility; unused.

        Returns:
            The `MultiStepContext`, with `last_step_outputs` of the last step.

        Raises:
            ValueError: if `iterations` is not a positive int or the input
                ends before `iterations` batches.
        """
        del initial_loop_values
        check_callable("run_steps_on_dataset", "fn", fn, "fn(context, *inputs) runs each step")
        if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or (
            iterations < 1
        ):
            raise ValueError(f"`iterations` must be a positive int. Received: {iterations!r}")
        batches = []
        for _ in range(iterations):
            batch = iterator.next_host_batch()
            if batch is None:
                raise ValueError(
                    f"The input ended after {len(batches)} batches; "
                    f"run_steps_on_dataset needs iterations={iterations}."
                )
            batches.append(batch)
        stacked = jax.tree.map(lambda *xs: np.stack(xs), *batches)
        sharding = NamedSharding(self._mesh, PartitionSpec(None, TOWER_AXIS))
        stacked = jax.device_put(stacked, jax.tree.map(lambda _: sharding, stacked))
        variables = [v for _, v in sorted(self.distribution.created.items())]
        key = (fn, iterations, tuple(id(v) for v in variables))
        traced = self._traced.setdefault(key, MultiStepContext())  # Filled while tracing.
        program = self._programs.get(
            key, functools.partial(self._step, fn, variables, traced), loop_lib.STACKED
        )
        values, outputs = program([v.value for v in variables], stacked, np.int32(iterations))
        for variable, value in zip(variables, values):
            variable.assign(value)
        context = MultiStepContext()
        context.non_tensor_outputs = dict(traced.non_tensor_outputs)
        context.last_step_outputs = jax.tree.map(lambda a: a[-1], outputs)
        return context

    def _step(self, fn, variables, context, values, batch):
        """One step of `run_steps_on_dataset`: `(values, batch) -> (values, outputs)`."""
        with _keras_internals.bound_values(variables, values):
            inputs = jax.tree.map(lambda a: PerReplica(a, False, self.num_towers), batch)
            fn(context, *(inputs if isinstance(inputs, tuple) else (inputs,)))
            new = _keras_internals.current_values(variables)
        outputs = {}
        for name, value in context.last_step_outputs.items():
            aggregation = context.aggregations.get(name)
            if aggregation is not None:
                value = self.reduce(aggregation, value)
            elif is_per_replica(value):
                value = value.per_tower()
            outputs[name] = value
        return new, outputs


def _is_array(x):
    return isinstance(x, (jax.Array, np.ndarray, np.generic))


def _tracing(values):
    return any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(values))
