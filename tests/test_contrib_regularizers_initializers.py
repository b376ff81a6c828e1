"""tf.contrib.layers regularizers and initializers, against tf_slim's (TF1 contrib's code) on TF.

Regularizers: the same penalties as tf_slim's on the same weights, TF1's None for a
zero scale and its errors. Initializers: draws compared by statistics with the draws
of tf_slim's initializers (a TF graph, fixed seeds): contrib's truncated normal has
deviation sqrt(1.3 * factor / n) *before* truncation at two deviations, so the
largest |value| of a big draw sits just under 2 * sqrt(1.3 * factor / n).
"""

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib

contrib_layers = tf1.contrib.layers
W = np.random.default_rng(0).normal(size=(3, 4)).astype("float32")
V = np.random.default_rng(1).normal(size=(5,)).astype("float32")


def tf_graph_values(build):
    """Runs `build()` (TF ops, tf_slim) in a TF1 graph; returns its fetched values."""
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default():
        fetches = build()
        with tf.compat.v1.Session(graph=graph) as session:
            return session.run(fetches)


def slim_module(name):
    """tf_slim's `layers.<name>` module (`tf_slim.layers` itself is its layers module)."""
    import importlib

    return importlib.import_module(f"tf_slim.layers.{name}")


def in_model_fn(program):
    """Calls `program` as model_fn code (a fresh store, TRAIN, building)."""
    with store_lib.model_fn_call(store_lib.VariableStore(), kte.ModeKeys.TRAIN, True, 0, True):
        return program()


# -- Regularizers. ------------------------------------------------------------------

REGULARIZERS = [
    ("l1_regularizer", (0.3,)),
    ("l2_regularizer", (0.3,)),
    ("l1_l2_regularizer", (0.1, 0.7)),
    ("l1_l2_regularizer", (0.0, 0.7)),
    ("l1_l2_regularizer", (0.1, 0.0)),
]


@pytest.fixture(scope="module")
def slim_penalties():
    """tf_slim's penalty of W for each entry of REGULARIZERS, and of sum_regularizer."""
    import tensorflow as tf
    import tf_slim

    def build():
        weights = tf.constant(W)
        values = [getattr(tf_slim, name)(*args)(weights) for name, args in REGULARIZERS]
        summed = slim_module("regularizers").sum_regularizer(
            [tf_slim.l1_regularizer(0.2), None, tf_slim.l2_regularizer(0.5)])(weights)
        return values, summed

    return tf_graph_values(build)


@pytest.mark.parametrize("index", range(len(REGULARIZERS)))
def test_regularizer_penalty_equals_tf_slims(slim_penalties, index):
    name, args = REGULARIZERS[index]
    penalty = getattr(contrib_layers, name)(*args)(W)
    np.testing.assert_allclose(np.asarray(penalty), slim_penalties[0][index], rtol=1e-6)


def test_l2_regularizer_is_scale_times_half_the_sum_of_squares():
    penalty = contrib_layers.l2_regularizer(0.5)(W)
    np.testing.assert_allclose(np.asarray(penalty), 0.5 * np.sum(W**2) / 2, rtol=1e-6)


def test_sum_regularizer_skips_none_and_adds_the_rest_as_tf_slim(slim_penalties):
    summed = contrib_layers.sum_regularizer(
        [contrib_layers.l1_regularizer(0.2), None, contrib_layers.l2_regularizer(0.5)])
    np.testing.assert_allclose(np.asarray(summed(W)), slim_penalties[1], rtol=1e-6)


@pytest.mark.parametrize("make", [
    lambda m: m.l1_regularizer(0.0),
    lambda m: m.l2_regularizer(0.0),
    lambda m: m.l1_l2_regularizer(0.0, 0.0),
    lambda m: m.sum_regularizer([m.l2_regularizer(0.0)]),
], ids=["l1", "l2", "l1_l2", "sum"])
def test_a_zero_scale_gives_no_penalty_as_tf_slim(make):
    assert make(slim_module("regularizers"))(V) is None
    assert make(contrib_layers)(V) is None


def test_sum_regularizer_of_no_regularizer_is_none_as_tf_slim():
    assert slim_module("regularizers").sum_regularizer([None]) is None
    assert contrib_layers.sum_regularizer([None]) is None


@pytest.mark.parametrize("call, message", [
    (lambda m: m.l2_regularizer(1), "cannot be an integer"),
    (lambda m: m.l1_regularizer(-0.1), "less than 0"),
    (lambda m: m.l1_l2_regularizer(scale_l1=0.1, scale_l2=2), "cannot be an integer"),
], ids=["integer", "negative", "l1_l2-integer"])
def test_bad_scales_raise_as_tf_slim(call, message):
    with pytest.raises(ValueError, match=message):
        call(slim_module("regularizers"))
    with pytest.raises(ValueError, match=message):
        call(contrib_layers)


def test_apply_regularization_sums_over_weights_and_collects_the_sum():
    import tensorflow as tf
    import tf_slim

    expected = tf_graph_values(lambda: slim_module("regularizers").apply_regularization(
        tf_slim.l2_regularizer(0.25), [tf.constant(W), tf.constant(V)]))

    def program():
        penalty = contrib_layers.apply_regularization(contrib_layers.l2_regularizer(0.25), [W, V])
        return penalty, tf1.get_collection(tf1.GraphKeys.REGULARIZATION_LOSSES)

    penalty, collected = in_model_fn(program)
    np.testing.assert_allclose(np.asarray(penalty), expected, rtol=1e-6)
    assert len(collected) == 1 and collected[0] is penalty


def test_apply_regularization_without_weights_raises():
    with pytest.raises(ValueError, match="No weights to regularize"):
        in_model_fn(lambda: contrib_layers.apply_regularization(contrib_layers.l2_regularizer(0.1)))


def test_regularizer_on_get_variable_adds_its_penalty_once():
    def program():
        reg = contrib_layers.l2_regularizer(0.5)
        w = tf1.get_variable("w", initializer=tf1.constant_initializer(W), shape=W.shape,
                             regularizer=reg)
        return w, tf1.get_collection(tf1.GraphKeys.REGULARIZATION_LOSSES)

    _, collected = in_model_fn(program)
    np.testing.assert_allclose([np.asarray(p) for p in collected], [0.5 * np.sum(W**2) / 2],
                               rtol=1e-6)


@pytest.mark.parametrize("layer", ["get_variable", "tf1.layers.dense"])
def test_a_zero_scale_regularizer_adds_nothing_to_the_collection(layer):
    # AmoebaNet's EVAL and DeepLab set weight decay 0.0, then sum the collection.
    def program():
        reg = contrib_layers.l2_regularizer(0.0)
        if layer == "get_variable":
            tf1.get_variable("w", shape=W.shape, regularizer=reg)
        else:
            tf1.layers.dense(np.ones((2, 3), np.float32), 4, kernel_regularizer=reg)
        return None, tf1.get_collection(tf1.GraphKeys.REGULARIZATION_LOSSES)

    _, collected = in_model_fn(program)
    assert collected == []


# -- Initializers. ------------------------------------------------------------------

SHAPES = [(256, 512), (3, 3, 64, 128)]
INITIALIZERS = [  # (name, kwargs)
    ("variance_scaling_initializer", {}),
    ("variance_scaling_initializer", {"factor": 1.0, "mode": "FAN_OUT", "uniform": True}),
    ("variance_scaling_initializer", {"factor": 3.0, "mode": "FAN_AVG"}),
    ("xavier_initializer", {}),
    ("xavier_initializer", {"uniform": False}),
    ("xavier_initializer_conv2d", {}),
]
CASES = [(i, shape) for i in range(len(INITIALIZERS)) for shape in SHAPES]


def contrib_bound(shape, factor=2.0, mode="FAN_IN", uniform=False):
    """The largest |value| contrib can draw: the uniform limit, or two deviations."""
    receptive = int(np.prod(shape[:-2]))
    fan_in, fan_out = shape[-2] * receptive, shape[-1] * receptive
    n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2}[mode]
    return np.sqrt(3.0 * factor / n) if uniform else 2 * np.sqrt(1.3 * factor / n)


def bound_of(name, kwargs, shape):
    if name.startswith("xavier"):
        return contrib_bound(shape, 1.0, "FAN_AVG", kwargs.get("uniform", True))
    return contrib_bound(shape, **kwargs)


@pytest.fixture(scope="module")
def slim_draws():
    """tf_slim's draw (seed 7) for each of CASES."""
    def build():
        module = slim_module("initializers")
        return [getattr(module, INITIALIZERS[i][0])(seed=7, **INITIALIZERS[i][1])(shape)
                for i, shape in CASES]

    return tf_graph_values(build)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_initializer_draws_like_tf_slims(slim_draws, case):
    index, shape = CASES[case]
    name, kwargs = INITIALIZERS[index]
    ours = np.asarray(getattr(contrib_layers, name)(seed=7, **kwargs)(shape))
    theirs = slim_draws[case]
    bound = bound_of(name, kwargs, shape)
    assert ours.shape == theirs.shape == shape
    assert ours.dtype == np.float32
    for draw in (ours, theirs):
        # Both reach just under the same bound: contrib's, not Keras's (0.3% apart).
        assert bound * (1 - 1e-3) < np.abs(draw).max() <= bound * (1 + 1e-6)
        assert abs(draw.mean()) < 0.01 * bound
    np.testing.assert_allclose(ours.std(), theirs.std(), rtol=0.01)


def test_variance_scaling_initializer_goes_to_get_variable():
    def program():
        return np.asarray(tf1.get_variable(
            "w", [64, 32], initializer=contrib_layers.variance_scaling_initializer(uniform=True)))

    value = in_model_fn(program)
    assert np.abs(value).max() <= np.sqrt(3.0 * 2.0 / 64)
    assert value.std() > 0.5 * np.sqrt(2.0 / 64)


def test_initializers_are_seeded_and_keras_compatible():
    first = contrib_layers.xavier_initializer(seed=3)((8, 4))
    again = contrib_layers.xavier_initializer(seed=3)((8, 4))
    np.testing.assert_array_equal(np.asarray(first), np.asarray(again))
    layer = keras.layers.Dense(4, kernel_initializer=contrib_layers.xavier_initializer(seed=3))
    layer.build((None, 8))
    np.testing.assert_array_equal(np.asarray(layer.kernel), np.asarray(first))


@pytest.mark.parametrize("call, error, message", [
    (lambda m: m.variance_scaling_initializer(mode="fan_in"), TypeError, "Unknown mode"),
    (lambda m: m.variance_scaling_initializer(dtype=tf1.int32), TypeError, "non-floating"),
    (lambda m: m.xavier_initializer(dtype=tf1.int32), TypeError, "non-floating"),
], ids=["lower-case-mode", "int-dtype", "xavier-int-dtype"])
def test_bad_initializer_arguments_raise_as_tf_slim(call, error, message):
    import tensorflow as tf

    with pytest.raises(error, match=message):
        call(contrib_layers)
    tf_call = {tf1.int32: tf.int32}
    with pytest.raises(error):
        call(_TfSlimArguments(slim_module("initializers"), tf_call))


class _TfSlimArguments:
    """tf_slim's module with `tf1` dtypes translated to TF's (the same call on both)."""

    def __init__(self, module, dtypes):
        self._module, self._dtypes = module, dtypes

    def __getattr__(self, name):
        function = getattr(self._module, name)

        def call(**kwargs):
            kwargs = {k: self._dtypes.get(v, v) if k == "dtype" else v for k, v in kwargs.items()}
            return function(**kwargs)

        return call
