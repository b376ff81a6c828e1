"""`tf1.train.assign_moving_average` against TensorFlow's `moving_averages.assign_moving_average`.

Three updates of a variable, with and without zero-debiasing, in TF1 graph
mode and in the library (as model_fn code): the variable's values, and the
names of the variables created (TF1's `<scope>/<var>/biased`, `local_step`).
"""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.training import moving_averages

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib

VALUES = np.array([[1.0, -2.0], [3.0, 0.5], [-1.0, 4.0]], np.float32)


def _tensorflow(zero_debias):
    with tf.Graph().as_default():
        with tf.compat.v1.variable_scope("bn"):
            v = tf.compat.v1.get_variable("mean", [2], initializer=tf.compat.v1.zeros_initializer(),
                                          trainable=False)
            value = tf.compat.v1.placeholder(tf.float32, [2])
            update = moving_averages.assign_moving_average(v, value, 0.9, zero_debias=zero_debias)
        names = [x.op.name for x in tf.compat.v1.global_variables()]
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            seen = [session.run(update, {value: row}) for row in VALUES]
    return names, np.array(seen)


def _library(zero_debias):
    store, seen = store_lib.VariableStore(), []
    for row in VALUES:  # One model_fn call per step, as every step traces model_fn.
        with store_lib.model_fn_call(store, kte.ModeKeys.TRAIN, not seen, 0, True):
            with tf1.variable_scope("bn"):
                v = tf1.get_variable("mean", [2], initializer=tf1.zeros_initializer(),
                                     trainable=False)
                seen.append(np.asarray(tf1.train.assign_moving_average(
                    v, row, 0.9, zero_debias=zero_debias)))
            names = [x.op.name for x in tf1.global_variables()]
    return names, np.array(seen)


@pytest.mark.parametrize("zero_debias", [False, True])
def test_assign_moving_average_matches_tensorflow(zero_debias):
    names, values = _library(zero_debias)
    expected_names, expected = _tensorflow(zero_debias)
    assert names == expected_names
    np.testing.assert_allclose(values, expected, rtol=1e-6)
