"""Hooks fetch what TF1 hooks fetch: tensors of model_fn, the global step, variables.

The hooks here are written as TensorFlow 1 programs write them (ELECTRA's
`ETAHook`, `LoggingTensorHook(tensors={"loss": loss})` built in `model_fn`).
With `use_tpu=False` TensorFlow ran hooks around every step, and so do
these (`after_run` once per step, each with its step's values); a
`session.run` of a TPU loop gave the values of the loop's last step, and so
do these with `use_tpu=True` (`after_run` once per loop).
"""

import logging

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator.compat import v1 as tf1

from model_fns import estimator_config

TRAIN, EVAL, PREDICT = kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL, kte.ModeKeys.PREDICT
BATCH = 8


class ETAHook(kte.SessionRunHook):
    """ELECTRA's `training_utils.ETAHook`, reduced to what it fetches and when."""

    def __init__(self, to_log):
        self._to_log = to_log
        self._global_step_tensor = None
        self.seen = []

    def begin(self):
        self._global_step_tensor = tf1.train.get_or_create_global_step()

    def before_run(self, run_context):
        return kte.SessionRunArgs(self._to_log)

    def after_run(self, run_context, run_values):
        step = run_context.session.run(self._global_step_tensor)
        self.seen.append((step, run_values.results))


class Fetcher(kte.SessionRunHook):
    """Fetches `fetches` (built in model_fn) after every loop, keeping the results."""

    def __init__(self, fetches):
        self.fetches = fetches
        self.results = []

    def before_run(self, run_context):
        return kte.SessionRunArgs(self.fetches)

    def after_run(self, run_context, run_values):
        self.results.append(run_values.results)


def batch_sums(steps):
    """Features whose batch k (of BATCH rows) sums to k: a value per step."""
    x = np.zeros((steps * BATCH, 1), "float32")
    x[::BATCH, 0] = np.arange(steps)
    return x


def input_fn_of(x, repeat=False):
    def input_fn(params):
        import tensorflow as tf

        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, np.zeros(len(x), "float32")))
        if repeat:
            dataset = dataset.repeat()
        return dataset.batch(params["batch_size"], drop_remainder=True)

    return input_fn


def model_fn_with(make_hooks, tf1_optimizer=False):
    """A model_fn of loss = mean(ones) * w (SGD 0.1: the loss of step k is 1 - 0.1 k),
    returning `make_hooks(mode, tensors)` as the mode's hooks; `tensors` holds
    "loss", "batch_sum" (of the batch's features), "features" (the batch's)
    and "global_step" (TF1's)."""

    def model_fn(features, labels, mode, params):
        w = kte.get_variable("w", shape=(), initializer="ones")
        x = features["x"]
        loss = keras.ops.mean(keras.ops.ones_like(x)) * w
        tensors = {"loss": loss, "batch_sum": keras.ops.sum(x), "features": x}
        made = {}
        if mode == TRAIN:
            if tf1_optimizer:
                tensors["global_step"] = tf1.train.get_or_create_global_step()
                train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(
                    loss, global_step=tensors["global_step"])
            else:
                train_op = keras.optimizers.SGD(0.1)
            made["training_hooks"] = make_hooks(mode, tensors)
            return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, **made)
        if mode == EVAL:
            made["evaluation_hooks"] = make_hooks(mode, tensors)
            return kte.TPUEstimatorSpec(mode, loss=loss, **made)
        return kte.TPUEstimatorSpec(
            mode, predictions={"y": x[:, 0] * w},
            prediction_hooks=make_hooks(mode, {"batch_sum": tensors["batch_sum"]}),
        )

    return model_fn


def estimator(tmp_path, model_fn, loop, use_tpu=True):
    return kte.TPUEstimator(
        model_fn, config=estimator_config(tmp_path, save_every=1000, loop=loop),
        train_batch_size=BATCH, eval_batch_size=BATCH, predict_batch_size=BATCH, use_tpu=use_tpu,
    )


def spec_hook(est, mode):
    [hook] = est._model(mode).spec_hooks[mode]
    return hook


# The runs of 10 steps in loops of `loop` steps, (use_tpu, loop): their (last) steps.
LAST_STEPS = {(True, 1): list(range(10)), (True, 4): [3, 7, 9], (False, 4): list(range(10))}


@pytest.mark.parametrize("use_tpu, loop", list(LAST_STEPS), ids=["tpu-1", "tpu-4", "cpu-4"])
def test_a_hook_built_in_model_fn_fetches_the_loss_of_each_runs_last_step(tmp_path, use_tpu, loop):
    est = estimator(tmp_path, model_fn_with(lambda mode, t: [ETAHook({"loss": t["loss"]})]), loop,
                    use_tpu)
    est.train(input_fn_of(batch_sums(10)), max_steps=10)
    seen = spec_hook(est, TRAIN).seen
    steps = [s for s, _ in seen]
    losses = [r["loss"] for _, r in seen]
    assert steps == [k + 1 for k in LAST_STEPS[use_tpu, loop]]
    np.testing.assert_allclose(losses, [1 - 0.1 * k for k in LAST_STEPS[use_tpu, loop]], atol=1e-6)


def test_fetched_values_are_those_of_the_step_not_of_another(tmp_path):
    est = estimator(tmp_path, model_fn_with(lambda mode, t: [Fetcher([t["batch_sum"], t["loss"]])]), 4)
    est.train(input_fn_of(batch_sums(10)), max_steps=10)
    results = spec_hook(est, TRAIN).results
    assert [float(s) for s, _ in results] == [3.0, 7.0, 9.0]
    assert all(isinstance(r, list) for r in results)


@pytest.mark.parametrize("use_tpu", [True, False], ids=["tpu", "cpu"])
def test_the_tf1_global_step_variable_of_model_fn_is_the_step_the_run_read(tmp_path, use_tpu):
    est = estimator(
        tmp_path, model_fn_with(lambda mode, t: [Fetcher({"step": t["global_step"]})], True), 4,
        use_tpu,
    )
    est.train(input_fn_of(batch_sums(10)), max_steps=10)
    assert [int(r["step"]) for r in spec_hook(est, TRAIN).results] == LAST_STEPS[use_tpu, 4]


def test_get_or_create_global_step_outside_model_fn_is_the_handle_hooks_fetch(tmp_path):
    class StepHook(kte.SessionRunHook):
        def begin(self):
            self.step_tensor = tf1.train.get_global_step()
            self.steps = []

        def before_run(self, run_context):
            return kte.SessionRunArgs({"step": self.step_tensor})

        def after_run(self, run_context, run_values):
            self.steps.append(run_values.results["step"])

    hook = StepHook()
    est = estimator(tmp_path, model_fn_with(lambda mode, t: []), 4)
    est.train(input_fn_of(batch_sums(10)), hooks=[hook], max_steps=10)
    assert hook.steps == [3, 7, 9]  # What the loops' last steps read (TF's stale step).


def test_logging_tensor_hook_of_model_fn_logs_the_tensors(tmp_path, caplog):
    est = estimator(
        tmp_path,
        model_fn_with(lambda mode, t: [kte.LoggingTensorHook({"loss": t["loss"]}, every_n_iter=2)]),
        4,
    )
    with caplog.at_level(logging.INFO, logger="keras_tpu_estimator"):
        est.train(input_fn_of(batch_sums(10)), max_steps=10)
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("loss = ")]
    values = [float(m.split(" (")[0].removeprefix("loss = ")) for m in logged]
    # Runs 0 and 2 (of 3 loops, as TF counted session.runs): the loops' last steps 3 and 9.
    np.testing.assert_allclose(values, [0.7, 0.1], atol=1e-6)


@pytest.mark.parametrize("mode", [EVAL, PREDICT])
def test_evaluation_and_prediction_hooks_fetch_the_loops_last_step(tmp_path, mode):
    est = estimator(tmp_path, model_fn_with(lambda m, t: [Fetcher(t["batch_sum"])]), 4)
    est.train(input_fn_of(batch_sums(4)), max_steps=4)
    if mode == EVAL:
        est.evaluate(input_fn_of(batch_sums(6)), steps=6)
    else:
        list(est.predict(input_fn_of(batch_sums(6))))
    assert [float(v) for v in spec_hook(est, mode).results] == [3.0, 5.0]


def test_a_tensor_the_hook_does_not_hold_is_an_error_naming_the_way(tmp_path):
    stray = keras.KerasTensor((), "float32")
    est = estimator(tmp_path, model_fn_with(lambda mode, t: []), 4)
    with pytest.raises(ValueError, match="build the hook inside model_fn with the tensor"):
        est.train(input_fn_of(batch_sums(4)), hooks=[Fetcher(stray)], max_steps=4)


def test_a_tensor_too_large_to_output_every_step_is_an_error_naming_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(kte.hooks.fetches, "MAX_FETCH_ELEMENTS", BATCH - 1)
    est = estimator(tmp_path, model_fn_with(lambda mode, t: [Fetcher(t["features"])]), 4)
    with pytest.raises(ValueError, match=f"at most {BATCH - 1} elements"):
        est.train(input_fn_of(batch_sums(4)), max_steps=4)


@pytest.mark.parametrize("device_loop", ["scan", "host"])
def test_an_estimator_model_runs_the_spec_hooks_it_is_given_in_either_device_loop(device_loop):
    x = batch_sums(10)
    model = kte.EstimatorModel(
        model_fn_with(lambda mode, t: [Fetcher(t["batch_sum"])]),
        config=kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=4)),
        train_batch_size=BATCH, device_loop=device_loop,
    )
    model.compile()
    model.build_from_batch(TRAIN, ({"x": x[:BATCH]}, np.zeros(BATCH, "float32")))
    callbacks = kte.hooks.as_callbacks(model.spec_hooks[TRAIN], TRAIN)
    model.fit(({"x": x}, np.zeros(len(x), "float32")), callbacks=callbacks, shuffle=False, verbose=0)
    [hook] = model.spec_hooks[TRAIN]
    assert [float(v) for v in hook.results] == [3.0, 7.0, 9.0]
