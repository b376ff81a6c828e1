"""TF1's layer functions and classes on tables of the argument combinations TF1 accepted.

Two differential tables, each case one program written once for both sides:

- `tf.layers` (tests/layers_argument_cases.py): compared with TF 2.15's
  `tf.compat.v1.layers` in graph mode through the fixture
  `references/layers_argument_tables_tf215.npz` (TF 2.21's need Keras 2).
  The library runs the program in a `model_fn` call (building), takes TF's
  variable values by name, and runs it again eagerly and, all cases in one
  program, under `jax.jit`: the variables' TF1 names (creation order),
  shapes, trainability, initial values where the initializers are
  deterministic, the outputs and the regularization losses must agree.
- `tf.contrib.layers` / `tf.contrib.slim` (`CONTRIB_CASES`): compared live
  with tf_slim on TF 2.21 in graph mode (tests/slim_reference.py).

Batch normalization has its own tables (tests/test_batch_norm_arguments.py).
"""

import functools
import json
import os

import jax
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.compat.v1._variable_views import VariableView
from keras_tpu_estimator.compat.v1._variable_views import keras_variable
from keras_tpu_estimator.model_fn import store as store_lib

import slim_reference
from layers_argument_cases import CASES

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "references",
                               "layers_argument_tables_tf215.npz"))
TOLERANCE = dict(rtol=1e-5, atol=1e-5)


def _list(outputs):
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]


def _reference(case):
    names = json.loads(str(FIXTURE[f"{case}/names"]))
    return dict(
        input=FIXTURE[f"{case}/input"],
        outputs=[FIXTURE[f"{case}/output/{i}"] for i in range(int(FIXTURE[f"{case}/outputs"]))],
        names=names,
        trainable=json.loads(str(FIXTURE[f"{case}/trainable"])),
        values={name: FIXTURE[f"{case}/var/{name}"] for name in names},
        losses=FIXTURE[f"{case}/losses"],
    )


def _call(case, store, x, building):
    """One `model_fn` call of the case's program: outputs, variables and losses."""
    _, program, _ = CASES[case]
    with store_lib.model_fn_call(store, kte.ModeKeys.TRAIN, building, 0, True):
        outputs = _list(program(tf1, tf1.contrib.slim, x))
        variables = tf1.global_variables()
        return dict(outputs=outputs, variables=variables,
                    trainable=[v.op.name for v in tf1.trainable_variables()],
                    losses=list(tf1.losses.get_regularization_losses()))


def _built_with_tf_values(case):
    """A store holding the case's variables, built by the library, set to TF's values."""
    reference = _reference(case)
    store = store_lib.VariableStore()
    built = _call(case, store, reference["input"], building=True)
    for variable in built["variables"]:
        keras_variable(variable).assign(reference["values"][variable.op.name])
    return store, built, reference


def _assert_outputs(outputs, expected):
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        got = np.asarray(got)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, **TOLERANCE)


@pytest.mark.parametrize("case", CASES)
def test_tf_layers_variables_match_tf1(case):
    reference = _reference(case)
    built = _call(case, store_lib.VariableStore(), reference["input"], building=True)
    variables = built["variables"]
    assert [v.op.name for v in variables] == reference["names"]
    assert [tuple(v.shape) for v in variables] == [
        reference["values"][name].shape for name in reference["names"]]
    assert built["trainable"] == reference["trainable"]
    if CASES[case][2]:
        for variable in variables:
            np.testing.assert_allclose(
                np.asarray(variable), reference["values"][variable.op.name], **TOLERANCE)


@pytest.mark.parametrize("case", CASES)
def test_tf_layers_outputs_and_losses_match_tf1(case):
    store, _, reference = _built_with_tf_values(case)
    step = _call(case, store, reference["input"], building=False)
    _assert_outputs(step["outputs"], reference["outputs"])
    np.testing.assert_allclose([np.asarray(v) for v in step["losses"]], reference["losses"],
                               **TOLERANCE)


def test_tf_layers_table_under_jit_matches_tf1():
    """Every case in one compiled program, as the layers run in a training step."""
    built = {case: _built_with_tf_values(case) for case in CASES}

    @jax.jit
    def step(inputs):
        results = {}
        for case, (store, _, _) in built.items():
            result = _call(case, store, inputs[case], building=False)
            results[case] = (result["outputs"], result["losses"])
        return results

    results = step({case: reference["input"] for case, (_, _, reference) in built.items()})
    for case, (_, _, reference) in built.items():
        outputs, losses = results[case]
        _assert_outputs(outputs, reference["outputs"])
        np.testing.assert_allclose([np.asarray(v) for v in losses], reference["losses"],
                                   **TOLERANCE)


# -- tf.contrib.layers / tf.contrib.slim against tf_slim ------------------------------------

rng = np.random.default_rng(7)
IMAGES = rng.normal(size=(2, 6, 6, 3)).astype("float32")
SEQUENCE = rng.normal(size=(2, 7, 3)).astype("float32")
VOLUME = rng.normal(size=(1, 4, 5, 5, 2)).astype("float32")
FEATURES = rng.normal(size=(3, 5)).astype("float32")


def _l2(s):
    return s.l2_regularizer(0.1)


def fc_scoped_and_reused(s, tf, x):
    with tf.variable_scope("net"):
        a = s.fully_connected(x, 3)
        b = s.fully_connected(x, 3)
        c = s.fully_connected(x * 2.0, 3, scope="fully_connected", reuse=True)
    return [a, b, c]


def conv_reused_by_scope(s, tf, x):
    first = s.conv2d(x, 2, 3, scope="shared", weights_regularizer=_l2(s))
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        again = s.conv2d(x * 2.0, 2, 3, scope="shared", weights_regularizer=_l2(s))
    other = s.convolution2d(x, 2, 3, reuse=tf.AUTO_REUSE, scope="shared",
                            weights_regularizer=_l2(s))
    return [first, again, other]


def outputs_collected(s, tf, x):
    net = s.conv2d(x, 2, 3, outputs_collections="end_points", scope="c")
    net = s.max_pool2d(net, 2, outputs_collections=["end_points"], scope="p")
    net = s.avg_pool2d(net, 1, stride=1, outputs_collections="end_points")
    net = s.flatten(net, outputs_collections="end_points")
    net = s.fully_connected(net, 2, outputs_collections="end_points")
    net = s.layer_norm(net, outputs_collections="end_points")
    s.dropout(net, 0.5, is_training=False, outputs_collections="end_points")
    return tf.get_collection("end_points")


def separable_everything(s, tf, x):
    return s.separable_conv2d(
        x, 4, [3, 2], depth_multiplier=2, stride=[2, 1], padding="VALID",
        activation_fn=tf.nn.relu6, weights_initializer=tf.constant_initializer(0.1),
        pointwise_initializer=tf.constant_initializer(-0.2),
        biases_initializer=tf.constant_initializer(0.3), weights_regularizer=_l2(s),
        biases_regularizer=s.l1_regularizer(0.5), scope="sep")


CONTRIB_CASES = {
    # fully_connected
    "fully_connected_defaults": (FEATURES, lambda s, tf, x: s.fully_connected(x, 4)),
    "fully_connected_rank3": (SEQUENCE, lambda s, tf, x: s.fully_connected(
        x, 2, activation_fn=tf.nn.tanh)),
    "fully_connected_linear_no_biases": (FEATURES, lambda s, tf, x: s.fully_connected(
        x, 3, activation_fn=None, biases_initializer=None)),
    "fully_connected_initializers": (FEATURES, lambda s, tf, x: s.fully_connected(
        x, 3, weights_initializer=tf.constant_initializer(0.2),
        biases_initializer=tf.ones_initializer())),
    "fully_connected_regularizers": (FEATURES, lambda s, tf, x: s.fully_connected(
        x, 3, weights_regularizer=_l2(s), biases_regularizer=s.l1_regularizer(0.2))),
    "fully_connected_layer_norm": (FEATURES, lambda s, tf, x: s.fully_connected(
        x, 4, normalizer_fn=s.layer_norm, normalizer_params={"center": False})),
    "fully_connected_not_trainable": (FEATURES, lambda s, tf, x: s.fully_connected(
        x, 2, trainable=False, scope="frozen")),
    "fully_connected_scopes_and_reuse": (FEATURES, fc_scoped_and_reused),
    "linear_and_relu_shorthands": (FEATURES, lambda s, tf, x: [
        s.linear(x, 2), s.relu(x, 2), s.relu6(x, 2, scope="r6")]),
    # conv2d / convolution2d / convolution
    "conv2d_lower_case_valid": (IMAGES, lambda s, tf, x: s.conv2d(x, 3, 3, padding="valid")),
    "conv2d_lower_case_same_strided": (IMAGES, lambda s, tf, x: s.conv2d(
        x, 3, [2, 3], stride=[2, 1], padding="same")),
    "conv2d_rate_list": (IMAGES, lambda s, tf, x: s.conv2d(x, 2, 3, rate=[2, 1])),
    "conv2d_initializers_elu": (IMAGES, lambda s, tf, x: s.conv2d(
        x, 2, 3, activation_fn=tf.nn.elu, weights_initializer=tf.constant_initializer(0.05),
        biases_initializer=tf.constant_initializer(-0.1))),
    "conv2d_regularizers": (IMAGES, lambda s, tf, x: s.conv2d(
        x, 2, 3, weights_regularizer=_l2(s), biases_regularizer=s.l1_regularizer(1.0),
        biases_initializer=tf.ones_initializer())),
    "conv2d_layer_norm_params": (IMAGES, lambda s, tf, x: s.conv2d(
        x, 4, 3, normalizer_fn=s.layer_norm,
        normalizer_params={"scale": False, "begin_norm_axis": -1})),
    "conv2d_not_trainable": (IMAGES, lambda s, tf, x: s.conv2d(x, 2, 1, trainable=False)),
    "convolution2d_scope_numbering": (IMAGES, lambda s, tf, x: [
        s.convolution2d(x, 2, 1), s.conv2d(x, 2, 1), s.convolution(x, 2, 1, scope="named")]),
    "conv_reused_by_scope": (IMAGES, conv_reused_by_scope),
    "conv1d_valid_strided": (SEQUENCE, lambda s, tf, x: s.conv1d(
        x, 2, 3, stride=2, padding="VALID")),
    "convolution_rank5": (VOLUME, lambda s, tf, x: s.convolution(
        x, 2, [2, 2, 2], rate=2, weights_regularizer=_l2(s))),
    "conv3d_same_strided": (VOLUME, lambda s, tf, x: s.conv3d(x, 3, 2, stride=2)),
    # conv2d_transpose
    "conv2d_transpose_list_stride": (IMAGES, lambda s, tf, x: s.conv2d_transpose(
        x, 2, [3, 2], stride=[2, 1])),
    "conv2d_transpose_regularizers": (IMAGES, lambda s, tf, x: s.conv2d_transpose(
        x, 2, 3, stride=2, padding="VALID", weights_regularizer=_l2(s),
        biases_regularizer=s.l1_regularizer(0.5), biases_initializer=tf.ones_initializer())),
    "conv2d_transpose_layer_norm": (IMAGES, lambda s, tf, x: s.conv2d_transpose(
        x, 3, 2, stride=2, normalizer_fn=s.layer_norm, activation_fn=None)),
    "convolution2d_transpose_named": (IMAGES, lambda s, tf, x: s.convolution2d_transpose(
        x, 2, 3, biases_initializer=None, scope="up")),
    # separable_conv2d
    "separable_everything": (IMAGES, separable_everything),
    "separable_depthwise_layer_norm": (IMAGES, lambda s, tf, x: s.separable_conv2d(
        x, None, 3, depth_multiplier=3, normalizer_fn=s.layer_norm, scope="dw")),
    "separable_depthwise_rate": (IMAGES, lambda s, tf, x: s.separable_convolution2d(
        x, None, [3, 3], rate=2, weights_regularizer=_l2(s), biases_regularizer=_l2(s))),
    # pooling
    "max_pool2d_list_sizes_same": (IMAGES, lambda s, tf, x: s.max_pool2d(
        x, [3, 2], stride=[1, 2], padding="SAME")),
    "max_pool2d_lower_case": (IMAGES, lambda s, tf, x: s.max_pool2d(x, 2, padding="same")),
    "avg_pool2d_stride1_valid": (IMAGES, lambda s, tf, x: s.avg_pool2d(x, [2, 3], stride=1)),
    "avg_pool2d_same_strided": (IMAGES, lambda s, tf, x: s.avg_pool2d(
        x, 3, stride=[2, 1], padding="same")),
    # flatten, dropout, layer_norm
    "flatten_ranks": (VOLUME, lambda s, tf, x: [s.flatten(x), s.flatten(x[:, 0]),
                                                s.flatten(x[:, 0, 0])]),
    "dropout_not_training": (FEATURES, lambda s, tf, x: s.dropout(
        x, keep_prob=0.7, noise_shape=[3, 1], is_training=False)),
    "dropout_keep_all_training": (FEATURES, lambda s, tf, x: s.dropout(
        x, keep_prob=1.0, is_training=True)),
    "layer_norm_defaults_rank4": (IMAGES, lambda s, tf, x: s.layer_norm(x)),
    "layer_norm_last_axis": (SEQUENCE, lambda s, tf, x: s.layer_norm(
        x, begin_norm_axis=-1, begin_params_axis=-1, activation_fn=tf.nn.relu)),
    "layer_norm_params_from_axis1": (IMAGES, lambda s, tf, x: s.layer_norm(
        x, center=False, begin_norm_axis=2, begin_params_axis=1, scope="ln")),
    "layer_norm_variables_collections": (FEATURES, lambda s, tf, x: [
        s.layer_norm(x, variables_collections=["norms"]),
        s.layer_norm(x, variables_collections={"gamma": ["gammas"]}, scope="ln")]
        + tf.get_collection("norms") + tf.get_collection("gammas")),
    "layer_norm_reused_not_trainable": (FEATURES, lambda s, tf, x: [
        s.layer_norm(x, scope="ln", trainable=False),
        s.layer_norm(x * 3.0, scope="ln", reuse=True, trainable=False)]),
    "outputs_collections": (IMAGES, outputs_collected),
}

# Channels first: TF's CPU kernels take NHWC only, so tf_slim runs NHWC on the
# untransposed input and its output is transposed to NCHW.
NCHW_CASES = {
    "conv2d_nchw_rate": lambda s, tf, x, f: s.conv2d(x, 3, 3, rate=2, data_format=f),
    "conv2d_nchw_layer_norm": lambda s, tf, x, f: s.conv2d(
        x, 3, 3, stride=2, normalizer_fn=s.layer_norm,
        normalizer_params={"begin_norm_axis": 1}, data_format=f),
    "conv2d_transpose_nchw_valid": lambda s, tf, x, f: s.conv2d_transpose(
        x, 2, 3, stride=2, padding="VALID", data_format=f, weights_regularizer=_l2(s)),
    "separable_nchw_strided": lambda s, tf, x, f: s.separable_conv2d(
        x, 2, 3, stride=2, depth_multiplier=2, padding="VALID", data_format=f),
    "max_pool2d_nchw_same": lambda s, tf, x, f: s.max_pool2d(
        x, 3, stride=2, padding="SAME", data_format=f),
    "avg_pool2d_nchw_valid": lambda s, tf, x, f: s.avg_pool2d(x, [2, 3], data_format=f),
}


def _nchw(layer):
    return lambda s, tf, x: layer(s, tf, tf.transpose(x, [0, 3, 1, 2]), "NCHW")


def _contrib_case(case):
    """(input, the library's program, tf_slim's program, tf_slim's output as the library's)."""
    if case in NCHW_CASES:
        layer = NCHW_CASES[case]
        return (IMAGES, _nchw(layer), lambda s, tf, x: layer(s, tf, x, "NHWC"),
                lambda out: out.transpose(0, 3, 1, 2))
    x, program = CONTRIB_CASES[case]
    return x, program, program, lambda out: out


ALL_CONTRIB_CASES = list(CONTRIB_CASES) + list(NCHW_CASES)


def _slim_call(program, store, x, building):
    with store_lib.model_fn_call(store, kte.ModeKeys.TRAIN, building, 0, True):
        # Variables a program returns (from its collections) as their values.
        outputs = [keras_variable(out).value if isinstance(out, VariableView) else out
                   for out in _list(program(tf1.contrib.slim, tf1, x))]
        variables = tf1.global_variables()
        return dict(outputs=outputs, variables=variables,
                    losses=list(tf1.losses.get_regularization_losses()))


@functools.lru_cache(maxsize=None)
def _contrib_reference(case):
    """The library's build call, and tf_slim's run with the library's variable values."""
    x, program, reference_program, as_ours = _contrib_case(case)
    store = store_lib.VariableStore()
    built = _slim_call(program, store, x, building=True)
    values = {v.op.name: np.asarray(v) for v in built["variables"]}
    reference = slim_reference.theirs(reference_program, x, values=values)
    expected = [as_ours(out) for out in _list(reference.outputs)]
    return store, built, reference, expected


@pytest.mark.parametrize("case", ALL_CONTRIB_CASES)
def test_contrib_layers_match_tf_slim(case):
    _, built, reference, expected = _contrib_reference(case)
    assert [v.op.name for v in built["variables"]] == reference.names
    assert [tuple(v.shape) for v in built["variables"]] == [
        reference.values[name].shape for name in reference.names]
    _assert_outputs(built["outputs"], expected)
    np.testing.assert_allclose([np.asarray(v) for v in built["losses"]], reference.losses,
                               **TOLERANCE)


def test_contrib_table_under_jit_matches_tf_slim():
    cases = {case: _contrib_reference(case) for case in ALL_CONTRIB_CASES}

    @jax.jit
    def step():
        results = {}
        for case, (store, _, _, _) in cases.items():
            x, program, _, _ = _contrib_case(case)
            result = _slim_call(program, store, x, building=False)
            results[case] = (result["outputs"], result["losses"])
        return results

    results = step()
    for case, (_, _, reference, expected) in cases.items():
        outputs, losses = results[case]
        _assert_outputs(outputs, expected)
        np.testing.assert_allclose([np.asarray(v) for v in losses], reference.losses,
                                   **TOLERANCE)


@pytest.mark.parametrize("name", [
    "fully_connected", "linear", "relu", "relu6", "conv1d", "conv2d", "conv3d", "convolution",
    "convolution2d", "conv2d_transpose", "convolution2d_transpose", "separable_conv2d",
    "separable_convolution2d", "max_pool2d", "avg_pool2d", "flatten", "dropout", "layer_norm",
    "l1_regularizer", "l2_regularizer"])
def test_contrib_layers_and_slim_share_the_layer_functions(name):
    # The table runs `tf1.contrib.slim`; `tf1.contrib.layers` must be the same functions.
    assert getattr(tf1.contrib.layers, name) is getattr(tf1.contrib.slim, name)
