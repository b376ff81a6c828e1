"""Batch normalization's other TF1 arguments, against TensorFlow 2.15's layers in graph mode.

`tf1.layers.batch_normalization`'s `renorm` (with `renorm_clipping` and
`renorm_momentum`), `virtual_batch_size` and `adjustment`, and
`tf1.contrib.layers.batch_norm`'s `renorm`, `adjustment`, `batch_weights`
and `zero_debias_moving_mean`. The reference
(tests/references/batch_norm_arguments_tf215.npz) comes from
tests/references/batch_norm_arguments_tf215.py: TF 2.21 has no
`tf.compat.v1.layers`. Each case runs several training steps on batches
whose statistics differ, so the moving statistics move; the outputs of
every step, the inference outputs before and after, and every variable's
name, shape and final value are compared. The library runs each step as
one `model_fn` call (eagerly), and a subset again inside the compiled
training loop of an `EstimatorModel` (`jax.jit` over a scan of the steps).
"""

import json
import os

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.compat.v1.contrib import layers as contrib_layers
from keras_tpu_estimator.compat.v1.contrib import slim
from keras_tpu_estimator.model_fn import store as store_lib

from model_fns import estimator_model
from model_fns import store_value

TRAIN, EVAL = kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL
REF = np.load(os.path.join(os.path.dirname(__file__), "references",
                           "batch_norm_arguments_tf215.npz"))
CASES = json.loads(str(REF["cases"]))
LAYER_CASES = CASES["layers"]
CONTRIB_CASES = CASES["contrib"]
TOLERANCE = dict(rtol=2e-5, atol=2e-5)


def channel_adjustment(ns):
    """The reference's `adjustment`: a scale and bias per channel (the last axis)."""
    def adjust(shape):
        channels = ns.cast(ns.range(shape[-1]), ns.float32)
        return 0.8 + 0.2 * channels, 0.1 * channels - 0.05
    return adjust


def arguments(case, clipping_of=tf1.constant):
    """The case's keyword arguments for the library (`clipping_of` makes tensor clipping)."""
    kwargs = dict(case["kwargs"])
    if "adjustment" in kwargs:
        kwargs["adjustment"] = channel_adjustment(tf1)
    if kwargs.pop("tensor_clipping", False):
        kwargs["renorm_clipping"] = {k: clipping_of(v) for k, v in
                                     kwargs["renorm_clipping"].items()}
    return kwargs


def initial(key, prefix=""):
    return {f"{name}{prefix}": tf1.constant_initializer(REF[f"{key}/initial/{name}"])
            for name in ("beta", "gamma", "moving_mean", "moving_variance")}


class Steps:
    """model_fn calls against one store: the first call of a mode builds, as the engine's."""

    def __init__(self):
        self.store = store_lib.VariableStore()
        self.built = set()

    def __call__(self, program, training):
        mode = TRAIN if training else EVAL
        with store_lib.model_fn_call(self.store, mode, mode not in self.built, 0, training):
            self.built.add(mode)
            return program()


def variables():
    """The variables of this model_fn call: names (creation order), shapes and values."""
    found = tf1.global_variables()
    return ([v.op.name for v in found], [list(v.shape) for v in found],
            {v.op.name: np.asarray(v) for v in found})


def check_variables(key, case, found):
    names, shapes, values = found
    assert names == case["names"]
    assert shapes == case["shapes"]
    for name in names:
        np.testing.assert_allclose(values[name], REF[f"{key}/final/{name}"], **TOLERANCE,
                                   err_msg=name)


# -- tf1.layers.batch_normalization and tf1.layers.BatchNormalization. -------------------


def layer_program(case, x, training, form):
    key = f"layers/{case['id']}"
    kwargs = {**initial(key, "_initializer"), **arguments(case)}
    if form == "function":
        return lambda: np.asarray(tf1.layers.batch_normalization(x, training=training, **kwargs))
    return lambda: np.asarray(tf1.layers.BatchNormalization(**kwargs)(x, training=training))


@pytest.mark.parametrize("form", ["function", "class"])
@pytest.mark.parametrize("case", LAYER_CASES, ids=[c["id"] for c in LAYER_CASES])
def test_layer_matches_tf_layers_over_training_steps(case, form):
    key = f"layers/{case['id']}"
    xs = REF[f"{key}/x"]
    steps = Steps()
    before = steps(layer_program(case, xs[-1], False, form), training=False)
    np.testing.assert_allclose(before, REF[f"{key}/eval_before"], **TOLERANCE)
    for step, x in enumerate(xs):
        out = steps(layer_program(case, x, True, form), training=True)
        np.testing.assert_allclose(out, REF[f"{key}/train"][step], **TOLERANCE,
                                   err_msg=f"step {step}")

    def after():
        return layer_program(case, xs[-1], False, form)(), variables()

    out, found = steps(after, training=False)
    np.testing.assert_allclose(out, REF[f"{key}/eval_after"], **TOLERANCE)
    check_variables(key, case, found)


# -- tf1.contrib.layers.batch_norm and slim.batch_norm. ---------------------------------


def contrib_program(module, case, x):
    key = f"contrib/{case['id']}"
    kwargs = arguments(case)
    if kwargs.pop("batch_weights", False):
        kwargs["batch_weights"] = REF[f"{key}/weights"]
    params = {name: init for name, init in initial(key).items()}
    return lambda: np.asarray(module.batch_norm(x, is_training=True, param_initializers=params,
                                                **kwargs))


@pytest.mark.parametrize("module", [contrib_layers, slim], ids=["contrib", "slim"])
@pytest.mark.parametrize("case", CONTRIB_CASES, ids=[c["id"] for c in CONTRIB_CASES])
def test_contrib_batch_norm_matches_tf_slim_over_training_steps(case, module):
    key = f"contrib/{case['id']}"
    steps = Steps()
    for step, x in enumerate(REF[f"{key}/x"]):
        out = steps(contrib_program(module, case, x), training=True)
        np.testing.assert_allclose(out, REF[f"{key}/train"][step], **TOLERANCE,
                                   err_msg=f"step {step}")
    stored = steps.store.variables
    check_variables(key, case, ([v.path for v in stored], [list(v.shape) for v in stored],
                                {v.path: np.asarray(v) for v in stored}))


# -- The same inside the compiled training loop (cases of batch 8: one a device). ---------

COMPILED_LAYER_CASES = ["renorm_clipped_tensors_2d", "renorm_fused_axis1_4d", "virtual_4d",
                        "virtual_renorm_3d", "adjustment_renorm_2d"]
COMPILED_CONTRIB_CASES = ["renorm_clipped_nchw_4d", "batch_weights_2d",
                          "zero_debias_not_fused_in_place_4d", "zero_debias_fused_2d"]


def compiled_training(key, case, normalize):
    """Trains an EstimatorModel (learning rate 0: only batch norm's statistics move) for
    the reference's steps, as one compiled loop; the store's values by name."""
    xs = REF[f"{key}/x"]

    def model_fn(features, labels, mode, params):
        training = mode == TRAIN
        out = normalize(features["x"], training)
        loss = tf1.reduce_mean(tf1.square(out))
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.0),
                                    predictions={"y": out})

    model = estimator_model(model_fn, loop=len(xs), batch=xs.shape[1])
    features = {"x": xs.reshape((-1,) + xs.shape[2:])}
    labels = np.zeros(len(features["x"]), "float32")
    model.fit((features, labels), epochs=1, shuffle=False, verbose=0)
    return model


@pytest.mark.parametrize("case_id", COMPILED_LAYER_CASES)
def test_layer_statistics_match_tf_layers_in_the_compiled_loop(case_id):
    case = next(c for c in LAYER_CASES if c["id"] == case_id)
    key = f"layers/{case_id}"

    def normalize(x, training):
        # A tensor of the step (a tracer under jit) as clipping, as a schedule would be.
        kwargs = arguments(case, clipping_of=lambda v: v + 0.0 * tf1.reduce_sum(x))
        return tf1.layers.batch_normalization(x, training=training, **initial(key, "_initializer"),
                                              **kwargs)

    model = compiled_training(key, case, normalize)
    for name in case["names"]:
        np.testing.assert_allclose(store_value(model, name), REF[f"{key}/final/{name}"],
                                   **TOLERANCE, err_msg=name)
    predicted = model.predict({"x": REF[f"{key}/x"][-1]}, verbose=0)["y"]
    np.testing.assert_allclose(predicted, REF[f"{key}/eval_after"], **TOLERANCE)


@pytest.mark.parametrize("case_id", COMPILED_CONTRIB_CASES)
def test_contrib_statistics_match_tf_slim_in_the_compiled_loop(case_id):
    case = next(c for c in CONTRIB_CASES if c["id"] == case_id)
    key = f"contrib/{case_id}"

    def normalize(x, training):
        kwargs = arguments(case)
        if kwargs.pop("batch_weights", False):
            kwargs["batch_weights"] = REF[f"{key}/weights"]
        return slim.batch_norm(x, is_training=training, param_initializers=initial(key),
                               **kwargs)

    model = compiled_training(key, case, normalize)
    assert list(model.store.variables_by_name()) == case["names"]
    for name in case["names"]:
        np.testing.assert_allclose(store_value(model, name), REF[f"{key}/final/{name}"],
                                   **TOLERANCE, err_msg=name)


# -- Arguments TF1 rejected. ------------------------------------------------------------

X4 = np.zeros((4, 3), "float32")


@pytest.mark.parametrize("call, message", [
    (lambda: tf1.layers.batch_normalization(X4, renorm=True, renorm_clipping={"rmaxx": 2.0}),
     "invalid keys for `renorm_clipping`"),
    (lambda: tf1.layers.batch_normalization(X4, virtual_batch_size=0),
     "`virtual_batch_size` must be a positive integer"),
    (lambda: tf1.layers.batch_normalization(X4, virtual_batch_size=2,
                                            adjustment=channel_adjustment(tf1)),
     "adjustment cannot be specified"),
    (lambda: tf1.layers.batch_normalization(X4, axis=0, virtual_batch_size=2),
     "axis cannot include 0"),
    (lambda: tf1.layers.batch_normalization(X4, virtual_batch_size=3, training=True),
     r"`virtual_batch_size` \(3\) must divide the batch size"),
    (lambda: slim.batch_norm(X4, renorm=True, renorm_clipping={"d": 1.0}),
     "invalid keys for `renorm_clipping`"),
    (lambda: slim.batch_norm(X4, renorm=True, updates_collections=None),
     "renorm is not supported with batch_weights, updates_collections"),
    (lambda: slim.batch_norm(X4, renorm=True, batch_weights=np.ones(4, "float32")),
     "renorm is not supported with batch_weights"),
    (lambda: slim.batch_norm(X4, renorm=True, zero_debias_moving_mean=True),
     "zero_debias_moving_mean"),
])
def test_arguments_tf1_rejected_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        Steps()(call, training=True)


def test_renorm_variables_are_in_the_estimators_checkpoint(tmp_path):
    from model_fns import estimator_config

    def model_fn(features, labels, mode, params):
        training = mode == TRAIN
        x = tf1.layers.batch_normalization(features["x"], renorm=True, training=training)
        x = tf1.layers.batch_normalization(x, virtual_batch_size=2, training=training)
        x = slim.batch_norm(x, zero_debias_moving_mean=True, is_training=training)
        loss = tf1.reduce_mean(tf1.square(x - labels[:, None]))
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf1.train.get_or_create_global_step())
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn(params):
        import tensorflow as tf

        rng = np.random.default_rng(0)
        x = rng.normal(size=(16, 3)).astype("float32")
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, 0]))
        return dataset.repeat().batch(params["batch_size"], drop_remainder=True)

    estimator = kte.TPUEstimator(model_fn=model_fn,
                                 config=estimator_config(tmp_path / "model", save_every=2),
                                 train_batch_size=8)
    estimator.train(input_fn, max_steps=2)
    names = set(estimator.get_variable_names())
    assert {"batch_normalization/moving_stddev", "batch_normalization/renorm_mean",
            "batch_normalization/renorm_stddev", "BatchNorm/BatchNorm/moving_mean/biased",
            "BatchNorm/BatchNorm/moving_mean/local_step"} <= names
    assert estimator.get_variable_value("batch_normalization_1/gamma").shape == (1, 1, 3)
    assert estimator.get_variable_value("BatchNorm/BatchNorm/moving_mean/local_step") == 2.0
