"""A scaffold's Saver of `ema.variables_to_restore()` makes EVAL, PREDICT and export use the averages.

As EfficientNet writes it: training applies an `ExponentialMovingAverage`
after the optimizer; evaluation and prediction return
`Scaffold(saver=Saver(ema.variables_to_restore()))` from `scaffold_fn`.
TensorFlow then restored each weight from its average's checkpoint entry.
The decay is 0.5 so that the averages differ visibly from the weights.
"""

import numpy as np
import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator.compat import v1 as tf1

from model_fns import estimator_config
from model_fns import estimator_model

TRAIN, EVAL, PREDICT = kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL, kte.ModeKeys.PREDICT
BATCH = 8
SHADOW = "w/ExponentialMovingAverage"


def ema_model_fn(features, labels, mode, params):
    """y = x * w, squared error, SGD 0.1; the average of w (decay 0.5) in EVAL and PREDICT."""
    x = features["x"] if isinstance(features, dict) else features
    w = tf1.get_variable("w", shape=[], initializer=tf1.ones_initializer())
    predictions = x[:, 0] * w
    ema = tf1.train.ExponentialMovingAverage(decay=0.5)
    if mode == PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"y": predictions},
                                    scaffold_fn=lambda: scaffold_of(ema))
    loss = tf1.reduce_mean(tf1.square(predictions - labels))
    if mode == EVAL:
        return kte.TPUEstimatorSpec(mode, loss=loss, scaffold_fn=lambda: scaffold_of(ema))
    train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf1.train.get_or_create_global_step())
    with tf1.control_dependencies([train_op]):
        train_op = ema.apply(tf1.trainable_variables())
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def scaffold_of(ema):
    # EfficientDet calls variables_to_restore inside scaffold_fn; EfficientNet before it.
    return tf1.train.Scaffold(saver=tf1.train.Saver(ema.variables_to_restore(), max_to_keep=1))


def data(steps, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(steps * BATCH, 1)).astype("float32")
    return x, (3.0 * x[:, 0]).astype("float32")


def input_fn_of(x, y):
    def input_fn(params):
        import tensorflow as tf

        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(params["batch_size"])

    return input_fn


def estimator(model_dir):
    return kte.TPUEstimator(
        ema_model_fn, config=estimator_config(model_dir, save_every=1000, loop=2),
        train_batch_size=BATCH, eval_batch_size=BATCH, predict_batch_size=BATCH, use_tpu=False,
    )


def mse(x, y, w):
    return float(np.mean((x[:, 0] * w - y) ** 2))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model_dir trained 6 steps with the average: `(model_dir, w, average)`."""
    model_dir = tmp_path_factory.mktemp("ema")
    est = estimator(model_dir)
    est.train(input_fn_of(*data(6)), max_steps=6)
    w, average = est.get_variable_value("w"), est.get_variable_value(SHADOW)
    assert abs(w - average) > 0.05  # Visible: the test can tell them apart.
    return model_dir, float(w), float(average)


@pytest.mark.parametrize("estimator_kind", ["trained", "fresh"])
def test_evaluation_uses_the_averaged_weights(trained, tmp_path, estimator_kind):
    model_dir, w, average = trained
    est = estimator(model_dir)
    if estimator_kind == "trained":  # The one that trained: TRAIN built before EVAL.
        est.train(input_fn_of(*data(6)), max_steps=6)
    x, y = data(3, seed=1)
    loss = est.evaluate(input_fn_of(x, y))["loss"]
    np.testing.assert_allclose(loss, mse(x, y, average), rtol=1e-5)
    assert abs(loss - mse(x, y, w)) > 1e-3
    assert est.get_variable_value("w") == pytest.approx(w)  # The weights stay as trained.


def test_prediction_uses_the_averaged_weights(trained):
    model_dir, _, average = trained
    x, y = data(2, seed=2)
    predictions = [p["y"] for p in estimator(model_dir).predict(input_fn_of(x, y))]
    np.testing.assert_allclose(predictions, x[:, 0] * average, rtol=1e-5)


def test_export_serves_the_averaged_weights(trained, tmp_path):
    import tensorflow as tf

    model_dir, _, average = trained

    def receiver_fn():
        x = tf.compat.v1.placeholder(tf.float32, [None, 1], name="x")
        return kte.export.ServingInputReceiver({"x": x}, {"x": x})

    path = estimator(model_dir).export_saved_model(str(tmp_path), receiver_fn)
    x = np.array([[1.0], [2.0]], "float32")
    served = tf.saved_model.load(path.decode()).signatures["serving_default"](x=tf.constant(x))
    np.testing.assert_allclose(served["y"].numpy(), x[:, 0] * average, rtol=1e-5)


def test_in_memory_evaluation_after_fit_uses_the_averages_and_training_goes_on_from_the_weights():
    model = estimator_model(ema_model_fn, loop=2, batch=BATCH)
    x, y = data(6)
    model.fit((x, y), shuffle=False, verbose=0)
    store = model.store.variables_by_name()
    w, average = float(store["w"].value), float(store[SHADOW].value)
    loss = model.evaluate((x, y), verbose=0)
    np.testing.assert_allclose(loss, mse(x, y, average), rtol=1e-5)
    assert float(store["w"].value) == w


def test_without_a_scaffold_evaluation_uses_the_weights(trained):
    def plain_fn(features, labels, mode, params):
        spec = ema_model_fn(features, labels, mode, params)
        return spec._replace(scaffold_fn=None)

    model_dir, w, _ = trained
    est = kte.TPUEstimator(
        plain_fn, config=estimator_config(model_dir, save_every=1000, loop=2),
        train_batch_size=BATCH, eval_batch_size=BATCH, use_tpu=False,
    )
    x, y = data(3, seed=1)
    np.testing.assert_allclose(est.evaluate(input_fn_of(x, y))["loss"], mse(x, y, w), rtol=1e-5)


@pytest.mark.parametrize(
    "var_list, error",
    [("w", TypeError), ({"w": 3.0}, TypeError)],
    ids=["a-string", "a-non-variable"],
)
def test_saver_var_list_is_checked(var_list, error):
    with pytest.raises(error, match="var_list"):
        tf1.train.Saver(var_list)
