"""compat.v1 variable scopes, layers and collections: TF1 names, reuse, and training."""

import re

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib

TRAIN, EVAL, PREDICT = kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL, kte.ModeKeys.PREDICT
X = np.random.default_rng(0).normal(size=(4, 6)).astype("float32")
IMAGES = np.random.default_rng(1).normal(size=(2, 8, 8, 3)).astype("float32")
# Symbolic inputs: naming tests build layers without computing anything.
SX = keras.KerasTensor(X.shape)
SIMAGES = keras.KerasTensor(IMAGES.shape)


def run(program, store=None, mode=TRAIN, building=True):
    """Calls `program` as model_fn code would be, against `store`."""
    store = store_lib.VariableStore() if store is None else store
    with store_lib.model_fn_call(store, mode, building, 0, mode == TRAIN):
        return program()


def names(program, **kwargs):
    def listed():
        program()
        return [v.name for v in tf1.global_variables()]

    return run(listed, **kwargs)


def two_dense():
    tf1.layers.dense(tf1.layers.dense(SX, 3), 2)


def dense_in_two_scopes():
    with tf1.variable_scope("a"):
        tf1.layers.dense(SX, 3)
    with tf1.variable_scope("b"):
        tf1.layers.dense(SX, 3, use_bias=False)


def default_named_blocks():
    for _ in range(2):
        with tf1.variable_scope(None, default_name="block"):
            tf1.layers.dense(SX, 3, use_bias=False)


def cnn():
    x = tf1.layers.conv2d(SIMAGES, 4, 3, padding="same")
    x = tf1.layers.batch_normalization(x, training=True)
    x = tf1.layers.max_pooling2d(x, 2, 2)
    tf1.layers.dense(tf1.layers.flatten(x), 2, use_bias=False)


def named_layers():
    tf1.layers.dense(SX, 3, name="logits")
    tf1.layers.conv2d(SIMAGES, 2, 1, name="proj", use_bias=False)


def reentered_scope_with_reuse():
    with tf1.variable_scope("layer"):
        tf1.layers.dense(SX, 6)
    with tf1.variable_scope("layer", reuse=True):
        tf1.layers.dense(SX, 6)


def bert_like():
    with tf1.variable_scope("bert"):
        with tf1.variable_scope("embeddings"):
            tf1.get_variable("word_embeddings", [10, 6])
            tf1.contrib.layers.layer_norm(SX, begin_norm_axis=-1, begin_params_axis=-1)
        with tf1.variable_scope("encoder/layer_0/attention/self"):
            tf1.layers.dense(SX, 6, name="query")
    with tf1.variable_scope("cls/predictions"):
        tf1.get_variable("output_bias", [10], initializer=tf1.zeros_initializer())


def scope_name_then_layer():
    with tf1.variable_scope("dense"):
        tf1.get_variable("w", [1])
    tf1.layers.dense(SX, 1, use_bias=False)


def two_layer_norms():
    tf1.contrib.layers.layer_norm(SX)
    tf1.contrib.layers.layer_norm(SX)


class TpuBatchNormalization(tf1.layers.BatchNormalization):
    """EfficientNet's subclass: named after its own class."""


def class_named_twice():
    x = tf1.layers.BatchNormalization(name="tpu_batch_normalization", center=False)(SX)
    x = tf1.layers.BatchNormalization(name="tpu_batch_normalization", center=False)(x)
    tf1.layers.Dense(1, name="tpu_batch_normalization", use_bias=False)(x)


def subclass_layers():
    TpuBatchNormalization(center=False, scale=False)(TpuBatchNormalization(center=False)(SX))


def keras_layer_then_tf1_layer():
    tf1.layers.dense(keras.layers.Dense(2, use_bias=False)(SX), 1, use_bias=False)


@pytest.mark.parametrize(
    "program, expected",
    [
        (two_dense, ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]),
        (dense_in_two_scopes, ["a/dense/kernel:0", "a/dense/bias:0", "b/dense/kernel:0"]),
        (default_named_blocks, ["block/dense/kernel:0", "block_1/dense/kernel:0"]),
        (cnn, ["conv2d/kernel:0", "conv2d/bias:0", "batch_normalization/gamma:0",
               "batch_normalization/beta:0", "batch_normalization/moving_mean:0",
               "batch_normalization/moving_variance:0", "dense/kernel:0"]),
        (named_layers, ["logits/kernel:0", "logits/bias:0", "proj/kernel:0"]),
        (reentered_scope_with_reuse, ["layer/dense/kernel:0", "layer/dense/bias:0"]),
        (bert_like, ["bert/embeddings/word_embeddings:0", "bert/embeddings/LayerNorm/beta:0",
                     "bert/embeddings/LayerNorm/gamma:0",
                     "bert/encoder/layer_0/attention/self/query/kernel:0",
                     "bert/encoder/layer_0/attention/self/query/bias:0",
                     "cls/predictions/output_bias:0"]),
        (scope_name_then_layer, ["dense/w:0", "dense_1/kernel:0"]),
        (two_layer_norms, ["LayerNorm/beta:0", "LayerNorm/gamma:0", "LayerNorm_1/beta:0",
                           "LayerNorm_1/gamma:0"]),
        # As TF 2.15's tf.compat.v1.layers name them in a graph.
        (class_named_twice, [
            "tpu_batch_normalization/gamma:0", "tpu_batch_normalization/moving_mean:0",
            "tpu_batch_normalization/moving_variance:0", "tpu_batch_normalization_1/gamma:0",
            "tpu_batch_normalization_1/moving_mean:0",
            "tpu_batch_normalization_1/moving_variance:0", "tpu_batch_normalization_2/kernel:0"]),
        (subclass_layers, [
            "tpu_batch_normalization/gamma:0", "tpu_batch_normalization/moving_mean:0",
            "tpu_batch_normalization/moving_variance:0",
            "tpu_batch_normalization_1/moving_mean:0",
            "tpu_batch_normalization_1/moving_variance:0"]),
        # TF1 gave the tf.layers one `dense/kernel_1`, in the Keras layer's scope.
        (keras_layer_then_tf1_layer, ["dense/kernel:0", "dense_1/kernel:0"]),
    ],
    ids=lambda p: p.__name__ if callable(p) else None,
)
def test_variables_get_tf1_names(program, expected):
    assert names(program) == expected


@pytest.mark.parametrize("mode", [TRAIN, EVAL, PREDICT])
def test_names_replay_identically_on_every_later_call(mode):
    store = store_lib.VariableStore()
    first = names(bert_like, store=store)
    count = len(store.variables)
    assert names(bert_like, store=store, mode=mode, building=False) == first
    assert len(store.variables) == count


def test_variable_paths_in_the_store_are_the_tf1_names():
    store = store_lib.VariableStore()
    run(cnn, store=store)
    assert {f"{v.path}:0" for v in store.variables} == set(names(cnn))


def test_view_exposes_op_name_shape_and_value():
    def program():
        tf1.layers.dense(X, 3)
        return tf1.trainable_variables()[0]

    kernel = run(program)
    assert kernel.op.name == "dense/kernel"
    assert kernel.shape.as_list() == [6, 3] and kernel.dtype == tf1.float32
    np.testing.assert_allclose(np.asarray(tf1.nn.l2_loss(kernel)), (np.asarray(kernel) ** 2).sum() / 2)


def test_name_filters_of_real_programs_select_by_tf1_name():
    def program():
        bert_like()
        cnn()
        tvars = tf1.trainable_variables()
        return (
            [v.name for v in tvars if not re.search("LayerNorm|bias", v.name)],
            [v.name for v in tvars if "batch_normalization" in v.name],
            [v.name for v in tf1.trainable_variables(scope="bert/encoder")],
        )

    decayed, batch_norm, frozen = run(program)
    assert decayed == ["bert/embeddings/word_embeddings:0",
                       "bert/encoder/layer_0/attention/self/query/kernel:0",
                       "conv2d/kernel:0", "batch_normalization/gamma:0",
                       "batch_normalization/beta:0", "dense/kernel:0"]
    assert batch_norm == ["batch_normalization/gamma:0", "batch_normalization/beta:0"]
    assert frozen == ["bert/encoder/layer_0/attention/self/query/kernel:0",
                      "bert/encoder/layer_0/attention/self/query/bias:0"]


def test_trainable_false_and_moving_statistics_are_not_trainable():
    def program():
        tf1.layers.dense(X, 2, trainable=False, name="frozen")
        tf1.get_variable("counter", [], dtype=tf1.int32, trainable=False)
        tf1.layers.batch_normalization(X, training=False)
        return ([v.name for v in tf1.trainable_variables()],
                [v.name for v in tf1.get_collection(tf1.GraphKeys.GLOBAL_VARIABLES)])

    trainable, everything = run(program)
    assert trainable == ["batch_normalization/gamma:0", "batch_normalization/beta:0"]
    assert len(everything) == 7 and everything[2] == "counter:0"


def test_get_variable_twice_without_reuse_is_tf1s_error():
    def program():
        tf1.get_variable("w", [2])
        tf1.get_variable("w", [2])

    with pytest.raises(ValueError, match="Variable w already exists, disallowed"):
        run(program)


def test_reuse_true_needs_a_variable_created_in_this_call():
    def program():
        with tf1.variable_scope("s", reuse=True):
            tf1.get_variable("w", [2])

    with pytest.raises(ValueError, match="Variable s/w does not exist"):
        run(program)


@pytest.mark.parametrize("as_list, as_tuple", [
    (lambda x: tf1.layers.max_pooling2d(x, [3, 3], strides=2),
     lambda x: tf1.layers.max_pooling2d(x, (3, 3), strides=2)),
    (lambda x: tf1.layers.average_pooling2d(x, [3, 2], strides=[2, 1], padding="same"),
     lambda x: tf1.layers.average_pooling2d(x, (3, 2), strides=(2, 1), padding="same")),
    (lambda x: tf1.layers.max_pooling1d(x[:, 0], [2], strides=[2]),
     lambda x: tf1.layers.max_pooling1d(x[:, 0], (2,), strides=(2,))),
    (lambda x: tf1.layers.conv2d(x, 2, [3, 3], strides=[2, 2], dilation_rate=[1, 1], name="c"),
     lambda x: tf1.layers.conv2d(x, 2, (3, 3), strides=(2, 2), dilation_rate=(1, 1), name="c")),
])
def test_lists_where_tf1_takes_a_list(as_list, as_tuple):
    # SqueezeNet: `tf.layers.max_pooling2d(net, [3, 3], strides=2)`.
    store = store_lib.VariableStore()
    for images in (SIMAGES, IMAGES):
        listed = run(lambda: as_list(images), store=store)
        assert tuple(listed.shape) == tuple(run(lambda: as_tuple(images), store=store).shape)
    np.testing.assert_allclose(run(lambda: as_list(IMAGES), store=store),
                               run(lambda: as_tuple(IMAGES), store=store))


def test_layer_named_twice_without_reuse_is_an_error():
    def program():
        tf1.layers.dense(X, 2, name="out")
        tf1.layers.dense(X, 2, name="out")

    with pytest.raises(ValueError, match="out already exists"):
        run(program)


@pytest.mark.parametrize("share", ["auto_reuse", "reuse_variables", "reuse_argument"])
def test_shared_variables_are_the_same_object(share):
    def program():
        results = []
        for i in range(2):
            if share == "auto_reuse":
                context = tf1.variable_scope("tower", reuse=tf1.AUTO_REUSE)
            elif share == "reuse_argument":
                context = tf1.variable_scope("tower", reuse=i > 0)
            else:
                context = tf1.variable_scope("tower")
            with context as vs:
                if share == "reuse_variables" and i > 0:
                    vs.reuse_variables()
                results.append((tf1.get_variable("w", [2]), tf1.layers.dense(X, 2, name="fc")))
        return results

    (w0, out0), (w1, out1) = run(program)
    assert w0 is w1
    np.testing.assert_allclose(out0, out1)


def test_reentering_a_scope_object_keeps_its_name():
    def program():
        with tf1.variable_scope("model") as vs:
            pass
        with tf1.variable_scope("other"):
            with tf1.variable_scope(vs, reuse=tf1.AUTO_REUSE):
                tf1.get_variable("w", [1])
        return [v.name for v in tf1.global_variables()]

    assert run(program) == ["model/w:0"]


def test_get_variable_shares_a_layer_variable_by_name():
    def program():
        tf1.layers.dense(X, 2)
        with tf1.variable_scope("dense", reuse=True):
            return tf1.get_variable("kernel", [6, 2])

    assert run(program).path == "dense/kernel"


def test_class_form_layer_reuses_its_variables_on_every_call():
    def program():
        layer = tf1.layers.Dense(3)
        a, b = layer(X), layer(X * 2)
        return a, b, [v.name for v in layer.trainable_variables], layer.kernel

    a, b, listed, kernel = run(program)
    np.testing.assert_allclose(b - a, X @ np.asarray(kernel), rtol=1e-5, atol=1e-6)
    assert listed == ["dense/kernel:0", "dense/bias:0"] and kernel.name == "dense/kernel:0"


def test_scope_initializer_dtype_and_custom_getter_apply_inside():
    seen = []

    def getter(next_getter, name, *args, **kwargs):
        seen.append(name)
        return next_getter(name, *args, **kwargs)

    def program():
        with tf1.variable_scope("s", initializer=tf1.constant_initializer(0.5),
                                custom_getter=getter):
            return tf1.get_variable("w", [2, 2])

    variable = run(program)
    np.testing.assert_allclose(variable, np.full((2, 2), 0.5))
    assert seen == ["s/w"]


@pytest.mark.parametrize(
    "initializer, check",
    [
        (tf1.zeros_initializer, lambda v: np.all(v == 0)),
        (tf1.ones_initializer(), lambda v: np.all(v == 1)),
        (tf1.constant_initializer([1, 2, 3, 4, 5, 6]), lambda v: v.ravel().tolist() == [1, 2, 3, 4, 5, 6]),
        (tf1.truncated_normal_initializer(stddev=0.02), lambda v: np.abs(v).max() <= 0.04 and v.std() > 0),
        (tf1.random_uniform_initializer(-0.1, 0.1), lambda v: np.abs(v).max() <= 0.1 and v.std() > 0),
        (tf1.glorot_uniform_initializer(), lambda v: np.abs(v).max() <= np.sqrt(6 / 5)),
    ],
)
def test_tf1_initializers(initializer, check):
    variable = run(lambda: tf1.get_variable("w", [2, 3], initializer=initializer))
    assert check(np.asarray(variable))


def test_integer_variables_default_to_zeros():
    variable = run(lambda: tf1.get_variable("n", [3], dtype=tf1.int32))
    assert np.asarray(variable).tolist() == [0, 0, 0] and variable.dtype == "int32"


def test_regularization_losses_are_collected_not_added():
    def program():
        l2 = tf1.contrib.layers.l2_regularizer(0.1)
        tf1.layers.dense(X, 3, kernel_regularizer=l2, name="fc")
        tf1.get_variable("w", [2], initializer=tf1.ones_initializer(), regularizer=l2)
        kernel = tf1.trainable_variables()[0]
        return (tf1.losses.get_regularization_loss(),
                0.1 * (np.asarray(kernel) ** 2).sum() / 2 + 0.1 * 2 / 2)

    total, expected = run(program)
    np.testing.assert_allclose(total, expected, rtol=1e-6)


def test_a_shared_layer_counts_its_penalty_once():
    def program():
        l2 = tf1.contrib.layers.l2_regularizer(1.0)
        for _ in range(2):
            tf1.layers.dense(SX, 3, kernel_regularizer=l2, name="fc", reuse=tf1.AUTO_REUSE)
        return len(tf1.losses.get_regularization_losses())

    assert run(program) == 1


def test_update_ops_is_empty_and_control_dependencies_is_a_no_op():
    def program():
        x = tf1.layers.batch_normalization(X, training=True)
        update_ops = tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)
        with tf1.control_dependencies(update_ops):
            return update_ops, tf1.identity(x)

    update_ops, out = run(program)
    assert update_ops == []
    np.testing.assert_allclose(np.asarray(out).mean(0), 0, atol=1e-5)


def test_user_collections_hold_what_was_added_and_filter_by_scope():
    class Named:
        def __init__(self, name):
            self.name = name

    def program():
        tf1.add_to_collection("things", Named("a/x"))
        tf1.add_to_collections(["things"], Named("b/y"))
        return [i.name for i in tf1.get_collection("things", scope="b")], len(tf1.get_collection("things"))

    assert run(program) == (["b/y"], 2)


def test_collections_start_empty_on_every_call():
    store = store_lib.VariableStore()
    run(lambda: tf1.add_to_collection("things", 1), store=store)
    assert run(lambda: tf1.get_collection("things"), store=store, building=False) == []


def test_layer_norm_matches_numpy():
    def program():
        return tf1.contrib.layers.layer_norm(X, begin_norm_axis=-1, begin_params_axis=-1)

    expected = (X - X.mean(-1, keepdims=True)) / np.sqrt(X.var(-1, keepdims=True) + 1e-12)
    np.testing.assert_allclose(run(program), expected, rtol=1e-4, atol=1e-5)


def test_batch_normalization_uses_tf1_defaults_and_updates_moving_statistics():
    def program():
        out = tf1.layers.batch_normalization(X, training=True)
        moving_mean, moving_variance = tf1.global_variables()[2:]
        return out, np.asarray(moving_mean), np.asarray(moving_variance)

    out, moving_mean, moving_variance = run(program)
    np.testing.assert_allclose(out, (X - X.mean(0)) / np.sqrt(X.var(0) + 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(moving_mean, 0.01 * X.mean(0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(moving_variance, 0.99 + 0.01 * X.var(0), rtol=1e-4)


@pytest.mark.parametrize(
    "fused, data_format, unbiased",
    [
        (None, "channels_last", True),  # TF1's default: fused for 4D inputs.
        (True, "channels_last", True),
        (None, "channels_first", True),
        (False, "channels_last", False),  # TF1's non-fused path: biased.
    ],
)
def test_batch_normalization_4d_moving_variance_follows_tf1_fused_kernel(fused, data_format, unbiased):
    images = IMAGES if data_format == "channels_last" else IMAGES.transpose(0, 3, 1, 2)
    axis = 3 if data_format == "channels_last" else 1
    reduced = tuple(a for a in range(4) if a != axis)

    def program():
        out = tf1.layers.batch_normalization(images, axis=axis, fused=fused, training=True)
        return out, [np.asarray(v) for v in tf1.global_variables()[2:]]

    out, (moving_mean, moving_variance) = run(program)
    variance = images.var(reduced, ddof=1 if unbiased else 0)
    np.testing.assert_allclose(moving_variance, 0.99 + 0.01 * variance, rtol=1e-5)
    np.testing.assert_allclose(moving_mean, 0.01 * images.mean(reduced), rtol=1e-4, atol=1e-7)
    # The output is normalized with the biased variance either way.
    shape = [1, 1, 1, 1]
    shape[axis] = -1
    expected = (images - images.mean(reduced).reshape(shape)) / np.sqrt(
        images.var(reduced).reshape(shape) + 1e-3)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fused, epsilon", [(None, 1.001e-5), (True, 1.001e-5), (False, 1e-5)])
def test_batch_normalization_fused_raises_epsilon_to_the_kernels_minimum(fused, epsilon):
    # Channels of a tiny variance show the epsilon: 1e-5 versus 1.001e-5.
    images = (IMAGES * 1e-3).astype("float32")

    def program():
        return tf1.layers.batch_normalization(images, epsilon=1e-5, fused=fused, training=True)

    out = run(program)
    mean, variance = images.mean((0, 1, 2)), images.var((0, 1, 2))
    expected = (images - mean) / np.sqrt(variance + epsilon)
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-7)


def test_batch_normalization_fused_on_a_2d_input_takes_the_non_fused_path():
    # As TF1 did (tests/test_batch_norm_fused_fallback.py has the whole table).
    out = run(lambda: tf1.layers.batch_normalization(X, fused=True, training=True))
    expected = (X - X.mean(0)) / np.sqrt(X.var(0) + 1e-3)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_dropout_drops_only_in_training_and_rescales():
    def program():
        ones = np.ones((64, 64), "float32")
        return (tf1.layers.dropout(ones, rate=0.5, training=True),
                tf1.layers.dropout(ones, rate=0.5, training=False))

    dropped, kept = run(program)
    assert set(np.unique(dropped)) == {0.0, 2.0} and 0.4 < (np.asarray(dropped) == 0).mean() < 0.6
    np.testing.assert_array_equal(kept, 1.0)


@pytest.mark.parametrize("layer", ["batch_normalization", "dropout"])
def test_training_must_be_a_python_bool(layer):
    with pytest.raises(ValueError, match="`training` of tf1.layers.*Python bool"):
        run(lambda: getattr(tf1.layers, layer)(X, training=keras.ops.convert_to_tensor(True)))


def test_bfloat16_scope_stores_float32_and_computes_bfloat16():
    def program():
        with tf1.tpu.bfloat16_scope():
            w = tf1.get_variable("w", [6, 2], dtype=tf1.bfloat16)
            out = tf1.layers.dense(tf1.cast(X, tf1.bfloat16), 2)
        return w, out, [(v.name, v.dtype) for v in tf1.global_variables()]

    w, out, variables = run(program)
    assert w.dtype == tf1.bfloat16 and out.dtype == tf1.bfloat16
    assert variables == [("w:0", "float32"), ("dense/kernel:0", "float32"), ("dense/bias:0", "float32")]


def enter(scope_context):
    with scope_context:
        pass


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: enter(tf1.variable_scope(None)), "name_or_scope.*default_name"),
        (lambda: enter(tf1.variable_scope("s", reuse="yes")), "reuse=.yes."),
        (lambda: enter(tf1.variable_scope(None, default_name="d", reuse=True)),
         "reuse=True cannot be used"),
        (lambda: tf1.layers.conv2d(IMAGES, 2, 3, padding="full"), "padding=.full."),
        (lambda: tf1.layers.dropout(X, rate=1.5), "rate=1.5"),
    ],
)
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        run(call)


def test_outside_model_fn_the_error_says_where_to_call():
    with pytest.raises(RuntimeError, match="inside a model_fn"):
        tf1.get_variable("w", [1])


# -- A TF1-style model_fn trained by EstimatorModel. -------------------------


SEEN_NAMES = []


def tf1_model_fn(features, labels, mode, params):
    training = mode == tf1.estimator.ModeKeys.TRAIN
    with tf1.variable_scope("net"):
        x = tf1.layers.dense(features["x"], 32, activation=tf1.nn.relu,
                             kernel_regularizer=tf1.contrib.layers.l2_regularizer(1e-4))
        x = tf1.layers.batch_normalization(x, training=training)
        x = tf1.layers.dropout(x, rate=0.1, training=training)
        x = tf1.contrib.layers.layer_norm(tf1.layers.dense(x, 32, activation=tf1.nn.relu))
    logits = tf1.layers.dense(x, 3, name="logits")
    SEEN_NAMES.append(tuple(v.name for v in tf1.global_variables()))
    if mode == tf1.estimator.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"classes": tf1.argmax(logits, 1)})
    loss = (tf1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
            + tf1.losses.get_regularization_loss())

    def metric_fn(labels, logits):
        return {"accuracy": tf1.metrics.accuracy(labels, tf1.argmax(logits, 1))}

    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.Adam(0.02),
                                eval_metrics=(metric_fn, [labels, logits]))


def test_tf1_style_model_fn_trains_evaluates_and_predicts():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 8)).astype("float32")
    y = np.argmax(x @ rng.normal(size=(8, 3)), 1).astype("int32")
    SEEN_NAMES.clear()
    model = kte.EstimatorModel(
        tf1_model_fn, train_batch_size=32, eval_batch_size=64,
        predict_batch_size=64,
        config=kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=8)),
    )
    model.compile()
    model.fit(({"x": x}, y), epochs=6, verbose=0)
    results = model.evaluate(({"x": x}, y), return_dict=True, verbose=0)
    predictions = model.predict({"x": x}, verbose=0)

    assert results["accuracy"] > 0.85
    assert (predictions["classes"] == y).mean() == pytest.approx(results["accuracy"])
    assert len(set(SEEN_NAMES)) == 1 and len(SEEN_NAMES) >= 6  # build + trace, per mode
    assert SEEN_NAMES[0][:6] == ("net/dense/kernel:0", "net/dense/bias:0",
                           "net/batch_normalization/gamma:0", "net/batch_normalization/beta:0",
                           "net/batch_normalization/moving_mean:0",
                           "net/batch_normalization/moving_variance:0")
    moving_mean = model.store.created_layers["net/batch_normalization"].moving_mean
    assert np.abs(np.asarray(moving_mean)).max() > 0  # updated without UPDATE_OPS
    # Dropout drew new numbers every step: the seed generator advanced.
    assert int(np.asarray(model.store.seed_generator.state)[1]) == model.global_step


def test_layer_object_made_once_is_found_again_in_every_call():
    layer = tf1.layers.Dense(2)
    store = store_lib.VariableStore()

    def program():
        with tf1.variable_scope("elsewhere"):
            out = layer(SX)
        return [v.name for v in tf1.trainable_variables()], out

    first, _ = run(program, store=store)
    again, _ = run(program, store=store, mode=EVAL, building=False)
    assert first == again == ["elsewhere/dense/kernel:0", "elsewhere/dense/bias:0"]


def test_top_level_scope_object_can_be_reentered_from_inside_a_scope():
    def program():
        top = tf1.get_variable_scope()
        with tf1.variable_scope("inner"):
            with tf1.variable_scope(top):
                tf1.get_variable("w", [1])
        return [v.name for v in tf1.global_variables()]

    assert run(program) == ["w:0"]


def test_get_variable_shape_must_be_fully_defined():
    with pytest.raises(ValueError, match=r"shape=\[None, 3\]"):
        run(lambda: tf1.get_variable("w", [None, 3]))


def test_kte_store_functions_mix_with_tf1_scopes():
    def program():
        with tf1.variable_scope("encoder"):
            kte.get_or_create_layer("proj", lambda: keras.layers.Dense(2))(SX)
            tf1.layers.dense(SX, 2, use_bias=False)
        return [v.name for v in tf1.trainable_variables()]

    assert run(program) == ["encoder/proj/kernel:0", "encoder/proj/bias:0", "encoder/dense/kernel:0"]
