"""SessionRunHooks as Keras callbacks: the adapter, the fetches, the provided hooks."""

import logging
import re
import time

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator import hooks

from model_fns import BATCH
from model_fns import estimator_model
from model_fns import linear_fn
from model_fns import loop_logs
from model_fns import ones

TRAIN, EVAL, PREDICT = kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL, kte.ModeKeys.PREDICT
LOGGER = "keras_tpu_estimator"


def fit(model, hook_list, x=None, steps=10, mode=TRAIN):
    x = ones(steps) if x is None else x
    model.fit((x, None), callbacks=hooks.as_callbacks(hook_list, mode), shuffle=False, verbose=0)
    return model


class Recorder(hooks.SessionRunHook):
    """Records every call, fetching `fetches` in every run."""

    def __init__(self, fetches=None, stop_after=None):
        self.fetches, self.stop_after = fetches, stop_after
        self.calls, self.results = [], []

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append(("after_create_session", session.run("global_step"), coord))

    def before_run(self, run_context):
        self.calls.append("before_run")
        return hooks.SessionRunArgs(self.fetches) if self.fetches is not None else None

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.results.append(run_values.results)
        if self.stop_after is not None and len(self.results) >= self.stop_after:
            run_context.request_stop()

    def end(self, session):
        self.calls.append(("end", session.run("global_step")))


# -- The session-run records. ------------------------------------------------


def test_session_run_args_default_to_no_feed_and_no_options():
    assert hooks.SessionRunArgs("loss") == ("loss", None, None)


def test_session_run_values_has_tensorflows_fields():
    assert hooks.SessionRunValues._fields == ("results", "options", "run_metadata")


def test_request_stop_sets_stop_requested():
    context = hooks.SessionRunContext(hooks.SessionRunArgs(None), None)
    assert not context.stop_requested
    context.request_stop()
    assert context.stop_requested


# -- as_callback / as_callbacks. ---------------------------------------------


def test_a_keras_callback_passes_through_unchanged():
    callback = keras.callbacks.History()
    assert hooks.as_callback(callback, TRAIN) is callback


class OnlyAfterRun:
    def after_run(self, run_context, run_values):
        pass


@pytest.mark.parametrize("hook", [hooks.SessionRunHook(), OnlyAfterRun()], ids=["subclass", "duck-typed"])
def test_a_session_run_hook_is_wrapped_in_a_hook_callback(hook):
    callback = hooks.as_callback(hook, EVAL)
    assert isinstance(callback, hooks.HookCallback)
    assert callback.hook is hook and callback.mode == EVAL


@pytest.mark.parametrize("value", [3, "hook", object()], ids=["int", "str", "object"])
def test_a_non_hook_is_a_type_error_naming_it(value):
    with pytest.raises(TypeError, match="keras.callbacks.Callback or a SessionRunHook"):
        hooks.as_callback(value, TRAIN)


MID_LOOP_STOPPERS = [  # (hook, mode) -> whether training loops keep their start to rewind to
    (kte.SessionRunHook(), kte.ModeKeys.TRAIN, True),
    (kte.NanTensorHook(None, fail_on_nan_loss=False), kte.ModeKeys.TRAIN, True),
    (kte.NanTensorHook(None), kte.ModeKeys.TRAIN, False),  # It raises: the estimator's own.
    (kte.LoggingTensorHook({"loss": "loss"}, every_n_iter=1), kte.ModeKeys.TRAIN, False),
    (kte.SessionRunHook(), kte.ModeKeys.EVAL, False),
]


@pytest.mark.parametrize("hook, mode, stops", MID_LOOP_STOPPERS)
def test_only_a_training_hook_that_may_request_a_stop_stops_mid_loop(hook, mode, stops):
    assert hooks.as_callback(hook, mode).stops_mid_loop == stops


def test_an_unknown_mode_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="mode='training'"):
        hooks.as_callback(hooks.SessionRunHook(), "training")


def test_as_callbacks_maps_a_list_in_order_and_none_to_empty():
    callback, hook = keras.callbacks.History(), hooks.SessionRunHook()
    callbacks = hooks.as_callbacks([hook, callback], TRAIN)
    assert callbacks[0].hook is hook and callbacks[1] is callback
    assert hooks.as_callbacks(None, TRAIN) == []


def test_as_callbacks_rejects_a_single_hook():
    with pytest.raises(TypeError, match="`hooks` must be None or a list"):
        hooks.as_callbacks(hooks.SessionRunHook(), TRAIN)


# -- The hook protocol over a real fit. ---------------------------------------


def test_hook_methods_run_once_per_session_and_once_per_loop():
    recorder = Recorder()
    fit(estimator_model(linear_fn, loop=4), [recorder], steps=10)  # Loops of 4, 4, 2 steps.
    assert recorder.calls == (
        ["begin", ("after_create_session", 0, None)]
        + ["before_run", "after_run"] * 3
        + [("end", 10)]
    )


FETCH_CASES = {  # fetches -> results of the loops ending at steps 4, 8, 10: the global
    "none": (None, [None, None, None]),  # step their last step read (TF's, before its increment).
    "name": ("global_step", [3, 7, 9]),
    "list": (["global_step"], [[3], [7], [9]]),
    "tuple": (("global_step",), [(3,), (7,), (9,)]),
    "dict": (
        {"step": "global_step", "nested": ["global_step"]},
        [{"step": s, "nested": [s]} for s in (3, 7, 9)],
    ),
}


def test_fetch_results_mirror_the_structure_of_the_fetches():
    recorders = {case: Recorder(fetches) for case, (fetches, _) in FETCH_CASES.items()}
    losses = Recorder({"loss": "loss", "losses": "losses"})
    fit(estimator_model(linear_fn, loop=4), list(recorders.values()) + [losses], steps=10)
    for case, (_, expected) in FETCH_CASES.items():
        assert recorders[case].results == expected, case
    # "loss" is the loop's last step, "losses" every step: step k's is 1 - 0.1 k.
    np.testing.assert_allclose([r["loss"] for r in losses.results], [0.7, 0.3, 0.1], atol=1e-6)
    np.testing.assert_allclose(losses.results[1]["losses"], [0.6, 0.5, 0.4, 0.3], atol=1e-6)


@pytest.mark.parametrize(
    "fetches, mode",
    [
        (keras.ops.ones(()), TRAIN),
        ("loss:0", TRAIN),
        ("accuracy", TRAIN),
        (["loss", 3], TRAIN),
        ("loss", EVAL),
    ],
    ids=["tensor", "tensor-name", "unknown-name", "nested-non-name", "loss-in-eval"],
)
def test_a_fetch_that_is_not_fetchable_fails_at_the_first_run(fetches, mode):
    model = estimator_model(linear_fn)
    callbacks = hooks.as_callbacks([Recorder(fetches)], mode)
    with pytest.raises(ValueError, match=r"cannot be fetched\. A hook fetches the tensors.*\['"):
        if mode == TRAIN:
            model.fit((ones(4), None), callbacks=callbacks, verbose=0)
        else:
            model.evaluate((ones(4), None), callbacks=callbacks, verbose=0)


def test_a_feed_dict_is_rejected():
    class Feeder(hooks.SessionRunHook):
        def before_run(self, run_context):
            return hooks.SessionRunArgs("loss", feed_dict={"x": 1})

    with pytest.raises(ValueError, match="no graph to feed"):
        fit(estimator_model(linear_fn), [Feeder()], steps=4)


def test_request_stop_ends_training_after_the_loop():
    model = fit(estimator_model(linear_fn, loop=4), [Recorder(stop_after=1)], steps=10)
    assert model.global_step == 4


@pytest.mark.parametrize("mode", [EVAL, PREDICT])
def test_hooks_run_once_per_loop_in_evaluate_and_predict(mode):
    model = fit(estimator_model(linear_fn, loop=2), [], steps=4)
    recorder = Recorder("global_step")
    callbacks = hooks.as_callbacks([recorder], mode)
    x = ones(3)  # 3 batches: loops of 2 and 1.
    if mode == EVAL:
        model.evaluate((x, None), callbacks=callbacks, verbose=0)
    else:
        model.predict(x, callbacks=callbacks, verbose=0)
    assert recorder.calls[:2] == ["begin", ("after_create_session", 4, None)]
    assert recorder.results == [4, 4]
    assert recorder.calls[-1] == ("end", 4)


@pytest.mark.parametrize(
    "mode, flag", [(EVAL, "stop_evaluating"), (PREDICT, "stop_predicting")], ids=["eval", "predict"]
)
def test_request_stop_sets_the_keras_stop_flag_of_the_mode(mode, flag):
    callback = hooks.HookCallback(Recorder(stop_after=1), mode)
    callback.set_model(estimator_model(linear_fn))
    callback.on_test_begin() if mode == EVAL else callback.on_predict_begin()
    callback.on_test_batch_end(0) if mode == EVAL else callback.on_predict_batch_end(0)
    assert getattr(callback.model, flag) is True


def test_a_hook_of_another_mode_is_not_called():
    recorder = Recorder()
    estimator_model(linear_fn).evaluate((ones(2), None), callbacks=hooks.as_callbacks([recorder], TRAIN), verbose=0)
    assert recorder.calls == []


# -- StopAtStepHook. ---------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, "One of num_steps or last_step must be specified."),
        ({"num_steps": 1, "last_step": 2}, "Only one of num_steps or last_step can be specified."),
        ({"num_steps": -1}, "`num_steps` must be None or an int >= 0. Received: num_steps=-1"),
        ({"last_step": 2.5}, "`last_step` must be None or an int >= 0. Received: last_step=2.5"),
    ],
)
def test_stop_at_step_hook_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        hooks.StopAtStepHook(**kwargs)


@pytest.mark.parametrize("loop, expected", [(2, 6), (4, 8)], ids=["aligned", "loop-end"])
def test_stop_at_last_step_stops_at_the_end_of_the_loop_reaching_it(loop, expected):
    model = fit(estimator_model(linear_fn, loop=loop), [hooks.StopAtStepHook(last_step=6)], steps=10)
    assert model.global_step == expected


def test_num_steps_counts_from_the_global_step_at_begin():
    hook = hooks.StopAtStepHook(num_steps=4)
    model = estimator_model(linear_fn, loop=2)
    fit(model, [hook], steps=10)
    assert (model.global_step, hook.last_step) == (4, 4)
    fit(model, [hook], steps=10)
    assert (model.global_step, hook.last_step) == (8, 8)


@pytest.mark.parametrize(
    "kwargs, start, expected",
    [({"last_step": 7}, 3, 7), ({"num_steps": 7}, 3, 10)],
    ids=["last_step", "num_steps"],
)
def test_target_step_tells_where_training_from_a_step_stops(kwargs, start, expected):
    assert hooks.StopAtStepHook(**kwargs).target_step(start) == expected


# -- LoggingTensorHook. ------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, "either at_end and/or exactly one of every_n_iter and every_n_secs"),
        ({"every_n_iter": 1, "every_n_secs": 1}, "either at_end and/or exactly one"),
        ({"every_n_iter": 0}, r"invalid every_n_iter=0\."),
        ({"every_n_secs": -1}, r"invalid every_n_secs=-1\."),
    ],
)
def test_logging_tensor_hook_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        hooks.LoggingTensorHook(["loss"], **kwargs)


@pytest.mark.parametrize("tensors", [3, "loss", None], ids=["int", "str", "none"])
def test_logging_tensor_hook_tensors_must_be_a_list_or_dict(tensors):
    with pytest.raises(ValueError, match="`tensors` must be a list of tensors or names, or a dict"):
        hooks.LoggingTensorHook(tensors, every_n_iter=1)


def messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def parse(message):
    """`(text before the loss, the loss, the next two characters)` of a logged line."""
    head, rest = message.split("loss = ")
    number = re.match(r"[-0-9.e]+", rest).group()
    return head + "loss = ", float(number), rest[len(number):][:2]


def test_logging_tensor_hook_on_a_tpu_counts_loops_as_tensorflow_counted_runs(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    hook = hooks.LoggingTensorHook(["global_step", "loss"], every_n_iter=4)
    fit(estimator_model(linear_fn, loop=2), [hook], steps=10)  # Loops end at 2, 4, 6, 8, 10.
    logged = messages(caplog)  # Runs 0 and 4: the loops' last steps, 1 and 9.
    assert [m.split(",")[0] for m in logged] == ["global_step = 1", "global_step = 9"]
    assert parse(logged[0]) == ("global_step = 1, loss = ", pytest.approx(0.9), "")
    assert parse(logged[1])[1:] == (pytest.approx(0.1), " (")
    assert logged[1].endswith(" sec)")


def test_logging_tensor_hook_orders_dict_tags_and_accepts_a_formatter(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    dict_hook = hooks.LoggingTensorHook({"step": "global_step", "a_loss": "loss"}, every_n_iter=100)
    formatted = hooks.LoggingTensorHook(
        {"step": "global_step"}, every_n_iter=100, formatter=lambda v: f"at {v['step']}"
    )
    fit(estimator_model(linear_fn, loop=2), [dict_hook, formatted], steps=2)
    first, second = messages(caplog)
    assert parse(first) == ("a_loss = ", pytest.approx(0.9), ", ")
    assert first.endswith(", step = 1") and second == "at 1"


def test_logging_tensor_hook_at_end_logs_the_last_values_once(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    fit(estimator_model(linear_fn, loop=4), [hooks.LoggingTensorHook(["global_step"], at_end=True)], steps=10)
    assert messages(caplog) == ["global_step = 9"]


def test_logging_tensor_hook_every_n_secs_logs_when_the_time_has_passed(caplog):
    caplog.set_level(logging.INFO, LOGGER)

    class Slow(hooks.SessionRunHook):  # The hook decides in before_run, as TensorFlow's.
        def before_run(self, run_context):
            time.sleep(0.06)

    hook = hooks.LoggingTensorHook(["global_step"], every_n_secs=0.05)
    fit(estimator_model(linear_fn, loop=2), [Slow(), hook], steps=6)
    assert [m.split(" (")[0] for m in messages(caplog)] == [
        "global_step = 1", "global_step = 3", "global_step = 5"
    ]


# -- NanTensorHook. ----------------------------------------------------------


def nan_at(step, steps=10, value=np.nan):
    x = ones(steps)
    x[step * BATCH] = value
    return x


class SaverRecorder(keras.callbacks.Callback):
    """Stands for a checkpoint saver: records the global step of every loop end."""

    def __init__(self):
        super().__init__()
        self.saved = []

    def on_train_batch_end(self, batch, logs=None):
        self.saved.append(self.model.global_step)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
@pytest.mark.parametrize("value", [np.nan, np.inf], ids=["nan", "inf"])
def test_nan_loss_raises_naming_the_first_bad_step(value):
    message = r"NaN loss during training\. The loss of global step 5 is"
    with pytest.raises(hooks.NanLossDuringTrainingError, match=message) as info:
        fit(estimator_model(linear_fn, loop=4), [hooks.NanTensorHook()], x=nan_at(5, value=value))
    assert info.value.global_step == 5
    assert isinstance(info.value, RuntimeError)


def test_nan_hook_first_keeps_the_saver_from_seeing_the_nan_loop():
    saver = SaverRecorder()
    model = estimator_model(linear_fn, loop=4)
    callbacks = hooks.as_callbacks([hooks.NanTensorHook(), saver], TRAIN)
    with pytest.raises(hooks.NanLossDuringTrainingError):
        model.fit((nan_at(5), None), callbacks=callbacks, shuffle=False, verbose=0)
    assert saver.saved == [4]


def test_nan_hook_without_failing_logs_and_stops_after_the_loop(caplog):
    caplog.set_level(logging.WARNING, LOGGER)
    hook = hooks.NanTensorHook("loss tensor of model_fn", fail_on_nan_loss=False)
    model = fit(estimator_model(linear_fn, loop=4), [hook], x=nan_at(5))
    assert model.global_step == 8
    assert "Model diverged with loss = nan at global step 5" in messages(caplog)[0]


def test_nan_hook_lets_finite_training_run():
    assert fit(estimator_model(linear_fn, loop=4), [hooks.NanTensorHook()], steps=10).global_step == 10


# -- CheckpointSaverListener and LoggingCallback. ---------------------------


def test_checkpoint_saver_listener_methods_are_no_ops():
    listener = hooks.CheckpointSaverListener()
    listener.begin()
    listener.before_save(None, 1)
    assert not listener.after_save(None, 1)
    listener.end(None, 1)


def test_logging_callback_logs_loss_and_steps_per_second(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    model = estimator_model(linear_fn, loop=2)
    model.fit((ones(10), None), callbacks=[hooks.LoggingCallback(4)], shuffle=False, verbose=0)
    # Loops end at 2, 4, ..., 10: the loss of the loops starting at 0, 4, 8 (steps 1, 5, 9),
    # the rate at 6 and 10 (2 starts the clock).
    logged = messages(caplog)[:-1]
    assert len(logged) == 5
    assert parse(logged[0]) == ("loss = ", pytest.approx(0.9), ", ") and logged[0].endswith("step = 1")
    assert logged[1].startswith("global_step/sec: ") and float(logged[1].split(": ")[1]) > 0
    assert parse(logged[2])[1] == pytest.approx(0.5) and re.search(r"step = 5 \(\d+\.\d{3} sec\)$", logged[2])
    assert logged[3].startswith("global_step/sec: ")
    assert parse(logged[4])[1] == pytest.approx(0.1) and ", step = 9 (" in logged[4]


def test_logging_callback_logs_the_loss_of_the_final_step_when_training_ends(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    model = estimator_model(linear_fn, loop=2)
    model.fit((ones(6), None), callbacks=[hooks.LoggingCallback(100)], shuffle=False, verbose=0)
    final = messages(caplog)[-1]  # Steps 0..5 have losses 1.0, 0.9, ..., 0.5.
    assert final.startswith("Loss for final step: ") and final.endswith(".")
    assert float(final[len("Loss for final step: "):-1]) == pytest.approx(0.5)


def test_evaluation_logging_callback_logs_start_end_and_results(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    model = estimator_model(linear_fn, loop=2)
    results = model.evaluate((ones(4), None), callbacks=[hooks.EvaluationLoggingCallback()],
                             return_dict=True, verbose=0)
    logged = messages(caplog)
    assert re.fullmatch(r"Starting evaluation at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", logged[0])
    assert re.fullmatch(r"Inference Time : \d+\.\d{5}s", logged[1])
    assert logged[2].startswith("Finished evaluation at ")
    expected = ", ".join(f"{k} = {v}" for k, v in sorted(dict(results, global_step=0).items()))
    assert logged[3] == f"Saving dict for global step 0: {expected}"


@pytest.mark.parametrize("value", [0, 2.5, None, True])
def test_logging_callback_every_n_steps_must_be_a_positive_int(value):
    with pytest.raises(ValueError, match=f"every_n_steps={value!r}"):
        hooks.LoggingCallback(value)


# -- Callbacks driven by hand-made logs, as EstimatorModel.fit gives them. --


class FakeModel:
    """What the callbacks read of a model besides the logs: the global step and the stop flag."""

    def __init__(self, global_step=0):
        self.global_step = global_step
        self.stop_training = False


def run_loop(callback, model, first_step, losses, batch=0):
    """Drives `callback` through one training loop, as `EstimatorModel.fit` does."""
    callback.on_train_batch_begin(batch)
    model.global_step = first_step + len(losses)
    callback.on_train_batch_end(batch, loop_logs(first_step, losses))


def test_hook_callback_fetches_the_loss_and_losses_from_the_logs():
    recorder = Recorder({"loss": "loss", "losses": "losses", "step": "global_step"})
    callback, model = hooks.HookCallback(recorder, TRAIN), FakeModel(global_step=5)
    callback.set_model(model)
    callback.on_train_begin()
    run_loop(callback, model, 5, [0.5, 0.25])
    result = recorder.results[0]
    assert result["loss"] == pytest.approx(0.25) and result["step"] == 6
    np.testing.assert_allclose(result["losses"], [0.5, 0.25])


def test_hook_callback_end_reads_the_logs_of_on_train_end():
    class EndLoss(hooks.SessionRunHook):
        def end(self, session):
            self.loss = session.run("loss")

    hook, model = EndLoss(), FakeModel()
    callback = hooks.HookCallback(hook, TRAIN)
    callback.set_model(model)
    callback.on_train_begin()
    run_loop(callback, model, 0, [0.5, 0.25])
    callback.on_train_end(loop_logs(2, [0.125]))
    assert hook.loss == pytest.approx(0.125)


def test_hook_callback_loss_before_the_first_loop_is_a_value_error():
    class EarlyLoss(hooks.SessionRunHook):
        def after_create_session(self, session, coord):
            session.run("loss")

    callback = hooks.HookCallback(EarlyLoss(), TRAIN)
    callback.set_model(FakeModel())
    with pytest.raises(ValueError, match="'loss' is known only after the first training loop"):
        callback.on_train_begin()


def test_hook_callback_logs_without_the_loop_keys_give_no_loss():
    callback = hooks.HookCallback(Recorder("losses"), TRAIN)
    callback.set_model(FakeModel())
    callback.on_train_begin()
    callback.on_train_batch_begin(0)
    with pytest.raises(ValueError, match="'losses' is known only after"):
        callback.on_train_batch_end(0, {"loss": 0.5})


def test_hook_callback_request_stop_sets_stop_training_of_the_model():
    callback, model = hooks.HookCallback(Recorder(stop_after=1), TRAIN), FakeModel()
    callback.set_model(model)
    callback.on_train_begin()
    run_loop(callback, model, 0, [1.0])
    assert model.stop_training is True


def test_logging_callback_reads_the_loss_and_step_from_the_logs(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    callback = hooks.LoggingCallback(4)  # No model: the logs are all it reads.
    callback.on_train_begin()
    for first, losses in [(0, [0.5, 0.375]), (2, [0.25, 0.125]), (4, [0.0625, 0.03125])]:
        callback.on_train_batch_end(first + 1, loop_logs(first, losses))
    logged = messages(caplog)  # Loops start at 0, 2, 4: logs of the first and the third.
    assert logged[0] == "loss = 0.375, step = 1"
    assert logged[1].startswith("global_step/sec: ")
    assert re.fullmatch(r"loss = 0\.03125, step = 5 \(\d+\.\d{3} sec\)", logged[2])
    assert len(logged) == 3


def test_logging_callback_logs_without_the_loop_keys_are_a_value_error():
    callback = hooks.LoggingCallback(1)
    callback.on_train_begin()
    with pytest.raises(ValueError, match="'loop_first_step' and 'loop_losses'"):
        callback.on_train_batch_end(0, {"loss": 0.5})
