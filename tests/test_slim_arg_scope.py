"""`slim.arg_scope` / `add_arg_scope` and the slim namespace, against tf_slim.

The arg-scope rules are checked by running one sequence of scopes on the
library's and on tf_slim's implementation; slim layers inside scopes as real
programs write them are compared with tf_slim in a TF 2.21 graph
(tests/slim_reference.py).
"""

import inspect
import threading

import numpy as np
import pytest
import tf_slim

import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.convert.names import compat_v1_has

from slim_reference import assert_same

slim = tf1.contrib.slim
IMAGES = np.random.default_rng(0).normal(size=(2, 9, 9, 3)).astype("float32")
LAYERS = ["conv2d", "convolution", "convolution1d", "convolution2d", "convolution3d", "conv1d",
          "conv3d", "separable_conv2d", "separable_convolution2d", "conv2d_transpose",
          "convolution2d_transpose", "fully_connected", "batch_norm", "layer_norm",
          "max_pool2d", "avg_pool2d", "dropout", "flatten", "one_hot_encoding", "softmax",
          "unit_norm", "bias_add", "repeat", "stack", "linear", "relu", "relu6"]


def scope_rules(lib):
    """A sequence of arg scopes on `lib` (the library's slim or tf_slim): what `f` received."""

    @lib.add_arg_scope
    def f(a, b=1, c=2, d=3):
        return (a, b, c, d)

    @lib.add_arg_scope
    def g(a, b=1):
        return (a, b)

    seen = [f(0)]
    with lib.arg_scope([f, g], b=10):
        seen += [f(1), g(1)]
        with lib.arg_scope([f], c=20) as inner:
            seen += [f(2), f(2, c=5), g(2)]
            with lib.arg_scope([f], b=30):
                seen.append(f(3))
        seen.append(f(4))
    seen.append(f(5))
    with lib.arg_scope(inner):  # re-entered: the scope as it was, not merged
        seen += [f(6), g(6)]
        with lib.arg_scope([g], b=7):
            seen += [f(7), g(7)]
    with lib.arg_scope([f], d=40):
        with lib.arg_scope(inner):  # replaces the enclosing scope
            seen.append(f(8))
    seen.append(sorted(lib.arg_scoped_arguments(f)))
    seen.append((lib.has_arg_scope(f), lib.has_arg_scope(len)))
    return seen


def test_arg_scope_rules_are_tf_slims():
    assert scope_rules(slim) == scope_rules(tf_slim)


def test_decorated_function_keeps_name_doc_and_signature():
    def documented(inputs, size=3):
        """Doc."""

    decorated = slim.add_arg_scope(documented)
    assert decorated.__name__ == "documented" and decorated.__doc__ == "Doc."
    assert list(inspect.signature(decorated).parameters) == ["inputs", "size"]


@pytest.mark.parametrize("name", LAYERS)
def test_layer_functions_take_tf_slims_arguments_under_its_names(name):
    ours, theirs = getattr(slim, name), getattr(tf_slim, name)
    assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters)
    # slim.repeat/stack name their scopes after the layer's __name__.
    assert getattr(ours, "__name__", None) == getattr(theirs, "__name__", None)
    assert slim.has_arg_scope(ours) == tf_slim.has_arg_scope(theirs)


def test_one_scope_stack_per_process_as_tf_slim():
    seen = []

    @slim.add_arg_scope
    def f(b=1):
        return b

    with slim.arg_scope([f], b=2):
        thread = threading.Thread(target=lambda: seen.append(f()))
        thread.start()
        thread.join()
    assert seen == [2]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: slim.arg_scope({}, b=1).__enter__(), ValueError, "no keyword arguments"),
        (lambda: slim.arg_scope([len], b=1).__enter__(), ValueError, "not decorated"),
        (lambda: slim.arg_scope(slim.conv2d, b=1).__enter__(), TypeError, "list or tuple"),
        (lambda: slim.arg_scoped_arguments(len), ValueError, "not decorated"),
    ],
)
def test_bad_arg_scopes_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_slim_names_are_converted():
    for name in LAYERS + ["arg_scope", "add_arg_scope", "l2_regularizer",
                          "variance_scaling_initializer", "model_variable",
                          "get_variables_to_restore", "tfexample_decoder.TFExampleDecoder"]:
        assert compat_v1_has(f"contrib.slim.{name}"), name
        if name in LAYERS:
            assert compat_v1_has(f"contrib.layers.{name}"), name


# -- Layers in scopes, as the corpus writes them. ----------------------------------------


def inception_block(s, tf, x):
    """Inception/AmoebaNet style: defaults for several ops, nested, re-entered, `scope` set."""
    with s.arg_scope([s.conv2d, s.fully_connected, s.separable_conv2d],
                     weights_regularizer=s.l2_regularizer(0.01), activation_fn=None):
        with s.arg_scope([s.conv2d, s.separable_conv2d], biases_initializer=None,
                         normalizer_fn=s.layer_norm, normalizer_params={"scale": False}):
            with s.arg_scope([s.conv2d, s.max_pool2d, s.avg_pool2d], stride=1,
                             padding="SAME") as block_scope:
                branch_0 = s.conv2d(x, 4, [1, 1], scope="Conv2d_0a_1x1")
                branch_1 = s.conv2d(branch_0, 4, [3, 3], stride=2, padding="VALID")
                branch_2 = s.avg_pool2d(x, [3, 3], scope="AvgPool_0a_3x3")
                branch_3 = s.separable_conv2d(x, None, 3)
    with s.arg_scope(block_scope):
        again = s.max_pool2d(branch_0, [3, 3])
    with s.arg_scope([s.fully_connected], activation_fn=tf.nn.relu, scope="FC"):
        logits = s.fully_connected(s.flatten(branch_1), 3)
    return [branch_0, branch_1, branch_2, branch_3, again, logits]


def mobilenet_block(s, tf, x):
    """MobileNet v1 style: separable (depthwise only) then 1x1, relu6, NHWC in the scope."""
    with s.arg_scope([s.conv2d, s.separable_conv2d], padding="SAME",
                     activation_fn=tf.nn.relu6, data_format="NHWC"):
        with s.arg_scope([s.separable_conv2d], weights_regularizer=None):
            net = s.conv2d(x, 8, [3, 3], stride=2, scope="Conv2d_0")
            net = s.separable_conv2d(net, None, [3, 3], depth_multiplier=1, stride=1,
                                     rate=1, scope="Conv2d_1_depthwise")
            net = s.conv2d(net, 16, [1, 1], stride=1, scope="Conv2d_1_pointwise")
    return s.softmax(s.conv2d(net, 5, [1, 1], activation_fn=None, scope="Logits"))


@pytest.mark.parametrize("program", [inception_block, mobilenet_block])
def test_layers_in_arg_scopes_match_tf_slim(program):
    assert_same(program, IMAGES)
