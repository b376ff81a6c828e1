"""Bad arguments are refused at once, with an error naming the argument, the
value and what is allowed: no input_fn call, no model_fn call, no step."""

import re

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
