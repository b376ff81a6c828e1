"""A serving program that draws random numbers exports, and serves on one device."""

import jax
import keras
import numpy as np
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator import _keras_internals

DIM = 4


def model_fn(features, mode):
    x = features["x"]
    noise = tf1.random_uniform(tf1.shape(x))
    more = tf1.random_normal(tf1.shape(x))
    logits = kte.get_or_create_layer("logits", lambda: keras.layers.Dense(3))(x + noise)
    return kte.EstimatorSpec(mode, predictions={"logits": logits, "noise": noise, "more": more})


def receiver_fn():
    x = kte.export.placeholder((None, DIM), "float32", "x")
    return kte.export.ServingInputReceiver({"x": x}, {"x": x})


def test_a_serving_program_drawing_random_numbers_exports_and_serves(tmp_path):
    model = kte.EstimatorModel(model_fn, predict_batch_size=8)  # On the 8 test devices.
    path = str(tmp_path / "export")
    model.export(path, serving_input_receiver_fn=receiver_fn, verbose=False)
    served = tf.saved_model.load(path).signatures["serving_default"](
        x=tf.zeros((3, DIM), tf.float32))
    noise = served["noise"].numpy()
    assert served["logits"].shape == (3, 3)
    assert noise.shape == (3, DIM) and np.all((noise >= 0) & (noise < 1))
    # The seed state advances between the draws of one call.
    assert not np.allclose(served["more"].numpy(), noise)


def test_layouts_removed_leaves_no_sharding_constraint_on_an_assignment():
    distribution = keras.distribution.DataParallel(devices=jax.devices())
    with distribution.scope():
        variable = keras.Variable(np.zeros(2, "float32"))

    def program():
        def assign(value):  # A new function each time: JAX caches traces per function.
            with _keras_internals.bound_values([variable], [variable.value]):
                variable.assign(value + 1.0)
                return variable.value

        return str(jax.jit(assign).lower(np.zeros(2, "float32")).as_text())

    assert "sharding_constraint" in program()  # Keras's behaviour this reach undoes.
    with _keras_internals.layouts_removed([variable]):
        assert "sharding_constraint" not in program()
    assert variable._layout is not None  # Restored.
