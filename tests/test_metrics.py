"""Specification of `kte.metrics`: TF1 metric semantics as streaming Keras metrics.

Every metric function is run over three batches of different sizes, the way
the evaluation loop runs it (`update.factory()` once, then the update of every
batch), and must equal a numpy reference computed on all the data at once.
"""

import jax
import keras
import numpy as np
import pytest

from keras_tpu_estimator import metrics

BATCH_SIZES = (7, 5, 3)
NUM_CLASSES = 4  # labels use classes 0..2 only: class 3 is never seen


def _make_batch(rng, n):
    labels = rng.integers(0, 3, size=(n, 2))
    swap = rng.random((n, 2)) < 0.4
    probs = rng.random((n, 2)).astype("float32")
    vectors = rng.normal(size=(n, 3)).astype("float32")
    other = vectors + 0.5 * rng.normal(size=(n, 3)).astype("float32")
    labels_f = rng.normal(size=(n, 2)).astype("float32")
    labels_f[rng.random((n, 2)) < 0.2] = 0.0  # zero normalizers
    return {
        "labels": labels,  # int64 class ids
        "preds_cls": np.where(swap, rng.integers(0, 3, size=(n, 2)), labels),
        "preds_float": np.where(swap, 2.7, labels).astype("float32"),
        "labels_bin": rng.integers(0, 2, size=(n, 2)),
        # Nonzero is positive in TF1: 0.3 counts as a positive prediction.
        "preds_sparse": np.where(rng.random((n, 2)) < 0.4, 0.0, probs).astype("float32"),
        "probs": probs,
        "labels_f": labels_f,
        "preds_f": rng.normal(size=(n, 2)).astype("float32"),
        "unit_a": vectors / np.linalg.norm(vectors, axis=1, keepdims=True),
        "unit_b": other / np.linalg.norm(other, axis=1, keepdims=True),
        "logits": rng.normal(size=(n, 5)).astype("float32"),
        "label_ids": rng.integers(0, 5, size=(n,)),
        "w_elem": rng.random((n, 2)).astype("float32"),
        "w_row": rng.random((n, 1)).astype("float32"),
        "w_vec": rng.random((n,)).astype("float32"),
    }


def _make_batches():
    rng = np.random.default_rng(42)
    return [_make_batch(rng, n) for n in BATCH_SIZES]


@pytest.fixture
def batches():
    return _make_batches()


def _concat(batches):
    return {k: np.concatenate([b[k] for b in batches]) for k in batches[0]}


def _stream(updates):
    metric = updates[0].factory()
    for update in updates:
        metric.update_state(*update.args, **update.kwargs)
    return np.asarray(metric.result())


# ----------------------------------------------------------------------
# numpy references, computed on the concatenation of the batches.


def _w(w, shape):
    return np.ones(shape) if w is None else np.broadcast_to(w, shape).astype("float64")


def _wmean(values, w):
    values = np.asarray(values, "float64")
    weights = _w(w, values.shape)
    return np.sum(values * weights) / np.sum(weights)


def _counts(labels, preds, w):
    lab, pred = labels != 0, preds != 0
    weights = _w(w, lab.shape)
    return {
        "tp": np.sum(weights * (lab & pred)),
        "fp": np.sum(weights * (~lab & pred)),
        "tn": np.sum(weights * (~lab & ~pred)),
        "fn": np.sum(weights * (lab & ~pred)),
    }


def _curve_counts(labels, preds, w, thresholds):
    pos = (labels != 0).ravel()
    weights = _w(w, labels.shape).ravel()
    above = preds.ravel()[None, :] > np.asarray(thresholds)[:, None]
    tp = (above & pos) @ weights
    fp = (above & ~pos) @ weights
    fn = (~above & pos) @ weights
    tn = (~above & ~pos) @ weights
    return tp, fp, tn, fn


def _auc_reference(labels, preds, w, curve="ROC", num_thresholds=200):
    """TF1's `auc` with 'trapezoidal' summation, thresholds as TF1 spaces them."""
    eps = 1e-7
    inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    tp, fp, tn, fn = _curve_counts(labels, preds, w, [-eps] + inner + [1 + eps])
    recall = (tp + eps) / (tp + fn + eps)
    if curve == "ROC":
        x, y = fp / (fp + tn + eps), recall
    else:
        x, y = recall, (tp + eps) / (tp + fp + eps)
    return np.sum((x[:-1] - x[1:]) * (y[:-1] + y[1:]) / 2)


def _per_class(labels, preds, w, num_classes):
    weights = _w(w, labels.shape).ravel()
    labels, preds = labels.ravel(), preds.ravel()
    cm = np.zeros((num_classes, num_classes))
    np.add.at(cm, (labels, preds), weights)
    return cm


def _mean_per_class_accuracy(labels, preds, w, num_classes):
    cm = _per_class(labels, preds, w, num_classes)
    total = cm.sum(axis=1)
    acc = np.divide(np.diag(cm), total, out=np.zeros(num_classes), where=total > 0)
    return acc.mean()  # unseen classes count as 0


def _mean_iou(labels, preds, w, num_classes):
    cm = _per_class(labels, preds, w, num_classes)
    denominator = cm.sum(axis=0) + cm.sum(axis=1) - np.diag(cm)
    valid = denominator > 0
    return np.sum(np.diag(cm)[valid] / denominator[valid]) / valid.sum()


def _in_top_k(label_ids, logits, k):
    label_scores = logits[np.arange(len(label_ids)), label_ids]
    return (logits > label_scores[:, None]).sum(axis=1) < k


def _relative_errors(labels, preds, normalizer):
    safe = np.where(normalizer == 0, 1.0, normalizer)
    return np.where(normalizer == 0, 0.0, np.abs(labels - preds) / safe)


# Each case: (call(M, batch, weights) with M this module or tf.compat.v1.metrics,
#             reference(all_data, all_weights), the weights key).
CASES = {
    "accuracy": (
        lambda M, b, w: M.accuracy(b["labels"], b["preds_cls"], weights=w),
        lambda d, w: _wmean(d["labels"] == d["preds_cls"], w),
        "w_elem",
    ),
    "accuracy_casts_predictions_to_label_dtype": (
        lambda M, b, w: M.accuracy(b["labels"], b["preds_float"], weights=w),
        lambda d, w: _wmean(d["labels"] == d["preds_float"].astype("int64"), w),
        "w_row",
    ),
    "mean": (
        lambda M, b, w: M.mean(b["preds_f"], weights=w),
        lambda d, w: _wmean(d["preds_f"], w),
        "w_elem",
    ),
    "percentage_below": (
        lambda M, b, w: M.percentage_below(b["preds_f"], 0.25, weights=w),
        lambda d, w: _wmean(d["preds_f"] < 0.25, w),
        "w_row",
    ),
    "precision": (
        lambda M, b, w: M.precision(b["labels_bin"], b["preds_sparse"], weights=w),
        lambda d, w: (lambda c: c["tp"] / (c["tp"] + c["fp"]))(
            _counts(d["labels_bin"], d["preds_sparse"], w)),
        "w_elem",
    ),
    "recall": (
        lambda M, b, w: M.recall(b["labels_bin"], b["preds_sparse"], weights=w),
        lambda d, w: (lambda c: c["tp"] / (c["tp"] + c["fn"]))(
            _counts(d["labels_bin"], d["preds_sparse"], w)),
        "w_row",
    ),
    **{
        f"{kind}": (
            lambda M, b, w, kind=kind: getattr(M, kind)(
                b["labels_bin"], b["preds_sparse"], weights=w),
            lambda d, w, key=key: _counts(d["labels_bin"], d["preds_sparse"], w)[key],
            "w_elem",
        )
        for kind, key in [
            ("true_positives", "tp"),
            ("false_positives", "fp"),
            ("true_negatives", "tn"),
            ("false_negatives", "fn"),
        ]
    },
    "precision_at_thresholds": (
        lambda M, b, w: M.precision_at_thresholds(
            b["labels_bin"], b["probs"], [0.2, 0.5, 0.8], weights=w),
        lambda d, w: (lambda tp, fp, tn, fn: tp / (tp + fp + 1e-7))(
            *_curve_counts(d["labels_bin"], d["probs"], w, [0.2, 0.5, 0.8])),
        "w_elem",
    ),
    "recall_at_thresholds": (
        lambda M, b, w: M.recall_at_thresholds(
            b["labels_bin"], b["probs"], [0.2, 0.5, 0.8], weights=w),
        lambda d, w: (lambda tp, fp, tn, fn: tp / (tp + fn + 1e-7))(
            *_curve_counts(d["labels_bin"], d["probs"], w, [0.2, 0.5, 0.8])),
        "w_row",
    ),
    "auc_roc": (
        lambda M, b, w: M.auc(b["labels_bin"], b["probs"], weights=w),
        lambda d, w: _auc_reference(d["labels_bin"], d["probs"], w),
        "w_elem",
    ),
    "auc_pr_trapezoidal": (
        lambda M, b, w: M.auc(b["labels_bin"], b["probs"], weights=w, curve="PR",
                              num_thresholds=50),
        lambda d, w: _auc_reference(d["labels_bin"], d["probs"], w, "PR", 50),
        "w_row",
    ),
    "mean_squared_error": (
        lambda M, b, w: M.mean_squared_error(b["labels_f"], b["preds_f"], weights=w),
        lambda d, w: _wmean((d["labels_f"] - d["preds_f"]) ** 2, w),
        "w_elem",
    ),
    "root_mean_squared_error": (
        lambda M, b, w: M.root_mean_squared_error(b["labels_f"], b["preds_f"], weights=w),
        lambda d, w: np.sqrt(_wmean((d["labels_f"] - d["preds_f"]) ** 2, w)),
        "w_elem",
    ),
    "mean_absolute_error": (
        lambda M, b, w: M.mean_absolute_error(b["labels_f"], b["preds_f"], weights=w),
        lambda d, w: _wmean(np.abs(d["labels_f"] - d["preds_f"]), w),
        "w_row",
    ),
    "mean_relative_error": (
        lambda M, b, w: M.mean_relative_error(
            b["labels_f"], b["preds_f"], normalizer=b["labels_f"], weights=w),
        lambda d, w: _wmean(_relative_errors(d["labels_f"], d["preds_f"], d["labels_f"]), w),
        "w_elem",
    ),
    "mean_cosine_distance": (
        lambda M, b, w: M.mean_cosine_distance(b["unit_a"], b["unit_b"], dim=1, weights=w),
        lambda d, w: 1 - _wmean(np.sum(d["unit_a"] * d["unit_b"], axis=1, keepdims=True), w),
        "w_row",
    ),
    "mean_per_class_accuracy": (
        lambda M, b, w: M.mean_per_class_accuracy(
            b["labels"], b["preds_cls"], NUM_CLASSES, weights=w),
        lambda d, w: _mean_per_class_accuracy(d["labels"], d["preds_cls"], w, NUM_CLASSES),
        "w_elem",
    ),
    "mean_iou": (
        lambda M, b, w: M.mean_iou(b["labels"], b["preds_cls"], NUM_CLASSES, weights=w),
        lambda d, w: _mean_iou(d["labels"], d["preds_cls"], w, NUM_CLASSES),
        "w_elem",
    ),
    "recall_at_k": (
        lambda M, b, w: M.recall_at_k(b["label_ids"], b["logits"], k=2, weights=w),
        lambda d, w: _wmean(_in_top_k(d["label_ids"], d["logits"], 2), w),
        "w_vec",
    ),
    "recall_at_k_class_id": (
        lambda M, b, w: M.recall_at_k(b["label_ids"], b["logits"], k=2, class_id=1, weights=w),
        lambda d, w: _wmean(
            _in_top_k(d["label_ids"], d["logits"], 2)[d["label_ids"] == 1],
            None if w is None else w[d["label_ids"] == 1]),
        "w_vec",
    ),
}


def _updates(case, batches, weighted):
    call, _, weight_key = CASES[case]
    return [call(metrics, b, b[weight_key] if weighted else None) for b in batches]


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_streams_over_batches_like_tf1_on_all_data(case, weighted, batches):
    _, reference, weight_key = CASES[case]
    data = _concat(batches)
    expected = reference(data, data[weight_key] if weighted else None)
    result = _stream(_updates(case, batches, weighted))
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["accuracy", "auc_roc", "mean_per_class_accuracy",
                                  "recall_at_k", "root_mean_squared_error"])
def test_updates_inside_jax_jit_like_eagerly(case, batches):
    call, _, weight_key = CASES[case]
    batches = batches[:2]
    eager = _stream(_updates(case, batches, weighted=True))
    metric = call(metrics, batches[0], batches[0][weight_key]).factory()

    @jax.jit
    def step(metric_vars, batch):
        # metric_fn runs inside the compiled step, on traced arrays.
        update = call(metrics, batch, batch[weight_key])
        return metric.stateless_update_state(metric_vars, *update.args, **update.kwargs)

    metric_vars = [v.value for v in metric.variables]
    for batch in batches:
        metric_vars = step(metric_vars, batch)
    np.testing.assert_allclose(metric.stateless_result(metric_vars), eager, rtol=1e-6)


def test_auc_is_close_to_the_exact_roc_area(batches):
    data = _concat(batches)
    labels, scores = data["labels_bin"].ravel() != 0, data["probs"].ravel()
    # Exact ROC AUC: probability that a positive outranks a negative.
    pos, neg = scores[labels], scores[~labels]
    exact = np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :]))
    result = _stream([metrics.auc(b["labels_bin"], b["probs"]) for b in batches])
    np.testing.assert_allclose(result, exact, atol=1e-2)


# ----------------------------------------------------------------------
# Parity with the real tf.compat.v1.metrics.

TF1_PARITY = {
    **{case: CASES[case] for case in CASES},
    **{
        f"auc_{curve.lower()}_{method}": (
            lambda M, b, w, curve=curve, method=method: M.auc(
                b["labels_bin"], b["probs"], weights=w, curve=curve,
                summation_method=method, num_thresholds=30),
            None,
            "w_elem",
        )
        for curve in ("ROC", "PR")
        for method in ("careful_interpolation", "minoring", "majoring")
    },
}


@pytest.fixture(scope="module")
def tf1_values():
    """Every TF1_PARITY case run by TF1 itself: `{(case, weighted): value}`.

    One graph and one session for all of them, fed the same three batches.
    """
    tf = pytest.importorskip("tensorflow")
    if not hasattr(tf.compat.v1, "metrics"):
        pytest.skip("tf.compat.v1.metrics is not available in this TensorFlow")
    batches = _make_batches()
    with tf.Graph().as_default():
        placeholders = {
            key: tf.compat.v1.placeholder(tf.as_dtype(value.dtype), (None,) + value.shape[1:])
            for key, value in batches[0].items()
        }
        values, update_ops = {}, []
        for case, (call, _, weight_key) in TF1_PARITY.items():
            for weighted in (False, True):
                weights = placeholders[weight_key] if weighted else None
                value, update_op = call(tf.compat.v1.metrics, placeholders, weights)
                values[case, weighted] = value
                update_ops.append(update_op)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.local_variables_initializer())
            for batch in batches:
                session.run(update_ops, {placeholders[k]: v for k, v in batch.items()})
            return session.run(values)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("case", sorted(TF1_PARITY))
def test_matches_tf_compat_v1_metrics(tf1_values, case, weighted, batches):
    call, _, weight_key = TF1_PARITY[case]
    result = _stream([call(metrics, b, b[weight_key] if weighted else None) for b in batches])
    np.testing.assert_allclose(result, tf1_values[case, weighted], rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------
# The MetricPair and MetricUpdate contract.


def test_a_metric_function_returns_tf1s_value_and_update_op_pair():
    pair = metrics.mean(np.array([1.0, 2.0]))
    value, update_op = pair
    assert isinstance(pair, metrics.MetricPair)
    assert keras.ops.shape(value) == () and keras.ops.shape(update_op) == ()
    assert isinstance(pair.update, metrics.MetricUpdate)
    assert (pair.factory, pair.args, pair.kwargs) == tuple(pair.update)


def test_metric_update_is_an_immutable_description():
    update = metrics.mean(np.array([1.0, 2.0])).update
    assert isinstance(update, metrics.MetricUpdate)
    assert update._fields == ("factory", "args", "kwargs")
    assert isinstance(update.args, tuple) and isinstance(update.kwargs, dict)
    with pytest.raises(AttributeError):
        update.args = ()


def test_factory_creates_a_fresh_keras_metric_each_call():
    update = metrics.accuracy(np.array([1, 2]), np.array([1, 3]))
    first, second = update.factory(), update.factory()
    assert isinstance(first, keras.metrics.Metric)
    assert first is not second


@pytest.mark.parametrize("factory", [
    keras.metrics.CategoricalAccuracy,
    lambda: keras.metrics.TopKCategoricalAccuracy(k=2),
], ids=["class", "lambda"])
def test_keras_metric_streams_any_keras_metric(factory, batches):
    onehot = [np.eye(5)[b["label_ids"]] for b in batches]
    updates = [metrics.keras_metric(factory, y, b["logits"]) for y, b in zip(onehot, batches)]
    reference = factory()
    reference.update_state(np.concatenate(onehot), _concat(batches)["logits"])
    np.testing.assert_allclose(_stream(updates), reference.result(), rtol=1e-6)


def test_keras_metric_passes_keyword_arguments():
    update = metrics.keras_metric(keras.metrics.Mean, np.array([1.0, 3.0]),
                                  sample_weight=np.array([1.0, 0.0]))
    assert update.kwargs == {"sample_weight": update.kwargs["sample_weight"]}
    np.testing.assert_allclose(_stream([update]), 1.0)


@pytest.mark.parametrize("weights", [
    np.float32(2.0),
    np.array([1.0, 0.0, 3.0], "float32"),            # one per row: expanded
    np.array([[1.0], [0.0], [3.0]], "float32"),      # broadcast along rows
    np.array([[1.0, 2.0], [0.0, 1.0], [3.0, 0.5]], "float32"),
], ids=["scalar", "rank_minus_one", "column", "full"])
def test_weights_broadcast_to_the_values_like_tf1(weights):
    values = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "float32")
    w = np.broadcast_to(weights if weights.ndim != 1 else weights[:, None], values.shape)
    expected = np.sum(values * w) / np.sum(w)
    np.testing.assert_allclose(_stream([metrics.mean(values, weights=weights)]), expected,
                               rtol=1e-6)


def test_errors_average_over_every_element_not_per_row():
    labels = np.array([[0.0, 1.0], [0.0, 0.0]])
    predictions = np.array([[1.0, 1.0], [0.0, 0.0]])
    weights = np.array([[1.0, 0.0], [1.0, 1.0]])
    update = metrics.root_mean_squared_error(labels, predictions, weights=weights)
    np.testing.assert_allclose(_stream([update]), np.sqrt(1.0 / 3.0), rtol=1e-6)


def test_precision_counts_any_nonzero_prediction_as_positive():
    update = metrics.precision(np.array([1, 0, 1]), np.array([0.3, 0.2, 0.0]))
    np.testing.assert_allclose(_stream([update]), 0.5)


def test_at_thresholds_result_is_a_vector_even_for_one_threshold():
    update = metrics.precision_at_thresholds(np.array([1, 0]), np.array([0.9, 0.1]), [0.5])
    assert _stream([update]).shape == (1,)


def test_ignores_tf1_collections_and_name():
    update = metrics.accuracy(np.array([1]), np.array([1]), metrics_collections=["a"],
                              updates_collections=["b"], name="my_accuracy")
    np.testing.assert_allclose(_stream([update]), 1.0)


# ----------------------------------------------------------------------
# Bad arguments.

_L, _P = np.array([0, 1, 1]), np.array([0.1, 0.6, 0.9])

BAD_ARGUMENTS = [
    (lambda: metrics.keras_metric(keras.metrics.AUC()), TypeError, "not a metric instance"),
    (lambda: metrics.keras_metric("auc"), TypeError, "zero-argument callable"),
    (lambda: metrics.auc(_L, _P, curve="PRGAIN"), ValueError, "curve.*'PRGAIN'"),
    (lambda: metrics.auc(_L, _P, summation_method="simpson"), ValueError,
     "summation_method.*'simpson'"),
    (lambda: metrics.auc(_L, _P, num_thresholds=1), ValueError, "num_thresholds"),
    (lambda: metrics.auc(_L, _P, thresholds=[0.5, 2.0]), ValueError, r"thresholds.*\[0, 1\]"),
    (lambda: metrics.precision_at_thresholds(_L, _P, []), ValueError, "non-empty"),
    (lambda: metrics.recall_at_thresholds(_L, _P, ["x"]), ValueError, "thresholds"),
    (lambda: metrics.accuracy(np.zeros(3), np.zeros(4)), ValueError,
     r"labels.*\(3,\).*predictions.*\(4,\)"),
    (lambda: metrics.accuracy(None, _P), ValueError, "`labels` is required"),
    (lambda: metrics.mean(np.zeros((2, 4)), weights=np.ones((2, 3))), ValueError,
     r"weights.*\(2, 3\).*cannot be broadcast.*\(2, 4\)"),
    (lambda: metrics.mean_relative_error(_P, _P, normalizer=np.ones(2)), ValueError,
     "normalizer"),
    (lambda: metrics.mean_cosine_distance(np.ones((2, 3)), np.ones((2, 3)), dim=2),
     ValueError, "dim"),
    (lambda: metrics.mean_iou(_L, _L, num_classes=0), ValueError, "num_classes"),
    (lambda: metrics.mean_per_class_accuracy(_L, _L, num_classes=2.5), ValueError,
     "num_classes"),
    (lambda: metrics.recall_at_k(_L, np.ones((3, 4)), k=0), ValueError, "`k`"),
    (lambda: metrics.recall_at_k(_L, np.ones((3, 4)), k=5), ValueError, "number of classes"),
    (lambda: metrics.recall_at_k(_L, np.ones((3, 4)), k=1, class_id=4), ValueError,
     "class_id"),
    (lambda: metrics.recall_at_k(np.ones((3, 2)), np.ones((3, 4)), k=1),
     NotImplementedError, "several labels"),
    (lambda: metrics.recall_at_k(np.ones(2), np.ones((3, 4)), k=1), ValueError,
     "without its last dimension"),
]


@pytest.mark.parametrize("make, error, message", BAD_ARGUMENTS,
                         ids=[f"bad_{i}" for i in range(len(BAD_ARGUMENTS))])
def test_rejects_bad_arguments_with_a_clear_message(make, error, message):
    with pytest.raises(error, match=message):
        make()
