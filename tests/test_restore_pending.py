"""`EstimatorModel.restoring`: initial values only for what no checkpoint gives (TF1's Scaffold)."""

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator.model_fn import initialization

from compile_counter import CompileCounter


def model_fn(features, labels, mode):
    x = features
    for i in range(3):
        x = kte.get_or_create_layer(f"dense_{i}", lambda i=i: keras.layers.Dense(4 + i))(x)
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"x": x})
    return kte.TPUEstimatorSpec(mode, loss=keras.ops.mean(x), train_op=keras.optimizers.SGD(0.1))


def new_model():
    keras.utils.set_random_seed(3)
    return kte.EstimatorModel(model_fn, train_batch_size=8, eval_batch_size=8)


def build(model=None):
    model = model or new_model()
    x = np.ones((8, 2), "float32")
    model.build_for(kte.ModeKeys.EVAL, x, x[:, 0])
    return model


def values(model):
    return {v.path: np.asarray(v.value) for v in model.store.variables}


def test_without_a_restore_the_variables_get_the_initial_values_of_a_build_outside():
    expected = values(build())
    model = new_model()
    with model.restoring():
        build(model)
    for path, value in values(model).items():
        np.testing.assert_array_equal(value, expected[path], err_msg=path)


def test_building_inside_the_block_compiles_no_initial_values():
    build()  # Whatever else a build compiles, compiled once.
    model = new_model()
    with model.restoring():
        with CompileCounter() as compiles:
            build(model)
        for variable in model.store.variables:
            variable.assign(np.full(variable.shape, 2.0, "float32"))  # As a restore does.
    assert compiles.count == 0


def test_a_restored_variable_keeps_its_value_and_the_others_get_their_initial_values():
    expected = values(build())
    model = new_model()
    with model.restoring():
        build(model)
        restored = model.store.variables[0]
        restored.assign(np.full(restored.shape, 5.0, "float32"))
    got = values(model)
    np.testing.assert_array_equal(got.pop(restored.path), np.full(restored.shape, 5.0))
    for path, value in got.items():
        np.testing.assert_array_equal(value, expected[path], err_msg=path)


def test_an_error_in_the_block_still_gives_the_variables_their_initial_values():
    expected = values(build())
    with pytest.raises(RuntimeError, match="restore failed"):
        model = new_model()
        with model.restoring():
            build(model)
            raise RuntimeError("restore failed")
    for path, value in values(model).items():
        np.testing.assert_array_equal(value, expected[path], err_msg=path)


@pytest.mark.parametrize("call", ["train", "evaluate", "predict"])
def test_a_fresh_estimator_on_a_checkpoint_initializes_none_of_the_restored_variables(
        tmp_path, monkeypatch, call):
    def estimator():
        return kte.TPUEstimator(model_fn=model_fn, config=kte.RunConfig(model_dir=str(tmp_path)),
                                train_batch_size=8, eval_batch_size=8, predict_batch_size=8,
                                use_tpu=False)

    def input_fn(params):
        x = np.ones((8, 2), "float32")
        return x if call == "predict" else (x, x[:, 0])

    estimator().train(input_fn if call == "train" else
                      lambda params: (np.ones((8, 2), "float32"), np.ones(8, "float32")),
                      max_steps=1)
    initialized = []
    original = initialization.initialize
    monkeypatch.setattr(initialization, "initialize", lambda variables, closed: (
        initialized.extend(v.path for v in variables), original(variables, closed))[1])
    fresh = estimator()
    if call == "train":
        fresh.train(input_fn, max_steps=2)  # Resumes from step 1.
    elif call == "evaluate":
        fresh.evaluate(input_fn, steps=1)
    else:
        next(fresh.predict(input_fn))
    assert not {path for path in initialized if path.startswith("dense_")}
