"""compat.v1 tensor ops, nn, losses and dtypes: TF1's numerics, checked against numpy."""

import re

import jax
import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.spec import ModeKeys

RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 5)).astype("float32")
Y = RNG.normal(size=(4, 5)).astype("float32")
POS = np.abs(X) + 0.1
LOGITS = RNG.normal(size=(6, 4)).astype("float32")
LABELS = np.array([0, 3, 1, 2, 2, 0], "int32")
ONEHOT = np.eye(4, dtype="float32")[LABELS]
BINARY = (RNG.uniform(size=(6, 4)) > 0.5).astype("float32")


def log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def in_graph(fn):
    """Runs `fn` as model_fn code (collections need a model_fn call)."""
    with store_lib.model_fn_call(store_lib.VariableStore(), ModeKeys.TRAIN, True, 0, True):
        return fn()


@pytest.mark.parametrize(
    "tf1_fn, numpy_fn",
    [
        (lambda: tf1.reduce_mean(X), lambda: X.mean()),
        (lambda: tf1.reduce_sum(X, axis=1), lambda: X.sum(1)),
        (lambda: tf1.reduce_sum(X, reduction_indices=[0], keep_dims=True), lambda: X.sum(0, keepdims=True)),
        (lambda: tf1.reduce_max(X, 1, keepdims=True), lambda: X.max(1, keepdims=True)),
        (lambda: tf1.reduce_min(X, 0), lambda: X.min(0)),
        (lambda: tf1.reduce_prod(X, 1), lambda: X.prod(1)),
        (lambda: tf1.reduce_any(X > 1, 1), lambda: (X > 1).any(1)),
        (lambda: tf1.reduce_all(X > -3, 1), lambda: (X > -3).all(1)),
        (lambda: tf1.reduce_logsumexp(X, 1), lambda: np.log(np.exp(X).sum(1))),
        (lambda: tf1.argmax(X), lambda: X.argmax(0)),
        (lambda: tf1.argmax(X, axis=1), lambda: X.argmax(1)),
        (lambda: tf1.argmin(X, dimension=1), lambda: X.argmin(1)),
        (lambda: tf1.reshape(X, [5, -1]), lambda: X.reshape(5, -1)),
        (lambda: tf1.reshape(X, tf1.shape(Y)[::-1]), lambda: X.reshape(5, 4)),
        (lambda: tf1.cast(X > 0, tf1.float32), lambda: (X > 0).astype("float32")),
        (lambda: tf1.to_float(LABELS), lambda: LABELS.astype("float32")),
        (lambda: tf1.one_hot(LABELS, 4), lambda: ONEHOT),
        (lambda: tf1.one_hot(LABELS, 4, on_value=0.9, off_value=0.1 / 3),
         lambda: np.where(ONEHOT == 1, 0.9, 0.1 / 3)),
        (lambda: tf1.concat([X, Y], 1), lambda: np.concatenate([X, Y], 1)),
        (lambda: tf1.stack([X, Y], axis=1), lambda: np.stack([X, Y], 1)),
        (lambda: tf1.unstack(X, axis=1)[2], lambda: X[:, 2]),
        (lambda: tf1.matmul(X, Y, transpose_b=True), lambda: X @ Y.T),
        (lambda: tf1.matmul(X, Y, transpose_a=True), lambda: X.T @ Y),
        (lambda: tf1.squeeze(X[:, :1], axis=[1]), lambda: X[:, 0]),
        (lambda: tf1.expand_dims(X, 1), lambda: X[:, None]),
        (lambda: tf1.transpose(X), lambda: X.T),
        (lambda: tf1.transpose(X[None], perm=[2, 0, 1]), lambda: X[None].transpose(2, 0, 1)),
        (lambda: tf1.where(X > 0, X, Y), lambda: np.where(X > 0, X, Y)),
        (lambda: tf1.gather(X, [3, 0]), lambda: X[[3, 0]]),
        (lambda: tf1.gather(X, [4, 1], axis=1), lambda: X[:, [4, 1]]),
        (lambda: tf1.gather_nd(X, [[0, 1], [3, 4]]), lambda: X[[0, 3], [1, 4]]),
        (lambda: tf1.range(5), lambda: np.arange(5)),
        (lambda: tf1.range(1, 10, 3), lambda: np.arange(1, 10, 3)),
        (lambda: tf1.zeros([2, 3]), lambda: np.zeros((2, 3))),
        (lambda: tf1.ones_like(X), lambda: np.ones_like(X)),
        (lambda: tf1.zeros_like(LABELS, dtype=tf1.float32), lambda: np.zeros(6, "float32")),
        (lambda: tf1.fill([2, 2], 7.0), lambda: np.full((2, 2), 7.0)),
        (lambda: tf1.constant(3.0, shape=[2]), lambda: np.array([3.0, 3.0])),
        (lambda: tf1.constant([1, 2, 3, 4], shape=[2, 2]), lambda: np.array([[1, 2], [3, 4]])),
        (lambda: tf1.sqrt(POS), lambda: np.sqrt(POS)),
        (lambda: tf1.rsqrt(POS), lambda: 1 / np.sqrt(POS)),
        (lambda: tf1.exp(X), lambda: np.exp(X)),
        (lambda: tf1.log(POS), lambda: np.log(POS)),
        (lambda: tf1.square(X), lambda: X**2),
        (lambda: tf1.abs(X), lambda: np.abs(X)),
        (lambda: tf1.pow(POS, 1.5), lambda: POS**1.5),
        (lambda: tf1.maximum(X, Y), lambda: np.maximum(X, Y)),
        (lambda: tf1.minimum(X, 0.0), lambda: np.minimum(X, 0)),
        (lambda: tf1.squared_difference(X, Y), lambda: (X - Y) ** 2),
        (lambda: tf1.add_n([X, Y, X]), lambda: 2 * X + Y),
        (lambda: tf1.equal(LABELS, 2), lambda: LABELS == 2),
        (lambda: tf1.less(X, Y), lambda: X < Y),
        (lambda: tf1.greater_equal(X, Y), lambda: X >= Y),
        (lambda: tf1.logical_and(X > 0, Y > 0), lambda: (X > 0) & (Y > 0)),
        (lambda: tf1.logical_or(X > 0, Y > 0), lambda: (X > 0) | (Y > 0)),
        (lambda: tf1.logical_not(X > 0), lambda: ~(X > 0)),
        (lambda: tf1.identity(X), lambda: X),
        (lambda: tf1.stop_gradient(X), lambda: X),
        (lambda: tf1.tile(X[:1], [3, 2]), lambda: np.tile(X[:1], (3, 2))),
        (lambda: tf1.split(X, [2, 3], axis=1)[1], lambda: X[:, 2:]),
        (lambda: tf1.split(X, [1, -1], axis=0)[1], lambda: X[1:]),
        (lambda: tf1.split(X, 2)[0], lambda: X[:2]),
        (lambda: tf1.clip_by_value(X, -0.5, 0.5), lambda: np.clip(X, -0.5, 0.5)),
        (lambda: tf1.sequence_mask([1, 3, 0], 4), lambda: np.arange(4)[None] < np.array([1, 3, 0])[:, None]),
        (lambda: tf1.sequence_mask(np.array([2, 1]), dtype=tf1.float32), lambda: np.array([[1, 1], [1, 0]])),
        (lambda: tf1.pad(X, [[1, 0], [0, 2]]), lambda: np.pad(X, [(1, 0), (0, 2)])),
        (lambda: tf1.cumsum(X, axis=1, exclusive=True), lambda: np.cumsum(X, 1) - X),
        (lambda: tf1.cumsum(X, axis=1, reverse=True), lambda: np.cumsum(X[:, ::-1], 1)[:, ::-1]),
        (lambda: tf1.einsum("ij,kj->ik", X, Y), lambda: X @ Y.T),
        (lambda: tf1.slice(X, [1, 2], [2, -1]), lambda: X[1:3, 2:]),
        (lambda: tf1.math.rsqrt(tf1.math.reduce_mean(POS, axis=-1)), lambda: 1 / np.sqrt(POS.mean(-1))),
    ],
)
def test_tensor_op_matches_numpy(tf1_fn, numpy_fn):
    np.testing.assert_allclose(np.asarray(tf1_fn()), numpy_fn(), rtol=1e-5, atol=1e-6)


def test_shape_is_a_static_int32_array():
    shape = tf1.shape(X)
    assert shape.dtype == np.int32 and shape.tolist() == [4, 5]
    assert tf1.rank(X) == 2 and tf1.size(X) == 20


def test_assertions_check_values_known_while_tracing():
    assert tf1.assert_less_equal(tf1.shape(X)[1], 5) is None
    with pytest.raises(ValueError, match="seq too long: assert_less_equal failed"):
        tf1.assert_less_equal(tf1.shape(X)[1], 4, message="seq too long")
    with pytest.raises(ValueError, match="rank 3"):
        tf1.assert_rank(X, 3)


def test_assertions_on_values_inside_the_compiled_step_are_skipped():
    assert jax.jit(lambda x: tf1.assert_equal(x, 1.0) or x)(np.float32(2.0)) == 2.0


def test_ops_compile_under_jit():
    @jax.jit
    def f(x, y):
        mask = tf1.sequence_mask(tf1.constant([1, 3, 5, 2]), 5, dtype=tf1.float32)
        return tf1.reduce_sum(tf1.matmul(x * mask, y, transpose_b=True), axis=1)

    mask = np.arange(5)[None] < np.array([1, 3, 5, 2])[:, None]
    np.testing.assert_allclose(f(X, Y), ((X * mask) @ Y.T).sum(1), rtol=1e-5)


@pytest.mark.parametrize(
    "tf1_fn, numpy_fn",
    [
        (lambda: tf1.nn.relu(X), lambda: np.maximum(X, 0)),
        (lambda: tf1.nn.relu6(X * 5), lambda: np.clip(X * 5, 0, 6)),
        (lambda: tf1.nn.elu(X), lambda: np.where(X > 0, X, np.exp(X) - 1)),
        (lambda: tf1.nn.leaky_relu(X), lambda: np.where(X > 0, X, 0.2 * X)),
        (lambda: tf1.nn.tanh(X), lambda: np.tanh(X)),
        (lambda: tf1.nn.sigmoid(X), lambda: 1 / (1 + np.exp(-X))),
        (lambda: tf1.nn.gelu(X, approximate=True),
         lambda: 0.5 * X * (1 + np.tanh(np.sqrt(2 / np.pi) * (X + 0.044715 * X**3)))),
        (lambda: tf1.nn.softmax(LOGITS), lambda: np.exp(log_softmax(LOGITS))),
        (lambda: tf1.nn.log_softmax(LOGITS), lambda: log_softmax(LOGITS)),
        (lambda: tf1.nn.log_softmax(LOGITS, axis=0), lambda: log_softmax(LOGITS.T).T),
        (lambda: tf1.nn.sparse_softmax_cross_entropy_with_logits(labels=LABELS, logits=LOGITS),
         lambda: -log_softmax(LOGITS)[np.arange(6), LABELS]),
        (lambda: tf1.nn.softmax_cross_entropy_with_logits(labels=ONEHOT, logits=LOGITS),
         lambda: -(ONEHOT * log_softmax(LOGITS)).sum(-1)),
        (lambda: tf1.nn.softmax_cross_entropy_with_logits_v2(labels=ONEHOT, logits=LOGITS),
         lambda: -(ONEHOT * log_softmax(LOGITS)).sum(-1)),
        (lambda: tf1.nn.sigmoid_cross_entropy_with_logits(labels=BINARY, logits=LOGITS * 30),
         lambda: np.maximum(LOGITS * 30, 0) - LOGITS * 30 * BINARY + np.log1p(np.exp(-np.abs(LOGITS * 30)))),
        (lambda: tf1.nn.l2_loss(X), lambda: (X**2).sum() / 2),
        (lambda: tf1.nn.l2_normalize(X, axis=1), lambda: X / np.linalg.norm(X, axis=1, keepdims=True)),
        (lambda: tf1.nn.embedding_lookup(X, [[3, 0], [1, 1]]), lambda: X[[[3, 0], [1, 1]]]),
        (lambda: tf1.nn.bias_add(X, Y[0]), lambda: X + Y[0]),
        (lambda: tf1.nn.moments(X, axes=[0])[1], lambda: X.var(0)),
        (lambda: tf1.nn.dropout(X, keep_prob=1.0), lambda: X),
        (lambda: tf1.nn.batch_normalization(X, 0.5, 4.0, 1.0, 2.0, 0.0), lambda: (X - 0.5) / 2 * 2 + 1),
        (lambda: tf1.nn.max_pool(X.reshape(1, 4, 5, 1), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
         lambda: X[:4, :4].reshape(2, 2, 2, 2).max((1, 3)).reshape(1, 2, 2, 1)),
        (lambda: tf1.nn.avg_pool(X.reshape(1, 4, 5, 1), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
         lambda: X[:4, :4].reshape(2, 2, 2, 2).mean((1, 3)).reshape(1, 2, 2, 1)),
        (lambda: tf1.nn.conv2d(X.reshape(1, 4, 5, 1), np.ones((2, 2, 1, 1), "float32"), [1, 1, 1, 1], "VALID"),
         lambda: (X[:-1, :-1] + X[1:, :-1] + X[:-1, 1:] + X[1:, 1:]).reshape(1, 3, 4, 1)),
    ],
)
def test_nn_function_matches_numpy(tf1_fn, numpy_fn):
    np.testing.assert_allclose(np.asarray(tf1_fn()), numpy_fn(), rtol=1e-4, atol=1e-5)


def test_nn_cross_entropy_rejects_positional_arguments_as_tf1():
    with pytest.raises(ValueError, match="named arguments"):
        tf1.nn.sparse_softmax_cross_entropy_with_logits(LABELS, LOGITS)


def test_nn_cross_entropy_names_mismatched_shapes():
    with pytest.raises(ValueError, match=r"labels.shape=\(6, 4\)"):
        tf1.nn.sparse_softmax_cross_entropy_with_logits(labels=ONEHOT, logits=LOGITS)


@pytest.mark.parametrize("kwargs", [{}, {"keep_prob": 0.5, "rate": 0.5}, {"keep_prob": 0.0}])
def test_nn_dropout_rejects_bad_rates(kwargs):
    with pytest.raises(ValueError, match="keep_prob"):
        tf1.nn.dropout(X, **kwargs)


WEIGHTS = np.array([1.0, 0.0, 2.0, 1.0, 0.0, 1.0], "float32")
SPARSE_XENT = -log_softmax(LOGITS)[np.arange(6), LABELS]


@pytest.mark.parametrize(
    "tf1_fn, expected",
    [
        (lambda: tf1.losses.sparse_softmax_cross_entropy(LABELS, LOGITS), SPARSE_XENT.mean()),
        (lambda: tf1.losses.sparse_softmax_cross_entropy(LABELS, LOGITS, weights=WEIGHTS),
         (SPARSE_XENT * WEIGHTS).sum() / 4),
        (lambda: tf1.losses.sparse_softmax_cross_entropy(
            LABELS, LOGITS, weights=WEIGHTS, reduction=tf1.losses.Reduction.MEAN),
         (SPARSE_XENT * WEIGHTS).sum() / WEIGHTS.sum()),
        (lambda: tf1.losses.sparse_softmax_cross_entropy(
            LABELS, LOGITS, weights=WEIGHTS, reduction=tf1.losses.Reduction.SUM),
         (SPARSE_XENT * WEIGHTS).sum()),
        (lambda: tf1.losses.sparse_softmax_cross_entropy(
            LABELS, LOGITS, weights=WEIGHTS, reduction=tf1.losses.Reduction.SUM_OVER_BATCH_SIZE),
         (SPARSE_XENT * WEIGHTS).sum() / 6),
        (lambda: tf1.losses.softmax_cross_entropy(ONEHOT, LOGITS), SPARSE_XENT.mean()),
        (lambda: tf1.losses.softmax_cross_entropy(ONEHOT, LOGITS, label_smoothing=0.2),
         -((ONEHOT * 0.8 + 0.05) * log_softmax(LOGITS)).sum(-1).mean()),
        (lambda: tf1.losses.sigmoid_cross_entropy(BINARY, LOGITS),
         (np.maximum(LOGITS, 0) - LOGITS * BINARY + np.log1p(np.exp(-np.abs(LOGITS)))).mean()),
        (lambda: tf1.losses.mean_squared_error(X, Y), ((X - Y) ** 2).mean()),
        (lambda: tf1.losses.absolute_difference(X, Y), np.abs(X - Y).mean()),
        (lambda: tf1.losses.huber_loss(X, 3 * Y),
         np.where(np.abs(X - 3 * Y) < 1, 0.5 * (X - 3 * Y) ** 2, np.abs(X - 3 * Y) - 0.5).mean()),
    ],
)
def test_loss_matches_numpy(tf1_fn, expected):
    np.testing.assert_allclose(np.asarray(in_graph(tf1_fn)), expected, rtol=1e-5)


def test_losses_are_collected_for_get_total_loss():
    def program():
        a = tf1.losses.mean_squared_error(X, Y)
        b = tf1.losses.absolute_difference(X, Y)
        return a + b, tf1.losses.get_total_loss(), len(tf1.losses.get_losses())

    expected, total, count = in_graph(program)
    assert count == 2
    np.testing.assert_allclose(total, expected, rtol=1e-6)


def test_unknown_loss_reduction_is_named():
    with pytest.raises(ValueError, match="Invalid Reduction Key 'avg'"):
        in_graph(lambda: tf1.losses.mean_squared_error(X, Y, reduction="avg"))


@pytest.mark.parametrize(
    "dtype, floating, integer, numpy_type",
    [
        (tf1.float32, True, False, np.float32),
        (tf1.bfloat16, True, False, None),
        (tf1.int32, False, True, np.int32),
        (tf1.bool, False, False, np.bool_),
    ],
)
def test_dtype_answers_tf1_questions(dtype, floating, integer, numpy_type):
    assert dtype.is_floating == floating and dtype.is_integer == integer
    if numpy_type is not None:
        assert dtype.as_numpy_dtype is numpy_type
    assert tf1.as_dtype(dtype.name) is dtype


def test_dtype_compares_equal_to_array_dtypes():
    assert tf1.cast(X, tf1.bfloat16).dtype == tf1.bfloat16
    assert np.zeros(2, np.float32).dtype == tf1.float32
    assert tf1.as_dtype(np.int32) == tf1.int32


def test_unknown_dtype_is_named():
    with pytest.raises(TypeError, match="Cannot convert 'complex7'"):
        tf1.as_dtype("complex7")


@pytest.mark.parametrize(
    "call, alternative",
    [
        (lambda: tf1.feature_column.sequence_numeric_column("x"), "padded_batch"),
        (lambda: tf1.where(X > 0), "where(condition, x, y)"),
        (lambda: tf1.boolean_mask(X, X > 0), "Multiply by the mask"),
    ],
    ids=["sequence_feature_column", "where", "boolean_mask"],
)
def test_unsupported_feature_fails_naming_the_alternative(call, alternative):
    with pytest.raises(NotImplementedError, match=re.escape(alternative)):
        call()


def test_summary_scalar_writes_in_a_host_call(tmp_path):
    from keras_tpu_estimator import summary

    with summary.record_summaries(str(tmp_path)):
        assert tf1.summary.scalar("loss", np.float32(0.5), step=3)
    assert summary.read_scalars(str(tmp_path))["loss"] == [(3, 0.5)]


def test_summary_inside_model_fn_says_to_use_host_call():
    with pytest.raises(RuntimeError, match="host_call"):
        jax.jit(lambda x: tf1.summary.scalar("loss", x))(np.float32(1.0))


def test_metrics_are_kte_metrics():
    import keras_tpu_estimator as kte

    assert tf1.metrics.accuracy is kte.metrics.accuracy and tf1.metrics.auc is kte.metrics.auc


def test_a_constant_on_the_left_of_an_operator_builds_and_trains():
    def model_fn(features, labels, mode, params):
        mask = tf1.ones([features.shape[0], 4]) * features  # TF1's order: constant first.
        logits = tf1.layers.dense(mask, 1)[:, 0]
        loss = tf1.reduce_mean(tf1.square(logits - labels))
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.01))

    model = kte.EstimatorModel(model_fn, train_batch_size=8)
    model.compile()
    x = np.ones((16, 4), "float32")
    model.fit((x, x.sum(1)), verbose=0)
    assert model.global_step == 2
