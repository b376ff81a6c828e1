"""Runs one program text on the library's `tf1.contrib.slim` and on tf_slim (TF 2.21 graph mode).

A program is `program(slim, tf, *inputs)` written once against a `slim`
module and a TF1 module (`tf1` here, `tf.compat.v1` there). `compare` runs
it in a `model_fn` call of the library, then builds it in a `tf.Graph`
with tf_slim, gives every TF variable the library's value of the same name,
and returns both results: outputs, variable names (creation order) and the
regularization losses.
"""

import numpy as np

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib


def run(program, mode=kte.ModeKeys.TRAIN, building=True):
    """Calls `program()` as model_fn code is called, against a new store."""
    with store_lib.model_fn_call(store_lib.VariableStore(), mode, building, 0,
                                 mode == kte.ModeKeys.TRAIN):
        return program()


def _numpy(value):
    if isinstance(value, (list, tuple)):
        return [_numpy(v) for v in value]
    return np.asarray(value)


class Result:
    """What one side computed: `outputs`, `names`, `values` ({name: array}), `losses`."""

    def __init__(self, outputs, names, values, losses):
        self.outputs, self.names, self.values, self.losses = outputs, names, values, losses


def ours(program, *inputs):
    def call():
        outputs = program(tf1.contrib.slim, tf1, *inputs)
        variables = tf1.global_variables()
        return Result(_numpy(outputs), [v.op.name for v in variables],
                      {v.op.name: np.asarray(v) for v in variables},
                      _numpy(tf1.losses.get_regularization_losses()))

    return run(call)


def theirs(program, *inputs, values=None):
    """Builds `program` with tf_slim; variables take `values` by name where given."""
    import tensorflow as tf
    import tf_slim

    graph = tf.Graph()
    with graph.as_default():
        tf_v1 = tf.compat.v1
        outputs = program(tf_slim, tf_v1, *inputs)
        variables = tf_v1.global_variables()
        losses = tf_v1.losses.get_regularization_losses()
        with tf_v1.Session() as session:
            session.run(tf_v1.global_variables_initializer())
            for variable in variables:
                if values is not None and variable.op.name in values:
                    variable.load(values[variable.op.name], session)
            return Result(_numpy(session.run(outputs)), [v.op.name for v in variables],
                          {v.op.name: session.run(v) for v in variables},
                          _numpy(session.run(losses)))


def compare(program, *inputs):
    """(library's Result, tf_slim's Result) with tf_slim's variables set to the library's."""
    mine = ours(program, *inputs)
    return mine, theirs(program, *inputs, values=mine.values)


def assert_same(program, *inputs, rtol=1e-5, atol=1e-5):
    """Asserts equal variable names (in order), outputs and regularization losses."""
    mine, reference = compare(program, *inputs)
    assert mine.names == reference.names
    outputs = mine.outputs if isinstance(mine.outputs, list) else [mine.outputs]
    expected = reference.outputs if isinstance(reference.outputs, list) else [reference.outputs]
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    np.testing.assert_allclose(mine.losses, reference.losses, rtol=rtol, atol=atol)
    return mine, reference
