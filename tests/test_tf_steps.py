"""Values typed and stepped as TensorFlow's estimator gave them.

Checked against TF 2.15's `TPUEstimator(use_tpu=False)` and `Estimator` on
CPU: `evaluate` returns numpy scalars (`float32` loss and metrics, `int64`
`global_step`); a hook fetching the global step beside a tensor of
`model_fn` gets `(0, 0), (1, 1), ...` (the step read in the same run,
before the train op's increment) and is called at every step; the loss
summary lands at steps 1, n + 1, 2n + 1 (`save_summary_steps=n`),
`global_step/sec` at n + 1, 2n + 1 (`log_step_count_steps=n`).
"""

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator import summary
from keras_tpu_estimator.compat import v1 as tf1

from model_fns import estimator_config
from model_fns import estimator_model
from model_fns import input_fn_of
from model_fns import linear_data
from model_fns import linear_fn
from model_fns import ones
from model_fns import regression_fn

TRAIN, EVAL = kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL
BATCH = 8


class Probe(kte.SessionRunHook):
    """Fetches the global step beside `tensor`; counts its runs; stops at `stop_at`."""

    def __init__(self, tensor=None, stop_at=None):
        self.tensor, self.stop_at = tensor, stop_at
        self.seen, self.after = [], []

    def begin(self):
        self.step = tf1.train.get_or_create_global_step()

    def before_run(self, run_context):
        return kte.SessionRunArgs([self.step] + ([self.tensor] if self.tensor is not None else []))

    def after_run(self, run_context, run_values):
        self.seen.append(tuple(int(v) for v in run_values.results))
        self.after.append(int(run_context.session.run(self.step)))
        if self.stop_at is not None and run_values.results[0] >= self.stop_at:
            run_context.request_stop()


def probe_fn(features, labels, mode):
    """loss = mean(x) * w; its hooks fetch the global step as model_fn read it (a tensor)."""
    w = kte.get_variable("w", shape=(), initializer="ones")
    loss = keras.ops.mean(keras.ops.ones_like(features["x"])) * w
    step = keras.ops.add(kte.get_global_step(), 0)
    if mode == EVAL:
        return kte.TPUEstimatorSpec(mode, loss=loss, evaluation_hooks=[Probe(step)])
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1),
                                training_hooks=[Probe(step)])


def probe_estimator(tmp_path, use_tpu, loop=4, **config):
    return kte.TPUEstimator(
        probe_fn, config=estimator_config(tmp_path, save_every=1000, loop=loop, **config),
        train_batch_size=BATCH, eval_batch_size=BATCH, use_tpu=use_tpu)


def spec_hook(estimator, mode):
    [hook] = estimator._model(mode).spec_hooks[mode]
    return hook


x_input = input_fn_of(np.ones((BATCH * 6, 1), "float32"), np.zeros(BATCH * 6, "float32"),
                      repeat=True)


# -- A. evaluate's results are typed as TensorFlow's. -------------------------


@pytest.mark.parametrize("plain", [False, True], ids=["TPUEstimator", "Estimator"])
def test_evaluate_returns_numpy_scalars_typed_as_tensorflows(tmp_path, plain):
    x, y = linear_data()
    if plain:
        def input_fn():
            import tensorflow as tf
            return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(16)
        est = kte.Estimator(regression_fn, model_dir=str(tmp_path), params={"lr": 0.1})
    else:
        input_fn = input_fn_of(x, y)
        est = kte.TPUEstimator(regression_fn, config=estimator_config(tmp_path, 1000),
                               params={"lr": 0.1}, train_batch_size=16, eval_batch_size=16)
    est.train(input_fn, max_steps=2)
    results = est.evaluate(input_fn)
    assert {k: type(v) for k, v in results.items()} == {
        "loss": np.float32, "mae": np.float32, "global_step": np.int64}
    assert results["global_step"].item() == 2


def test_estimator_model_evaluate_keeps_keras_python_floats():
    results = estimator_model(linear_fn).evaluate((ones(2), None), return_dict=True, verbose=0)
    assert type(results["loss"]) is float


def test_predict_yields_numpy_values(tmp_path):
    x, y = linear_data(n=16)
    est = kte.TPUEstimator(regression_fn, config=estimator_config(tmp_path, 1000),
                           params={"lr": 0.1}, train_batch_size=16, predict_batch_size=16)
    first = next(est.predict(input_fn_of(x)))
    assert {k: type(v) for k, v in first.items()} == {"y": np.float32, "x0": np.float32}


# -- B. Each value carries its own step; hooks run at every step (use_tpu=False). --


RUNS = {  # (use_tpu, loop) -> (fetched (step, tensor), session.run(step) after) over 6 steps
    (False, 4): ([(k, k) for k in range(6)], list(range(1, 7))),
    (True, 4): ([(3, 3), (5, 5)], [4, 6]),  # A TPU loop: its last step's values.
}


@pytest.mark.parametrize("use_tpu, loop", list(RUNS), ids=["cpu-every-step", "tpu-per-loop"])
def test_a_hook_fetches_the_global_step_its_run_read_beside_that_runs_tensor(
        tmp_path, use_tpu, loop):
    est = probe_estimator(tmp_path, use_tpu, loop)
    est.train(x_input, max_steps=6)
    hook = spec_hook(est, TRAIN)
    assert (hook.seen, hook.after) == RUNS[use_tpu, loop]


@pytest.mark.parametrize("use_tpu, calls", [(False, 5), (True, 2)], ids=["cpu", "tpu"])
def test_evaluation_hooks_run_every_step_without_a_tpu(tmp_path, use_tpu, calls):
    est = probe_estimator(tmp_path, use_tpu)
    est.train(x_input, max_steps=2)
    est.evaluate(x_input, steps=5)
    assert len(spec_hook(est, EVAL).seen) == calls


def test_a_stop_requested_at_a_step_ends_every_hooks_runs_there(tmp_path):
    stopper, counter = Probe(stop_at=2), Probe()
    est = probe_estimator(tmp_path, use_tpu=False)
    est.train(x_input, hooks=[stopper, counter], max_steps=8)
    assert [s for s, in counter.seen] == [0, 1, 2]  # Runs of steps 0, 1, 2, then the stop.


def test_a_stop_requested_mid_loop_leaves_the_model_at_that_step(tmp_path):
    est = probe_estimator(tmp_path, use_tpu=False)  # Loops of 4 steps.
    est.train(x_input, hooks=[Probe(stop_at=1)], max_steps=8)
    # TensorFlow ran steps 0 and 1 (the stop's), then saved: global step 2.
    assert est.get_variable_value("global_step") == 2
    assert est.latest_checkpoint().endswith("model.ckpt-2")
    np.testing.assert_allclose(est.get_variable_value("w"), 1.0 - 0.1 * 2, rtol=1e-6)
    est.train(x_input, max_steps=4)  # Training resumes from there, in loops of 4 again.
    assert est.get_variable_value("global_step") == 4


def test_a_stop_at_a_loops_last_step_keeps_the_loop(tmp_path):
    est = probe_estimator(tmp_path, use_tpu=False)
    est.train(x_input, hooks=[Probe(stop_at=3)], max_steps=8)
    assert est.get_variable_value("global_step") == 4


SUMMARY_STEPS = {  # (use_tpu, loop) -> (loss, global_step/sec) steps of max_steps=10, n=3, 4
    (False, 4): ([1, 4, 7, 10], [5, 9]),  # TF 2.15's Estimator and TPUEstimator(use_tpu=False).
    (True, 4): ([4, 10], [8]),  # SummarySaverHook / StepCounterHook over loops ending 4, 8, 10.
}


@pytest.mark.parametrize("use_tpu, loop", list(SUMMARY_STEPS), ids=["cpu", "tpu"])
def test_loss_and_step_rate_summaries_land_at_tensorflows_steps(tmp_path, use_tpu, loop):
    est = probe_estimator(tmp_path, use_tpu, loop)
    est._config = est.config.replace(save_summary_steps=3, log_step_count_steps=4)
    est.train(x_input, max_steps=10)
    scalars = summary.read_scalars(tmp_path)
    assert ([s for s, _ in scalars["loss"]], [s for s, _ in scalars["global_step/sec"]]) == \
        SUMMARY_STEPS[use_tpu, loop]


def test_summaries_of_a_resumed_training_count_from_its_start(tmp_path):
    est = probe_estimator(tmp_path, use_tpu=False)
    est._config = est.config.replace(save_summary_steps=3, log_step_count_steps=None)
    est.train(x_input, max_steps=10)
    est.train(x_input, max_steps=15)
    assert [s for s, _ in summary.read_scalars(tmp_path)["loss"]] == [1, 4, 7, 10, 11, 14]
