"""EstimatorModel: model_fn / TPUEstimatorSpec through fit, evaluate, predict."""

import jax
import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte

from model_fns import estimator_model
from model_fns import linear_fn_of
from model_fns import with_host_call

NUM_CLASSES = 3


def make_data(n=96, dim=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, dim)).astype("float32")
    w = rng.normal(size=(dim, NUM_CLASSES))
    y = np.argmax(x @ w, axis=1).astype("int32")
    return {"x": x}, y


def classifier_fn(features, labels, mode, params):
    hidden = kte.get_or_create_layer(
        "hidden", lambda: keras.layers.Dense(params.get("hidden", 16), activation="relu")
    )(features["x"])
    logits = kte.get_or_create_layer("logits", lambda: keras.layers.Dense(NUM_CLASSES))(hidden)
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(
            mode, predictions={"class": keras.ops.argmax(logits, -1), "logits": logits}
        )
    loss = keras.ops.mean(
        keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    )
    if mode == kte.ModeKeys.EVAL:

        def metric_fn(labels, logits):
            return {
                "accuracy": kte.metrics.accuracy(
                    labels=labels, predictions=keras.ops.argmax(logits, -1)
                ),
                "mean_logit": keras.ops.mean(logits),
            }

        return kte.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.Adam(0.05))


def make_model(model_fn=classifier_fn, **kwargs):
    """estimator_model of `model_fn`, params {"hidden": 16} unless `kwargs` say otherwise."""
    kwargs.setdefault("params", {"hidden": 16})
    return estimator_model(model_fn, **kwargs)


class StepRecorder(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.train_batches, self.epochs = [], []

    def on_train_batch_end(self, batch, logs=None):
        self.train_batches.append(batch)

    def on_epoch_end(self, epoch, logs=None):
        self.epochs.append(dict(logs))


# -- The user's program of the issue, end to end. ----------------------------


def test_fit_evaluate_predict_end_to_end():
    features, labels = make_data()
    model = make_model()
    history = model.fit((features, labels), epochs=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    results = model.evaluate((features, labels), return_dict=True, verbose=0)
    assert set(results) == {"loss", "accuracy", "mean_logit"}
    assert results["accuracy"] > 0.8
    predictions = model.predict(features, verbose=0)
    assert predictions["class"].shape == (96,)
    assert predictions["logits"].shape == (96, NUM_CLASSES)


def test_input_fn_returning_a_dataset_reads_params_batch_size():
    features, labels = make_data()
    seen = []

    def input_fn(params):
        seen.append(params["batch_size"])
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(
            params["batch_size"], drop_remainder=True
        )

    model = make_model()
    model.fit(input_fn, epochs=2, verbose=0)
    assert seen == [16]
    assert model.evaluate(input_fn, verbose=0, return_dict=True)["accuracy"] >= 0


@pytest.mark.parametrize(
    "input_fn",
    [
        lambda: make_data(),
        lambda params: make_data(),
        lambda mode: make_data(),
        lambda params, mode, config: make_data(),
    ],
    ids=["no-args", "params", "mode", "params-mode-config"],
)
def test_input_fn_may_take_any_of_params_mode_config(input_fn):
    model = make_model()
    model.fit(input_fn, epochs=1, verbose=0)
    assert model.store.trainable_variables


def test_input_fn_receives_mode_and_config():
    received = {}

    def input_fn(mode, config):
        received[mode] = config
        return make_data()

    model = make_model()
    model.fit(input_fn, verbose=0)
    model.evaluate(input_fn, verbose=0)
    assert set(received) == {kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL}
    assert received[kte.ModeKeys.TRAIN] is model.config


def test_fit_takes_a_dataset_directly():
    features, labels = make_data()
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(16)
    model = make_model()
    history = model.fit(dataset, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2


def test_predict_takes_a_dataset_of_features():
    features, _ = make_data(n=40)
    dataset = tf.data.Dataset.from_tensor_slices(features).batch(16)
    predictions = make_model().predict(dataset, verbose=0)
    assert predictions["class"].shape == (40,)


# -- params and batch sizes. -------------------------------------------------


def test_model_fn_params_carry_global_batch_size_and_use_tpu():
    seen = []

    def model_fn(features, labels, mode, params):
        seen.append((params["batch_size"], features["x"].shape[0], params["use_tpu"]))
        return classifier_fn(features, labels, mode, params)

    features, labels = make_data()
    make_model(model_fn).fit((features, labels), verbose=0)
    assert seen and all(b == n == 16 and use_tpu for b, n, use_tpu in seen)


def test_input_fn_params_have_no_use_tpu_and_keep_user_params():
    seen = {}

    def input_fn(params):
        seen.update(params)
        return make_data()

    make_model(params={"hidden": 8}).fit(input_fn, verbose=0)
    context = seen.pop("context")
    assert seen == {"hidden": 8, "batch_size": 16}
    assert context.num_replicas == 8


@pytest.mark.parametrize("name", ["train_batch_size", "eval_batch_size", "predict_batch_size"])
def test_batch_size_must_divide_over_replicas(name):
    with pytest.raises(ValueError, match=rf"`{name}` \(12\) must be divisible .* \(8\)"):
        kte.EstimatorModel(classifier_fn, **{name: 12})


@pytest.mark.parametrize("key", ["batch_size", "context"])
def test_reserved_params_keys_are_rejected(key):
    with pytest.raises(ValueError, match="are reserved keys"):
        kte.EstimatorModel(classifier_fn, params={key: 1})


def test_model_fn_with_unexpected_argument_is_rejected():
    def model_fn(features, foo):
        return None

    with pytest.raises(ValueError, match=r"not expected args: \['foo'\]"):
        kte.EstimatorModel(model_fn)


# -- The variable store. -----------------------------------------------------


def test_variables_are_named_by_scope_path():
    def model_fn(features, labels, mode):
        with kte.variable_scope("encoder"):
            x = kte.get_or_create_layer("hidden", lambda: keras.layers.Dense(4))(features)
            bias = kte.get_variable("bias", shape=(4,), initializer="zeros")
        loss = keras.ops.mean(keras.ops.square(x + bias - labels))
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1))

    model = make_model(model_fn, params=None)
    model.fit((np.ones((32, 2), "float32"), np.zeros((32, 4), "float32")), verbose=0)
    assert sorted(model.store.variables_by_name()) == [
        "encoder/bias",
        "encoder/hidden/bias",
        "encoder/hidden/kernel",
    ]


def test_later_calls_reuse_the_same_layers_and_weights():
    model = make_model()
    features, labels = make_data()
    model.fit((features, labels), verbose=0)
    layers_before = dict(model.store.created_layers)
    kernel = model.store.variables_by_name()["hidden/kernel"]
    model.evaluate((features, labels), verbose=0)
    model.predict(features, verbose=0)
    assert model.store.created_layers == layers_before
    assert model.store.variables_by_name()["hidden/kernel"] is kernel


def test_predictions_use_the_trained_weights():
    features, labels = make_data()
    model = make_model()
    model.fit((features, labels), epochs=3, verbose=0)
    kernel = {k: np.asarray(v.value) for k, v in model.store.variables_by_name().items()}
    hidden = np.maximum(features["x"] @ kernel["hidden/kernel"] + kernel["hidden/bias"], 0)
    logits = hidden @ kernel["logits/kernel"] + kernel["logits/bias"]
    np.testing.assert_allclose(model.predict(features, verbose=0)["logits"], logits, atol=1e-4)


def test_get_variable_shape_mismatch_is_an_error():
    def model_fn(features, labels, mode):
        kte.get_variable("w", shape=(2,))
        w = kte.get_variable("w", shape=(3,))
        return kte.TPUEstimatorSpec(mode, predictions=features * w)

    with pytest.raises(ValueError, match=r"share variable w.*\(3,\).*\(2,\)"):
        make_model(model_fn, params=None).predict(np.ones((16, 3), "float32"), verbose=0)


def test_store_functions_outside_model_fn_raise():
    with pytest.raises(RuntimeError, match="inside a model_fn"):
        kte.get_variable("w", shape=(1,))


def bn_fn(features, labels, mode):
    x = kte.get_or_create_layer(
        "bn", lambda: keras.layers.BatchNormalization(momentum=0.5)
    )(features)
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions=x)
    loss = keras.ops.mean(keras.ops.square(x - labels))
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.0))


def test_batch_norm_statistics_update_in_train_mode_only():
    x = np.full((32, 2), 4.0, "float32")
    model = make_model(bn_fn, params=None, loop=1)
    model.fit((x, x), shuffle=False, verbose=0)
    moving_mean = model.store.variables_by_name()["bn/moving_mean"]
    # Two steps with momentum 0.5 from 0 towards 4: 2, then 3 (no build update).
    np.testing.assert_allclose(moving_mean.value, [3.0, 3.0])
    model.evaluate((x, x), verbose=0)
    model.predict(x, verbose=0)
    np.testing.assert_allclose(moving_mean.value, [3.0, 3.0])


def test_dropout_is_active_in_training_only():
    def model_fn(features, labels, mode):
        x = kte.get_or_create_layer("drop", lambda: keras.layers.Dropout(0.5, seed=1))(features)
        w = kte.get_variable("w", shape=(), initializer="ones")
        if mode == kte.ModeKeys.PREDICT:
            return kte.TPUEstimatorSpec(mode, predictions=x * w)
        zeros = keras.ops.mean(keras.ops.cast(keras.ops.equal(x, 0.0), "float32"))
        return kte.TPUEstimatorSpec(
            mode, loss=zeros * w, train_op=keras.optimizers.SGD(0.0)
        )

    x = np.ones((64, 4), "float32")
    model = make_model(model_fn, params=None)
    history = model.fit((x, x), verbose=0)
    assert 0.3 < history.history["loss"][0] < 0.7
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)


# -- Optimizers and the global step. ------------------------------------------


def test_train_op_none_uses_the_compiled_optimizer():
    model = make_model(linear_fn_of(lambda: None), params=None)
    model.compile(optimizer=keras.optimizers.SGD(0.5))
    model.fit((np.ones((16, 1), "float32"), None), verbose=0)
    np.testing.assert_allclose(model.store.variables_by_name()["w"].value, 0.5)


def test_train_op_none_without_compiled_optimizer_is_an_error():
    model = make_model(linear_fn_of(lambda: None), params=None)
    with pytest.raises(ValueError, match="compile\\(optimizer=...\\)"):
        model.fit((np.ones((16, 1), "float32"), None), verbose=0)


def test_optimizer_from_model_fn_is_taken_once_and_keeps_its_state():
    model = make_model(linear_fn_of(lambda: keras.optimizers.SGD(0.1)), params=None)
    model.fit((np.ones((64, 1), "float32"), None), verbose=0)
    optimizer = model.train_optimizer
    model.fit((np.ones((64, 1), "float32"), None), verbose=0)
    assert model.train_optimizer is optimizer
    assert int(optimizer.iterations.value) == 8
    np.testing.assert_allclose(model.store.variables_by_name()["w"].value, 1 - 8 * 0.1, atol=1e-6)


def test_learning_rate_from_global_step_takes_effect_every_step():
    def train_op():
        step = kte.get_global_step()
        return keras.optimizers.SGD(lambda: keras.ops.where(step < 3, 0.0, 1.0))

    model = make_model(linear_fn_of(train_op), params=None, loop=5)
    model.fit((np.ones((80, 1), "float32"), None), shuffle=False, verbose=0)
    # Five steps in one on-device loop: steps 0-2 at rate 0, steps 3-4 at 1.
    np.testing.assert_allclose(model.store.variables_by_name()["w"].value, 1 - 2.0)


def test_missing_loss_in_train_mode_is_an_error():
    def model_fn(features, labels, mode):
        return kte.TPUEstimatorSpec(mode, predictions=features)

    with pytest.raises(ValueError, match="loss"):
        make_model(model_fn, params=None).fit((np.ones((16, 1), "float32"), None), verbose=0)


def test_non_scalar_loss_is_an_error():
    def model_fn(features, labels, mode):
        w = kte.get_variable("w", shape=(), initializer="ones")
        return kte.TPUEstimatorSpec(mode, loss=features * w, train_op=keras.optimizers.SGD(1.0))

    with pytest.raises(ValueError, match="must be a scalar"):
        make_model(model_fn, params=None).fit((np.ones((16, 1), "float32"), None), verbose=0)


def test_fit_before_compile_is_an_error():
    model = kte.EstimatorModel(classifier_fn, train_batch_size=16)
    with pytest.raises(ValueError, match="compile"):
        model.fit(make_data(), verbose=0)


# -- The on-device loop. -----------------------------------------------------


def test_iterations_per_loop_sets_steps_per_execution():
    assert make_model(loop=7).steps_per_execution == 7


def test_callbacks_see_each_loop_and_a_short_final_loop():
    recorder = StepRecorder()
    features, labels = make_data(n=160)  # 10 steps of 16.
    make_model(loop=4).fit(
        (features, labels), callbacks=[recorder], verbose=0
    )
    assert recorder.train_batches == [3, 7, 9]


def test_loop_length_does_not_change_how_often_model_fn_is_traced():
    def counting(counter):
        def model_fn(features, labels, mode, params):
            counter.append(mode)
            return classifier_fn(features, labels, mode, params)

        return model_fn

    traces = {}
    for n in (2, 20):
        counter = []
        make_model(counting(counter), loop=n, device_loop="scan").fit(
            make_data(n=16 * 20), verbose=0
        )
        traces[n] = len(counter)
    # One symbolic build call, then one trace of the loop program. (On CPU,
    # device_loop="auto" traces the step once more, to look for convolutions.)
    assert traces[2] == traces[20] == 2


def test_memory_budget_splits_the_loop():
    recorder = StepRecorder()
    features, labels = make_data(n=160)
    batch_bytes = 16 * (8 * 4 + 4)
    model = make_model(
        loop=10, max_loop_bytes=3 * batch_bytes, max_resident_bytes=0
    )
    model.fit((features, labels), callbacks=[recorder], verbose=0)
    assert recorder.train_batches == [2, 5, 8, 9]


@pytest.mark.parametrize("shuffle", [False, True])
def test_arrays_resident_on_devices_train_like_streamed_arrays(shuffle):
    weights = []
    for resident_bytes in (0, 1 << 20):
        keras.utils.set_random_seed(0)
        model = make_model(max_resident_bytes=resident_bytes)
        model.fit(make_data(n=160), epochs=2, shuffle=shuffle, verbose=0)
        weights.append([np.asarray(v.value) for v in model.store.trainable_variables])
    for streamed, resident in zip(*weights):
        np.testing.assert_allclose(streamed, resident, rtol=1e-5, atol=1e-6)


def test_time_based_iterations_per_loop_measures_step_time():
    model = make_model(loop="1s")
    model.fit(make_data(n=16 * 40), verbose=0)
    assert model.steps_per_execution > 1


def test_epochs_and_steps_per_epoch():
    recorder = StepRecorder()
    make_model(loop=2).fit(
        make_data(n=160), epochs=3, steps_per_epoch=5, callbacks=[recorder], verbose=0
    )
    assert len(recorder.epochs) == 3
    assert recorder.train_batches == [1, 3, 4] * 3


def test_endless_dataset_needs_steps_per_epoch():
    dataset = tf.data.Dataset.from_tensor_slices(make_data()).batch(16).repeat()
    with pytest.raises(ValueError, match="steps_per_epoch"):
        make_model().fit(dataset, verbose=0)


def test_endless_dataset_continues_across_epochs():
    seen = []

    class Probe(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append(logs["loss"])

    dataset = tf.data.Dataset.from_tensor_slices(make_data()).batch(16).repeat()
    make_model().fit(dataset, epochs=2, steps_per_epoch=8, callbacks=[Probe()], verbose=0)
    assert len(seen) == 2


# -- Evaluation. -------------------------------------------------------------


def test_evaluate_counts_every_example_once():
    features, labels = make_data(n=100)  # 6 batches of 16 and one of 4.
    model = make_model()
    model.fit((features, labels), verbose=0)
    logits = model.predict(features, verbose=0)["logits"]
    per_example = keras.ops.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    results = model.evaluate((features, labels), return_dict=True, verbose=0)
    np.testing.assert_allclose(results["loss"], np.mean(per_example), rtol=1e-5)
    np.testing.assert_allclose(
        results["accuracy"], np.mean(np.argmax(logits, -1) == labels), rtol=1e-6
    )
    np.testing.assert_allclose(results["mean_logit"], np.mean(logits), rtol=1e-4, atol=1e-6)


def test_evaluate_counts_a_short_dataset_batch_once():
    features, labels = make_data(n=100)
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(16)
    model = make_model()
    by_arrays = model.evaluate((features, labels), return_dict=True, verbose=0)
    by_dataset = model.evaluate(dataset, return_dict=True, verbose=0)
    assert by_dataset == pytest.approx(by_arrays, rel=1e-5)


def test_metric_fn_takes_a_dict_of_tensors():
    def model_fn(features, labels, mode):
        w = kte.get_variable("w", shape=(), initializer="ones")
        predictions = features[:, 0] * w
        loss = keras.ops.mean(keras.ops.square(predictions - labels))
        metrics = (
            lambda labels, predictions: {
                "mse": kte.metrics.mean_squared_error(labels, predictions),
                "mae": kte.metrics.keras_metric(
                    keras.metrics.MeanAbsoluteError, labels[:, None], predictions[:, None]
                ),
            },
            {"labels": labels, "predictions": predictions},
        )
        return kte.TPUEstimatorSpec(mode, loss=loss, eval_metrics=metrics)

    x = np.arange(40, dtype="float32").reshape(40, 1)
    y = np.zeros(40, "float32")
    results = make_model(model_fn, params=None).evaluate((x, y), return_dict=True, verbose=0)
    assert results["mse"] == pytest.approx(np.mean(x[:, 0] ** 2))
    assert results["mae"] == pytest.approx(np.mean(x[:, 0]))
    assert results["loss"] == pytest.approx(results["mse"])


def test_evaluate_returns_a_list_loss_first_without_return_dict():
    features, labels = make_data()
    results = make_model().evaluate((features, labels), verbose=0)
    assert len(results) == 3 and results[0] > 0


def test_evaluate_steps_limits_the_batches():
    x = np.arange(64, dtype="float32").reshape(64, 1)
    model = make_model(linear_fn_of(lambda: None), params=None)
    assert model.evaluate((x, None), steps=1, verbose=0) == pytest.approx(np.mean(x[:16]))


# -- Prediction. -------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 16, 37, 100])
def test_predict_returns_exactly_the_examples_given_in_order(n):
    def model_fn(features, mode):
        w = kte.get_variable("w", shape=(), initializer="ones")
        return kte.TPUEstimatorSpec(mode, predictions=features[:, 0] * w)

    x = np.arange(n, dtype="float32").reshape(n, 1)
    np.testing.assert_array_equal(make_model(model_fn, params=None).predict(x, verbose=0), x[:, 0])


def test_predictions_have_no_padding_key():
    predictions = make_model().predict(make_data(n=20)[0], verbose=0)
    assert set(predictions) == {"class", "logits"}


# -- Distribution. -----------------------------------------------------------


def test_data_parallel_over_all_devices_by_default():
    model = make_model()
    assert isinstance(model.distribution, keras.distribution.DataParallel)
    assert model.num_replicas == jax.device_count() == 8
    model.fit(make_data(), verbose=0)
    kernel = model.store.variables_by_name()["hidden/kernel"].value
    assert kernel.sharding.is_fully_replicated
    assert len(kernel.sharding.device_set) == 8


def test_evaluate_and_predict_see_the_current_global_step():
    def model_fn(features, labels, mode):
        w = kte.get_variable("w", shape=(), initializer="zeros")
        step = keras.ops.cast(kte.get_global_step(), "float32")
        if mode == kte.ModeKeys.PREDICT:
            return kte.TPUEstimatorSpec(mode, predictions=features[:, 0] * 0 + step)
        loss = keras.ops.mean(features) * w + step
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.0))

    x = np.ones((32, 1), "float32")
    model = make_model(model_fn, params=None)
    for expected in (2, 4):  # Each fit is two steps; the programs are reused.
        model.fit((x, None), verbose=0)
        assert model.evaluate((x, None), verbose=0) == expected
        np.testing.assert_array_equal(model.predict(x, verbose=0), expected)


def test_a_layer_first_created_in_eval_mode_does_not_break_training():
    def model_fn(features, labels, mode):
        w = kte.get_variable("w", shape=(), initializer="ones")
        loss = keras.ops.mean(features) * w
        if mode == kte.ModeKeys.EVAL:
            extra = kte.get_or_create_layer("eval_only", lambda: keras.layers.Dense(1))(features)
            metrics = (lambda v: {"extra": keras.ops.mean(v)}, [extra])
            return kte.TPUEstimatorSpec(mode, loss=loss, eval_metrics=metrics)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.5))

    x = np.ones((16, 1), "float32")
    model = make_model(model_fn, params=None)
    model.fit((x, None), verbose=0)
    model.evaluate((x, None), verbose=0)
    model.fit((x, None), verbose=0)
    np.testing.assert_allclose(model.store.variables_by_name()["w"].value, 0.0)


def test_predict_ignores_labels_the_model_fn_does_not_take():
    def model_fn(features, mode):
        w = kte.get_variable("w", shape=(), initializer="ones")
        return kte.TPUEstimatorSpec(mode, predictions=features * w)

    x = np.ones((16, 1), "float32")
    np.testing.assert_array_equal(make_model(model_fn, params=None).predict((x, x), verbose=0), x)


def test_evaluate_and_predict_need_no_compile():
    model = kte.EstimatorModel(classifier_fn, params={}, eval_batch_size=16, predict_batch_size=16)
    features, labels = make_data()
    assert model.evaluate((features, labels), verbose=0)[0] > 0
    assert model.predict(features, verbose=0)["class"].shape == (96,)


def test_learning_rate_scheduler_callback_adjusts_the_model_fn_optimizer():
    schedule = keras.callbacks.LearningRateScheduler(lambda epoch, rate: 0.0)
    model = make_model(linear_fn_of(lambda: keras.optimizers.SGD(0.5)), params=None)
    model.fit((np.ones((32, 1), "float32"), None), callbacks=[schedule], verbose=0)
    np.testing.assert_allclose(model.store.variables_by_name()["w"].value, 1.0)


def test_progress_bar_target_counts_only_full_training_batches():
    class Target(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.steps = self.params["steps"]

    target = Target()
    make_model().fit(make_data(n=100), callbacks=[target], verbose=0)
    assert target.steps == 6


def test_time_based_loop_length_applies_within_the_first_epoch():
    recorder = StepRecorder()
    model = make_model(loop="1s")
    model.fit(make_data(n=16 * 60), callbacks=[recorder], verbose=0)
    assert len(recorder.train_batches) < 10


@pytest.mark.parametrize("kwargs", [{"run_eagerly": True}, {"jit_compile": False}, {"loss": "mse"}])
def test_compile_rejects_what_model_fn_decides(kwargs):
    with pytest.raises(ValueError):
        kte.EstimatorModel(classifier_fn).compile(**kwargs)


def test_importing_with_another_keras_backend_is_a_clear_error():
    import subprocess
    import sys

    code = "import keras, keras_tpu_estimator"
    env = dict(__import__("os").environ, KERAS_BACKEND="numpy")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.returncode != 0
    assert "KERAS_BACKEND=jax" in result.stderr


def host_call_fn(calls):
    def host_call(step, loss, rows):
        calls.append((int(step[0]), float(loss[0]), rows.shape))

    return with_host_call(host_call, rows=True)


@pytest.mark.parametrize("every, expected_steps", [(1, list(range(10))), (3, [0, 3, 6, 9])])
def test_host_call_runs_on_the_host_every_n_steps_inside_loops(every, expected_steps):
    calls = []
    model = estimator_model(host_call_fn(calls), loop=4, host_call_every=every)
    model.fit((np.ones((160, 1), "float32"), None), verbose=0)
    assert [c[0] for c in calls] == expected_steps
    assert all(shape == (16,) for _, _, shape in calls)
    np.testing.assert_allclose(calls[0][1], 1.0)
    np.testing.assert_allclose(calls[-1][1], 1.0 - 0.1 * expected_steps[-1], rtol=1e-5)


def test_host_call_tensors_are_numpy_arrays():
    seen = []

    def model_fn(features, labels, mode):
        w = kte.get_variable("w", shape=(), initializer="ones")
        loss = keras.ops.mean(features) * w
        host_call = (lambda **kw: seen.append(kw), {"loss": keras.ops.reshape(loss, (1,))})
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1), host_call=host_call)

    make_model(model_fn, params=None).fit((np.ones((32, 1), "float32"), None), verbose=0)
    assert len(seen) == 2 and isinstance(seen[0]["loss"], np.ndarray)


def test_loops_never_cross_an_aligned_step():
    recorder = StepRecorder()
    model = make_model(loop=4)
    model.align_loops_to = 3
    model.fit(make_data(n=16 * 10), callbacks=[recorder], verbose=0)
    assert recorder.train_batches == [2, 5, 8, 9]
    assert model.global_step == 10


def test_each_loop_logs_its_first_step_and_losses():
    seen = []

    class Record(keras.callbacks.Callback):
        reads_loop_logs = True

        def on_train_batch_end(self, batch, logs=None):
            seen.append((logs["loop_first_step"], logs["loop_losses"].shape))

    model = make_model(loop=4)
    model.fit(make_data(n=16 * 10), callbacks=[Record()], verbose=0)
    assert seen == [(0, (4,)), (4, (4,)), (8, (2,))]


def test_callbacks_that_do_not_ask_for_the_loop_get_scalar_logs():
    seen = []

    class Record(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append(dict(logs))

    make_model(loop=4).fit(make_data(n=16 * 10), callbacks=[Record()], verbose=0)
    assert [list(logs) for logs in seen] == [["loss"]] * 3


def test_epoch_logs_hold_only_the_loss():
    history = make_model().fit(make_data(), verbose=0)
    assert list(history.history) == ["loss"]


@pytest.mark.parametrize("method", ["evaluate", "predict"])
def test_a_callback_can_stop_evaluation_and_prediction_after_a_loop(method):
    flag = "stop_evaluating" if method == "evaluate" else "stop_predicting"
    hook = "on_test_batch_end" if method == "evaluate" else "on_predict_batch_end"
    ends = []

    def stop(batch, logs):
        ends.append(batch)
        setattr(model, flag, True)

    model = make_model(loop=2)
    callback = keras.callbacks.LambdaCallback(**{hook: stop})
    getattr(model, method)(make_data(n=160)[0] if method == "predict" else make_data(n=160),
                           callbacks=[callback], verbose=0)
    assert ends == [1]


@pytest.mark.parametrize("train_op", ["keras", "tf1"])
def test_model_fn_tensors_carry_a_name_in_every_pass(train_op):
    import keras_tpu_estimator.compat.v1 as tf1

    names = set()

    def model_fn(features, labels, mode):
        logits = kte.get_or_create_layer("dense", lambda: keras.layers.Dense(NUM_CLASSES))(
            features["x"]
        )
        names.add((mode, features["x"].name, isinstance(logits.name, str)))
        if mode == kte.ModeKeys.PREDICT:
            return kte.TPUEstimatorSpec(mode, predictions={"logits": logits})
        names.add((mode, labels.name, True))
        loss = keras.ops.mean(
            keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
        )
        if mode == kte.ModeKeys.EVAL:
            return kte.TPUEstimatorSpec(mode, loss=loss)
        if train_op == "keras":
            return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1))
        op = tf1.train.GradientDescentOptimizer(0.1).minimize(
            loss, tf1.train.get_or_create_global_step()
        )
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=op)

    features, labels = make_data(n=32)
    model = make_model(model_fn)
    model.fit((features, labels), epochs=1, verbose=0)
    model.evaluate((features, labels), verbose=0)
    model.predict(features, verbose=0)
    assert names == {
        (mode, name, True)
        for mode in (kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL, kte.ModeKeys.PREDICT)
        for name in (("x", "labels") if mode != kte.ModeKeys.PREDICT else ("x",))
    }


def test_keras_sees_the_store_variables_as_the_model_weights():
    model = make_model()
    model.fit(make_data(), verbose=0)
    assert {id(v) for v in model.weights} == {id(v) for v in model.store.variables}
