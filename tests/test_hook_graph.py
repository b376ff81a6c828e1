"""A hook's `begin()` sees the graph `model_fn` built, as in TF1.

TF1 called `SessionRunHook.begin()` once `model_fn` had built the graph: it
could list the variables (`tf.trainable_variables()`,
`ema.variables_to_restore()`) and build a restore function that
`after_create_session` runs. tensorflow/tpu's MobileNet, AmoebaNet and
Inception evaluate their moving averages with such a hook (`LoadEMAHook`).
"""

import numpy as np

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1

X = np.ones((16, 1), np.float32)
DECAY = 0.9


def ema_fn(features, labels, mode):
    """loss = mean(x) * w, trained by SGD(0.1) with an average of w (decay 0.9)."""
    w = tf1.get_variable("w", [], initializer=tf1.ones_initializer())
    loss = tf1.reduce_mean(features) * w
    if mode != kte.ModeKeys.TRAIN:
        return kte.TPUEstimatorSpec(mode, loss=loss)
    step = tf1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf1.train.get_or_create_global_step())
    with tf1.control_dependencies([step]):
        average = tf1.train.ExponentialMovingAverage(DECAY).apply([w])
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=tf1.group(step, average))


class LoadEMAHook(kte.SessionRunHook):
    """tensorflow/tpu's hook: evaluate with the moving averages of the checkpoint."""

    def __init__(self, model_dir):
        self.model_dir = model_dir
        self.seen = None

    def begin(self):
        self.seen = [v.name for v in tf1.trainable_variables()]
        restore = tf1.train.ExponentialMovingAverage(DECAY).variables_to_restore()
        self.load = tf1.contrib.framework.assign_from_checkpoint_fn(
            tf1.train.latest_checkpoint(self.model_dir), restore)

    def after_create_session(self, session, coord):
        self.load(session)


def _trained(tmp_path, steps=4):
    estimator = kte.TPUEstimator(ema_fn, config=kte.RunConfig(model_dir=str(tmp_path)),
                                 use_tpu=False, train_batch_size=4, eval_batch_size=4)
    estimator.train(lambda params: X, max_steps=steps)
    return estimator


def _average(steps):
    w, shadow = 1.0, 1.0
    for _ in range(steps):
        w -= 0.1
        shadow -= (1 - DECAY) * (shadow - w)
    return shadow


def test_begin_lists_the_variables_model_fn_built(tmp_path):
    hook = LoadEMAHook(str(tmp_path))
    _trained(tmp_path).evaluate(lambda params: X, steps=1, hooks=[hook])
    assert hook.seen == ["w:0"]


def test_a_hook_evaluates_the_moving_averages_it_loads(tmp_path):
    estimator = _trained(tmp_path)
    plain = estimator.evaluate(lambda params: X, steps=1)
    averaged = estimator.evaluate(lambda params: X, steps=1, hooks=[LoadEMAHook(str(tmp_path))])
    np.testing.assert_allclose(plain["loss"], 0.6, rtol=1e-5)
    np.testing.assert_allclose(averaged["loss"], _average(4), rtol=1e-5)


def test_training_after_such_an_evaluation_continues_from_the_trained_weights(tmp_path):
    estimator = _trained(tmp_path)
    estimator.evaluate(lambda params: X, steps=1, hooks=[LoadEMAHook(str(tmp_path))])
    estimator.train(lambda params: X, max_steps=5)
    np.testing.assert_allclose(estimator.get_variable_value("w"), 0.5, rtol=1e-5)
