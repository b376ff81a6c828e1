"""The engine's pieces, tested directly: jit a step and check it."""

import jax
import jax.numpy as jnp
import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.engine import feed as feed_lib
from keras_tpu_estimator.engine import logs as logs_lib
from keras_tpu_estimator.engine import loop as loop_lib
from keras_tpu_estimator.engine.parts import ModelParts
from keras_tpu_estimator.engine import program as program_lib
from keras_tpu_estimator.engine import state as state_lib
from keras_tpu_estimator.engine import steps as steps_lib
from keras_tpu_estimator.inputs import sources

from compile_counter import CompileCounter

TRAIN, EVAL, PREDICT = kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL, kte.ModeKeys.PREDICT


def linear_fn(features, labels, mode, params):
    outputs = kte.get_or_create_layer("out", lambda: keras.layers.Dense(1))(features)
    if mode == PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions=outputs)
    loss = keras.ops.mean(keras.ops.square(outputs[:, 0] - labels))
    if mode == EVAL:
        return kte.TPUEstimatorSpec(
            mode, loss=loss, eval_metrics=(lambda o: {"mean_out": keras.ops.mean(o)}, [outputs])
        )
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1))


def batch(n=4):
    x = np.arange(n * 2, dtype="float32").reshape(n, 2) / 10
    return x, x.sum(axis=1)


def program_of(model_fn=linear_fn):
    return program_lib.ModelFnProgram(model_fn, {}, kte.RunConfig(), use_tpu=False)


def built(mode, model_fn=linear_fn):
    """A program and its parts, built for `mode`."""
    program = program_of(model_fn)
    parts = ModelParts(program, keras.distribution.DataParallel(devices=jax.devices()[:1]))
    parts.build(mode, batch() if mode != PREDICT else (batch()[0], None))
    return program, parts


def test_building_train_reads_the_keras_optimizer_and_trained_variables():
    result = program_of().build(store_lib.VariableStore(), TRAIN, batch(), "int32")
    assert isinstance(result.training.optimizer, keras.optimizers.SGD)
    assert not result.training.by_assignment
    assert result.metrics == {} and not result.hooks


def test_building_eval_creates_one_metric_per_metric_value():
    result = program_of().build(store_lib.VariableStore(), EVAL, batch(), "int32")
    assert list(result.metrics) == ["mean_out"]
    assert isinstance(result.metrics["mean_out"], keras.metrics.Mean)


def test_building_a_mode_twice_does_nothing():
    _, parts = built(TRAIN)
    variables = list(parts.store.variables)
    assert not parts.build(TRAIN, batch())
    assert parts.store.variables == variables


def test_training_binds_the_global_step_to_the_optimizer():
    _, parts = built(TRAIN)
    assert parts.global_step.variable is parts.optimizer.iterations


def test_building_a_spec_without_optimizer_needs_a_compiled_one():
    def no_optimizer(features, labels, mode):
        out = kte.get_or_create_layer("out", lambda: keras.layers.Dense(1))(features)
        return kte.TPUEstimatorSpec(mode, loss=keras.ops.mean(out))

    with pytest.raises(ValueError, match="train_op=None"):
        built(TRAIN, no_optimizer)


def test_the_train_step_is_pure_and_matches_a_hand_written_sgd_step():
    program, parts = built(TRAIN)
    steps = steps_lib.Steps(program, parts)
    before = state_lib.read(parts.variables(TRAIN))
    state, outputs = jax.jit(steps.train)(before, batch())
    kernel, bias = before.trainable
    x, y = batch()

    def loss(kernel, bias):
        return jnp.mean(jnp.square((x @ kernel + bias)[:, 0] - y))

    grads = jax.grad(loss, argnums=(0, 1))(kernel, bias)
    np.testing.assert_allclose(state.trainable[0], kernel - 0.1 * grads[0], rtol=1e-6)
    np.testing.assert_allclose(outputs["loss"], loss(kernel, bias), rtol=1e-6)
    # Nothing was assigned: the variables still hold the values before the step.
    np.testing.assert_array_equal(parts.store.trainable_variables[0].value, kernel)


def test_the_eval_step_accumulates_the_loss_and_metrics():
    program, parts = built(EVAL)
    steps = steps_lib.Steps(program, parts)
    variables = parts.variables(EVAL)
    state = state_lib.read(variables)
    for _ in range(2):
        state, _ = jax.jit(steps.evaluate)(state, batch())
    state_lib.write(variables, state)
    assert parts.metrics["loss"].count.value == 8  # Weighted by the batch size.


def test_the_predict_step_outputs_the_predictions_and_keeps_the_state():
    program, parts = built(PREDICT)
    steps = steps_lib.Steps(program, parts)
    state = state_lib.read(parts.variables(PREDICT))
    new_state, outputs = jax.jit(steps.predict)(state, (batch()[0], None))
    assert outputs[steps_lib.PREDICTIONS].shape == (4, 1)
    assert new_state is state or jax.tree.all(jax.tree.map(np.array_equal, new_state, state))


def test_a_stacked_loop_is_one_scan():
    def step(total, x):
        return total + x.sum(), x.sum()

    program = loop_lib.loop_program(step, loop_lib.STACKED)
    text = jax.jit(program).lower(jnp.zeros(()), jnp.ones((5, 3)), 5).as_text()
    assert text.count("stablehlo.while") == 1
    total, per_step = program(jnp.zeros(()), jnp.ones((5, 3)), 5)
    assert float(total) == 15 and per_step.shape == (5,)


def test_a_loop_skips_its_steps_from_count_on():
    def step(total, x):
        return total + x.sum(), x.sum()

    program = jax.jit(loop_lib.loop_program(step, loop_lib.STACKED))
    total, per_step = program(jnp.zeros(()), jnp.ones((5, 3)), np.int32(2))
    assert float(total) == 6
    np.testing.assert_array_equal(per_step, [3.0, 3.0, 0.0, 0.0, 0.0])


def test_a_loop_branches_in_none_of_its_steps():
    def step(total, x):
        return total + x.sum(), x.sum()

    program = loop_lib.loop_program(step, loop_lib.STACKED)
    text = jax.jit(program).lower(jnp.zeros(()), jnp.ones((5, 3)), 5).as_text()
    assert "stablehlo.case" not in text and "stablehlo.if" not in text


def test_a_count_past_the_chunk_runs_the_whole_chunk():
    def step(total, x):
        return total + x.sum(), x.sum()

    program = jax.jit(loop_lib.loop_program(step, loop_lib.STACKED))
    total, per_step = program(jnp.zeros(()), jnp.ones((5, 3)), np.int32(9))
    assert float(total) == 15 and per_step.shape == (5,)


def test_a_loop_traces_its_step_once():
    traces = []

    def step(total, x):
        traces.append(1)
        return total + x.sum(), x.sum()

    jax.jit(loop_lib.loop_program(step, loop_lib.STACKED))(jnp.zeros(()), jnp.ones((5, 3)), 5)
    assert len(traces) == 1


def test_an_indexed_loop_gathers_each_steps_rows():
    def step(total, rows):
        return total + rows.sum(), rows.sum()

    program = loop_lib.loop_program(step, loop_lib.INDEXED, gather=lambda data, rows: data[rows])
    data = jnp.arange(6.0)
    total, per_step = program(jnp.zeros(()), data, jnp.array([[0, 1], [4, 5]]), 2)
    np.testing.assert_array_equal(per_step, [1.0, 9.0])


def test_loop_programs_compile_once_per_key():
    traces = []

    def step(state, x):
        traces.append(1)
        return state, x

    programs = loop_lib.LoopPrograms()
    for _ in range(3):
        programs.get("k", step, loop_lib.STACKED)(jnp.zeros(()), jnp.ones((2,)), 2)
    assert len(traces) == 1


def conv_fn(size):
    """A model_fn convolving `size` x `size` images: XLA convolves 6 x 6, TensorFlow 10 x 10."""
    def model_fn(features, labels, mode, params):
        images = keras.ops.reshape(features, (-1, 1, 1, 2)) * keras.ops.ones((1, size, size, 2))
        conv = kte.get_or_create_layer("conv", lambda: keras.layers.Conv2D(3, 3, padding="same"))
        outputs = keras.ops.mean(conv(images), axis=(1, 2, 3))
        loss = keras.ops.mean(keras.ops.square(outputs - labels))
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1))

    return model_fn


@pytest.mark.parametrize("model_fn, expected", [
    (linear_fn, False), (conv_fn(6), True), (conv_fn(10), False),
], ids=["dense", "xla_convolution", "tensorflow_convolution"])
def test_a_build_records_whether_the_model_holds_an_xla_convolution(model_fn, expected):
    _, parts = built(TRAIN, model_fn)
    assert parts.xla_convolutions == {TRAIN: expected}


def test_the_loop_kind_of_a_mode_built_without_xla_convolutions_traces_no_step(monkeypatch):
    program, parts = built(TRAIN)
    runner = loop_lib.LoopRunner(steps_lib.Steps(program, parts), parts, None,
                                 parts.distribution)
    monkeypatch.setattr(jax, "make_jaxpr", lambda *a, **k: pytest.fail("the step was traced"))
    assert runner.loop_kind(TRAIN, chunk=None) == loop_lib.SCAN  # The build answered.


def test_an_unknown_loop_kind_is_refused():
    with pytest.raises(ValueError, match="`kind` must be one of"):
        loop_lib.loop_program(lambda s, b: (s, b), "unrolled")


@pytest.mark.parametrize(
    "steps, align_to, global_step, expected",
    [(100, None, 50, 100), (300, 1000, 900, 100), (300, 1000, 0, 300), (5, 3, 7, 2)],
)
def test_loops_end_on_multiples_of_align_to(steps, align_to, global_step, expected):
    schedule = loop_lib.LoopSchedule()
    schedule.align_to = align_to
    assert schedule.length(steps, global_step) == expected


def test_a_time_based_schedule_is_sized_from_the_second_loop():
    schedule = loop_lib.LoopSchedule(seconds=1.0)
    assert schedule.record(10, 5.0) is None  # The first loop compiles.
    assert schedule.record(10, 0.1) == 100
    assert schedule.record(10, 0.1) is None  # Sized once.


def test_the_global_step_carries_its_value_to_the_variable_it_binds():
    step = state_lib.GlobalStep()
    step.assign(7)
    counter = keras.Variable(0, dtype="int32", trainable=False)
    step.bind(counter)
    assert int(counter.value) == 7
    step.assign(9)
    assert int(counter.value) == 9 and int(step.value) == 9


@pytest.mark.parametrize(
    "logs, expected",
    [
        ({"loss": 1.0, "loop_first_step": 8, "loop_losses": np.array([1.0, 2.0])}, (8, [1.0, 2.0])),
        ({"loop_first_step": 8.0, "loop_losses": 3.0}, (8, [3.0])),  # As Keras floats them.
        ({"loss": 1.0}, None),
        (None, None),
    ],
)
def test_loop_of_reads_the_loop_from_logs(logs, expected):
    loop = logs_lib.loop_of(logs)
    if expected is None:
        assert loop is None
    else:
        assert loop[0] == expected[0] and list(loop[1]) == expected[1]


def conv_fn(features, labels, mode, params):
    x = kte.get_or_create_layer("conv", lambda: keras.layers.Conv2D(2, 3))(features)
    logits = kte.get_or_create_layer("out", lambda: keras.layers.Dense(1))(
        keras.ops.reshape(x, (x.shape[0], -1)))
    loss = keras.ops.mean(keras.ops.square(logits[:, 0] - labels))
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.01))


def fit_model(model_fn, x, y, loop=4, **kwargs):
    config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=loop))
    model = kte.EstimatorModel(model_fn, config=config, train_batch_size=8, **kwargs)
    model.compile()
    model.fit((x, y), verbose=0)
    return model


def dense_data(n=8 * 8):
    x = np.random.default_rng(0).normal(size=(n, 2)).astype("float32")
    return x, x.sum(axis=1)


def image_data(n=8 * 6):
    x = np.random.default_rng(0).normal(size=(n, 5, 5, 1)).astype("float32")
    return x, x.mean(axis=(1, 2, 3))


@pytest.mark.parametrize("device_loop", ["scan", "host"])
def test_a_loop_fed_by_a_loops_outputs_does_not_recompile(device_loop):
    x, y = dense_data(8 * 8)
    config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=4))
    model = kte.EstimatorModel(linear_fn, config=config, train_batch_size=8,
                               device_loop=device_loop)
    model.compile()
    model.fit((x, y), steps_per_epoch=4, verbose=0)  # One loop: compiles it.
    with CompileCounter() as compiles:
        model.fit((x, y), verbose=0)  # Two loops, the state from a loop's outputs.
    assert compiles.count == 0


def test_short_and_checkpoint_cut_loops_run_through_the_compiled_program():
    x, y = dense_data(8 * 8)
    config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=4))
    model = kte.EstimatorModel(linear_fn, config=config, train_batch_size=8,
                               eval_batch_size=8, device_loop="scan")
    model.compile()
    model.fit((x, y), steps_per_epoch=4, verbose=0)  # Compiles the 4-step loop.
    model.evaluate((x, y), steps=4, verbose=0)
    with CompileCounter() as compiles:
        model.fit((x, y), steps_per_epoch=7, verbose=0)  # Loops of 4 and 3.
        model.align_loops_to = 6  # From step 11: loops of 1, 4, 2 and 1.
        model.fit((x, y), steps_per_epoch=8, verbose=0)
        model.evaluate((x, y), steps=7, verbose=0)  # Loops of 4 and 3.
    assert compiles.count == 0
    assert model.global_step == 19


def test_a_padded_loop_trains_as_its_steps_alone():
    x, y = dense_data(8 * 8)
    keras.utils.set_random_seed(1)
    padded = fit_model(linear_fn, x[:56], y[:56], loop=4, device_loop="scan")  # 4 + 3 (of 4).
    keras.utils.set_random_seed(1)
    whole = fit_model(linear_fn, x[:56], y[:56], loop=7, device_loop="scan")
    for a, b in zip(padded.store.variables, whole.store.variables):
        np.testing.assert_allclose(a.value, b.value, rtol=1e-6)


def test_a_host_loop_compiles_one_step_for_loops_of_any_length():
    with CompileCounter() as compiles:
        fit_model(linear_fn, *dense_data(8 * 7), loop=3, device_loop="host")  # Loops 3, 3, 1.
    model_compiles = compiles.count
    with CompileCounter() as compiles:
        fit_model(linear_fn, *dense_data(8 * 5), loop=3, device_loop="host")  # Loops 3, 2.
    assert compiles.count <= model_compiles


@pytest.mark.parametrize(
    "model_fn, data, expected",
    [(conv_fn, image_data, loop_lib.HOST), (linear_fn, dense_data, loop_lib.SCAN)],
)
def test_auto_runs_convolutional_models_on_a_cpu_host_loop(model_fn, data, expected):
    model = fit_model(model_fn, *data())
    assert model._runner.loop_kind(TRAIN, None) == expected


def test_host_and_scan_loops_train_alike():
    x, y = image_data()
    keras.utils.set_random_seed(1)
    host = fit_model(conv_fn, x, y, device_loop="host")
    keras.utils.set_random_seed(1)
    scan = fit_model(conv_fn, x, y, device_loop="scan")
    for a, b in zip(host.store.variables, scan.store.variables):
        np.testing.assert_allclose(a.value, b.value, rtol=1e-4, atol=1e-5)


def test_an_unknown_device_loop_is_refused():
    with pytest.raises(ValueError, match="`device_loop` must be one of"):
        kte.EstimatorModel(linear_fn, device_loop="unrolled")


@pytest.mark.parametrize(
    "examples_read, resident", [(None, True), (96, False), (191, False), (192, True)],
    ids=["unknown", "one-pass", "under-two-passes", "two-passes"],
)
def test_cpu_devices_keep_training_arrays_resident_only_when_read_twice(examples_read, resident):
    feed = feed_lib.Feed(keras.distribution.DataParallel(devices=jax.devices()), None,
                         max_loop_bytes=1 << 30, max_resident_bytes=1 << 20)
    source = sources.ArraySource((np.zeros((96, 2), "float32"), np.zeros(96, "float32")))
    assert (feed.resident(source, examples_read) is not None) == resident


def test_arrays_over_max_resident_bytes_are_never_resident():
    feed = feed_lib.Feed(keras.distribution.DataParallel(devices=jax.devices()), None,
                         max_loop_bytes=1 << 30, max_resident_bytes=100)
    source = sources.ArraySource((np.zeros((96, 2), "float32"), np.zeros(96, "float32")))
    assert feed.resident(source, 10 * 96) is None
