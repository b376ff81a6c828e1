"""Feature columns in programs: the host's ids in tf.data, DenseFeatures, TPU columns, errors.

TensorFlow 2.21 is the live reference where it has the API (parse specs,
TPU embedding columns in `input_layer`); Keras 2's `DenseFeatures` and the
TPU shared columns come from a TF 2.15 fixture
(`references/dense_features_tf215.py`).
"""

import json
import pathlib

import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.inputs import sources as inputs
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.compat.v1.feature_column import _host
from keras_tpu_estimator.convert import names as names_lib

fc = tf1.feature_column
TRAIN = kte.ModeKeys.TRAIN
REFERENCE = json.loads(
    (pathlib.Path(__file__).parent / "references" / "dense_features_tf215.json").read_text())


def run_model_fn_code(code, features, values=None):
    """`(output, variable names)` of `code(features)` on a fresh store.

    `values(name, shape)` gives each variable's value, set after the build
    call; a second call then computes the output.
    """
    store = store_lib.VariableStore()
    with store_lib.model_fn_call(store, TRAIN, True, 0, True):
        output = code(features)
        views = tf1.global_variables()
    if values is not None:
        for view in views:
            view.variable.assign(values(view.name, tuple(view.shape)))
        with store_lib.model_fn_call(store, TRAIN, False, 0, True):
            output = code(features)
    return np.asarray(output), [v.name for v in views]


def fixture_values(name, shape):
    return (np.arange(int(np.prod(shape))) / 10 - 1).reshape(shape).astype("float32")


def reference_features():
    raw = REFERENCE["features"]
    return {k: np.asarray(v, "float32" if k == "x" else "int64") for k, v in raw.items()}


def test_dense_features_layers_number_and_reuse_as_keras_2():
    embedded = fc.embedding_column(fc.categorical_column_with_identity("i", 4), 3)
    first = fc.DenseFeatures([embedded, fc.numeric_column("x")])
    second = fc.DenseFeatures(fc.indicator_column(fc.categorical_column_with_identity("j", 4)))

    def code(f):
        return tf1.concat([first(f), second(f), first(f)], 1)

    output, names = run_model_fn_code(code, reference_features(), fixture_values)
    expected = REFERENCE["cases"]["two_dense_features"]
    assert names == expected["names"]
    np.testing.assert_allclose(output, expected["output"], rtol=1e-6)


def test_tpu_embedding_columns_in_dense_features_match_tf215():
    shared = tf1.tpu.experimental.shared_embedding_columns(
        [fc.categorical_column_with_identity("i", 4), fc.categorical_column_with_identity("j", 4)],
        2, combiner=None)
    single = tf1.tpu.experimental.embedding_column(
        fc.categorical_column_with_identity("j", 4), 3, combiner="sum")
    layers = [fc.DenseFeatures(c) for c in shared + [single]]

    def code(f):
        return tf1.concat([layer(f) for layer in layers], 1)

    output, names = run_model_fn_code(code, reference_features(), fixture_values)
    expected = REFERENCE["cases"]["tpu_shared_and_single"]
    assert names == expected["names"]
    np.testing.assert_allclose(output, expected["output"], rtol=1e-6)


def test_tpu_embedding_column_in_input_layer_matches_tensorflow():
    features = {"i": np.array([[1, 3], [0, -1]], "int64")}
    column = tf1.tpu.experimental.embedding_column(
        fc.categorical_column_with_identity("i", 4), 3, combiner="sqrtn")
    output, names = run_model_fn_code(lambda f: fc.input_layer(f, [column]), features,
                                      fixture_values)
    with tf.Graph().as_default():
        theirs = tf.compat.v1.tpu.experimental.embedding_column(
            tf.compat.v1.feature_column.categorical_column_with_identity("i", 4), 3,
            combiner="sqrtn")
        out = tf.compat.v1.feature_column.input_layer(
            {"i": tf.constant(features["i"])}, [theirs])
        variables = tf.compat.v1.global_variables()
        with tf.compat.v1.Session() as session:
            for v in variables:
                v.load(fixture_values(v.name, tuple(v.shape)), session)
            expected = session.run(out)
    assert names == [v.name for v in variables] == ["input_layer/i_embedding/embedding_weights:0"]
    np.testing.assert_allclose(output, expected, rtol=1e-6)


def test_make_parse_example_spec_matches_tensorflow():
    def columns(f):
        return [
            f.numeric_column("a", shape=(2,), default_value=(0.0, 1.0)),
            f.embedding_column(f.categorical_column_with_vocabulary_list("c", ["x", "y"]), 2),
            f.indicator_column(f.categorical_column_with_hash_bucket("h", 5, dtype=tf.int64)),
            f.crossed_column(["s", f.categorical_column_with_identity("i", 3)], 7),
            f.weighted_categorical_column(f.categorical_column_with_identity("k", 3), "w"),
        ]

    ours = fc.make_parse_example_spec(columns(fc))
    assert ours == tf.compat.v1.feature_column.make_parse_example_spec(
        columns(tf.compat.v1.feature_column))


def host_columns():
    colors = fc.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"])
    return [fc.numeric_column("x"), fc.embedding_column(colors, 4),
            fc.indicator_column(fc.categorical_column_with_hash_bucket("color", 5))]


RAW = {"color": np.array([["green"], ["red"], ["pink"], ["blue"]]),
       "x": np.array([[0.5], [1.0], [-1.0], [2.0]], "float32")}


def test_host_ids_replace_the_strings_a_column_consumes_in_tf_data():
    columns = host_columns()
    dataset = tf.data.Dataset.from_tensor_slices((RAW, np.arange(4))).batch(2)
    source = inputs.as_source(dataset)
    features, _ = next(iter(source.batches))
    vocabulary, hashed = columns[1].categorical_column, columns[2].categorical_column
    assert sorted(features) == sorted(["x", vocabulary.ids_key, hashed.ids_key])
    assert features[vocabulary.ids_key].numpy().tolist() == [[1], [0]]
    expected = tf.strings.to_hash_bucket_fast(RAW["color"][:2], 5).numpy()
    np.testing.assert_array_equal(features[hashed.ids_key].numpy(), expected)
    # Static shapes: tf.data stacks the batches for the on-device loops.
    assert source.batches.element_spec[0][vocabulary.ids_key].shape.as_list() == [None, 1]


def test_host_ids_of_arrays_are_computed_once():
    columns = host_columns()
    features = _host.transform_input(dict(RAW))
    ids = features[columns[1].categorical_column.ids_key]
    assert "color" not in features and ids.tolist() == [[1], [0], [-1], [2]]


def model_fn(features, labels, mode, params):
    net = fc.input_layer(features, params["columns"])
    logits = tf1.layers.dense(net, 2)
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"class": tf1.argmax(logits, 1)})
    loss = tf1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = tf1.train.AdagradOptimizer(0.5).minimize(
        loss, global_step=tf1.train.get_global_step())
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def test_estimator_trains_on_string_features_through_columns(tmp_path):
    rng = np.random.default_rng(0)
    colors = np.array(["red", "green", "blue"])[rng.integers(0, 3, 96)][:, None]
    labels = (colors[:, 0] == "green").astype("int32")
    features = {"color": colors, "x": rng.normal(size=(96, 1)).astype("float32")}
    estimator = kte.TPUEstimator(
        model_fn=model_fn, use_tpu=False, train_batch_size=32, eval_batch_size=32,
        predict_batch_size=2, params={"columns": host_columns()},
        config=kte.RunConfig(model_dir=str(tmp_path), tf_random_seed=1))

    def input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices((features, labels))
        return dataset.repeat().batch(params["batch_size"], drop_remainder=True)

    estimator.train(input_fn, max_steps=40)
    assert estimator.evaluate(input_fn, steps=3)["loss"] < 0.1
    predictions = estimator.predict(lambda params: tf.data.Dataset.from_tensor_slices(
        {"color": np.array([["green"], ["red"]]), "x": np.zeros((2, 1), "float32")}).batch(2))
    assert [p["class"] for p in predictions] == [1, 0]
    assert "input_layer/color_embedding/embedding_weights" in estimator.get_variable_names()


def test_a_host_column_created_after_the_input_was_read_says_so():
    features = _host.transform_input({"size": np.array([["s"], ["m"]])})
    late = fc.embedding_column(fc.categorical_column_with_vocabulary_list("size", ["s", "m"]), 2)
    with pytest.raises(ValueError, match="create feature columns before train"):
        run_model_fn_code(lambda f: fc.input_layer(f, [late]), features)


BAD_ARGUMENTS = [
    (lambda: fc.numeric_column("a", shape=(0,)), "shape"),
    (lambda: fc.numeric_column("", shape=(1,)), "key"),
    (lambda: fc.bucketized_column(fc.categorical_column_with_identity("i", 3), [1.0]),
     "source_column"),
    (lambda: fc.bucketized_column(fc.numeric_column("a"), [2.0, 1.0]), "boundaries"),
    (lambda: fc.categorical_column_with_identity("i", 0), "num_buckets"),
    (lambda: fc.categorical_column_with_vocabulary_list("c", ["x", "x"]), "vocabulary_list"),
    (lambda: fc.categorical_column_with_vocabulary_list("c", ["x"], default_value=0,
                                                        num_oov_buckets=1), "default_value"),
    (lambda: fc.categorical_column_with_hash_bucket("c", 0), "hash_bucket_size"),
    (lambda: fc.crossed_column(["a"], 10), "keys"),
    (lambda: fc.embedding_column(fc.numeric_column("a"), 2), "categorical_column"),
    (lambda: fc.embedding_column(fc.categorical_column_with_identity("i", 3), 2,
                                 combiner="max"), "combiner"),
    (lambda: fc.embedding_column(fc.categorical_column_with_identity("i", 3), 0), "dimension"),
    (lambda: fc.shared_embedding_columns([fc.categorical_column_with_identity("i", 3),
                                          fc.categorical_column_with_identity("j", 4)], 2),
     "number of buckets"),
    (lambda: fc.input_layer({}, [fc.categorical_column_with_identity("i", 3)]),
     "embedding_column or indicator_column"),
    (lambda: fc.linear_model({}, [fc.embedding_column(fc.categorical_column_with_identity(
        "i", 3), 2)]), "not embedding or indicator"),
    (lambda: tf1.tpu.experimental.embedding_column(
        fc.categorical_column_with_identity("i", 3), 2, max_sequence_length=4),
     "max_sequence_length"),
    (lambda: fc.sequence_numeric_column("a"), "sequence feature columns"),
]


@pytest.mark.parametrize("call, named", BAD_ARGUMENTS)
def test_bad_arguments_are_errors_naming_them(call, named):
    with pytest.raises((ValueError, NotImplementedError), match=named):
        call()


@pytest.mark.parametrize("name, target", [
    ("tf.feature_column.numeric_column", "tf1.feature_column.numeric_column"),
    ("tf.feature_column.make_parse_example_spec", "tf1.feature_column.make_parse_example_spec"),
    ("tf.keras.layers.DenseFeatures", "tf1.feature_column.DenseFeatures"),
])
def test_converter_moves_feature_columns_on_every_side(name, target):
    assert names_lib.module_move(name) == target
    assert names_lib.compat_v1_has(target[len("tf1."):])


def test_embedding_column_starts_from_a_tf1_checkpoint(tmp_path):
    table = np.arange(12, dtype="float32").reshape(4, 3) / 10
    with tf.Graph().as_default():
        tf.compat.v1.get_variable("pretrained/table", initializer=table)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            path = tf.compat.v1.train.Saver().save(session, str(tmp_path / "init" / "model.ckpt"))
    column = fc.embedding_column(
        fc.categorical_column_with_identity("i", 4), 3, combiner="sum",
        ckpt_to_load_from=path, tensor_name_in_ckpt="pretrained/table")

    def predict_fn(features, mode, params):
        return kte.TPUEstimatorSpec(mode, predictions={"e": fc.input_layer(features, [column])})

    estimator = kte.TPUEstimator(model_fn=predict_fn, use_tpu=False, predict_batch_size=2,
                                 config=kte.RunConfig(model_dir=str(tmp_path / "model")))
    ids = {"i": np.array([[1, 3], [0, -1]], "int64")}
    outputs = [p["e"] for p in estimator.predict(lambda params: ids)]
    np.testing.assert_allclose(outputs, [table[1] + table[3], table[0]], rtol=1e-6)


def test_converter_reports_sequence_columns():
    from keras_tpu_estimator import convert

    source = ("import tensorflow as tf\n\ndef model_fn(features, labels, mode, params):\n"
              "    return tf.feature_column.sequence_numeric_column('a')\n")
    [error] = convert.convert_source(source).errors
    assert "sequence feature columns are not supported" in error.message


def test_sparse_features_a_column_reads_are_made_dense_with_tf1_ignore_values():
    columns = [fc.categorical_column_with_identity("ids", 10),
               fc.categorical_column_with_hash_bucket("words", 7)]
    # What VarLenFeatures parse to: rows of 1 and 2 values.
    ids = tf.sparse.SparseTensor([[0, 0], [1, 0], [1, 1]], tf.constant([1, 2, 3], tf.int64), [2, 2])
    words = tf.sparse.SparseTensor([[0, 0], [1, 0], [1, 1]], ["a", "b", "c"], [2, 2])
    source = inputs.as_source(tf.data.Dataset.from_tensors({"ids": ids, "words": words}))
    features = {k: v.numpy() for k, v in next(iter(source.batches)).items()}
    assert sorted(features) == ["ids", columns[1].ids_key]
    assert features["ids"].tolist() == [[1, -1], [2, 3]]
    hashed = tf.strings.to_hash_bucket_fast([["a", "a"], ["b", "c"]], 7).numpy()
    assert features[columns[1].ids_key].tolist() == [[hashed[0][0], -1], list(hashed[1])]


@pytest.mark.parametrize("column", [
    lambda: fc.categorical_column_with_identity("m", 4),
    lambda: fc.categorical_column_with_hash_bucket("m", 4, dtype=tf.int64),
], ids=["device", "host"])
def test_categorical_features_of_rank_3_are_refused(column):
    column = fc.indicator_column(column())
    features = {"m": np.zeros((2, 2, 2), "int64")}
    with pytest.raises(ValueError, match=r"\[batch\] or \[batch, values\]"):
        run_model_fn_code(lambda f: fc.input_layer(f, [column]), _host.transform_input(features))
