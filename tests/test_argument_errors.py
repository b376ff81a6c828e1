"""Bad arguments are refused at once, with an error naming the argument, the
value and what is allowed: no input_fn call, no model_fn call, no step."""

import re

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte

from model_fns import estimator_config
from model_fns import input_fn_of
from model_fns import linear_data
from model_fns import regression_fn


def make_estimator(model_dir, **kwargs):
    for name in ("train_batch_size", "eval_batch_size", "predict_batch_size"):
        kwargs.setdefault(name, 16)
    return kte.TPUEstimator(model_fn=regression_fn, config=estimator_config(model_dir, 5),
                            params={"lr": 0.05}, **kwargs)


@pytest.fixture
def estimator(tmp_path):
    return make_estimator(tmp_path / "model")


@pytest.fixture
def calls():
    """The batch sizes input_fn was called with: must stay empty."""
    return []


@pytest.fixture
def input_fn(calls):
    x, y = linear_data()
    return input_fn_of(x, y, repeat=True, calls=calls)


def run(estimator, method, input_fn, **kwargs):
    """Calls `estimator.<method>` for at most one step (predict: its first prediction)."""
    if method == "predict":
        return next(estimator.predict(input_fn, **kwargs))
    return getattr(estimator, method)(input_fn, steps=1, **kwargs)


# -- TPUEstimator(...) ---------------------------------------------------------


@pytest.mark.parametrize("name", ["use_tpu", "eval_on_tpu"])
@pytest.mark.parametrize("value", ["no", 1, None])
def test_tpu_switches_must_be_bools(tmp_path, name, value):
    with pytest.raises(TypeError, match=rf"`{name}` must be a bool.*{name}={re.escape(repr(value))}"):
        make_estimator(tmp_path, **{name: value})


@pytest.mark.parametrize("value", [False, np.bool_(False)])
def test_tpu_switches_take_python_and_numpy_bools(tmp_path, value):
    make_estimator(tmp_path, use_tpu=value, eval_on_tpu=value)


@pytest.mark.parametrize("value", [123, 1.5, ["ckpt"]])
def test_warm_start_from_must_be_a_path_or_settings_naming_it(tmp_path, value):
    with pytest.raises(ValueError, match=r"`warm_start_from` must be a checkpoint path.*"
                       r"WarmStartSettings.*warm_start_from=" + re.escape(repr(value))):
        make_estimator(tmp_path, warm_start_from=value)


# -- train / evaluate / predict: input_fn ------------------------------------------


@pytest.mark.parametrize("method", ["train", "evaluate", "predict"])
@pytest.mark.parametrize("value, shown", [(5, "5"), (None, "None"),
                                          (np.zeros((16, 4)), "array")])
def test_input_fn_must_be_callable_naming_it(estimator, method, value, shown):
    with pytest.raises(TypeError, match=r"`input_fn` must be a callable: input_fn\(params\).*"
                       r"mode.*config.*Received: input_fn=" + re.escape(shown)):
        run(estimator, method, value)


# -- train / evaluate: steps ----------------------------------------------------


@pytest.mark.parametrize("name", ["steps", "max_steps"])
@pytest.mark.parametrize("value", ["10", 2.5, True, [3]])
def test_train_step_counts_must_be_ints(estimator, input_fn, calls, name, value):
    with pytest.raises(TypeError, match=rf"`{name}` must be None or an int.*{name}="
                       + re.escape(repr(value))):
        estimator.train(input_fn, **{name: value})
    assert calls == []


@pytest.mark.parametrize("name", ["steps", "max_steps"])
@pytest.mark.parametrize("value", [0, -3])
def test_train_step_counts_must_be_positive_with_tensorflow_message(estimator, input_fn, calls,
                                                                   name, value):
    with pytest.raises(ValueError, match=rf"Must specify {name} > 0, given: {value}"):
        estimator.train(input_fn, **{name: value})
    assert calls == []


@pytest.mark.parametrize("value", ["3", 2.5, False])
def test_evaluate_steps_must_be_an_int(estimator, input_fn, calls, value):
    with pytest.raises(TypeError, match=r"`steps` must be None or an int.*steps="
                       + re.escape(repr(value))):
        estimator.evaluate(input_fn, steps=value)
    assert calls == []


def test_integral_float_steps_train_as_tensorflow_did(estimator, input_fn):
    estimator.train(input_fn, max_steps=4.0)
    assert estimator.get_variable_value("global_step") == 4


# -- hooks and saving_listeners -------------------------------------------------


class Hook(kte.SessionRunHook):
    pass


@pytest.mark.parametrize("method", ["train", "evaluate", "predict"])
@pytest.mark.parametrize("hooks", ["logging", Hook(), {"hook": Hook()}])
def test_hooks_must_be_a_list(estimator, input_fn, calls, method, hooks):
    with pytest.raises(TypeError, match=r"`hooks` must be None or a list of SessionRunHook.*"
                       r"hooks=" + re.escape(repr(hooks)[:20])):
        run(estimator, method, input_fn, hooks=hooks)
    assert calls == []


@pytest.mark.parametrize("method", ["train", "evaluate", "predict"])
def test_each_hook_must_be_a_session_run_hook(estimator, input_fn, calls, method):
    with pytest.raises(TypeError, match=r"Hooks must be a SessionRunHook.*given: 'logging'"):
        run(estimator, method, input_fn, hooks=[Hook(), "logging"])
    assert calls == []


@pytest.mark.parametrize("listeners", [[object()], "listener", [kte.CheckpointSaverListener, 1]])
def test_saving_listeners_must_be_checkpoint_saver_listeners(estimator, input_fn, calls,
                                                              listeners):
    with pytest.raises(TypeError, match=r"saving_listeners must be a list of "
                       r"CheckpointSaverListener"):
        estimator.train(input_fn, steps=2, saving_listeners=listeners)
    assert calls == []


@pytest.mark.parametrize("spec", [kte.TPUEstimatorSpec, kte.EstimatorSpec])
@pytest.mark.parametrize("field", ["training_hooks", "evaluation_hooks", "prediction_hooks"])
@pytest.mark.parametrize("bad, shown", [(object(), "<object object"),
                                        (kte.StopAtStepHook, "<class .*a class")])
def test_each_spec_hook_must_be_a_hook_naming_its_place(spec, field, bad, shown):
    with pytest.raises(TypeError, match=rf"`{field}\[1\]` must be a SessionRunHook.*"
                       rf"Received: {field}\[1\]={shown}"):
        spec(kte.ModeKeys.PREDICT, predictions={"x": np.zeros(3)}, **{field: [Hook(), bad]})


# -- predict_keys ---------------------------------------------------------------


@pytest.mark.parametrize("keys", [5, ["y", 5], {"y": 1}, b"y"])
def test_predict_keys_must_be_a_str_or_a_list_of_str(estimator, input_fn, calls, keys):
    with pytest.raises(TypeError, match=r"`predict_keys` must be None, a str or a list of "
                       r"str.*predict_keys=" + re.escape(repr(keys))):
        next(estimator.predict(input_fn, predict_keys=keys))
    assert calls == []


# -- predictions returned by model_fn -------------------------------------------


@pytest.mark.parametrize("spec", [kte.TPUEstimatorSpec, kte.EstimatorSpec])
@pytest.mark.parametrize("key", [1, ("y",), None])
def test_prediction_keys_must_be_strings(spec, key):
    with pytest.raises(ValueError, match=r"`predictions` must be.*string keys.*key "
                       + re.escape(repr(key))):
        spec(kte.ModeKeys.PREDICT, predictions={"x": np.zeros(3), key: np.ones(3)})


def test_predictions_without_the_batch_dimension_are_refused_naming_the_key(tmp_path):
    def model_fn(features, labels, mode, params):
        logits = kte.get_or_create_layer("dense", lambda: keras.layers.Dense(3))(features["x"])
        return kte.TPUEstimatorSpec(mode, predictions={"logits": logits,
                                                       "mean": keras.ops.mean(logits)})

    estimator = kte.TPUEstimator(model_fn=model_fn, config=estimator_config(tmp_path, 5),
                                 train_batch_size=16, predict_batch_size=16)
    x, _ = linear_data(20)  # A full batch and a short one.
    with pytest.raises(ValueError, match=r"Batch length of predictions should be same\. "
                       r"predictions\['mean'\] has .* where predictions\['logits'\] has .*"
                       r"batch dimension first"):
        list(estimator.predict(input_fn_of(x)))


# -- TPUStrategy: functions -------------------------------------------------------


@pytest.mark.parametrize("method, argument, call", [
    ("call_for_each_tower", "fn", lambda s: s.call_for_each_tower(5)),
    ("run", "fn", lambda s: s.run(5, args=(1,))),
    ("distribute_dataset", "dataset_fn", lambda s: s.distribute_dataset(5)),
    ("run_steps_on_dataset", "fn", lambda s: s.run_steps_on_dataset(5, iter([]))),
    ("merge_call", "merge_fn",
     lambda s: s.call_for_each_tower(lambda: kte.get_tower_context().merge_call(5))),
])
def test_strategy_functions_must_be_callable_naming_them(method, argument, call):
    with pytest.raises(TypeError, match=rf"`{argument}` of {method} must be callable.*"
                       rf"Received: {method}\({argument}=5\) of type int"):
        call(kte.TPUStrategy())
