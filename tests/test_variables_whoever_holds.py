"""Every variable made while model_fn runs is the model's, whoever holds its object.

TF1 kept every variable in the graph, so a Keras layer held by a plain
Python object (MnasNet's block objects holding `tf.keras.layers.Conv2D`s)
was trained, saved and listed like any other. Keras tracks only the layers a
layer holds in its attributes, lists and dicts: such a layer is adopted by
the layer that made it. The expected names and parameter counts are those
TensorFlow 2.15's `tf.compat.v1` graph gives the same code, checked there
once; the tests need no TensorFlow 1.
"""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib

TRAIN = kte.ModeKeys.TRAIN
IMAGES = keras.KerasTensor((8, 8, 8, 2))
ROWS = keras.KerasTensor((2, 4))


def run(program, store, building=True):
    with store_lib.model_fn_call(store, TRAIN, building, 0, True):
        return program()


class Block(object):
    """A plain object holding Keras convolutions and a tf.layers batch norm."""

    def __init__(self):
        self.conv = keras.layers.Conv2D(4, 3, padding="same", use_bias=False)
        self.depthwise = keras.layers.DepthwiseConv2D(3, padding="same", use_bias=False)
        self.bn = tf1.layers.BatchNormalization(fused=True)

    def call(self, x, training):
        return self.bn(self.depthwise(self.conv(x)), training=training)


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.blocks = [Block(), Block()]
        self.fc = keras.layers.Dense(3)

    def call(self, x, training=True):
        for i, block in enumerate(self.blocks):
            with tf1.variable_scope("blocks_%d" % i):
                x = block.call(x, training)
        return self.fc(tf1.reduce_mean(x, [1, 2]))


def net():
    with tf1.variable_scope("net"):
        return Net()(IMAGES, training=True)


# TF 2.15: `tf.global_variables()` of the same code in a tf.compat.v1 graph.
NET_VARIABLES = {
    "net/net/blocks_0/conv2d/kernel": (3, 3, 2, 4),
    "net/net/blocks_0/depthwise_conv2d/depthwise_kernel": (3, 3, 4, 1),
    "net/blocks_0/batch_normalization/gamma": (4,),
    "net/blocks_0/batch_normalization/beta": (4,),
    "net/blocks_0/batch_normalization/moving_mean": (4,),
    "net/blocks_0/batch_normalization/moving_variance": (4,),
    "net/net/blocks_1/conv2d_1/kernel": (3, 3, 4, 4),
    "net/net/blocks_1/depthwise_conv2d_1/depthwise_kernel": (3, 3, 4, 1),
    "net/blocks_1/batch_normalization/gamma": (4,),
    "net/blocks_1/batch_normalization/beta": (4,),
    "net/blocks_1/batch_normalization/moving_mean": (4,),
    "net/blocks_1/batch_normalization/moving_variance": (4,),
    "net/net/dense/kernel": (4, 3),
    "net/net/dense/bias": (3,),
}
NET_TRAINABLE_PARAMETERS = 319  # TF 2.15's sum over tf.trainable_variables().


def test_layers_held_by_plain_objects_are_variables_of_the_model_under_tf1_names():
    store = store_lib.VariableStore()
    run(net, store)
    assert {v.path: tuple(v.shape) for v in store.variables} == NET_VARIABLES


def test_the_trainable_parameters_are_tf1s():
    store = store_lib.VariableStore()
    run(net, store)
    assert sum(int(np.prod(v.shape)) for v in store.trainable_variables) == (
        NET_TRAINABLE_PARAMETERS)


def test_tf1_trainable_variables_lists_them_while_model_fn_runs():
    def program():
        net()
        return [v.name for v in tf1.trainable_variables()]

    listed = run(program, store_lib.VariableStore())
    assert sorted(listed) == sorted(
        f"{path}:0" for path in NET_VARIABLES if "moving_" not in path)


def test_later_calls_find_the_same_variables():
    store = store_lib.VariableStore()
    run(net, store)
    first = [id(v) for v in store.variables]
    run(net, store, building=False)
    assert [id(v) for v in store.variables] == first


class Holder(object):
    def __init__(self, units):
        self.layers = {"a": keras.layers.Dense(units), "b": keras.layers.Dense(units, use_bias=False)}


class Lazy(keras.layers.Layer):
    """Makes its sublayers in `build`, held by a plain object in a dict."""

    def build(self, shape):
        self.holder = Holder(3)

    def call(self, x):
        with tf1.variable_scope("inner"):
            y = self.holder.layers["a"](x)
            w = tf1.get_variable("w", [3])
        return self.holder.layers["b"](y) * w


def test_sublayers_made_in_build_and_held_in_a_dict_of_a_plain_object():
    store = store_lib.VariableStore()
    with_scope = lambda: tf1.variable_scope("top")  # noqa: E731

    def program():
        with with_scope():
            Lazy(name="lazy")(ROWS)

    run(program, store)
    # TF 2.15's names and shapes for the same code.
    assert {v.path: tuple(v.shape) for v in store.variables} == {
        "top/lazy/inner/dense/kernel": (4, 3),
        "top/lazy/inner/dense/bias": (3,),
        "top/inner/w": (3,),
        "top/lazy/dense_1/kernel": (3, 3),
    }


def block_model_fn(features, labels, mode, params):
    with tf1.variable_scope("net"):
        logits = Net()(features["x"], training=mode == TRAIN)
    loss = tf1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf1.train.GradientDescentOptimizer(0.5).minimize(
        loss, tf1.train.get_global_step())
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def block_input_fn(params):
    rng = np.random.default_rng(0)
    x = rng.random((16, 8, 8, 2), dtype=np.float32)
    y = rng.integers(0, 3, 16).astype(np.int32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(
        params["batch_size"], drop_remainder=True)


def test_adopted_variables_are_trained_saved_and_restored(tmp_path):
    estimator = kte.TPUEstimator(
        model_fn=block_model_fn, config=kte.RunConfig(model_dir=str(tmp_path)),
        train_batch_size=8, use_tpu=False)
    estimator.train(block_input_fn, max_steps=1)
    kernel = "net/net/blocks_1/depthwise_conv2d_1/depthwise_kernel"
    assert set(estimator.get_variable_names()) == set(NET_VARIABLES) | {"global_step"}
    before = estimator.get_variable_value(kernel)
    estimator.train(block_input_fn, max_steps=2)  # Restores, then trains a step.
    after = estimator.get_variable_value(kernel)
    assert before.shape == (3, 3, 4, 1) and not np.allclose(before, after)
    checkpoint = tf.train.latest_checkpoint(str(tmp_path))
    assert os.path.basename(checkpoint) == "model.ckpt-2"
    assert kernel in dict(tf.train.list_variables(checkpoint))


# -- Each mode builds its own objects; variables are shared by name. --------


class Classifier(keras.Model):
    """Built with arguments that differ by mode, as EfficientNet's model is."""

    def __init__(self, dropout, momentum, units=3):
        super().__init__(name="classifier")
        self.blocks = [Block()]
        self.norm = keras.layers.BatchNormalization(momentum=momentum)
        self.drop = keras.layers.Dropout(dropout)
        self.fc = keras.layers.Dense(units)

    def call(self, x, training=False):
        x = self.blocks[0].call(x, training)
        x = self.drop(self.norm(tf1.reduce_mean(x, [1, 2]), training=training))
        return self.fc(x)


def classifier(mode, eval_units=3):
    """EfficientNet's way: the model is made anew in every mode, with its own arguments."""
    training = mode == TRAIN
    model = Classifier(dropout=0.5 if training else 0.0, momentum=0.9 if training else 0.99,
                       units=3 if training else eval_units)
    return model, model(IMAGES, training=training)


def run_in(mode, program, store, building=True):
    with store_lib.model_fn_call(store, mode, building, 0, mode == TRAIN):
        return program()


def test_each_mode_builds_its_own_objects_sharing_trains_variables_by_name():
    store = store_lib.VariableStore()
    trained, _ = run_in(TRAIN, lambda: classifier(TRAIN), store)
    variables = [id(v) for v in store.variables]
    evaluated, _ = run_in(kte.ModeKeys.EVAL, lambda: classifier(kte.ModeKeys.EVAL), store)
    assert evaluated is not trained and evaluated.drop.rate == 0.0
    # Evaluation made no variable of its own: TRAIN's, found by name.
    assert [id(v) for v in store.variables] == variables
    assert {id(v) for v in evaluated.weights} <= set(variables)
    # Its compiled steps get its own object back.
    again, _ = run_in(kte.ModeKeys.EVAL, lambda: classifier(kte.ModeKeys.EVAL), store,
                      building=False)
    assert again is evaluated


def test_a_shape_mismatch_across_modes_is_tf1s_error_naming_the_variable():
    store = store_lib.VariableStore()
    run_in(TRAIN, lambda: classifier(TRAIN), store)
    with pytest.raises(ValueError, match=r"Trying to share variable classifier/dense/kernel, "
                       r"but specified shape \(4, 5\) and found shape \(4, 3\)"):
        run_in(kte.ModeKeys.EVAL, lambda: classifier(kte.ModeKeys.EVAL, eval_units=5), store)


# -- Initializers that draw random numbers draw new ones each time. ---------


def normal_initializer(shape, dtype=None, partition_info=None):
    """MnasNet's `conv_kernel_initializer` shape: a TF1 random op as an initializer."""
    return tf1.random_normal(shape, stddev=1.0, dtype=dtype)


def drawing_model_fn(features, labels, mode, params):
    first = tf1.get_variable("first", [4, 4], initializer=normal_initializer)
    second = tf1.get_variable("second", [4, 4], initializer=normal_initializer)
    hidden = keras.layers.Dense(4, kernel_initializer=normal_initializer, use_bias=False)
    out = keras.layers.Dense(4, kernel_initializer=normal_initializer, use_bias=False)
    loss = tf1.reduce_mean(out(hidden(features))) + tf1.reduce_sum(first + second)
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=tf1.train.GradientDescentOptimizer(
        0.0).minimize(loss, tf1.train.get_global_step()))


def test_random_initializers_in_the_build_pass_draw_different_numbers():
    # TF1 gave every random op its own seed; the build pass ignores
    # assignments, but its random-number generator still advances.
    model = kte.EstimatorModel(drawing_model_fn, train_batch_size=8)
    model.compile()
    model.fit(np.ones((8, 4), "float32"), np.ones((8,), "float32"), epochs=1, verbose=0)
    values = [np.asarray(v.value) for v in model.store.variables if v.shape == (4, 4)]
    assert len(values) == 4
    assert all(not np.array_equal(values[i], values[j])
               for i in range(4) for j in range(i + 1, 4))
