"""Adadelta, LARS, clip_gradients_by_norm, enable_mixed_precision_graph_rewrite against TF 2.21.

Each case trains the same linear model (same data, same initial variables)
for a few full-batch steps twice: in `EstimatorModel` with the library's
optimizer, and in a TF 2.21 `tf.Graph` with TensorFlow's
`tf.compat.v1.train` optimizer. Every variable, slots included, must end
with the same TF1 name and value. TF 2 has no `tf.contrib`: LARS's
reference is `tf.contrib.opt.LARSOptimizer`'s documented rule written on
TensorFlow's own momentum kernel (`ResourceApplyMomentum`), as
tensorflow/tpu's copy of it (`efficientnet/lars_optimizer.py`) does, and
`clip_gradients_by_norm`'s is `clip_by_global_norm` before the update, as
`tf.contrib.estimator` defined it.
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1

STEPS = 3
RNG = np.random.default_rng(0)
X = RNG.normal(size=(16, 3)).astype("float32")
Y = (X @ np.array([[1.0], [-2.0], [0.5]]) + 0.3).astype("float32")
W0 = np.array([[0.2], [0.1], [-0.3]], "float32")
B0 = np.array([0.05], "float32")


def _library(make_optimizer):
    def model_fn(features, labels, mode, params):
        w = tf1.get_variable("w", initializer=tf1.constant_initializer(W0), shape=(3, 1))
        b = tf1.get_variable("dense/bias", initializer=tf1.constant_initializer(B0), shape=(1,))
        loss = tf1.reduce_mean(tf1.square(tf1.matmul(features["x"], w) + b - labels))
        train_op = make_optimizer(tf1).minimize(loss)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=STEPS))
    model = kte.EstimatorModel(model_fn, config=config, train_batch_size=len(X))
    model.compile()
    model.fit(({"x": X}, Y), epochs=STEPS, shuffle=False, verbose=0)
    return {path: np.asarray(v.value) for path, v in model.store.variables_by_name().items()
            if path != "global_step"}


def _tensorflow(make_optimizer):
    with tf.Graph().as_default():
        w = tf.compat.v1.get_variable("w", initializer=W0)
        b = tf.compat.v1.get_variable("dense/bias", initializer=B0)
        loss = tf.reduce_mean(tf.square(tf.matmul(X, w) + b - Y))
        train_op = make_optimizer(tf.compat.v1).minimize(loss)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            for _ in range(STEPS):
                session.run(train_op)
            variables = tf.compat.v1.global_variables()
            return {v.name[:-2]: value for v, value in zip(variables, session.run(variables))}


class TFLARS(tf.compat.v1.train.Optimizer):
    """`tf.contrib.opt.LARSOptimizer`'s rule on TensorFlow's momentum kernel."""

    def __init__(self, learning_rate, momentum=0.9, weight_decay=0.0001, eeta=0.001,
                 epsilon=0.0, skip_list=None, use_nesterov=False):
        super().__init__(False, "LARSOptimizer")
        self.lr, self.momentum, self.decay = learning_rate, momentum, weight_decay
        self.eeta, self.epsilon, self.skip, self.nesterov = eeta, epsilon, skip_list, use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _resource_apply_dense(self, grad, var):
        lr = self.lr
        if self.skip is None or not any(s in var.name for s in self.skip):
            w_norm, g_norm = tf.norm(var, ord=2), tf.norm(grad, ord=2)
            trust = tf.where(w_norm > 0, tf.where(
                g_norm > 0, self.eeta * w_norm / (g_norm + self.decay * w_norm + self.epsilon),
                1.0), 1.0)
            lr, grad = lr * trust, grad + self.decay * var
        return tf.raw_ops.ResourceApplyMomentum(
            var=var.handle, accum=self.get_slot(var, "momentum").handle,
            lr=tf.constant(1.0), grad=grad * lr, momentum=self.momentum,
            use_nesterov=self.nesterov)


def _lars(**kwargs):
    def make(v1):
        if v1 is tf1:
            return tf1.contrib.opt.LARSOptimizer(0.5, **kwargs)
        return TFLARS(0.5, **kwargs)

    return make


def _clipped(v1):
    if v1 is tf1:
        return tf1.contrib.estimator.clip_gradients_by_norm(
            tf1.train.MomentumOptimizer(0.1, 0.9), clip_norm=0.5)

    class Clipped(tf.compat.v1.train.MomentumOptimizer):  # contrib's wrapper, inlined
        def apply_gradients(self, grads_and_vars, global_step=None, name=None):
            grads, variables = zip(*grads_and_vars)
            grads, _ = tf.clip_by_global_norm(grads, 0.5)
            return super().apply_gradients(zip(grads, variables), global_step, name)

    return Clipped(0.1, 0.9)


CASES = {
    "adadelta_defaults": lambda v1: v1.train.AdadeltaOptimizer(),
    "adadelta": lambda v1: v1.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
    "lars": _lars(weight_decay=0.01, eeta=0.01),
    "lars_skip_bias_nesterov": _lars(weight_decay=0.01, eeta=0.01, skip_list=["bias"],
                                     use_nesterov=True),
    "lars_epsilon": _lars(momentum=0.5, epsilon=0.1),
    "clip_gradients_by_norm": _clipped,
}


@pytest.mark.parametrize("case", list(CASES))
def test_optimizer_matches_tensorflow(case):
    got, expected = _library(CASES[case]), _tensorflow(CASES[case])
    assert sorted(got) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, rtol=2e-5, atol=1e-6, err_msg=name)


def test_adadelta_slots_are_named_as_tf1():
    got = _library(lambda v1: v1.train.AdadeltaOptimizer())
    assert sorted(got) == ["dense/bias", "dense/bias/Adadelta", "dense/bias/Adadelta_1",
                           "w", "w/Adadelta", "w/Adadelta_1"]


def test_mixed_precision_graph_rewrite_trains_as_tensorflow():
    # TF's rewrite changes nothing off GPU; its loss scaling, nothing in float32.
    def make(v1):
        opt = v1.train.MomentumOptimizer(0.1, 0.9)
        return v1.train.experimental.enable_mixed_precision_graph_rewrite(opt)

    got = _library(make)
    expected = _tensorflow(make)
    for name in ("w", "dense/bias", "w/Momentum", "dense/bias/Momentum"):
        np.testing.assert_allclose(got[name], expected[name], rtol=2e-5, atol=1e-6)


def test_mixed_precision_graph_rewrite_returns_the_optimizer():
    opt = tf1.train.AdamOptimizer()
    assert tf1.train.experimental.enable_mixed_precision_graph_rewrite(opt, 128) is opt


@pytest.mark.parametrize("call, match", [
    (lambda: tf1.contrib.opt.LARSOptimizer(0.1, momentum=-0.1), "`momentum`.*-0.1"),
    (lambda: tf1.contrib.opt.LARSOptimizer(0.1, weight_decay=-1.0), "`weight_decay`"),
    (lambda: tf1.train.experimental.enable_mixed_precision_graph_rewrite(
        tf1.train.AdamOptimizer(), loss_scale="static"), "`loss_scale`.*static"),
])
def test_bad_argument_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("wrap", [
    lambda opt: tf1.contrib.estimator.clip_gradients_by_norm(opt, 1.0),
    tf1.train.experimental.enable_mixed_precision_graph_rewrite,
])
def test_wrapping_something_else_is_an_error(wrap):
    with pytest.raises(TypeError, match="compat.v1.train.Optimizer"):
        wrap("sgd")
