"""What Keras users already know works on an EstimatorModel: callbacks reading
the learning rate, BackupAndRestore, summary, the *_on_batch methods, model(x)
and .keras files."""

import glob
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte

from model_fns import estimator_model

BATCH = 16
BASE_RATE = 0.01


def make_data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype("float32")
    y = (x.sum(axis=1) > 0).astype("int32")
    return {"x": x}, y


def decaying_rate(step):
    """The rate `model_fn` computes at global step `step` (as digits.py does)."""
    return BASE_RATE * 0.5 ** (step / 10.0)


@keras.saving.register_keras_serializable(package="test_model_keras_api")
def model_fn(features, labels, mode, params):
    hidden = kte.get_or_create_layer(
        "hidden", lambda: keras.layers.Dense(8, activation="relu"))(features["x"])
    bias = kte.get_variable("bias", shape=(2,), initializer="zeros")
    logits = kte.get_or_create_layer("logits", lambda: keras.layers.Dense(2))(hidden) + bias
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"logits": logits})
    loss = keras.ops.mean(
        keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    if mode == kte.ModeKeys.EVAL:
        return kte.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(
            lambda labels, logits: {"accuracy": kte.metrics.accuracy(
                labels=labels, predictions=keras.ops.argmax(logits, -1))},
            [labels, logits]))
    rate = decaying_rate(keras.ops.cast(kte.get_global_step(), "float32"))
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.Adam(lambda: rate))


def unregistered_fn(features, labels, mode, params):
    return model_fn(features, labels, mode, params)


@keras.saving.register_keras_serializable(package="test_model_keras_api")
def compiled_optimizer_fn(features, labels, mode, params):
    spec = model_fn(features, labels, mode, params)
    return spec._replace(train_op=None) if mode == kte.ModeKeys.TRAIN else spec


def make_model(fn=model_fn, loop=2, **kwargs):
    return estimator_model(fn, loop=loop, batch=BATCH, **kwargs)


# -- The learning rate model_fn computes, read and set by callbacks. ----------


def test_the_learning_rate_reads_as_the_last_steps_rate():
    model = make_model()
    model.fit(make_data(), epochs=2, verbose=0)
    assert model.global_step == 8
    np.testing.assert_allclose(float(model.optimizer.learning_rate), decaying_rate(7), rtol=1e-6)


def test_the_learning_rate_before_any_step_is_a_clear_error():
    model = make_model()
    model.build_for(kte.ModeKeys.TRAIN, make_data())
    with pytest.raises(ValueError, match="known once a training step has run"):
        model.optimizer.learning_rate


def test_tensorboard_logs_the_computed_learning_rate(tmp_path):
    model = make_model()
    model.fit(make_data(), epochs=2, verbose=0,
              callbacks=[keras.callbacks.TensorBoard(str(tmp_path))])
    rates = {}
    for path in glob.glob(str(tmp_path / "train" / "events.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == "epoch_learning_rate":
                    rates[event.step] = float(tf.make_ndarray(value.tensor))
    np.testing.assert_allclose([rates[0], rates[1]], [decaying_rate(3), decaying_rate(7)],
                               rtol=1e-6)


def test_setting_the_learning_rate_scales_the_rest_of_model_fns_schedule():
    model = make_model()
    data = make_data()
    model.fit(data, epochs=1, verbose=0)
    model.optimizer.learning_rate = decaying_rate(3) / 4
    model.fit(data, epochs=1, verbose=0)
    np.testing.assert_allclose(float(model.optimizer.learning_rate), decaying_rate(7) / 4,
                               rtol=1e-6)


def test_a_set_learning_rate_is_the_one_the_next_steps_apply():
    """Adam's first step moves every weight by about the rate: compare two
    models from the same weights, one with the rate scaled by 1/4."""
    data = make_data()
    moves = []
    for scale in (1.0, 0.25):
        keras.utils.set_random_seed(0)
        model = make_model(loop=1)
        model.fit(data, epochs=1, steps_per_epoch=1, verbose=0)
        model.optimizer.learning_rate = float(model.optimizer.learning_rate) * scale
        before = np.asarray(model.store.variables_by_name()["bias"].value)
        model.fit(data, epochs=1, steps_per_epoch=1, verbose=0, shuffle=False)
        moves.append(np.abs(np.asarray(model.store.variables_by_name()["bias"].value) - before))
    np.testing.assert_allclose(moves[1], moves[0] / 4, rtol=0.05)


def test_reduce_lr_on_plateau_reduces_the_computed_rate():
    model = make_model()
    reduce = keras.callbacks.ReduceLROnPlateau("loss", factor=0.5, patience=0, min_delta=100)
    history = model.fit(make_data(), epochs=3, verbose=0, callbacks=[reduce])
    # No epoch improves by 100: every epoch after the first halves the rate.
    np.testing.assert_allclose(float(model.optimizer.learning_rate), decaying_rate(11) / 4,
                               rtol=1e-5)
    np.testing.assert_allclose(history.history["learning_rate"][0], decaying_rate(3), rtol=1e-6)


def test_the_rate_scale_is_checkpointed_with_the_optimizer():
    model = make_model()
    model.fit(make_data(), epochs=1, verbose=0)
    names = kte.checkpoint.model_values(model)
    assert any(name.endswith("learning_rate_scale") for name in names)


# -- BackupAndRestore. ----------------------------------------------------------


class StopAtEpoch(keras.callbacks.Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.epoch:
            raise RuntimeError("interrupted")


class Epochs(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = []

    def on_epoch_begin(self, epoch, logs=None):
        self.seen.append(epoch)


def test_backup_and_restore_resumes_at_the_saved_epoch(tmp_path):
    data = make_data()
    backup = keras.callbacks.BackupAndRestore(str(tmp_path))
    with pytest.raises(RuntimeError, match="interrupted"):
        make_model().fit(data, epochs=4, verbose=0, callbacks=[backup, StopAtEpoch(2)])
    epochs = Epochs()
    model = make_model()
    history = model.fit(data, epochs=4, verbose=0, callbacks=[backup, epochs])
    assert epochs.seen == [2, 3]
    assert len(history.history["loss"]) == 2
    assert model.global_step == 16  # 2 restored epochs of 4 steps, then 2 more.


def test_backup_and_restore_does_not_carry_the_epoch_into_the_next_fit(tmp_path):
    data = make_data()
    model = make_model()
    model.fit(data, epochs=2, verbose=0,
              callbacks=[keras.callbacks.BackupAndRestore(str(tmp_path), delete_checkpoint=False)])
    model.fit(data, epochs=2, verbose=0,
              callbacks=[keras.callbacks.BackupAndRestore(str(tmp_path))])
    epochs = Epochs()
    model.fit(data, epochs=1, verbose=0, callbacks=[epochs])
    assert epochs.seen == [0]


# -- summary(). ----------------------------------------------------------------


def summary_of(model, **kwargs):
    lines = []
    model.summary(print_fn=lines.append, **kwargs)
    return "\n".join(lines)


def test_summary_lists_layers_and_variables_by_scope_path():
    model = make_model()
    model.fit(make_data(), verbose=0)
    text = summary_of(model, line_length=90)
    for row in ("hidden (Dense)", "kernel (4, 8)", "bias (8,)", "logits (Dense)",
                "bias (Variable)", "(2,)"):
        assert row in text
    assert "Trainable params: 60 " in text  # 4*8+8 + 8*2+2 + 2.
    assert "Non-trainable params: 0 " in text
    # Adam: iteration, the rate scale, two slots per trainable weight.
    assert "Optimizer params: 122 " in text


def test_summary_counts_each_row():
    model = make_model()
    model.build_for(kte.ModeKeys.PREDICT, make_data()[0])
    rows = {line.split("│")[1].strip(): line.split("│")[3].strip()
            for line in summary_of(model, line_length=90).splitlines()
            if line.startswith("│") and line.split("│")[1].strip()}
    assert rows == {"hidden (Dense)": "40", "logits (Dense)": "18", "bias (Variable)": "2"}


def test_summary_of_an_unbuilt_model_says_what_builds_it():
    with pytest.raises(ValueError, match="not yet been built.*fit, evaluate or predict"):
        make_model().summary()


@pytest.mark.parametrize("layer_range, shown, hidden", [
    (["logits", "bias"], ["logits (Dense)", "bias (Variable)"], ["hidden (Dense)"]),
    (["hidden", "hidden"], ["hidden (Dense)"], ["logits (Dense)"]),
])
def test_summary_layer_range(layer_range, shown, hidden):
    model = make_model()
    model.build_for(kte.ModeKeys.PREDICT, make_data()[0])
    text = summary_of(model, line_length=90, layer_range=layer_range)
    assert all(row in text for row in shown)
    assert not any(row in text for row in hidden)


def test_summary_shows_trainable():
    model = make_model()
    model.build_for(kte.ModeKeys.PREDICT, make_data()[0])
    assert "Trainable" in summary_of(model, line_length=100, show_trainable=True).splitlines()[2]


# -- One batch at a time. ----------------------------------------------------------


def test_train_on_batch_takes_one_step_and_returns_its_loss():
    features, labels = make_data(n=BATCH)
    model = make_model()
    loss = model.train_on_batch(features, labels)
    assert model.global_step == 1
    assert isinstance(loss, float) and np.isfinite(loss)
    assert model.train_on_batch(features, labels, return_dict=True).keys() == {"loss"}


def test_test_on_batch_is_evaluate_of_that_batch():
    features, labels = make_data(n=BATCH)
    model = make_model()
    model.train_on_batch(features, labels)
    expected = model.evaluate((features, labels), return_dict=True, verbose=0)
    assert model.test_on_batch(features, labels, return_dict=True) == pytest.approx(expected)


def test_predict_on_batch_and_calling_the_model_predict():
    features, _ = make_data(n=BATCH)
    model = make_model()
    expected = model.predict(features, verbose=0)["logits"]
    np.testing.assert_allclose(model.predict_on_batch(features)["logits"], expected, atol=1e-6)
    np.testing.assert_allclose(np.asarray(model(features)["logits"]), expected, atol=1e-6)


def test_calling_the_model_needs_no_divisible_batch_and_builds_it():
    features, _ = make_data(n=3)
    model = make_model()
    assert np.asarray(model(features)["logits"]).shape == (3, 2)
    assert model.built


@pytest.mark.parametrize("call, match", [
    (lambda m, f, l: m(f, training=True), "training` must be False"),
    (lambda m, f, l: m.train_on_batch(f, l, sample_weight=np.ones(BATCH)), "sample_weight"),
    (lambda m, f, l: m.train_on_batch(f, l, class_weight={0: 1.0}), "class_weight"),
    (lambda m, f, l: m.test_on_batch(f, l, sample_weight=np.ones(BATCH)), "sample_weight"),
    (lambda m, f, l: m.predict_on_batch(lambda params: None), "batch of arrays"),
])
def test_one_batch_methods_refuse_what_model_fn_decides(call, match):
    features, labels = make_data(n=BATCH)
    with pytest.raises(ValueError, match=match):
        call(make_model(), features, labels)


# -- .keras files. -----------------------------------------------------------------


def trained(fn=model_fn, **kwargs):
    data = make_data()
    model = make_model(fn, **kwargs)
    model.fit(data, epochs=1, verbose=0)
    model.evaluate(data, verbose=0)
    return model


def test_a_keras_file_loads_the_model_its_variables_and_optimizer(tmp_path):
    model = trained()
    path = str(tmp_path / "model.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    features = make_data()[0]
    np.testing.assert_array_equal(loaded.predict(features, verbose=0)["logits"],
                                  model.predict(features, verbose=0)["logits"])
    assert loaded.global_step == model.global_step == 4
    for saved, restored in zip(model.optimizer.variables, loaded.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(restored.value), np.asarray(saved.value))
    assert loaded.steps_per_execution == model.steps_per_execution
    assert loaded.evaluate(make_data(), return_dict=True, verbose=0) == pytest.approx(
        model.evaluate(make_data(), return_dict=True, verbose=0))


def test_a_loaded_model_trains_on(tmp_path):
    model = trained()
    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    loaded.fit(make_data(), epochs=1, verbose=0)
    assert loaded.global_step == 8


def test_a_keras_file_keeps_the_compiled_optimizer(tmp_path):
    model = make_model(compiled_optimizer_fn)
    model.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9), steps_per_execution=2)
    model.fit(make_data(), epochs=1, verbose=0)
    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    assert isinstance(loaded.optimizer, keras.optimizers.SGD)
    for saved, restored in zip(model.optimizer.variables, loaded.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(restored.value), np.asarray(saved.value))


def test_an_unregistered_model_fn_names_the_alternatives_and_writes_nothing(tmp_path):
    model = trained(unregistered_fn)
    with pytest.raises(ValueError, match="not registered.*save_weights.*export"):
        model.save(tmp_path / "model.keras")
    assert os.listdir(tmp_path) == []


def test_params_that_are_not_plain_data_are_refused_before_writing(tmp_path):
    model = make_model(params={"make": object()})
    with pytest.raises(ValueError, match="`params` cannot be saved"):
        model.save(tmp_path / "model.keras")
    assert os.listdir(tmp_path) == []


def test_model_checkpoint_saves_whole_models(tmp_path):
    path = str(tmp_path / "epoch_{epoch}.keras")
    make_model().fit(make_data(), epochs=2, verbose=0,
                     callbacks=[keras.callbacks.ModelCheckpoint(path)])
    assert sorted(os.listdir(tmp_path)) == ["epoch_1.keras", "epoch_2.keras"]
    assert keras.saving.load_model(tmp_path / "epoch_2.keras").global_step == 8


def test_a_keras_file_keeps_the_config(tmp_path):
    config = kte.RunConfig(tf_random_seed=3, tpu_config=kte.TPUConfig(iterations_per_loop=3))
    model = kte.EstimatorModel(model_fn, params={"units": 4}, config=config,
                               train_batch_size=BATCH, eval_batch_size=8, name="tiny")
    model.compile()
    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    assert loaded.config.tpu_config == config.tpu_config
    assert loaded.config.tf_random_seed == 3
    assert loaded.params["units"] == 4 and loaded.name == "tiny"
    assert loaded.get_config() == model.get_config()
