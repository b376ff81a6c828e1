"""A cold fit/evaluate/predict compiles one program to initialize and one per mode.

The build pass computes no value (it is traced): the variables it creates
get their initial values from one compiled program, and each mode then runs
one compiled loop program per loop length. Counted with JAX's
compile-duration events; conftest turns the persistent cache off. Each
model has its own feature width, so that no program of an earlier test
(an eager op's, say) is reused from JAX's in-process caches.
"""

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator.compat import v1 as tf1

from compile_counter import CompileCounter

LOOP = 4


def _predict_spec(mode, logits):
    return kte.TPUEstimatorSpec(mode, predictions={"logits": logits})


def keras_optimizer_fn(features, labels, mode, params):
    hidden = kte.get_or_create_layer("hidden", lambda: keras.layers.Dense(8, activation="relu"))
    logits = kte.get_or_create_layer("out", lambda: keras.layers.Dense(3))(hidden(features))
    if mode == kte.ModeKeys.PREDICT:
        return _predict_spec(mode, logits)
    loss = keras.ops.mean(
        keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    )
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.Adam(1e-3))


def tf1_momentum_fn(features, labels, mode, params):
    hidden = tf1.layers.dense(features, 8, activation=tf1.nn.relu)
    logits = tf1.layers.dense(hidden, 3)
    if mode == kte.ModeKeys.PREDICT:
        return _predict_spec(mode, logits)
    # Constant weights, an l2 term, clipping: TF1 ops on no symbolic input.
    loss = tf1.losses.sparse_softmax_cross_entropy(labels, logits)
    loss += 1e-4 * tf1.add_n([tf1.nn.l2_loss(v) for v in tf1.trainable_variables()])
    optimizer = tf1.train.MomentumOptimizer(0.01, 0.9)
    gradients, variables = zip(*optimizer.compute_gradients(loss))
    gradients, _ = tf1.clip_by_global_norm(gradients, 1.0)
    train_op = optimizer.apply_gradients(
        zip(gradients, variables), tf1.train.get_or_create_global_step()
    )
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def batch_norm_fn(features, labels, mode, params):
    training = mode == kte.ModeKeys.TRAIN
    hidden = tf1.layers.dense(features, 8)
    hidden = tf1.nn.relu(tf1.layers.batch_normalization(hidden, training=training))
    logits = tf1.layers.dense(hidden, 3)
    if mode == kte.ModeKeys.PREDICT:
        return _predict_spec(mode, logits)
    loss = tf1.losses.sparse_softmax_cross_entropy(labels, logits)
    with tf1.control_dependencies(tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)):
        train_op = tf1.train.MomentumOptimizer(0.01, 0.9).minimize(
            loss, tf1.train.get_or_create_global_step()
        )
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


MODELS = [
    pytest.param(keras_optimizer_fn, 5, id="keras_optimizer"),
    pytest.param(tf1_momentum_fn, 6, id="tf1_momentum"),
    pytest.param(batch_norm_fn, 7, id="batch_norm_update_ops"),
]


def _model(model_fn, device_loop):
    config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=LOOP))
    model = kte.EstimatorModel(
        model_fn, config=config, train_batch_size=8, eval_batch_size=8,
        predict_batch_size=8, device_loop=device_loop,
    )
    model.compile()
    return model


def _data(width, steps=2 * LOOP):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8 * steps, width)).astype("float32")
    y = rng.integers(0, 3, size=8 * steps).astype("int32")
    return x, y


@pytest.mark.parametrize("model_fn, width", MODELS)
def test_fit_then_evaluate_and_predict_compile_one_program_per_mode(model_fn, width):
    model = _model(model_fn, "host")  # One compiled step: the quickest to compile.
    x, y = _data(width)
    with CompileCounter() as compiles:
        model.fit((x, y), verbose=0)  # Two loops of LOOP steps.
    assert compiles.count <= 2, "one initializer, one training program"
    with CompileCounter() as compiles:
        model.evaluate((x, y), verbose=0)
    assert compiles.count <= 2, "one initializer (its metrics), one evaluation program"
    with CompileCounter() as compiles:
        model.predict(x, verbose=0)
    assert compiles.count <= 1, "one prediction program"


def test_a_scan_loop_and_its_short_last_loop_compile_one_program():
    model = _model(keras_optimizer_fn, "scan")
    with CompileCounter() as compiles:
        model.fit(_data(9, steps=LOOP + 1), verbose=0)  # Loops of 4 and 1.
    assert compiles.count <= 2, compiles.count


def test_the_initial_values_are_those_of_the_eager_initializers():
    keras.utils.set_random_seed(3)
    model = _model(keras_optimizer_fn, "scan")
    model.build_from_batch(kte.ModeKeys.PREDICT, (np.zeros((8, 4), "float32"), None))
    keras.utils.set_random_seed(3)
    hidden = keras.layers.Dense(8)
    hidden.build((None, 4))
    kernel = model.store.variables_by_name()["hidden/kernel"]
    np.testing.assert_allclose(np.asarray(kernel), np.asarray(hidden.kernel), rtol=1e-6)


class CompilesPerLoop(keras.callbacks.Callback):
    """The compilations between each loop's batch-begin and batch-end callbacks."""

    def __init__(self, compiles):
        super().__init__()
        self.compiles, self.during = compiles, []

    def _begin(self, batch, logs=None):
        self._at_begin = self.compiles.count

    def _end(self, batch, logs=None):
        self.during.append(self.compiles.count - self._at_begin)

    on_train_batch_begin = on_test_batch_begin = on_predict_batch_begin = _begin
    on_train_batch_end = on_test_batch_end = on_predict_batch_end = _end


@pytest.mark.parametrize("device_loop, width", [("host", 10), ("scan", 11)])
def test_a_loops_callbacks_time_its_steps_not_its_compilation(device_loop, width):
    model = _model(keras_optimizer_fn, device_loop)
    x, y = _data(width, steps=LOOP + 1)  # Loops of 4 and 1.
    with CompileCounter() as compiles:
        probe = CompilesPerLoop(compiles)
        model.fit((x, y), verbose=0, callbacks=[probe])
        model.evaluate((x, y), verbose=0, callbacks=[probe])
        model.predict(x, verbose=0, callbacks=[probe])
    assert compiles.count >= 3  # The programs were compiled, before their loops.
    assert probe.during == [0] * 6
