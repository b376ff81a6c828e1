"""tf1.feature_column against TensorFlow 2.21's tf.compat.v1.feature_column (graph mode).

Each case builds the same columns on both sides over the same raw features:
ours through the host transform (ids in tf.data / arrays) and `model_fn`
code on the library's store; TensorFlow's in a `tf.Graph`, its variables
assigned our initial values by name. Outputs and variable names must agree.
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.compat.v1.feature_column import _host

TRAIN = kte.ModeKeys.TRAIN
FEATURES = {
    "a": np.array([[1.0, 2.5], [3.0, 4.0], [5.0, -6.0]], "float32"),
    "n": np.array([[2], [7], [4]], "int64"),
    "c": np.array([["x", "y"], ["z", ""], ["q", "x"]]),
    "h": np.array([["foo"], ["bar"], ["baz"]]),
    "i": np.array([[1, 3], [0, -1], [3, 3]], "int64"),
    "j": np.array([[2], [1], [0]], "int64"),
    "w": np.array([[0.5, 2.0], [1.5, 0.0], [1.0, -1.0]], "float32"),
}


def ours(make, layer, features=FEATURES, randomize=False):
    """`(output, {variable name: value})` of `layer(fc, features, make(fc))`, ours.

    The columns are made first, then the input is read (the host computes
    their ids), then `model_fn` code runs. With `randomize`, the variables
    are set to random values after the build call, and a second call
    computes the output.
    """
    columns = make(tf1.feature_column)
    features = _host.transform_input(dict(features))
    store = store_lib.VariableStore()
    with store_lib.model_fn_call(store, TRAIN, True, 0, True):
        output = layer(tf1.feature_column, features, columns)
        views = tf1.global_variables()
    if randomize:
        rng = np.random.default_rng(3)
        for view in views:
            view.variable.assign(rng.normal(size=tuple(view.shape)).astype("float32"))
        with store_lib.model_fn_call(store, TRAIN, False, 0, True):
            output = layer(tf1.feature_column, features, columns)
    return np.asarray(output), {v.name: np.asarray(v.value()) for v in views}


def theirs(make, layer, values, features=FEATURES):
    """`(output, variable names)` of the same in a TF1 graph, our variable values."""
    with tf.Graph().as_default():
        tensors = {k: tf.constant(v) for k, v in features.items()}
        output = layer(tf.compat.v1.feature_column, tensors, make(tf.compat.v1.feature_column))
        variables = tf.compat.v1.global_variables()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(tf.compat.v1.tables_initializer())
            for v in variables:
                if v.name in values:
                    v.load(values[v.name], session)
            return session.run(output), sorted(v.name for v in variables)


def input_layer(fc, features, columns):
    return fc.input_layer(features, columns)


def check(make, layer=input_layer, features=FEATURES, rtol=1e-5):
    output, values = ours(make, layer, features)
    expected, names = theirs(make, layer, values, features)
    assert sorted(values) == names
    np.testing.assert_allclose(output, expected, rtol=rtol, atol=1e-6)
    return output, names


def vocabulary(fc, **kwargs):
    return fc.categorical_column_with_vocabulary_list("c", ["x", "y", "z"], **kwargs)


def weighted_identity(fc):
    return fc.weighted_categorical_column(fc.categorical_column_with_identity("i", 4), "w")


def crossed(fc):
    age = fc.bucketized_column(fc.numeric_column("n"), [3.0, 5.0])
    return fc.crossed_column(["h", age], 11)


DENSE = {
    "numeric": lambda fc: fc.numeric_column("a", shape=(2,)),
    "numeric_int_normalized": lambda fc: fc.numeric_column(
        "n", dtype=tf.int64, normalizer_fn=lambda x: (x - 3) * 2),
    "bucketized": lambda fc: fc.bucketized_column(fc.numeric_column("a", shape=2), [0.0, 3.0]),
    "indicator_identity": lambda fc: fc.indicator_column(
        fc.categorical_column_with_identity("i", 4)),
    "indicator_vocabulary": lambda fc: fc.indicator_column(vocabulary(fc)),
    "indicator_vocabulary_oov": lambda fc: fc.indicator_column(vocabulary(fc, num_oov_buckets=3)),
    "indicator_vocabulary_default": lambda fc: fc.indicator_column(vocabulary(fc, default_value=1)),
    "indicator_int_vocabulary": lambda fc: fc.indicator_column(
        fc.categorical_column_with_vocabulary_list("n", [4, 2, 9], num_oov_buckets=1)),
    "indicator_hash_string": lambda fc: fc.indicator_column(
        fc.categorical_column_with_hash_bucket("c", 13)),
    "indicator_hash_int": lambda fc: fc.indicator_column(
        fc.categorical_column_with_hash_bucket("i", 7, dtype=tf.int64)),
    "indicator_crossed": lambda fc: fc.indicator_column(crossed(fc)),
    "indicator_weighted": lambda fc: fc.indicator_column(weighted_identity(fc)),
    "embedding_mean": lambda fc: fc.embedding_column(vocabulary(fc), 3),
    "embedding_sum": lambda fc: fc.embedding_column(vocabulary(fc), 3, combiner="sum"),
    "embedding_sqrtn": lambda fc: fc.embedding_column(
        fc.categorical_column_with_hash_bucket("c", 5), 2, combiner="sqrtn"),
    "embedding_weighted_mean": lambda fc: fc.embedding_column(weighted_identity(fc), 4),
    "embedding_weighted_sqrtn": lambda fc: fc.embedding_column(
        weighted_identity(fc), 4, combiner="sqrtn"),
    "embedding_crossed": lambda fc: fc.embedding_column(crossed(fc), 2),
    "embedding_bucketized": lambda fc: fc.embedding_column(
        fc.bucketized_column(fc.numeric_column("a", shape=2), [0.0, 3.0]), 2),
    "embedding_max_norm": lambda fc: fc.embedding_column(vocabulary(fc), 3, max_norm=0.3),
}


@pytest.mark.parametrize("make", DENSE.values(), ids=DENSE.keys())
def test_input_layer_column_matches_tensorflow(make):
    check(lambda fc: [make(fc)])


def test_input_layer_orders_columns_by_name_and_names_variables_as_tf1():
    def make(fc):
        return [
            fc.numeric_column("a", shape=(2,)),
            fc.embedding_column(vocabulary(fc), 3),
            fc.indicator_column(fc.categorical_column_with_identity("i", 4)),
            fc.embedding_column(fc.categorical_column_with_hash_bucket("h", 7), 2),
        ]

    output, names = check(make)
    assert output.shape == (3, 2 + 3 + 2 + 4)
    assert names == ["input_layer/c_embedding/embedding_weights:0",
                     "input_layer/h_embedding/embedding_weights:0"]


def test_shared_embedding_columns_share_one_table_named_as_tf1():
    def make(fc):
        return fc.shared_embedding_columns(
            [fc.categorical_column_with_identity("j", 4),
             fc.categorical_column_with_identity("i", 4)], 3, combiner="sum")

    output, names = check(make)
    assert output.shape == (3, 6)
    assert names == ["input_layer/i_j_shared_embedding/embedding_weights:0"]


def test_two_input_layers_number_their_scopes():
    def make(fc):
        return [fc.embedding_column(vocabulary(fc), 2)]

    def two_layers(fc, f, columns):
        concat = tf1.concat if fc is tf1.feature_column else tf.concat
        return concat([fc.input_layer(f, columns), fc.input_layer(f, columns)], 1)

    _, names = check(make, two_layers)
    assert names == ["input_layer/c_embedding/embedding_weights:0",
                     "input_layer_1/c_embedding/embedding_weights:0"]


LINEAR = {
    "numeric": lambda fc: [fc.numeric_column("a", shape=(2,))],
    "bucketized": lambda fc: [fc.bucketized_column(fc.numeric_column("a", shape=2), [0.0, 3.0])],
    "identity": lambda fc: [fc.categorical_column_with_identity("i", 4)],
    "weighted": lambda fc: [weighted_identity(fc)],
    "vocabulary_and_crossed": lambda fc: [vocabulary(fc, num_oov_buckets=1), crossed(fc)],
}
# The combiner acts on categorical columns only.
LINEAR_CASES = [("numeric", "sum"), ("bucketized", "sum")] + [
    (name, combiner) for name in ("identity", "weighted", "vocabulary_and_crossed")
    for combiner in ("sum", "mean", "sqrtn")]


@pytest.mark.parametrize("case, combiner", LINEAR_CASES)
def test_linear_model_matches_tensorflow(case, combiner):
    make = LINEAR[case]

    def linear(fc, f, columns):
        return fc.linear_model(f, columns, units=2, sparse_combiner=combiner)

    # Random weights: TF1 starts them at zero, which would compare nothing.
    output, values = ours(make, linear, randomize=True)
    expected, names = theirs(make, linear, values)
    assert sorted(values) == names
    assert "linear_model/bias_weights:0" in names
    np.testing.assert_allclose(output, expected, rtol=1e-5, atol=1e-6)
