"""TPUStrategy: towers on the device mesh (8 CPU devices)."""

import jax
import jax.numpy as jnp
import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte

SUM, MEAN, FIRST = (
    kte.VariableAggregation.SUM,
    kte.VariableAggregation.MEAN,
    kte.VariableAggregation.ONLY_FIRST_TOWER,
)


@pytest.fixture
def strategy():
    return kte.TPUStrategy(steps_per_run=4)


def _batches(count=4, rows=16):
    return [np.arange(rows, dtype="float32").reshape(rows, 1) + 100 * i for i in range(count)]


def test_properties_describe_the_mesh(strategy):
    assert strategy.num_towers == strategy.num_replicas_in_sync == 8
    assert strategy.num_hosts == 1
    assert strategy.num_towers_per_host == 8
    assert strategy.worker_devices == tuple(f"cpu:{i}" for i in range(8))
    assert strategy.parameter_devices == strategy.worker_devices
    assert not strategy.is_single_tower
    assert not strategy.between_graph
    assert strategy.should_checkpoint and strategy.should_init and strategy.should_save_summary


def test_num_cores_limits_the_towers():
    strategy = kte.TPUStrategy(num_cores=1)
    assert strategy.num_towers == 1 and strategy.is_single_tower


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_cores": 9}, r"`num_cores` must be an int from 1 to the number of devices \(8\)"),
        ({"num_cores": 0}, "`num_cores`"),
        ({"steps_per_run": 0}, "`steps_per_run` must be a positive int. Received: 0"),
        ({"steps_per_run": 2.5}, "`steps_per_run`"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        kte.TPUStrategy(**kwargs)


def test_scope_sets_the_keras_distribution(strategy):
    with strategy.scope():
        assert keras.distribution.distribution() is strategy.distribution
        variable = keras.Variable(np.zeros((4, 4)), name="w")
    assert keras.distribution.distribution() is None
    assert len(variable.value.sharding.device_set) == 8


def test_call_for_each_tower_gives_each_tower_its_rows(strategy):
    batch = next(iter(strategy.distribute_dataset(lambda: _batches(1))))
    sums = strategy.call_for_each_tower(lambda x: jnp.sum(x), batch)
    assert [float(v) for v in strategy.unwrap(sums)] == [1.0 + 4 * i for i in range(8)]


@pytest.mark.parametrize("aggregation, expected", [(SUM, 120.0), (MEAN, 15.0), (FIRST, 1.0)])
def test_reduce(strategy, aggregation, expected):
    batch = next(iter(strategy.distribute_dataset(lambda: _batches(1))))
    sums = strategy.call_for_each_tower(lambda x: jnp.sum(x), batch)
    assert float(strategy.reduce(aggregation, sums)) == expected


@pytest.mark.parametrize("aggregation", ["sum", "SUM", SUM])
def test_reduce_accepts_names(strategy, aggregation):
    value = strategy.call_for_each_tower(lambda: jnp.float32(1.0))
    assert float(strategy.reduce(aggregation, value)) == 8.0


def test_reduce_rejects_other_aggregations(strategy):
    value = strategy.call_for_each_tower(lambda: jnp.float32(1.0))
    with pytest.raises(ValueError, match=r"`aggregation` must be one of .*Received: 'NONE'"):
        strategy.reduce(kte.VariableAggregation.NONE, value)


def test_batch_reduce(strategy):
    value = strategy.call_for_each_tower(lambda: jnp.float32(2.0))
    assert [float(v) for v in strategy.batch_reduce(SUM, [(value, None), (value, None)])] == [16, 16]


def test_all_reduce_inside_a_tower(strategy):
    def fn():
        context = kte.get_tower_context()
        return context.all_reduce(SUM, context.tower_id.astype("float32"))

    assert [float(v) for v in strategy.unwrap(strategy.call_for_each_tower(fn))] == [28.0] * 8


def test_merge_call_sees_every_towers_value(strategy):
    def merge_fn(distribution, three_plus_tower_id):
        return sum(distribution.unwrap(three_plus_tower_id))

    def fn(three):
        context = kte.get_tower_context()
        value = three + context.tower_id
        return context.merge_call(merge_fn, value) + value

    results = strategy.unwrap(strategy.call_for_each_tower(fn, 3))
    assert [int(r) for r in results] == [52 + 3 + i for i in range(8)]


def test_run_takes_args_and_kwargs(strategy):
    out = strategy.run(lambda a, b: a * b, args=(jnp.float32(2.0),), kwargs={"b": 3.0})
    assert [float(v) for v in strategy.unwrap(out)] == [6.0] * 8


def test_worker_device_index_gives_each_tower_its_index(strategy):
    out = strategy.call_for_each_tower(lambda i: i * 10, strategy.worker_device_index)
    assert [int(v) for v in strategy.unwrap(out)] == [10 * i for i in range(8)]


def test_towers_run_as_one_program_not_threads(strategy):
    traces = []

    def fn(x):
        traces.append(type(x).__name__)
        return jnp.sum(x)

    batch = next(iter(strategy.distribute_dataset(lambda: _batches(1))))
    strategy.call_for_each_tower(fn, batch)
    assert len(traces) == 1  # Traced once, run on all 8 towers.


def test_broadcast_mirrors_a_value(strategy):
    mirrored = strategy.broadcast(np.ones(3, "float32"))
    assert len(mirrored.sharding.device_set) == 8 and mirrored.sharding.is_fully_replicated


def test_unwrap_and_value_container(strategy):
    variable = keras.Variable(1.0)
    assert strategy.unwrap(variable) == [variable]
    assert strategy.value_container(variable) is variable
    assert float(strategy.read_var(variable)) == 1.0


def test_group_waits_for_the_values(strategy):
    value = strategy.call_for_each_tower(lambda: jnp.float32(1.0))
    assert len(strategy.group(value)) == 8


def test_distribute_dataset_needs_batches_that_split(strategy):
    with pytest.raises(ValueError, match=r"divisible by the number of towers \(8\)"):
        next(iter(strategy.distribute_dataset(lambda: _batches(1, rows=12))))


def test_get_next_returns_batches_then_stops(strategy):
    iterator = strategy.distribute_dataset(lambda: _batches(2)).make_one_shot_iterator()
    iterator.get_next()
    iterator.get_next()
    with pytest.raises(StopIteration):
        iterator.get_next()


def test_update_runs_in_the_cross_tower_context(strategy):
    with strategy.scope():
        variable = keras.Variable(1.0)
        strategy.update(variable, lambda v, d: v.assign(v + d), 2.0)
        strategy.update_non_slot(strategy.non_slot_devices([variable]), lambda: variable.assign(5.0))
    assert float(variable.value) == 5.0


def test_update_refuses_per_tower_values(strategy):
    value = strategy.call_for_each_tower(lambda: jnp.float32(1.0))
    with pytest.raises(ValueError, match="reduce them first"):
        strategy.update(keras.Variable(0.0), lambda v, d: v.assign(d), value)


def test_update_inside_a_tower_is_an_error(strategy):
    variable = keras.Variable(0.0)
    with pytest.raises(RuntimeError, match="cross-tower context"):
        strategy.call_for_each_tower(lambda: strategy.update(variable, lambda v: v))


def test_colocate_vars_with_needs_the_scope(strategy):
    with pytest.raises(RuntimeError, match="inside strategy.scope"):
        strategy.colocate_vars_with(None)
    with strategy.scope(), strategy.colocate_vars_with(None):
        pass


def test_run_steps_on_dataset_runs_the_steps_as_one_loop(strategy):
    traces = []
    with strategy.scope():
        total = keras.Variable(0.0, name="total")
        iterator = strategy.distribute_dataset(lambda: _batches(4)).make_one_shot_iterator()

        def step(context, x):
            traces.append(1)
            sums = strategy.call_for_each_tower(lambda x: jnp.sum(x), x)
            strategy.update(total, lambda v, s: v.assign(v + s), strategy.reduce(SUM, sums))
            context.set_last_step_output("batch_sum", sums, aggregation=SUM)
            context.set_non_tensor_output("note", "ok")

        context = strategy.run_steps_on_dataset(step, iterator, iterations=3)
    expected = [float(b.sum()) for b in _batches(4)]
    assert float(total.value) == sum(expected[:3])
    assert float(context.last_step_outputs["batch_sum"]) == expected[2]
    assert context.non_tensor_outputs == {"note": "ok"}
    assert len(traces) == 1


def test_run_steps_on_dataset_reports_a_short_input(strategy):
    iterator = strategy.distribute_dataset(lambda: _batches(2)).make_one_shot_iterator()
    with pytest.raises(ValueError, match="ended after 2 batches.*iterations=3"):
        strategy.run_steps_on_dataset(lambda context, x: None, iterator, iterations=3)


def test_steps_per_run_becomes_steps_per_execution(strategy):
    def model_fn(features, labels, mode):
        loss = keras.ops.mean(features)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1))

    with strategy.scope():
        model = kte.EstimatorModel(model_fn)
        model.compile()
    assert model.steps_per_execution == 4


def test_initialize_configure_and_finalize_are_accepted(strategy):
    strategy.configure(session_config=None)
    assert strategy.initialize() is None
    assert strategy.finalize() is None
    assert strategy.get_host_cpu_device(0).endswith("CPU:0")


def test_tower_context_is_none_outside_towers():
    assert kte.get_tower_context() is None
    assert kte.get_replica_context is kte.get_tower_context
    assert jax.device_count() == 8
