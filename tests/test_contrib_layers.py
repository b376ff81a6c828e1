"""`tf1.contrib.layers` / `tf1.contrib.slim` layer functions against tf_slim (TF 2.21 graph mode).

Each program is written once (`program(slim, tf, *inputs)`) and run on the
library and on tf_slim with the same inputs and variable values
(tests/slim_reference.py): the variables' TF1 names in creation order, the
outputs and the regularization losses must agree. `batch_norm` is checked in
tests/test_slim_batch_norm.py (tf_slim's needs TF 2.15).
"""

import keras
import numpy as np
import pytest

import keras_tpu_estimator.compat.v1 as tf1

from slim_reference import assert_same
from slim_reference import ours
from slim_reference import run

slim = tf1.contrib.slim
rng = np.random.default_rng(0)
IMAGES = rng.normal(size=(2, 7, 7, 3)).astype("float32")
SEQUENCE = rng.normal(size=(2, 9, 3)).astype("float32")
VOLUME = rng.normal(size=(1, 4, 5, 5, 2)).astype("float32")
FEATURES = rng.normal(size=(4, 6)).astype("float32")
LABELS = np.array([0, 3, 1, 2], "int32")


def layer_norm_after_conv(s, tf, x):
    return s.conv2d(x, 4, [3, 3], normalizer_fn=s.layer_norm, scope="conv")


CONVOLUTIONS = {
    "conv2d_defaults": lambda s, tf, x: s.conv2d(x, 4, 3),
    "conv2d_valid_strided_rectangular": lambda s, tf, x: s.conv2d(
        x, 5, [3, 2], stride=2, padding="VALID", activation_fn=None, scope="c"),
    "conv2d_atrous": lambda s, tf, x: s.conv2d(x, 3, 3, rate=2, activation_fn=tf.nn.relu6),
    "conv2d_no_biases": lambda s, tf, x: s.conv2d(x, 2, 1, biases_initializer=None),
    "conv2d_normalizer_replaces_biases": layer_norm_after_conv,
    "conv2d_list_stride": lambda s, tf, x: s.conv2d(x, 2, 3, stride=[1, 2]),
    "separable_depthwise_only": lambda s, tf, x: s.separable_conv2d(
        x, None, 3, depth_multiplier=2, stride=2),
    "separable_pointwise": lambda s, tf, x: s.separable_conv2d(
        x, 5, [3, 3], depth_multiplier=1, rate=2, activation_fn=None, scope="sep"),
    "separable_valid_no_biases": lambda s, tf, x: s.separable_conv2d(
        x, 4, 2, padding="VALID", biases_initializer=None),
    "conv2d_transpose_same_stride2": lambda s, tf, x: s.conv2d_transpose(x, 4, 3, stride=2),
    "conv2d_transpose_valid_kernel_above_stride": lambda s, tf, x: s.conv2d_transpose(
        x, 2, [4, 3], stride=2, padding="VALID"),
    "conv2d_transpose_valid_kernel_below_stride": lambda s, tf, x: s.conv2d_transpose(
        x, 2, 2, stride=3, padding="VALID", activation_fn=None),
    "conv2d_transpose_same_even_kernel": lambda s, tf, x: s.conv2d_transpose(
        x, 3, 4, stride=2, scope="deconv"),
}


@pytest.mark.parametrize("program", CONVOLUTIONS.values(), ids=CONVOLUTIONS.keys())
def test_convolutions_match_tf_slim(program):
    assert_same(program, IMAGES)


@pytest.mark.parametrize(
    "program, inputs",
    [
        (lambda s, tf, x: s.convolution(x, 4, 3, stride=2, padding="VALID"), SEQUENCE),
        (lambda s, tf, x: s.conv1d(x, 2, 2, rate=2), SEQUENCE),
        (lambda s, tf, x: s.conv3d(x, 3, [2, 3, 3], stride=[1, 2, 2]), VOLUME),
    ],
    ids=["convolution_on_a_sequence", "conv1d_atrous", "conv3d_strided"],
)
def test_convolution_follows_the_inputs_rank_as_tf_slim(program, inputs):
    assert_same(program, inputs)


@pytest.mark.parametrize(
    "layer",
    [
        lambda s, tf, x, f: s.conv2d(x, 4, 3, stride=2, data_format=f),
        lambda s, tf, x, f: s.separable_conv2d(x, 4, 3, depth_multiplier=2, data_format=f),
        lambda s, tf, x, f: s.separable_conv2d(x, None, 3, data_format=f),
        lambda s, tf, x, f: s.conv2d_transpose(x, 4, 3, stride=2, data_format=f),
        lambda s, tf, x, f: s.avg_pool2d(x, 3, stride=1, padding="SAME", data_format=f),
    ],
    ids=["conv2d", "separable", "depthwise", "transpose", "avg_pool"],
)
def test_channels_first_is_channels_last_transposed(layer):
    # TF's CPU kernels take NHWC only: tf_slim runs NHWC on the transposed input.
    def nchw(s, tf, x):
        return layer(s, tf, tf.transpose(x, [0, 3, 1, 2]), "NCHW")

    mine = ours(nchw, IMAGES)
    from slim_reference import theirs

    reference = theirs(lambda s, tf, x: layer(s, tf, x, "NHWC"), IMAGES, values=mine.values)
    assert mine.names == reference.names
    np.testing.assert_allclose(mine.outputs, reference.outputs.transpose(0, 3, 1, 2),
                               rtol=1e-5, atol=1e-5)


CORE = {
    "fully_connected": (lambda s, tf, x: [
        s.fully_connected(x, 5),
        s.fully_connected(x, 3, activation_fn=None, biases_initializer=None, scope="logits"),
        s.fully_connected(tf.reshape(x, [2, 2, 6]), 4)], FEATURES),
    "repeat_and_stack": (lambda s, tf, x: [
        s.stack(s.flatten(x), s.fully_connected, [8, 4]),
        s.stack(s.flatten(x), s.fully_connected, [8, (4, tf.nn.sigmoid)], scope="fc"),
        s.repeat(x, 2, s.conv2d, 3, [3, 3]),
        s.repeat(x, 3, s.conv2d, 3, [3, 3], scope="conv1")], IMAGES),
    "max_pool2d_same": (lambda s, tf, x: s.max_pool2d(x, 3, stride=2, padding="SAME"), IMAGES),
    "avg_pool2d_defaults": (lambda s, tf, x: s.avg_pool2d(x, 3), IMAGES),
    "avg_pool2d_same_excludes_padding": (lambda s, tf, x: s.avg_pool2d(
        x, [3, 3], stride=2, padding="SAME"), IMAGES),
    "avg_pool2d_global_from_dimensions": (lambda s, tf, x: s.avg_pool2d(  # Inception's logits
        x, [tf.Dimension(7), tf.Dimension(7)], padding="VALID"), IMAGES),
    "flatten": (lambda s, tf, x: s.flatten(x), IMAGES),
    "softmax_rank_3": (lambda s, tf, x: s.softmax(tf.convert_to_tensor(x)), SEQUENCE),
    "unit_norm": (lambda s, tf, x: s.unit_norm(tf.convert_to_tensor(x), 1), SEQUENCE),
    "one_hot_encoding": (lambda s, tf, x: s.one_hot_encoding(x, 5), LABELS),
    "bias_add_relu": (lambda s, tf, x: s.bias_add(x, activation_fn=tf.nn.relu), IMAGES),
    "dropout_not_training": (lambda s, tf, x: s.dropout(x, 0.5, is_training=False), FEATURES),
    "layer_norm": (lambda s, tf, x: s.layer_norm(x, scale=False), SEQUENCE),
}


@pytest.mark.parametrize("program, inputs", CORE.values(), ids=CORE.keys())
def test_core_layers_match_tf_slim(program, inputs):
    assert_same(program, inputs)


def test_dropout_keeps_keep_prob_of_the_units_scaled_when_training():
    ones = np.ones((64, 64), "float32")
    out = np.asarray(run(lambda: slim.dropout(ones, keep_prob=0.75, is_training=True)))
    assert set(np.unique(out)) == {0.0, np.float32(1 / 0.75)}
    assert 0.7 < (out != 0).mean() < 0.8


# -- Scopes, reuse, collections, regularizers. -------------------------------------------


def in_variable_scopes(s, tf, x):
    with tf.variable_scope("block"):
        a = s.conv2d(x, 2, 1)
        b = s.conv2d(x, 2, 1)
    with tf.variable_scope("Conv"):
        tf.get_variable("taken", [1])
    c = s.conv2d(x, 2, 1)  # the top-level `Conv` is taken: `Conv_1`
    return [a, b, c]


def shared_by_reuse(s, tf, x):
    first = s.conv2d(x, 2, 3, scope="shared")
    again = s.conv2d(x * 2.0, 2, 3, scope="shared", reuse=True)
    with tf.variable_scope("tower", reuse=tf.AUTO_REUSE):
        s.fully_connected(s.flatten(x), 2, scope="fc")
        s.fully_connected(s.flatten(x), 2, scope="fc")
    return [first, again]


def regularized(s, tf, x):
    reg = s.l2_regularizer(0.25)
    a = s.conv2d(x, 3, 3, weights_regularizer=reg, biases_regularizer=s.l1_regularizer(0.5))
    b = s.separable_conv2d(a, 2, 3, weights_regularizer=reg)  # depthwise and pointwise
    c = s.separable_conv2d(b, None, 3, weights_regularizer=reg, biases_regularizer=reg)
    d = s.conv2d_transpose(c, 2, 3, weights_regularizer=reg)
    return s.fully_connected(s.flatten(d), 2, weights_regularizer=reg)


def regularized_with_reuse(s, tf, x):
    reg = s.l2_regularizer(0.1)
    s.conv2d(x, 3, 3, weights_regularizer=reg, scope="c")
    return s.conv2d(x, 3, 3, weights_regularizer=reg, scope="c", reuse=True)  # counted once


def not_trainable(s, tf, x):
    s.conv2d(x, 2, 3, trainable=False, scope="frozen")
    s.conv2d(x, 2, 3, scope="trained")
    return [tf.constant(0.0)] + [tf.constant(float(len(tf.trainable_variables())))]


@pytest.mark.parametrize(
    "program",
    [in_variable_scopes, shared_by_reuse, regularized, regularized_with_reuse, not_trainable],
)
def test_scopes_reuse_and_regularizers_match_tf_slim(program):
    assert_same(program, IMAGES)


def test_variables_collections_list_and_dict_as_tf_slim():
    import tensorflow as tf
    import tf_slim

    def collections(s, tf):
        s.conv2d(IMAGES, 2, 3, variables_collections=["mine"], scope="a")
        s.fully_connected(FEATURES, 2, variables_collections={"weights": ["w"]}, scope="b")
        return [[v.op.name for v in tf.get_collection(key)] for key in ("mine", "w")]

    with tf.Graph().as_default():
        expected = collections(tf_slim, tf.compat.v1)
    assert run(lambda: collections(slim, tf1)) == expected == [["a/weights", "a/biases"],
                                                               ["b/weights"]]


def test_outputs_collections_collect_the_outputs():
    def program():
        out = slim.conv2d(IMAGES, 2, 3, outputs_collections="end_points")
        slim.max_pool2d(out, 2, outputs_collections=["end_points"])
        return len(tf1.get_collection("end_points"))

    assert run(program) == 2


def test_default_weights_are_xavier_uniform_and_biases_zero():
    def program():
        slim.conv2d(np.zeros((1, 4, 4, 16), "float32"), 32, 3, scope="c")
        return {v.op.name: np.asarray(v) for v in tf1.global_variables()}

    values = run(program)
    limit = np.sqrt(6 / (9 * 16 + 9 * 32))  # TF1's fans of a 3x3 kernel
    weights = values["c/weights"]
    assert np.abs(weights).max() <= limit and np.abs(weights).max() > 0.9 * limit
    np.testing.assert_array_equal(values["c/biases"], 0.0)


def test_bfloat16_scope_keeps_float32_variables():
    def program():
        with tf1.tpu.bfloat16_scope():
            out = slim.conv2d(tf1.cast(IMAGES, tf1.bfloat16), 2, 3)
            out = slim.fully_connected(slim.flatten(out), 2)
        return out.dtype, {str(v.dtype) for v in tf1.global_variables()}

    assert run(program) == ("bfloat16", {"float32"})


def test_layers_build_on_symbolic_inputs():
    def program():
        x = keras.KerasTensor(IMAGES.shape)
        net = slim.separable_conv2d(slim.conv2d(x, 4, 3, stride=2), None, 3)
        net = slim.conv2d_transpose(slim.max_pool2d(net, 2, padding="SAME"), 2, 3, stride=2)
        return tuple(slim.fully_connected(slim.flatten(net), 3).shape)

    assert run(program) == (2, 3)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: slim.conv2d(IMAGES, 2, 3, padding="FULL"), "padding='FULL'"),
        (lambda: slim.conv2d(IMAGES, 2, [3, 3, 3]), r"kernel_size=\[3, 3, 3\]"),
        (lambda: slim.conv2d(IMAGES, 2, 3, stride=2, rate=2), "stride.*rate"),
        (lambda: slim.conv2d(IMAGES, 2.5, 3), "num_outputs=2.5"),
        (lambda: slim.conv2d(IMAGES, 2, 3, data_format="HWC"), "data_format='HWC'"),
        (lambda: slim.separable_conv2d(SEQUENCE, 2, 3), "4D inputs"),
        (lambda: slim.fully_connected(FEATURES, 2.0), "num_outputs=2.0"),
        (lambda: slim.max_pool2d(IMAGES, 2, data_format="NWHC"), "data_format='NWHC'"),
        (lambda: slim.dropout(FEATURES, keep_prob=0.0), "keep_prob=0.0"),
        (lambda: slim.dropout(FEATURES, is_training=keras.KerasTensor((), dtype="bool")),
         "`is_training`"),
        (lambda: slim.unit_norm(FEATURES, 2), "dim=2"),
        (lambda: slim.stack(FEATURES, slim.fully_connected, 3), "stack_args=3"),
        (lambda: slim.flatten(np.zeros(3, "float32")), "rank >= 2"),
    ],
)
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        run(call)
