"""Batch normalization takes TF1's fused path where TF1 did, its non-fused path elsewhere.

TF1's rule: `fused` None or True uses the fused kernel only where it can;
elsewhere the non-fused implementation runs, without an error. For
`tf.layers` (TF1's V1 Keras layer) that is a 4D input with the channels on
axis 1 or 3; for `contrib.layers.batch_norm` (and slim's) an input of rank
2 or 4. The two paths differ where TF1's did: the fused kernel raises
epsilon to 1.001e-5 and moves `moving_variance` toward the unbiased batch
variance. Every case is compared with TensorFlow's own math in graph mode
(`tf.nn.moments`, `tf.nn.batch_normalization`).
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.compat.v1.contrib import layers as contrib_layers
from keras_tpu_estimator.compat.v1.contrib import slim
from keras_tpu_estimator.model_fn import store as store_lib

TRAIN = kte.ModeKeys.TRAIN
EPSILON = 1e-5  # Below the fused kernel's minimum: the path shows in the output.
GAMMA, BETA, MOMENTUM = 1.5, 0.25, 0.9
_rng = np.random.default_rng(0)
# Tiny variances, so that epsilon matters; 2 to 4 channels.
INPUTS = {rank: (_rng.normal(size=(3,) + (2, 4, 3, 2)[:rank - 1]) * 3e-3).astype("float32")
          for rank in (2, 3, 4, 5)}


def _run(program, training):
    store = store_lib.VariableStore()
    with store_lib.model_fn_call(store, TRAIN, True, 0, training):
        out = program()
        variables = {v.name.split("/")[-1].split(":")[0]: np.asarray(v)
                     for v in tf1.global_variables()}
    return np.asarray(out), variables


def _expected(x, axis, fused, training):
    """TF's math: (output, moving_variance after one step), in graph mode."""
    rank = x.ndim
    axis %= rank
    axes = [a for a in range(rank) if a != axis]
    shape = [1] * rank
    shape[axis] = -1
    epsilon = max(EPSILON, 1.001e-5) if fused else EPSILON
    n = x.size // x.shape[axis]
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        t = tf.constant(x)
        mean, variance = tf.nn.moments(t, axes, keepdims=True)
        if not training:
            mean, variance = tf.zeros_like(mean), tf.ones_like(variance)
        out = tf.nn.batch_normalization(t, mean, variance, BETA, GAMMA, epsilon)
        target = tf.reshape(variance, [-1]) * (n / (n - 1) if fused else 1.0)
        moving = MOMENTUM + (1 - MOMENTUM) * target if training else tf.ones_like(target)
        return session.run([out, moving])


def _check(program, x, axis, fused, training):
    out, variables = _run(program, training)
    expected_out, expected_moving = _expected(x, axis, fused, training)
    np.testing.assert_allclose(out, expected_out, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(variables["moving_variance"], expected_moving, rtol=1e-5)


LAYER_CASES = [
    (fused, rank, axis, training)
    for fused in (True, None, False)
    for rank, axis in ((2, -1), (2, 1), (3, -1), (3, 1), (4, -1), (4, 1), (4, 2), (4, 3),
                       (4, -3), (5, -1), (5, 1))
    for training in (True, False)
]


@pytest.mark.parametrize("fused, rank, axis, training", LAYER_CASES)
@pytest.mark.parametrize("form", ["function", "class"])
def test_tf_layers_batch_normalization_falls_back_where_tf1_did(form, fused, rank, axis, training):
    x = INPUTS[rank]
    arguments = dict(axis=axis, momentum=MOMENTUM, epsilon=EPSILON, fused=fused,
                     beta_initializer=tf1.constant_initializer(BETA),
                     gamma_initializer=tf1.constant_initializer(GAMMA))
    if form == "function":
        def program():
            return tf1.layers.batch_normalization(x, training=training, **arguments)
    else:
        def program():
            return tf1.layers.BatchNormalization(**arguments)(x, training=training)
    uses_fused = fused is not False and rank == 4 and axis % 4 in (1, 3)
    _check(program, x, axis, uses_fused, training)


CONTRIB_CASES = [
    (fused, rank, data_format, training)
    for fused in (True, None, False)
    for rank in (2, 3, 4, 5)
    for data_format in ("NHWC", "NCHW")
    for training in (True, False)
    if not (data_format == "NCHW" and rank == 2 and fused is False)  # Same as NHWC.
]


@pytest.mark.parametrize("fused, rank, data_format, training", CONTRIB_CASES)
@pytest.mark.parametrize("module", [contrib_layers, slim], ids=["contrib", "slim"])
def test_contrib_batch_norm_falls_back_where_tf1_did(module, fused, rank, data_format, training):
    x = INPUTS[rank]
    axis = 1 if data_format == "NCHW" else -1

    def program():
        return module.batch_norm(
            x, decay=MOMENTUM, epsilon=EPSILON, scale=True, fused=fused, is_training=training,
            data_format=data_format,
            param_initializers={"beta": tf1.constant_initializer(BETA),
                                "gamma": tf1.constant_initializer(GAMMA)})

    _check(program, x, axis, fused is not False and rank in (2, 4), training)
