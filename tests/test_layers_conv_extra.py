"""tf1.layers separable and 3D convolutions, InputSpec and instance_norm against TensorFlow.

The convolutions compare with TF 2.15's `tf.compat.v1.layers` (the fixture
`references/layers_conv_extra_tf215.npz`, written by the script beside it:
TF 2.21's need Keras 2): same input, same variable values, same TF1
variable names, same output. `instance_norm` compares live with TF 2.21
running tf-slim's copy of `tf.contrib.layers.instance_norm` in a graph.
"""

import functools
import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "references",
                               "layers_conv_extra_tf215.npz"))
INITIALIZER_OF = {
    "depthwise_kernel": "depthwise_initializer",
    "pointwise_kernel": "pointwise_initializer",
    "kernel": "kernel_initializer",
    "bias": "bias_initializer",
}


def run(program, store=None, mode=kte.ModeKeys.TRAIN):
    store = store_lib.VariableStore() if store is None else store
    with store_lib.model_fn_call(store, mode, True, 0, mode == kte.ModeKeys.TRAIN):
        return program()


@pytest.mark.parametrize("case", [
    "separable_conv2d_same_stride2",
    "separable_conv2d_valid_dilated_named",
    "separable_conv1d_valid",
    "separable_conv1d_same_stride2",
    "conv3d_same_strided",
    "conv3d_valid_dilated",
    "conv3d_transpose_same_stride2",
    "conv3d_transpose_valid",
])
def test_layer_matches_tf1_names_and_output(case):
    function = str(FIXTURE[f"{case}/function"])
    kwargs = json.loads(str(FIXTURE[f"{case}/kwargs"]))
    if kwargs.get("activation") == "relu":
        kwargs["activation"] = tf1.nn.relu
    names = [str(n) for n in FIXTURE[f"{case}/names"]]
    for name in names:
        role = name.rsplit("/", 1)[1][:-2]
        kwargs[INITIALIZER_OF[role]] = tf1.constant_initializer(FIXTURE[f"{case}/var/{name}"])

    def program():
        out = getattr(tf1.layers, function)(FIXTURE[f"{case}/input"], **kwargs)
        return out, [v.name for v in tf1.global_variables()]

    out, got_names = run(program)
    assert got_names == names
    np.testing.assert_allclose(np.asarray(out), FIXTURE[f"{case}/output"], rtol=1e-5, atol=1e-5)


def test_layer_classes_are_named_and_numbered_as_tf1():
    x = np.zeros((1, 6, 6, 2), "float32")
    v = np.zeros((1, 4, 4, 4, 2), "float32")

    def program():
        tf1.layers.SeparableConv2D(3, 3)(x)
        tf1.layers.separable_conv2d(x, 3, 3)
        tf1.layers.Conv3D(filters=2, kernel_size=2, padding="SAME")(inputs=v)  # as UNet 3D
        tf1.layers.Conv3DTranspose(2, 2, use_bias=False)(v)
        tf1.layers.conv3d(v, 2, 2, use_bias=False)
        return [v.name for v in tf1.global_variables()]

    assert run(program) == [
        "separable_conv2d/depthwise_kernel:0", "separable_conv2d/pointwise_kernel:0",
        "separable_conv2d/bias:0", "separable_conv2d_1/depthwise_kernel:0",
        "separable_conv2d_1/pointwise_kernel:0", "separable_conv2d_1/bias:0",
        "conv3d/kernel:0", "conv3d/bias:0", "conv3d_transpose/kernel:0", "conv3d_1/kernel:0",
    ]


def test_separable_regularizers_go_to_the_regularization_losses():
    x = np.ones((1, 4, 4, 2), "float32")

    def program():
        tf1.layers.separable_conv2d(
            x, 3, 3, depthwise_initializer=tf1.ones_initializer(),
            pointwise_initializer=tf1.ones_initializer(),
            depthwise_regularizer=lambda w: tf1.reduce_sum(w),
            pointwise_regularizer=lambda w: 10 * tf1.reduce_sum(w))
        return [float(loss) for loss in tf1.get_collection(tf1.GraphKeys.REGULARIZATION_LOSSES)]

    assert run(program) == [3 * 3 * 2, 10 * 2 * 3]


@pytest.mark.parametrize("function, argument, value", [
    ("separable_conv2d", "padding", "full"),
    ("conv3d", "data_format", "NDHWC"),
])
def test_bad_argument_is_named(function, argument, value):
    with pytest.raises(ValueError, match=f"`{argument}`.*{value}"):
        run(lambda: getattr(tf1.layers, function)(np.zeros((1, 4, 4, 4, 2), "float32"), 2, 2,
                                                  **{argument: value}))


def _input_spec_cases():
    return json.loads(str(FIXTURE["input_spec/cases"]))


@pytest.mark.parametrize("spec, shape, accepted", _input_spec_cases())
def test_input_spec_accepts_what_tf1_accepted(spec, shape, accepted):
    if "axes" in spec:
        spec["axes"] = {int(a): n for a, n in spec["axes"].items()}

    class Checked(keras.layers.Layer):  # as EfficientNet's CondConv2D sets it
        def build(self, input_shape):
            self.input_spec = tf1.layers.InputSpec(**spec)

        def call(self, inputs):
            return inputs

    # Keras 3 checks the spec set in `build` at the first call already.
    if accepted:
        Checked()(np.zeros(shape, "float32"))
    else:
        with pytest.raises(ValueError, match="incompatible"):
            Checked()(np.zeros(shape, "float32"))


def _tf_instance_norm(x, **kwargs):
    from tf_slim.layers.normalization import instance_norm  # contrib's, kept by tf-slim

    with tf.Graph().as_default():
        y = instance_norm(tf.constant(x), **kwargs)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            return session.run(y), [v.name for v in tf.compat.v1.global_variables()]


@pytest.mark.parametrize("shape, data_format, center, scale", [
    ((2, 5, 5, 3), "NHWC", True, True),
    ((2, 3, 4, 4, 2), "NHWC", True, False),  # 3D volumes, as UNet 3D
    ((2, 3, 4, 5), "NCHW", False, True),
])
def test_instance_norm_matches_contrib(shape, data_format, center, scale):
    x = np.random.default_rng(3).normal(1.0, 2.0, size=shape).astype("float32")
    channels = shape[-1] if data_format == "NHWC" else shape[1]
    beta = np.linspace(-1, 1, channels).astype("float32")
    gamma = np.linspace(0.5, 2, channels).astype("float32")
    kwargs = dict(center=center, scale=scale, data_format=data_format, param_initializers={
        "beta": tf.compat.v1.constant_initializer(beta),
        "gamma": tf.compat.v1.constant_initializer(gamma)})
    expected, expected_names = _tf_instance_norm(x, **kwargs)
    kwargs["param_initializers"] = {"beta": tf1.constant_initializer(beta),
                                    "gamma": tf1.constant_initializer(gamma)}

    def program():
        return tf1.layers.instance_norm(x, **kwargs), [v.name for v in tf1.global_variables()]

    out, names = run(program)
    assert names == expected_names
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-4, atol=1e-5)


def test_instance_norm_repeated_is_numbered():
    x = np.ones((1, 2, 2, 2), "float32")

    def program():
        tf1.layers.instance_norm(tf1.layers.instance_norm(x), scope="last")
        return [v.name for v in tf1.global_variables()]

    assert run(program) == ["InstanceNorm/beta:0", "InstanceNorm/gamma:0",
                            "last/beta:0", "last/gamma:0"]


def test_instance_norm_rejects_rank_2():
    with pytest.raises(ValueError, match="rank >= 3"):
        run(lambda: tf1.layers.instance_norm(np.ones((2, 3), "float32")))


def test_named_separable_conv_is_shared_under_auto_reuse():
    # RetinaNet/detection heads: one head applied to every pyramid level.
    levels = [np.ones((1, 8, 8, 4), "float32"), np.ones((1, 4, 4, 4), "float32")]

    def program():
        conv = functools.partial(tf1.layers.separable_conv2d, depth_multiplier=1,
                                 bias_initializer=tf1.zeros_initializer())
        with tf1.variable_scope("rpn_head", reuse=tf1.AUTO_REUSE):
            outs = [conv(x, 4, kernel_size=(3, 3), padding="same", name="rpn") for x in levels]
        return outs, [v.name for v in tf1.global_variables()]

    outs, names = run(program)
    assert names == ["rpn_head/rpn/depthwise_kernel:0", "rpn_head/rpn/pointwise_kernel:0",
                     "rpn_head/rpn/bias:0"]
    assert [tuple(o.shape) for o in outs] == [(1, 8, 8, 4), (1, 4, 4, 4)]
