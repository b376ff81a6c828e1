"""Specification of `keras_tpu_estimator.model_fn`: calling model_fn and input_fn."""

import functools
import re

import jax
import keras
import numpy as np
import pytest

from keras_tpu_estimator.inputs.input_fn import call_input_fn
from keras_tpu_estimator.model_fn.call import call_model_fn
from keras_tpu_estimator.model_fn.call import check_model_fn
from keras_tpu_estimator.model_fn.call import check_params
from keras_tpu_estimator.model_fn.call import input_names
from keras_tpu_estimator.spec import EstimatorSpec
from keras_tpu_estimator.spec import ModeKeys
from keras_tpu_estimator.spec import TPUEstimatorSpec

ALL_ARGS = frozenset(["features", "labels", "mode", "params", "config"])
FEATURES = {"x": np.ones((4, 2), np.float32)}
LABELS = np.zeros((4,), np.int32)
LOSS = np.float32(0.5)
PARAMS = {"batch_size": 4}
CONFIG = object()


def train_spec():
    return TPUEstimatorSpec(ModeKeys.TRAIN, loss=LOSS)


class Model:
    def model_fn(self, features, labels, mode):
        return train_spec()

    def __call__(self, features, params):
        return train_spec()

    @classmethod
    def create(cls, features, config):
        return train_spec()


def hparams_model_fn(hparams, features, labels, mode, params):
    return train_spec()


def call(model_fn, labels=LABELS, mode=ModeKeys.TRAIN):
    return call_model_fn(model_fn, FEATURES, labels, mode, PARAMS, CONFIG)


# ----------------------------------------------------------------------
# check_model_fn


@pytest.mark.parametrize(
    "model_fn, name",
    [
        (lambda features, labels: None, "labels"),
        (lambda features, mode: None, "mode"),
        (lambda features, params: None, "params"),
        (lambda features, config: None, "config"),
    ],
    ids=["labels", "mode", "params", "config"],
)
def test_model_fn_may_take_each_optional_argument(model_fn, name):
    assert check_model_fn(model_fn) == {"features", name}


def test_model_fn_may_take_only_features():
    assert check_model_fn(lambda features: None) == {"features"}


def test_model_fn_may_take_all_five_arguments_in_any_order():
    def model_fn(params, config, mode, labels, features):
        pass

    assert check_model_fn(model_fn) == ALL_ARGS


def test_model_fn_with_kwargs_accepts_all_five_arguments():
    assert check_model_fn(lambda **kwargs: None) == ALL_ARGS
    assert check_model_fn(lambda features, **kwargs: None) == ALL_ARGS


@pytest.mark.parametrize(
    "model_fn, accepted",
    [
        (Model().model_fn, {"features", "labels", "mode"}),
        (Model(), {"features", "params"}),
        (functools.partial(hparams_model_fn, "hparams"), ALL_ARGS - {"config"}),
        (functools.partial(hparams_model_fn, hparams="hparams"), ALL_ARGS - {"config"}),
        (functools.partial(Model().model_fn, labels=None), {"features", "mode"}),
        (Model.create, {"features", "config"}),
    ],
    ids=[
        "bound-method", "callable-object", "partial-positional", "partial-keyword",
        "partial-of-method", "classmethod",
    ],
)  # fmt: skip
def test_model_fn_signature_is_read_from_any_callable(model_fn, accepted):
    assert check_model_fn(model_fn) == accepted


@pytest.mark.parametrize(
    "model_fn",
    [lambda labels, mode: None, lambda inputs: None, lambda: None, lambda *args: None],
    ids=["no-features", "renamed", "no-args", "varargs-only"],
)
def test_model_fn_must_take_features(model_fn):
    with pytest.raises(
        ValueError,
        match=re.escape(f"model_fn ({model_fn}) must include features argument."),
    ):
        check_model_fn(model_fn)


@pytest.mark.parametrize(
    "model_fn, unexpected",
    [
        (lambda features, foo: None, ["foo"]),
        (lambda features, labels, mode, hparams=None: None, ["hparams"]),
        (lambda features, foo, *, bar: None, ["foo", "bar"]),
        (lambda features, self: None, ["self"]),
        (hparams_model_fn, ["hparams"]),
    ],
    ids=["positional", "with-default", "keyword-only", "self", "unbound-hparams"],
)
def test_model_fn_rejects_other_arguments_with_tensorflow_message(model_fn, unexpected):
    message = f"model_fn ({model_fn}) has following not expected args: {unexpected}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        check_model_fn(model_fn)


@pytest.mark.parametrize("model_fn", [None, "model_fn", 3])
def test_model_fn_must_be_callable(model_fn):
    with pytest.raises(ValueError, match="`model_fn` must be callable"):
        check_model_fn(model_fn)


def test_model_fn_arguments_cannot_be_positional_only():
    def model_fn(features, /, labels):
        pass

    with pytest.raises(ValueError, match=r"positional-only arguments \['features'\]"):
        check_model_fn(model_fn)


# ----------------------------------------------------------------------
# call_model_fn


def spec_with(received):
    """A train spec carrying what model_fn received, in the unchecked train_op."""
    return TPUEstimatorSpec(ModeKeys.TRAIN, loss=LOSS, train_op=received)


@pytest.mark.parametrize(
    "model_fn, passed",
    [
        (lambda features: spec_with(locals()), {"features"}),
        (lambda features, labels: spec_with(locals()), {"features", "labels"}),
        (lambda features, mode: spec_with(locals()), {"features", "mode"}),
        (lambda features, params: spec_with(locals()), {"features", "params"}),
        (lambda features, config: spec_with(locals()), {"features", "config"}),
        (lambda config, params, mode, labels, features: spec_with(locals()), ALL_ARGS),
        (lambda **kwargs: spec_with(kwargs), ALL_ARGS),
    ],
    ids=["features", "labels", "mode", "params", "config", "all", "kwargs"],
)
def test_call_model_fn_passes_only_the_arguments_model_fn_takes(model_fn, passed):
    values = {
        "features": FEATURES, "labels": LABELS, "mode": ModeKeys.TRAIN,
        "params": PARAMS, "config": CONFIG,
    }  # fmt: skip
    labels = LABELS if "labels" in passed else None
    received = call_model_fn(
        model_fn, FEATURES, labels, ModeKeys.TRAIN, PARAMS, CONFIG
    ).train_op
    assert received == {name: values[name] for name in passed}


def test_call_model_fn_passes_arguments_by_keyword():
    def model_fn(mode, features):
        assert (mode, features) == (ModeKeys.TRAIN, FEATURES)
        return train_spec()

    call(model_fn, labels=None)


def test_call_model_fn_passes_none_labels_to_a_model_fn_taking_labels():
    def model_fn(features, labels):
        assert labels is None
        return train_spec()

    call(model_fn, labels=None)


def test_call_model_fn_rejects_labels_model_fn_does_not_take():
    with pytest.raises(
        ValueError,
        match="^model_fn does not take labels, but input_fn returns labels.$",
    ):
        call(lambda features: train_spec(), labels=LABELS)


def test_call_model_fn_checks_the_signature_first():
    with pytest.raises(
        ValueError, match="has following not expected args: \\['foo'\\]"
    ):
        call(lambda features, labels, foo: train_spec())


def test_call_model_fn_returns_a_tpu_spec_unchanged():
    spec = train_spec()
    assert call(lambda features, labels: spec) is spec


def test_call_model_fn_converts_an_estimator_spec():
    def model_fn(features, labels, mode):
        return EstimatorSpec(mode, loss=LOSS, eval_metric_ops={"acc": LOSS})

    spec = call(model_fn, mode=ModeKeys.EVAL)
    assert isinstance(spec, TPUEstimatorSpec)
    metric_fn, tensors = spec.eval_metrics
    assert metric_fn(**tensors) == {"acc": LOSS}


@pytest.mark.parametrize(
    "result",
    [None, {"loss": LOSS}, LOSS, (ModeKeys.TRAIN, None, LOSS)],
    ids=["none", "dict", "loss", "tuple"],
)
def test_call_model_fn_requires_a_spec(result):
    model_fn = lambda features, labels: result  # noqa: E731
    with pytest.raises(
        ValueError,
        match=re.escape(
            "model_fn should return an EstimatorSpec or a TPUEstimatorSpec. "
        )
        + ".*returned: ",
    ):
        call(model_fn)


@pytest.mark.parametrize(
    "mode, spec, missing",
    [
        (ModeKeys.TRAIN, TPUEstimatorSpec(ModeKeys.TRAIN), "loss"),
        (ModeKeys.EVAL, TPUEstimatorSpec(ModeKeys.EVAL, predictions=LOSS), "loss"),
        (
            ModeKeys.PREDICT,
            TPUEstimatorSpec(ModeKeys.PREDICT, loss=LOSS),
            "predictions",
        ),
        (ModeKeys.TRAIN, EstimatorSpec(ModeKeys.TRAIN, train_op="op"), "loss"),
    ],
    ids=["train", "eval", "predict", "estimator-spec"],
)
def test_call_model_fn_requires_the_fields_of_the_mode(mode, spec, missing):
    with pytest.raises(ValueError, match=f"Missing {missing}"):
        call(lambda features, labels: spec, mode=mode)


def test_call_model_fn_requires_the_spec_of_the_mode_it_was_called_in():
    with pytest.raises(
        ValueError,
        match="called with mode='eval' but returned a TPUEstimatorSpec with mode='train'",
    ):
        call(lambda features, labels: train_spec(), mode=ModeKeys.EVAL)


# ----------------------------------------------------------------------
# check_params


def test_params_none_becomes_an_empty_dict():
    assert check_params(None) == {}


def test_params_are_copied():
    params = {"learning_rate": 0.1}
    checked = check_params(params)
    checked["batch_size"] = 8
    assert checked is not params
    assert params == {"learning_rate": 0.1}


@pytest.mark.parametrize("key", ["batch_size", "context"])
def test_params_reserved_keys_fail_with_tensorflow_message(key):
    params = {key: 8, "lr": 0.1}
    message = (
        f"['batch_size', 'context'] are reserved keys but existed in params {params}."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        check_params(params)


@pytest.mark.parametrize(
    "params", [[("lr", 0.1)], "lr=0.1", 3], ids=["list", "str", "int"]
)
def test_params_must_be_a_dict(params):
    with pytest.raises(
        ValueError,
        match=re.escape(
            f"`params` must be None or a dict. Received: params={params!r}"
        ),
    ):
        check_params(params)


# ----------------------------------------------------------------------
# call_input_fn


@pytest.mark.parametrize(
    "input_fn, passed",
    [
        (lambda: {}, set()),
        (lambda params: locals(), {"params"}),
        (lambda mode: locals(), {"mode"}),
        (lambda config: locals(), {"config"}),
        (lambda config, mode, params: locals(), {"params", "mode", "config"}),
        (lambda params, shuffle=True: locals(), {"params", "shuffle"}),
        (lambda **kwargs: kwargs, {"params", "mode", "config"}),
    ],
    ids=["nothing", "params", "mode", "config", "all", "extra-with-default", "kwargs"],
)
def test_call_input_fn_passes_only_the_arguments_input_fn_takes(input_fn, passed):
    values = {
        "params": PARAMS,
        "mode": ModeKeys.EVAL,
        "config": CONFIG,
        "shuffle": True,
    }
    received = call_input_fn(input_fn, PARAMS, ModeKeys.EVAL, CONFIG)
    assert received == {name: values[name] for name in passed}


def test_call_input_fn_returns_what_input_fn_returns():
    dataset = object()
    assert (
        call_input_fn(lambda params: dataset, PARAMS, ModeKeys.TRAIN, CONFIG) is dataset
    )


@pytest.mark.parametrize(
    "input_fn, names",
    [
        (lambda params, data_dir: None, ["data_dir"]),
        (lambda batch_size, *, is_training: None, ["batch_size", "is_training"]),
    ],
    ids=["positional", "keyword-only"],
)
def test_call_input_fn_rejects_other_required_arguments(input_fn, names):
    with pytest.raises(
        ValueError,
        match=re.escape(
            f"has following not expected args: {names}. input_fn may take any of ['params', 'mode', 'config']"
        ),
    ):
        call_input_fn(input_fn, PARAMS, ModeKeys.TRAIN, CONFIG)


def test_call_input_fn_reads_partials():
    def input_fn(data_dir, params):
        return data_dir, params

    result = call_input_fn(
        functools.partial(input_fn, "/data"), PARAMS, ModeKeys.TRAIN, CONFIG
    )
    assert result == ("/data", PARAMS)


def test_input_fn_must_be_callable():
    with pytest.raises(ValueError, match="`input_fn` must be callable"):
        call_input_fn("input_fn", PARAMS, ModeKeys.TRAIN, CONFIG)


# ----------------------------------------------------------------------
# Tensor names


@pytest.mark.parametrize(
    "features, labels, expected",
    [
        ({"ids": "A", "mask": "B"}, "C", ["ids", "mask", "labels"]),
        ("A", None, ["features"]),
        ({"image": ("A", "B")}, {"class": "C"}, ["image/0", "image/1", "labels/class"]),
        ([{"a": "A"}], ("C",), ["0/a", "labels/0"]),
    ],
    ids=["dict", "lone", "nested", "lists"],
)
def test_input_names_follow_the_keys(features, labels, expected):
    arrays = {}

    def tensor(letter):
        return arrays.setdefault(letter, np.zeros((2,)))

    features = jax.tree.map(tensor, features)
    labels = jax.tree.map(tensor, labels)
    assert [name for _, name in input_names(features, labels)] == expected


def test_call_model_fn_names_symbolic_features_and_labels():
    seen = {}

    def model_fn(features, labels):
        seen.update(x=features["x"].name, y=labels.name)
        return train_spec()

    features = {"x": keras.KerasTensor((4, 2))}
    call_model_fn(model_fn, features, keras.KerasTensor((4,)), ModeKeys.TRAIN, PARAMS, CONFIG)
    assert seen == {"x": "x", "y": "labels"}


def test_call_model_fn_names_traced_tensors():
    seen = []

    def model_fn(features, labels):
        hidden = features["x"] * 2.0
        seen.extend([features["x"].name, labels.name, hidden.name])
        return TPUEstimatorSpec(ModeKeys.TRAIN, loss=jax.numpy.sum(hidden))

    jax.jit(lambda x, y: call_model_fn(model_fn, {"x": x}, y, ModeKeys.TRAIN, PARAMS, CONFIG).loss)(
        np.ones((4, 2), np.float32), np.zeros((4,), np.int32)
    )
    assert seen == ["x", "labels", "tensor"]
