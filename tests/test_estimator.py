"""TPUEstimator: the estimator API, model_dir checkpoints, hooks, summaries."""

import logging
import os
import signal
import subprocess
import sys
import textwrap
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
from keras_tpu_estimator import summary

from model_fns import DIM
from model_fns import estimator_config
from model_fns import input_fn_of
from model_fns import linear_data
from model_fns import regression_fn


def make_estimator(model_dir, save_every=5, keep=5, loop=2, tf_random_seed=None, **kwargs):
    config = estimator_config(
        model_dir, save_every, loop, keep_checkpoint_max=keep, tf_random_seed=tf_random_seed
    )
    kwargs.setdefault("params", {"lr": 0.05})
    for name in ("train_batch_size", "eval_batch_size", "predict_batch_size"):
        kwargs.setdefault(name, 16)
    return kte.TPUEstimator(model_fn=kwargs.pop("model_fn", regression_fn), config=config, **kwargs)


def checkpoint_steps(estimator):
    """The steps of the complete checkpoints in the estimator's model_dir."""
    with kte.checkpoint.CheckpointDirectory(estimator.model_dir) as checkpoints:
        return checkpoints.all_steps()


def checkpoint_dir(estimator, step):
    """The prefix of the checkpoint of `step` in the estimator's model_dir."""
    return os.path.join(estimator.model_dir, f"model.ckpt-{step}")


@pytest.fixture
def trained(tmp_path):
    x, y = linear_data()
    estimator = make_estimator(tmp_path / "model")
    estimator.train(input_fn_of(x, y, repeat=True), max_steps=10)
    return estimator


# -- 1. Constructor rules. ----------------------------------------------------


def test_config_is_required():
    with pytest.raises(ValueError, match="`config` must be provided"):
        kte.TPUEstimator(model_fn=regression_fn, train_batch_size=16)


def test_model_dir_and_config_model_dir_must_agree(tmp_path):
    config = kte.RunConfig(model_dir=str(tmp_path / "a"))
    with pytest.raises(ValueError, match="different values"):
        kte.TPUEstimator(model_fn=regression_fn, model_dir=str(tmp_path / "b"), config=config,
                         train_batch_size=16)


def test_model_dir_from_constructor_goes_into_the_config(tmp_path):
    estimator = kte.TPUEstimator(model_fn=regression_fn, model_dir=str(tmp_path),
                                 config=kte.RunConfig(), train_batch_size=16)
    assert estimator.model_dir == estimator.config.model_dir == str(tmp_path)


def test_temporary_model_dir_when_none_is_given():
    estimator = kte.TPUEstimator(
        model_fn=regression_fn, config=kte.RunConfig(), train_batch_size=16
    )
    assert os.path.isdir(estimator.model_dir)


def test_train_batch_size_is_required_with_use_tpu(tmp_path):
    with pytest.raises(ValueError, match="`train_batch_size` cannot be `None`"):
        kte.TPUEstimator(model_fn=regression_fn, config=kte.RunConfig(model_dir=str(tmp_path)))


def test_reserved_params_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="reserved keys"):
        make_estimator(tmp_path, params={"batch_size": 3})


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"embedding_config_spec": object()}, "embedding_config_spec"),
        ({"batch_axis": (3, 0)}, "batch_axis"),
        ({"export_saved_model_api_version": 3}, "export_saved_model_api_version"),
        ({"train_batch_size": 12}, r"\(12\) must be divisible .* \(8\)"),
    ],
)
def test_arguments_this_runtime_cannot_honour_fail_clearly(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_estimator(tmp_path, **kwargs)


def test_use_tpu_false_runs_on_one_host_cpu_with_batch_sizes_unmodified(tmp_path):
    calls = []
    x, y = linear_data()
    estimator = make_estimator(tmp_path, use_tpu=False, train_batch_size=12)
    estimator.train(input_fn_of(x, y, repeat=True, calls=calls), steps=2)
    model = estimator._model(kte.ModeKeys.TRAIN)
    assert calls == [12]
    assert model.num_replicas == 1
    assert model.distribution.device_mesh.devices.flatten().tolist() == ["cpu:0"]


def test_eval_on_tpu_false_evaluates_on_the_host_cpu(tmp_path):
    x, y = linear_data()
    estimator = make_estimator(tmp_path, eval_on_tpu=False)
    estimator.train(input_fn_of(x, y, repeat=True), steps=4)
    results = estimator.evaluate(input_fn_of(x, y))
    assert estimator._model(kte.ModeKeys.EVAL).num_replicas == 1
    assert results["global_step"] == 4


# -- 2. train. ----------------------------------------------------------------


def test_steps_adds_and_max_steps_is_absolute(tmp_path):
    x, y = linear_data()
    estimator = make_estimator(tmp_path)
    estimator.train(input_fn_of(x, y, repeat=True), steps=3)
    estimator.train(input_fn_of(x, y, repeat=True), steps=3)
    assert estimator.get_variable_value("global_step") == 6
    estimator.train(input_fn_of(x, y, repeat=True), max_steps=9)
    assert estimator.get_variable_value("global_step") == 9


def test_train_returns_the_estimator(tmp_path):
    x, y = linear_data()
    estimator = make_estimator(tmp_path)
    assert estimator.train(input_fn_of(x, y, repeat=True), steps=1) is estimator


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"steps": 1, "max_steps": 2}, "Can not provide both steps and max_steps"),
        ({"steps": 0}, "steps > 0"),
        ({"max_steps": -1}, "max_steps > 0"),
    ],
)
def test_bad_train_steps_are_rejected(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_estimator(tmp_path).train(input_fn_of(*linear_data()), **kwargs)


def test_max_steps_reached_returns_without_calling_input_fn(trained):
    calls = []
    trained.train(input_fn_of(*linear_data(), repeat=True, calls=calls), max_steps=10)
    trained.train(input_fn_of(*linear_data(), repeat=True, calls=calls), max_steps=5)
    assert calls == []


def test_no_steps_trains_until_the_input_ends(tmp_path):
    estimator = make_estimator(tmp_path)
    estimator.train(input_fn_of(*linear_data(n=64)))
    assert estimator.get_variable_value("global_step") == 4


def test_endless_input_without_steps_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="give `steps` or `max_steps`"):
        make_estimator(tmp_path).train(input_fn_of(*linear_data(), repeat=True))


def test_without_checkpoints_training_continues_in_memory(tmp_path, trained):
    config = kte.RunConfig(model_dir=str(tmp_path / "no_ckpt"), save_checkpoints_steps=None,
                           save_checkpoints_secs=None, log_step_count_steps=None,
                           tpu_config=kte.TPUConfig(iterations_per_loop=2))
    estimator = kte.TPUEstimator(model_fn=regression_fn, config=config, params={"lr": 0.05},
                                 train_batch_size=16, warm_start_from=trained.model_dir)
    calls = []
    estimator.train(input_fn_of(*linear_data(), repeat=True, calls=calls), max_steps=4)
    model = estimator._model(kte.ModeKeys.TRAIN)
    kernel = np.array(model.store.variables_by_name()["dense/kernel"].value)
    estimator.train(input_fn_of(*linear_data(), repeat=True, calls=calls), max_steps=4)
    assert len(calls) == 1  # Already at step 4: nothing runs.
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=6)
    assert model.global_step == 6
    assert not np.allclose(model.store.variables_by_name()["dense/kernel"].value, kernel)
    assert estimator.latest_checkpoint() is None


def test_checkpoints_at_start_every_n_steps_and_at_the_end(tmp_path):
    estimator = make_estimator(tmp_path, save_every=4, keep=None, loop=3)
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=10)
    assert checkpoint_steps(estimator) == [0, 4, 8, 10]


def test_keep_checkpoint_max(tmp_path):
    estimator = make_estimator(tmp_path, save_every=2, keep=2)
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=10)
    assert checkpoint_steps(estimator) == [8, 10]


def test_a_new_estimator_resumes_weights_optimizer_and_step(tmp_path):
    x, y = linear_data(n=16)  # One batch: every step sees the same data, resumed or not.
    keras.utils.set_random_seed(0)  # The same initial weights for both.
    once = make_estimator(tmp_path / "once")
    once.train(input_fn_of(x, y, repeat=True), max_steps=10)
    keras.utils.set_random_seed(0)
    make_estimator(tmp_path / "twice").train(input_fn_of(x, y, repeat=True), max_steps=6)
    twice = make_estimator(tmp_path / "twice")
    twice.train(input_fn_of(x, y, repeat=True), max_steps=10)
    for name in once.get_variable_names():
        np.testing.assert_allclose(
            twice.get_variable_value(name), once.get_variable_value(name), rtol=1e-5, atol=1e-6
        )


def _shuffled_input_fn(x, y):
    def input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).shuffle(len(x)).repeat()
        return dataset.batch(params["batch_size"], drop_remainder=True)

    return input_fn


@pytest.mark.parametrize("seeds, same", [((7, 7), True), ((7, 8), False)])
def test_tf_random_seed_makes_training_repeat(tmp_path, seeds, same):
    x, y = linear_data(n=64)
    kernels = []
    for i, seed in enumerate(seeds):
        keras.utils.set_random_seed(100 + i)  # whatever ran before does not matter
        estimator = make_estimator(tmp_path / str(i), tf_random_seed=seed)
        estimator.train(_shuffled_input_fn(x, y), max_steps=6)
        kernels.append(estimator.get_variable_value(estimator.get_variable_names()[0]))
    assert np.array_equal(kernels[0], kernels[1]) == same


KILLED_RUN = textwrap.dedent(
    """
    import os, sys, time
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    sys.path.insert(0, {tests!r})
    import keras
    import test_estimator as t

    class SlowDown(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if self.model.global_step >= 14:
                open({marker!r}, "w").close()
                time.sleep(60)

    keras.utils.set_random_seed(0)
    estimator = t.make_estimator({model_dir!r}, train_batch_size=8, predict_batch_size=8,
                                 eval_batch_size=8)
    estimator.train(t.input_fn_of(*t.constant_batch(), repeat=True), max_steps=20,
                    hooks=[SlowDown()])
    """
)


def constant_batch():
    x, y = linear_data(n=8)
    return x, y


def test_a_killed_run_resumes_from_its_last_complete_checkpoint(tmp_path):
    marker = tmp_path / "reached"
    killed_dir = tmp_path / "killed"
    script = tmp_path / "run.py"
    script.write_text(KILLED_RUN.format(
        tests=os.path.dirname(__file__), marker=str(marker), model_dir=str(killed_dir)
    ))
    env = dict(os.environ, KERAS_BACKEND="jax")
    process = subprocess.Popen([sys.executable, str(script)], env=env)
    try:
        deadline = time.time() + 120
        while not marker.exists():
            assert process.poll() is None, "the training process ended early"
            assert time.time() < deadline, "the training process never reached step 14"
            time.sleep(0.2)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    resumed = make_estimator(killed_dir, train_batch_size=8)
    assert checkpoint_steps(resumed)[-1] == 10
    resumed.train(input_fn_of(*constant_batch(), repeat=True), max_steps=20)
    keras.utils.set_random_seed(0)
    straight = make_estimator(tmp_path / "straight", train_batch_size=8)
    straight.train(input_fn_of(*constant_batch(), repeat=True), max_steps=20)
    for name in straight.get_variable_names():
        np.testing.assert_allclose(
            resumed.get_variable_value(name), straight.get_variable_value(name), rtol=1e-5, atol=1e-6
        )


# -- 3. evaluate. -------------------------------------------------------------


def test_evaluate_returns_loss_global_step_and_metrics(trained):
    results = trained.evaluate(input_fn_of(*linear_data()))
    assert set(results) == {"loss", "mae", "global_step"}
    assert results["global_step"] == 10


def test_evaluate_counts_a_short_last_batch_once(trained):
    x, y = linear_data(n=50)
    predictions = np.array([p["y"] for p in trained.predict(input_fn_of(x))])
    results = trained.evaluate(input_fn_of(x, y))
    np.testing.assert_allclose(results["mae"], np.mean(np.abs(predictions - y)), rtol=1e-5)
    np.testing.assert_allclose(results["loss"], np.mean((predictions - y) ** 2), rtol=1e-5)


def test_evaluate_steps_stops_early(trained):
    x, y = linear_data(n=64)
    one = trained.evaluate(input_fn_of(x[:16], y[:16]))
    assert trained.evaluate(input_fn_of(x, y), steps=1) == pytest.approx(one)


def test_evaluate_a_given_checkpoint(trained):
    first = checkpoint_dir(trained, checkpoint_steps(trained)[0])
    assert trained.evaluate(input_fn_of(*linear_data()), checkpoint_path=first)["global_step"] == 0


@pytest.mark.parametrize("form", ["prefix", "model_dir"])
def test_evaluate_takes_a_prefix_or_a_model_dir(trained, form):
    step = checkpoint_steps(trained)[0 if form == "prefix" else -1]
    path = checkpoint_dir(trained, step) if form == "prefix" else trained.model_dir
    assert trained.evaluate(input_fn_of(*linear_data()), checkpoint_path=path)["global_step"] == step


@pytest.mark.parametrize("method", ["evaluate", "predict"])
@pytest.mark.parametrize("name", ["model.ckpt-3", "3", "model.ckpt", "eval"])
def test_a_checkpoint_path_naming_no_checkpoint_is_a_clear_error(trained, method, name):
    path = os.path.join(trained.model_dir, name)
    with pytest.raises(ValueError) as error:
        list(getattr(trained, method)(input_fn_of(*linear_data()), checkpoint_path=path))
    message = str(error.value)
    assert f"checkpoint_path={path!r}" in message
    assert "`<model_dir>/model.ckpt-<step>` (with its `.index` file)" in message


def test_an_evaluation_job_follows_checkpoints_as_resnet_main_does(trained):
    import keras_tpu_estimator.compat.v1 as tf1

    seen = []
    for ckpt in tf1.train.checkpoints_iterator(trained.model_dir, timeout=0):
        results = trained.evaluate(input_fn_of(*linear_data()), steps=1, checkpoint_path=ckpt)
        current_step = int(os.path.basename(ckpt).split("-")[1])
        seen.append((current_step, results["global_step"]))
        if current_step >= 10:
            break
    assert seen == [(10, 10)]


def test_evaluate_model_fn_sees_the_checkpoint_global_step(trained):
    def step_reporting_model_fn(features, labels, mode, params):
        spec = regression_fn(features, labels, mode, params)
        if mode != kte.ModeKeys.EVAL:
            return spec
        step = keras.ops.cast(kte.get_global_step(), "float32") * keras.ops.ones_like(labels)
        return spec._replace(
            eval_metrics=(lambda step: {"seen_step": kte.metrics.mean(step)}, [step])
        )

    estimator = make_estimator(trained.model_dir, model_fn=step_reporting_model_fn)
    results = estimator.evaluate(input_fn_of(*linear_data()))
    assert results["seen_step"] == results["global_step"] == 10


def test_evaluate_before_any_checkpoint_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="Could not find trained model"):
        make_estimator(tmp_path).evaluate(input_fn_of(*linear_data()))


@pytest.mark.parametrize("name, folder", [(None, "eval"), ("test", "eval_test")])
def test_evaluate_writes_summaries_to_eval_dir(trained, name, folder):
    trained.evaluate(input_fn_of(*linear_data()), name=name)
    assert trained.eval_dir(name) == os.path.join(trained.model_dir, folder)
    scalars = summary.read_scalars(trained.eval_dir(name))
    assert [step for step, _ in scalars["loss"]] == [10]
    assert "mae" in scalars


# -- 4. predict. --------------------------------------------------------------


def test_predict_is_lazy(trained):
    calls = []
    generator = trained.predict(input_fn_of(linear_data()[0], calls=calls))
    assert calls == []
    next(generator)
    assert calls == [16]


def test_predict_yields_one_dict_per_example_without_padding(trained):
    x, _ = linear_data(n=37)
    predictions = list(trained.predict(input_fn_of(x)))
    assert len(predictions) == 37
    np.testing.assert_allclose([p["x0"] for p in predictions], x[:, 0])


def test_predict_batches(trained):
    x, _ = linear_data(n=37)
    batches = list(trained.predict(input_fn_of(x), yield_single_examples=False))
    assert [len(b["y"]) for b in batches] == [32, 5]


def test_predict_keys_filter(trained):
    prediction = next(trained.predict(input_fn_of(linear_data()[0]), predict_keys=["y"]))
    assert set(prediction) == {"y"}


def test_unknown_predict_key_is_an_error(trained):
    with pytest.raises(ValueError, match="nope"):
        next(trained.predict(input_fn_of(linear_data()[0]), predict_keys=["nope"]))


# -- 5. Introspection. ---------------------------------------------------------


def test_variable_names_and_values_come_from_the_latest_checkpoint(trained):
    names = trained.get_variable_names()
    assert {"dense/kernel", "dense/bias", "global_step"} <= set(names)
    model = trained._model(kte.ModeKeys.TRAIN)
    np.testing.assert_allclose(
        trained.get_variable_value("dense/kernel"),
        model.store.variables_by_name()["dense/kernel"].value,
    )
    assert trained.latest_checkpoint() == checkpoint_dir(trained, 10)


@pytest.mark.parametrize("method", ["get_variable_names", "get_variable_value"])
def test_variables_before_any_checkpoint_are_an_error(tmp_path, method):
    estimator = make_estimator(tmp_path)
    args = ("dense/kernel",) if method == "get_variable_value" else ()
    with pytest.raises(ValueError, match="Could not find trained model"):
        getattr(estimator, method)(*args)
    assert estimator.latest_checkpoint() is None


def test_properties(tmp_path):
    estimator = make_estimator(tmp_path)
    assert estimator.params == {"lr": 0.05}
    assert estimator.model_dir == str(tmp_path)
    assert isinstance(estimator.config, kte.RunConfig)


def test_model_fn_property_is_bound_to_params(tmp_path):
    estimator = make_estimator(tmp_path)
    features = {"x": keras.KerasTensor((16, DIM))}
    spec = estimator.model_fn(features, None, kte.ModeKeys.PREDICT, estimator.config)
    assert set(spec.predictions) == {"y", "x0"}


def test_calling_the_model_fn_property_leaves_the_estimator_unchanged(tmp_path):
    estimator = make_estimator(tmp_path)
    features = {"x": np.ones((16, DIM), "float32")}
    estimator.model_fn(features, np.ones(16, "float32"), kte.ModeKeys.TRAIN, estimator.config)
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=2)
    assert sorted(n for n in estimator.get_variable_names() if n.startswith("dense")) == [
        "dense/bias", "dense/kernel"
    ]


# -- 6. Warm start. ------------------------------------------------------------


def test_warm_start_from_a_checkpoint_path(trained, tmp_path):
    warm = make_estimator(tmp_path / "warm", warm_start_from=trained.model_dir)
    warm.train(input_fn_of(*linear_data(), repeat=True), steps=1)
    first = checkpoint_dir(warm, 0)
    np.testing.assert_allclose(
        kte.checkpoint.load_variable(first, "dense/kernel"),
        trained.get_variable_value("dense/kernel"),
    )


def test_warm_start_settings_select_variables_by_regex(trained, tmp_path):
    settings = kte.WarmStartSettings(trained.model_dir, vars_to_warm_start=".*bias")
    warm = make_estimator(tmp_path / "warm", warm_start_from=settings)
    warm.train(input_fn_of(*linear_data(), repeat=True), steps=1)
    first = checkpoint_dir(warm, 0)
    np.testing.assert_allclose(
        kte.checkpoint.load_variable(first, "dense/bias"), trained.get_variable_value("dense/bias")
    )
    assert not np.allclose(
        kte.checkpoint.load_variable(first, "dense/kernel"), trained.get_variable_value("dense/kernel")
    )


# -- 7. host_call and summaries. ----------------------------------------------


def host_call_model_fn(features, labels, mode, params):
    spec = regression_fn(features, labels, mode, params)
    if mode != kte.ModeKeys.TRAIN:
        return spec
    step = keras.ops.reshape(kte.get_global_step(), (1,))

    def host_call(step, loss):
        kte.summary.scalar("host_loss", loss[0], step=int(step[0]))

    host_call_tensors = [step, keras.ops.reshape(spec.loss, (1,))]
    return spec._replace(host_call=(host_call, host_call_tensors))


def test_host_call_summaries_land_in_model_dir(tmp_path):
    estimator = make_estimator(tmp_path, model_fn=host_call_model_fn, loop=4)
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=8)
    scalars = summary.read_scalars(estimator.model_dir)
    assert [step for step, _ in scalars["host_loss"]] == list(range(8))


def test_host_call_summaries_without_a_step_get_the_step_after_each_step(tmp_path):
    def stepless_model_fn(features, labels, mode, params):
        spec = regression_fn(features, labels, mode, params)
        if mode != kte.ModeKeys.TRAIN:
            return spec
        host_call = (lambda loss: kte.summary.scalar("host_loss", loss[0]),
                     [keras.ops.reshape(spec.loss, (1,))])
        return spec._replace(host_call=host_call)

    estimator = make_estimator(tmp_path, model_fn=stepless_model_fn, loop=4)
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=8)
    scalars = summary.read_scalars(estimator.model_dir)
    assert [step for step, _ in scalars["host_loss"]] == list(range(1, 9))


def resnet_host_call_model_fn(features, labels, mode, params):
    """resnet_main.py's pattern: TF1 minimize(loss, global_step), then a host_call
    that reads the global step and creates a TensorFlow writer in every call."""
    import keras_tpu_estimator.compat.v1 as tf1

    predictions = tf1.layers.dense(features["x"], 1)[:, 0]
    if mode != kte.ModeKeys.TRAIN:
        return kte.TPUEstimatorSpec(mode, loss=tf1.reduce_mean(predictions), predictions=predictions)
    loss = tf1.reduce_mean(tf1.square(predictions - labels))
    global_step = tf1.train.get_global_step()
    train_op = tf1.train.GradientDescentOptimizer(0.01).minimize(loss, global_step)

    def host_call_fn(gs, loss):
        with tf.compat.v2.summary.create_file_writer(params["model_dir"], max_queue=4).as_default():
            with tf.compat.v2.summary.record_if(True):
                tf.compat.v2.summary.scalar("host_loss", loss[0], step=gs[0])
            return tf.compat.v1.summary.all_v2_summary_ops()

    host_call = (host_call_fn, [tf1.reshape(global_step, [1]), tf1.reshape(loss, [1])])
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, host_call=host_call)


def test_a_host_call_creating_its_writer_gets_tf_global_steps_in_one_event_file(tmp_path):
    estimator = make_estimator(tmp_path, model_fn=resnet_host_call_model_fn, loop=4,
                               params={"model_dir": str(tmp_path)})
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=12)
    events = [f for f in os.listdir(tmp_path) if f.startswith("events.out.tfevents.")]
    assert len(events) == 1
    assert [step for step, _ in summary.read_scalars(tmp_path)["host_loss"]] == list(range(12))


def test_loss_and_step_rate_summaries_every_save_summary_steps(tmp_path):
    config = kte.RunConfig(model_dir=str(tmp_path), save_summary_steps=3, log_step_count_steps=2,
                           tpu_config=kte.TPUConfig(iterations_per_loop=2))
    estimator = kte.TPUEstimator(model_fn=regression_fn, config=config, params={"lr": 0.05},
                                 train_batch_size=16)
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=9)
    scalars = summary.read_scalars(estimator.model_dir)
    # TF's SummarySaverHook over the loops (its runs on a TPU) ending at 2, 4, 6, 8, 9.
    assert [step for step, _ in scalars["loss"]] == [2, 6, 9]
    assert "global_step/sec" in scalars


def test_loss_and_step_rate_are_logged_every_log_step_count_steps(tmp_path, caplog):
    config = kte.RunConfig(model_dir=str(tmp_path), log_step_count_steps=4,
                           tpu_config=kte.TPUConfig(iterations_per_loop=2))
    estimator = kte.TPUEstimator(model_fn=regression_fn, config=config, params={"lr": 0.05},
                                 train_batch_size=16)
    with caplog.at_level(logging.INFO, logger="keras_tpu_estimator"):
        estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=8)
    assert "global_step/sec" in caplog.text and "loss = " in caplog.text


# -- 8. Hooks. -----------------------------------------------------------------


class RecordingHook(kte.SessionRunHook):
    def __init__(self):
        self.events = []

    def begin(self):
        self.events.append("begin")

    def before_run(self, run_context):
        return kte.SessionRunArgs(["global_step", "loss"])

    def after_run(self, run_context, run_values):
        step, loss = run_values.results
        self.events.append(step)
        if step + 1 >= 6:  # The step the run's last step read (TF's "stale" step) + 1.
            run_context.request_stop()

    def end(self, session):
        self.events.append("end")


def test_session_run_hooks_run_per_loop_and_can_stop(tmp_path):
    hook = RecordingHook()
    estimator = make_estimator(tmp_path, save_every=2)
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=100, hooks=[hook])
    assert hook.events == ["begin", 1, 3, 5, "end"]  # Loops of 2: their last steps.
    assert estimator.get_variable_value("global_step") == 6


def test_stop_at_step_hook(tmp_path):
    estimator = make_estimator(tmp_path)
    estimator.train(input_fn_of(*linear_data(), repeat=True), steps=100,
                    hooks=[kte.StopAtStepHook(last_step=4)])
    assert estimator.get_variable_value("global_step") == 4


@pytest.mark.parametrize("hook", [kte.StopAtStepHook(last_step=5), kte.StopAtStepHook(num_steps=5)])
def test_loops_end_exactly_at_a_stop_at_step_hook(tmp_path, hook):
    estimator = make_estimator(tmp_path, loop=4, save_every=100)
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=100, hooks=[hook])
    assert estimator.get_variable_value("global_step") == 5


def test_stop_at_step_hook_already_reached_skips_training(trained):
    calls = []
    trained.train(input_fn_of(*linear_data(), repeat=True, calls=calls), steps=5,
                  hooks=[kte.StopAtStepHook(last_step=3)])
    assert calls == []


def test_keras_callbacks_are_hooks_too(tmp_path):
    seen = []
    callback = keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: seen.append(batch))
    make_estimator(tmp_path).train(
        input_fn_of(*linear_data(), repeat=True), steps=4, hooks=[callback]
    )
    assert seen == [1, 3]


def test_training_hooks_from_the_spec_run(tmp_path):
    hook = RecordingHook()

    def hooked_model_fn(features, labels, mode, params):
        spec = regression_fn(features, labels, mode, params)
        return spec._replace(training_hooks=[hook]) if mode == kte.ModeKeys.TRAIN else spec

    make_estimator(tmp_path, model_fn=hooked_model_fn).train(
        input_fn_of(*linear_data(), repeat=True), max_steps=4
    )
    assert hook.events[0] == "begin" and hook.events[-1] == "end"


def test_nan_loss_stops_with_a_clear_error_and_keeps_the_last_good_checkpoint(tmp_path):
    x, y = linear_data()

    def nan_after_four(features, labels, mode, params):
        spec = regression_fn(features, labels, mode, params)
        step = keras.ops.cast(kte.get_global_step(), "float32")
        poison = keras.ops.where(step >= 4, np.nan, 0.0)
        return spec._replace(loss=spec.loss + poison)

    estimator = make_estimator(tmp_path, model_fn=nan_after_four, save_every=2)
    with pytest.raises(kte.NanLossDuringTrainingError, match="NaN loss"):
        estimator.train(input_fn_of(x, y, repeat=True), max_steps=10)
    assert checkpoint_steps(estimator)[-1] == 4
    assert np.all(np.isfinite(estimator.get_variable_value("dense/kernel")))


def test_a_nan_tensor_hook_of_the_user_replaces_the_built_in_one(tmp_path):
    def nan_after_four(features, labels, mode, params):
        spec = regression_fn(features, labels, mode, params)
        step = keras.ops.cast(kte.get_global_step(), "float32")
        return spec._replace(loss=spec.loss + keras.ops.where(step >= 4, np.nan, 0.0))

    estimator = make_estimator(tmp_path, model_fn=nan_after_four, save_every=2)
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=10,
                    hooks=[kte.NanTensorHook(fail_on_nan_loss=False)])
    assert estimator.get_variable_value("global_step") == 6


def test_layout_map_reaches_the_model(tmp_path):
    config = kte.RunConfig(model_dir=str(tmp_path), log_step_count_steps=None,
                           tpu_config=kte.TPUConfig(num_cores_per_replica=2))
    estimator = kte.TPUEstimator(model_fn=regression_fn, config=config, params={"lr": 0.05},
                                 train_batch_size=16, layout_map={".*dense/kernel": ("model", None)})
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=2)
    kernel = estimator._model(kte.ModeKeys.TRAIN).store.variables_by_name()["dense/kernel"]
    # Split over `model` on its first axis: P("model", None) and P("model") alike.
    assert tuple(kernel.value.sharding.spec) in {("model", None), ("model",)}
    assert kernel.value.addressable_shards[0].data.shape[0] == kernel.shape[0] // 2
