"""compat.v1: TF1's `IndexedSlices` gradient norm of gathered variables in `global_norm` / clipping."""

import jax.numpy as jnp
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1

VOCAB, DIM, BATCH, LENGTH = 7, 3, 4, 5
# Repeated ids: the un-summed rows and the summed dense gradient have different norms.
IDS = np.array([[1, 1, 2, 3, 1], [4, 4, 4, 0, 2], [1, 5, 5, 6, 1], [2, 2, 2, 2, 3]], "int32")
LABELS = np.array([[1.0], [-1.0], [0.5], [2.0]], "float32")
TABLE = np.random.default_rng(1).normal(size=(VOCAB, DIM)).astype("float32")
W = np.random.default_rng(2).normal(size=(DIM, 1)).astype("float32")
LR = 0.5


def _lookup(kind):
    return {
        "gather": lambda table, ids: tf1.gather(table, ids),
        "gather_axis0": lambda table, ids: tf1.gather(table, ids, axis=0),
        "embedding_lookup": lambda table, ids: tf1.nn.embedding_lookup(table, ids),
    }[kind]


def _fit(model_fn, steps=1):
    model = kte.EstimatorModel(model_fn, train_batch_size=BATCH, use_tpu=False)
    model.compile()
    model.fit(({"ids": IDS}, LABELS), epochs=steps, batch_size=BATCH, shuffle=False, verbose=0)
    return {path: np.asarray(v.value) for path, v in model.store.variables_by_name().items()}


def _model_fn(lookup, clip_norm=None, dense_use=False):
    """Sums the embeddings of each sequence and regresses; records the global norm."""

    def model_fn(features, labels, mode, params):
        table = tf1.get_variable("table", initializer=TABLE)
        w = tf1.get_variable("w", initializer=W)
        rows = lookup(table, features["ids"])
        hidden = tf1.reduce_sum(rows, axis=1)
        if dense_use:  # The table is also read densely (a tied output layer).
            hidden = hidden + tf1.reduce_sum(tf1.matmul(hidden, table, transpose_b=True), 1, keepdims=True)
        loss = tf1.reduce_mean(tf1.square(tf1.matmul(hidden, w) - labels))
        tvars = tf1.trainable_variables()
        grads = tf1.gradients(loss, tvars)
        norm = tf1.global_norm(grads)
        recorded = tf1.get_variable("norm", shape=(), trainable=False, initializer=tf1.zeros_initializer())
        tf1.assign(recorded, norm)
        if clip_norm is not None:
            grads, _ = tf1.clip_by_global_norm(grads, clip_norm=clip_norm)
        train_op = tf1.train.GradientDescentOptimizer(LR).apply_gradients(zip(grads, tvars))
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def _numpy_gradients(dense_use=False):
    """Float64 gradients: `(d table, d w, per-occurrence row cotangents, dense part of d table)`."""
    table, w, y = TABLE.astype("float64"), W.astype("float64"), LABELS.astype("float64")
    rows = table[IDS]  # [B, T, D]
    summed = rows.sum(1)
    if dense_use:
        extra = (summed @ table.T).sum(1, keepdims=True)  # [B, 1]
        hidden = summed + extra
    else:
        hidden = summed
    d_pred = 2.0 * (hidden @ w - y) / BATCH  # [B, 1]
    d_w = hidden.T @ d_pred
    d_hidden = d_pred @ w.T  # [B, D]
    d_table_dense = np.zeros_like(table)
    d_summed = d_hidden.copy()
    if dense_use:
        d_extra = d_hidden.sum(1, keepdims=True)  # [B, 1]: extra_b = sum_v summed_b . table_v
        d_summed = d_summed + d_extra * table.sum(0)
        d_table_dense = np.broadcast_to(d_extra.T @ summed, table.shape)
    d_rows = np.broadcast_to(d_summed[:, None, :], rows.shape)  # One row per occurrence.
    d_table = d_table_dense.copy()
    np.add.at(d_table, IDS.reshape(-1), d_rows.reshape(-1, DIM))
    return d_table, d_w, d_rows, d_table_dense


@pytest.mark.parametrize("kind", ["gather", "gather_axis0", "embedding_lookup"])
def test_global_norm_counts_gathered_rows_one_by_one(kind):
    d_table, d_w, d_rows, _ = _numpy_gradients()
    values = _fit(_model_fn(_lookup(kind)))
    rows_norm = np.sqrt(np.sum(d_rows**2) + np.sum(d_w**2))
    dense_norm = np.sqrt(np.sum(d_table**2) + np.sum(d_w**2))
    assert abs(rows_norm - dense_norm) > 0.05 * dense_norm  # The example tells them apart.
    np.testing.assert_allclose(values["norm"], rows_norm, rtol=1e-5)


def test_global_norm_of_a_table_read_densely_too_is_the_dense_norm():
    # TF1 aggregates a gather's IndexedSlices with a dense read into a dense gradient
    # (TF 2.21, graph mode, resource and ref variables alike: 558.4913).
    d_table, d_w, d_rows, d_dense = _numpy_gradients(dense_use=True)
    values = _fit(_model_fn(_lookup("gather"), dense_use=True))
    dense_norm = np.sqrt(np.sum(d_table**2) + np.sum(d_w**2))
    rows_norm = np.sqrt(np.sum(d_dense**2) + np.sum(d_rows**2) + np.sum(d_w**2))
    assert abs(rows_norm - dense_norm) > 0.05 * dense_norm
    np.testing.assert_allclose(values["norm"], dense_norm, rtol=1e-5)
    np.testing.assert_allclose(values["table"], TABLE - LR * d_table, rtol=1e-5, atol=1e-6)


def test_two_gathers_of_one_table_count_every_row():
    d_table, d_w, d_rows, _ = _numpy_gradients()

    def lookup(table, ids):  # Both halves of each sequence, gathered separately.
        return tf1.concat([tf1.gather(table, ids[:, :2]), tf1.nn.embedding_lookup(table, ids[:, 2:])], 1)

    values = _fit(_model_fn(lookup))
    np.testing.assert_allclose(values["norm"], np.sqrt(np.sum(d_rows**2) + np.sum(d_w**2)), rtol=1e-5)


def test_gather_along_another_axis_counts_densely():
    d_table, d_w, _, _ = _numpy_gradients()

    def lookup(table, ids):  # The same rows, gathered from the transpose along axis 1.
        return tf1.transpose(tf1.gather(tf1.transpose(table), ids, axis=1), [1, 2, 0])

    values = _fit(_model_fn(lookup))
    np.testing.assert_allclose(values["norm"], np.sqrt(np.sum(d_table**2) + np.sum(d_w**2)), rtol=1e-5)


def test_clipping_scales_the_dense_update_by_the_rows_norm():
    d_table, d_w, d_rows, _ = _numpy_gradients()
    rows_norm = np.sqrt(np.sum(d_rows**2) + np.sum(d_w**2))
    clip_norm = 0.5 * rows_norm
    values = _fit(_model_fn(_lookup("gather"), clip_norm=clip_norm))
    scale = clip_norm / rows_norm
    np.testing.assert_allclose(values["table"], TABLE - LR * scale * d_table, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(values["w"], W - LR * scale * d_w, rtol=1e-5, atol=1e-6)


def test_clipped_gradients_keep_their_rows_norm():
    d_table, d_w, d_rows, _ = _numpy_gradients()
    rows_norm = np.sqrt(np.sum(d_rows**2) + np.sum(d_w**2))

    def model_fn(features, labels, mode, params):
        table = tf1.get_variable("table", initializer=TABLE)
        w = tf1.get_variable("w", initializer=W)
        hidden = tf1.reduce_sum(tf1.gather(table, features["ids"]), axis=1)
        loss = tf1.reduce_mean(tf1.square(tf1.matmul(hidden, w) - labels))
        grads = tf1.gradients(loss, [table, w])
        clipped, _ = tf1.clip_by_global_norm(grads, clip_norm=0.25 * rows_norm)
        recorded = tf1.get_variable("norm", shape=(), trainable=False, initializer=tf1.zeros_initializer())
        tf1.assign(recorded, tf1.global_norm(clipped))
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=tf1.no_op())

    np.testing.assert_allclose(_fit(model_fn)["norm"], 0.25 * rows_norm, rtol=1e-5)


def test_gradients_of_a_gathered_table_are_dense_arrays():
    d_table, _, _, _ = _numpy_gradients()
    seen = []

    def model_fn(features, labels, mode, params):
        table = tf1.get_variable("table", initializer=TABLE)
        w = tf1.get_variable("w", initializer=W)
        hidden = tf1.reduce_sum(tf1.gather(table, features["ids"]), axis=1)
        loss = tf1.reduce_mean(tf1.square(tf1.matmul(hidden, w) - labels))
        (grad,) = tf1.gradients(loss, [table])
        seen.append(grad)
        # Plain JAX arithmetic on the gradient, then a hand-written update.
        tf1.assign(table, table - LR * jnp.asarray(grad))
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=tf1.no_op())

    values = _fit(model_fn)
    assert all(tuple(g.shape) == (VOCAB, DIM) for g in seen)
    np.testing.assert_allclose(values["table"], TABLE - LR * d_table, rtol=1e-5, atol=1e-6)


def test_gather_outside_training_is_a_plain_take():
    table = np.arange(12, dtype="float32").reshape(4, 3)
    np.testing.assert_array_equal(np.asarray(tf1.gather(table, [3, 0, 3])), table[[3, 0, 3]])
    np.testing.assert_array_equal(
        np.asarray(tf1.nn.embedding_lookup(table, np.array([[1], [2]]))), table[[[1], [2]]]
    )
