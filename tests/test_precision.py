"""Precision: bfloat16 compute with float32 variables.

Two ways in, one behaviour: TF1 programs open `tf1.tpu.bfloat16_scope()`,
Keras programs use the `mixed_bfloat16` dtype policy (globally, or per layer
created with `kte.get_or_create_layer`). Either way layers compute in
bfloat16 while the variables, the optimizer's slots, the metrics and the
checkpoints stay float32, so small updates are not rounded away.
"""

import keras
import ml_dtypes
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib

from model_fns import estimator_config
from model_fns import estimator_model
from model_fns import input_fn_of

TRAIN, EVAL, PREDICT = kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL, kte.ModeKeys.PREDICT
NUM_CLASSES = 3
BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
# bfloat16 keeps 8 significant bits: the spacing of the numbers near 1 is
# 2**-7. An update of 1e-4 is lost on a bfloat16 variable of 1, kept on a
# float32 one.
TINY = 1e-4


@pytest.fixture(autouse=True)
def _restore_dtype_policy():
    """Every test leaves Keras's global dtype policy as it found it."""
    previous = keras.config.dtype_policy()
    yield
    keras.config.set_dtype_policy(previous)


def classification_data(n=96, dim=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, dim)).astype("float32")
    y = np.argmax(x @ rng.normal(size=(dim, NUM_CLASSES)), axis=1).astype("int32")
    return {"x": x}, y


def classifier_fn(features, labels, mode, params):
    """Dense(16, relu) -> BatchNormalization -> Dense(NUM_CLASSES), of dtype
    `params["dtype"]` (None: Keras's global policy); a Keras loss object, the
    eval metrics `accuracy` and `mean_logit`, and the prediction `logits`.
    Records the dtypes it saw in `params["seen"]`."""
    dtype, seen = params.get("dtype"), params["seen"]
    training = mode == TRAIN
    hidden = kte.get_or_create_layer(
        "hidden", lambda: keras.layers.Dense(16, activation="relu", dtype=dtype)
    )(features["x"])
    hidden = kte.get_or_create_layer(
        "norm", lambda: keras.layers.BatchNormalization(dtype=dtype)
    )(hidden, training=training)
    logits = kte.get_or_create_layer(
        "logits", lambda: keras.layers.Dense(NUM_CLASSES, dtype=dtype)
    )(hidden)
    seen["logits"] = keras.backend.standardize_dtype(logits.dtype)
    if mode == PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"logits": logits})
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits)
    seen["loss"] = keras.backend.standardize_dtype(loss.dtype)
    if mode == EVAL:
        def metric_fn(labels, logits):
            return {
                "accuracy": kte.metrics.accuracy(labels, keras.ops.argmax(logits, -1)),
                "mean_logit": kte.metrics.mean(keras.ops.mean(logits, -1)),
            }

        return kte.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.Adam(0.05))


def trained_classifier(dtype=None, epochs=3):
    """An EstimatorModel of `classifier_fn` fitted `epochs` epochs; the model,
    the dtypes `classifier_fn` saw, and the fit history."""
    keras.utils.set_random_seed(0)
    seen = {}
    model = estimator_model(classifier_fn, params={"dtype": dtype, "seen": seen})
    features, labels = classification_data()
    history = model.fit(features, labels, epochs=epochs, shuffle=False, verbose=0)
    return model, seen, history.history


@pytest.fixture(scope="module")
def float32_run():
    return trained_classifier()


@pytest.fixture(scope="module")
def mixed_run():
    """`trained_classifier()` under the global `mixed_bfloat16` policy."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        return trained_classifier()
    finally:
        keras.config.set_dtype_policy(previous)


def variable_dtypes(model):
    return {path: keras.backend.standardize_dtype(v.dtype)
            for path, v in model.store.variables_by_name().items()}


def evaluation(model):
    features, labels = classification_data()
    return model.evaluate(features, labels, verbose=0, return_dict=True)


# -- The mixed_bfloat16 policy with EstimatorModel. ---------------------------


def test_under_the_global_policy_layers_compute_in_bfloat16(mixed_run):
    _, seen, _ = mixed_run
    assert seen["logits"] == "bfloat16"


def test_under_the_global_policy_variables_and_optimizer_slots_stay_float32(mixed_run):
    model, _, _ = mixed_run
    assert set(variable_dtypes(model).values()) == {"float32"}
    slots = [v for v in model.optimizer.variables if "iteration" not in v.path]
    assert slots and {keras.backend.standardize_dtype(v.dtype) for v in slots} == {"float32"}


def test_layers_created_with_the_mixed_bfloat16_dtype_compute_in_bfloat16():
    model, seen, _ = trained_classifier(dtype="mixed_bfloat16", epochs=1)
    assert keras.config.dtype_policy().name == "float32"
    assert seen["logits"] == "bfloat16"
    assert set(variable_dtypes(model).values()) == {"float32"}


def test_keras_losses_compute_the_loss_in_float32_from_bfloat16_logits(mixed_run):
    _, seen, _ = mixed_run
    assert seen["logits"] == "bfloat16" and seen["loss"] == "float32"


def test_fit_learns_as_float32_does(mixed_run, float32_run):
    mixed, float32 = mixed_run[2]["loss"], float32_run[2]["loss"]
    assert mixed[-1] < 0.5 * mixed[0]
    np.testing.assert_allclose(mixed, float32, rtol=0.02)


def test_evaluate_scores_as_float32_does(mixed_run, float32_run):
    results, float32 = evaluation(mixed_run[0]), evaluation(float32_run[0])
    assert set(results) == {"loss", "accuracy", "mean_logit"}
    assert abs(results["accuracy"] - float32["accuracy"]) <= 2 / len(classification_data()[1])
    np.testing.assert_allclose(results["loss"], float32["loss"], rtol=0.02)


def test_metrics_accumulate_in_float32(mixed_run):
    model, _, _ = mixed_run
    evaluation(model)
    floats = [v for m in model.metrics for v in m.variables if "float" in str(v.dtype)]
    assert floats and {keras.backend.standardize_dtype(v.dtype) for v in floats} == {"float32"}


def test_predict_returns_the_layers_bfloat16_outputs(mixed_run):
    model, _, _ = mixed_run
    features, _ = classification_data()
    predictions = model.predict(features, verbose=0)
    assert predictions["logits"].dtype == BFLOAT16
    assert predictions["logits"].shape == (len(features["x"]), NUM_CLASSES)


def step_fn(features, labels, mode, params):
    """A scalar weight `w` starting at 1 (under `params["dtype"]` when given),
    trained by SGD(1) on loss `TINY * w`: each step subtracts TINY."""
    layer = kte.get_or_create_layer("scale", lambda: Scale(dtype=params.get("dtype")))
    loss = keras.ops.cast(keras.ops.mean(layer(features)), "float32") * TINY
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(1.0))


class Scale(keras.layers.Layer):
    """`inputs * w`, `w` a scalar starting at 1."""

    def build(self, shape):
        self.w = self.add_weight(shape=(), initializer="ones", name="w")

    def call(self, inputs):
        return inputs * self.w


def test_small_updates_accumulate_in_the_float32_variables():
    model = estimator_model(step_fn, loop=1, params={"dtype": "mixed_bfloat16"})
    model.fit(np.ones((16 * 3, 1), "float32"), epochs=1, verbose=0)
    [w] = model.store.variables_by_name().values()
    np.testing.assert_allclose(np.asarray(w.value), 1 - 3 * TINY, rtol=1e-6)


def mixed_estimator(model_dir):
    """A TPUEstimator of `classifier_fn` in `model_dir`, under `mixed_bfloat16`."""
    keras.config.set_dtype_policy("mixed_bfloat16")
    return kte.TPUEstimator(
        model_fn=classifier_fn, config=estimator_config(model_dir, save_every=4),
        params={"seen": {}}, train_batch_size=16, eval_batch_size=16, predict_batch_size=8,
    )


@pytest.fixture(scope="module")
def estimator_dir(tmp_path_factory):
    """A model_dir trained 4 steps under `mixed_bfloat16`."""
    model_dir = tmp_path_factory.mktemp("mixed")
    previous = keras.config.dtype_policy()
    try:
        features, labels = classification_data(32)
        mixed_estimator(model_dir).train(
            input_fn_of(features["x"], labels, repeat=True), max_steps=4
        )
    finally:
        keras.config.set_dtype_policy(previous)
    return model_dir


def test_estimator_checkpoints_hold_float32_variables(estimator_dir):
    estimator = mixed_estimator(estimator_dir)
    dtypes = {name: estimator.get_variable_value(name).dtype.name
              for name in estimator.get_variable_names() if name != "global_step"}
    assert "logits/kernel" in dtypes and "norm/moving_mean" in dtypes
    assert {d for name, d in dtypes.items() if "iteration" not in name} == {"float32"}


def test_estimator_resumes_and_evaluates_under_the_policy(estimator_dir):
    features, labels = classification_data(32)
    results = mixed_estimator(estimator_dir).evaluate(input_fn_of(features["x"], labels))
    assert results["global_step"] == 4 and np.isfinite(results["loss"])


def test_export_serves_what_predict_gives_under_the_policy(estimator_dir, tmp_path):
    import tensorflow as tf  # Only where a test reloads an export.

    estimator = mixed_estimator(estimator_dir)
    features, _ = classification_data(8)

    def receiver_fn():
        x = kte.export.placeholder(shape=(None, 8), dtype="float32", name="x")
        return kte.export.ServingInputReceiver(features={"x": x}, receiver_tensors={"x": x})

    path = estimator.export_saved_model(str(tmp_path), receiver_fn)
    [predicted] = estimator.predict(input_fn_of(features["x"]), yield_single_examples=False)
    served = tf.saved_model.load(path).signatures["serving_default"](x=tf.constant(features["x"]))
    np.testing.assert_array_equal(
        as_float32(served["logits"].numpy()), as_float32(predicted["logits"])
    )


# -- tf1.tpu.bfloat16_scope. --------------------------------------------------

X = np.random.default_rng(0).normal(size=(4, 6)).astype("float32")


def run(program, mode=TRAIN, store=None):
    """Calls `program` as model_fn code would be, against `store`."""
    store = store_lib.VariableStore() if store is None else store
    with store_lib.model_fn_call(store, mode, True, 0, mode == TRAIN):
        return program()


def as_float32(value):
    return np.asarray(value).astype("float32")


def test_bfloat16_scope_layers_multiply_bfloat16_roundings_of_float32_weights():
    def program():
        with tf1.tpu.bfloat16_scope():
            out = tf1.layers.dense(
                tf1.cast(X, tf1.bfloat16), 2, bias_initializer=tf1.ones_initializer()
            )
        [kernel, bias] = [v.value() for v in tf1.global_variables()]
        return out, kernel, bias

    out, kernel, bias = run(program)
    assert kernel.dtype == "float32" and out.dtype == "bfloat16"
    rounded = lambda a: as_float32(np.asarray(a).astype(BFLOAT16))  # noqa: E731
    expected = rounded(rounded(X) @ rounded(kernel) + rounded(bias))
    np.testing.assert_allclose(as_float32(out), expected, atol=2e-2)
    # Not the float32 product: it differs by bfloat16's rounding.
    assert np.abs(as_float32(out) - (X @ as_float32(kernel) + 1)).max() > 1e-4


def test_bfloat16_scope_leaves_float32_inputs_in_float32():
    # TF1's layers take their dtype from their input; the scope changes only
    # variables asked for in bfloat16.
    def program():
        with tf1.tpu.bfloat16_scope():
            out = tf1.layers.dense(X, 2)
        return out, tf1.global_variables()[0].value()

    out, kernel = run(program)
    assert out.dtype == "float32"
    np.testing.assert_allclose(out, X @ np.asarray(kernel), rtol=1e-5, atol=1e-6)


def test_layers_on_bfloat16_inputs_outside_the_scope_have_bfloat16_variables():
    def program():
        tf1.layers.dense(tf1.cast(X, tf1.bfloat16), 2)
        return [(v.name, v.dtype) for v in tf1.global_variables()]

    assert run(program) == [("dense/kernel:0", "bfloat16"), ("dense/bias:0", "bfloat16")]


def test_tf1_layers_follow_a_global_policy_the_program_set():
    # Keras's rules, not TF1's: the second layer's bfloat16 input does not
    # give it bfloat16 variables.
    keras.config.set_dtype_policy("mixed_bfloat16")

    def program():
        out = tf1.layers.dense(tf1.layers.dense(X, 3), 2)
        return out, {v.name: v.dtype for v in tf1.global_variables()}

    out, variables = run(program)
    assert out.dtype == "bfloat16"
    assert set(variables.values()) == {"float32"} and len(variables) == 4


@pytest.mark.parametrize("scoped", [True, False], ids=["in-scope", "outside"])
def test_batch_normalization_of_bfloat16_keeps_float32_parameters_and_statistics(scoped):
    images = np.random.default_rng(1).normal(3.0, 2.0, size=(8, 4, 4, 2)).astype("float32")

    def program():
        with tf1.tpu.bfloat16_scope() if scoped else tf1.variable_scope("bn"):
            out = tf1.layers.batch_normalization(
                tf1.cast(images, tf1.bfloat16), training=True, momentum=0.0
            )
        return out, {v.name.split("/")[-1]: v for v in tf1.global_variables()}

    out, variables = run(program)
    assert out.dtype == "bfloat16"
    assert {v.dtype for v in variables.values()} == {"float32"}
    # The statistics of the batch, computed in float32 from the bfloat16 input.
    batch = as_float32(images.astype(BFLOAT16))
    np.testing.assert_allclose(
        as_float32(variables["moving_mean:0"].value()), batch.mean((0, 1, 2)), rtol=1e-5
    )


def scoped_step_fn(features, labels, mode, params):
    """TF1: `w` (float32, read in bfloat16 inside the scope) starting at 1,
    trained by GradientDescent(1) on loss `TINY * mean(x * w)`."""
    with tf1.tpu.bfloat16_scope():
        w = tf1.get_variable(
            "w", shape=(), dtype=tf1.bfloat16, initializer=tf1.ones_initializer()
        )
        y = tf1.cast(features, tf1.bfloat16) * w
    loss = tf1.reduce_mean(tf1.cast(y, tf1.float32)) * TINY
    train_op = tf1.train.GradientDescentOptimizer(1.0).minimize(
        loss, global_step=tf1.train.get_global_step()
    )
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def test_bfloat16_scope_small_updates_accumulate_in_the_float32_variables():
    model = estimator_model(scoped_step_fn, loop=1)
    model.fit(np.ones((16 * 3, 1), "float32"), epochs=1, verbose=0)
    w = model.store.variables_by_name()["w"]
    assert keras.backend.standardize_dtype(w.dtype) == "float32"
    np.testing.assert_allclose(np.asarray(w.value), 1 - 3 * TINY, rtol=1e-6)
