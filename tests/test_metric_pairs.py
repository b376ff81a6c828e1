"""TF1 `(value, update_op)` metric pairs from `metric_fn`: refused with a clear error,
never reported as a wrong number; the library's own metric functions keep working."""

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1

BATCH = 8

# Labels 0, 1, 2, 3 in four batches of 8: their mean over the evaluation is 1.5.
LABELS = np.repeat(np.arange(4, dtype="float32"), BATCH)
FEATURES = np.ones((len(LABELS), 2), "float32")


def tf1_style_mean(values):
    """What TF1 programs write by hand: a `(value, update_op)` pair of plain tensors."""
    value = keras.ops.mean(values)
    return value, value


def evaluate(metric_fn, estimator_spec=False):
    """Evaluates a model whose metric_fn(labels) is `metric_fn`, in batches of BATCH."""

    def model_fn(features, labels, mode, params):
        w = kte.get_variable("w", shape=(), initializer="ones")
        loss = keras.ops.mean(features) * w
        if estimator_spec:
            return kte.EstimatorSpec(mode, loss=loss, eval_metric_ops=metric_fn(labels))
        return kte.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels]))

    model = kte.EstimatorModel(model_fn, eval_batch_size=BATCH)
    return model.evaluate(FEATURES, LABELS, return_dict=True, verbose=0)


@pytest.mark.parametrize("estimator_spec", [False, True], ids=["eval_metrics", "eval_metric_ops"])
@pytest.mark.parametrize("pair", [tf1_style_mean, lambda v: [keras.ops.mean(v), keras.ops.sum(v)]],
                         ids=["tuple", "list"])
def test_a_pair_of_plain_tensors_is_refused_naming_the_metric(estimator_spec, pair):
    with pytest.raises(TypeError, match=r"'label_mean'.*\(value, update_op\).*kte\.metrics"):
        evaluate(lambda labels: {"label_mean": pair(labels)}, estimator_spec)


@pytest.mark.parametrize("value", ["0.5", None, {"a": 1.0}, keras.metrics.Mean()],
                         ids=["str", "none", "dict", "metric_instance"])
def test_a_value_that_is_no_tensor_is_refused_naming_the_metric(value):
    with pytest.raises(TypeError, match=r"metric_fn returned 'odd' = "):
        evaluate(lambda labels: {"odd": value})


def test_metric_names_must_be_strings():
    with pytest.raises(TypeError, match=r"metric_fn must return a dict of metric name \(a str\)"
                       r".*key 3"):
        evaluate(lambda labels: {3: keras.ops.mean(labels)})


@pytest.mark.parametrize(
    "metric",
    [
        lambda labels: keras.ops.mean(labels),
        lambda labels: kte.metrics.mean(labels),
        lambda labels: tf1.metrics.mean(labels),
        lambda labels: kte.metrics.keras_metric(keras.metrics.Mean, labels),
    ],
    ids=["scalar", "kte.metrics.mean", "compat.v1.metrics.mean", "keras_metric"],
)
@pytest.mark.parametrize("estimator_spec", [False, True], ids=["eval_metrics", "eval_metric_ops"])
def test_the_library_metrics_and_scalars_report_the_mean(metric, estimator_spec):
    results = evaluate(lambda labels: {"label_mean": metric(labels)}, estimator_spec)
    assert results["label_mean"] == pytest.approx(LABELS.mean())


# ----------------------------------------------------------------------
# Metrics computed from other metrics' values, as TF1 programs write them.
# Each metric_fn is written once against a module `M`: the library's
# compat.v1 or TensorFlow's own tf.compat.v1, and both must give one number.


def albert_cola(M):
    """ALBERT's CoLA metric_fn (classifier_utils.py), verbatim but for `M`."""

    def metric_fn(per_example_loss, label_ids, logits, is_real_example):
        predictions = M.argmax(logits, axis=-1, output_type=M.int32)
        tp, tp_op = M.metrics.true_positives(
            labels=label_ids, predictions=predictions, weights=is_real_example)
        tn, tn_op = M.metrics.true_negatives(
            labels=label_ids, predictions=predictions, weights=is_real_example)
        fp, fp_op = M.metrics.false_positives(
            labels=label_ids, predictions=predictions, weights=is_real_example)
        fn, fn_op = M.metrics.false_negatives(
            labels=label_ids, predictions=predictions, weights=is_real_example)
        mcc = M.div_no_nan(
            tp * tn - fp * fn,
            M.pow((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn), 0.5))
        accuracy = M.metrics.accuracy(
            labels=label_ids, predictions=predictions, weights=is_real_example)
        loss = M.metrics.mean(values=per_example_loss, weights=is_real_example)
        return {"matthew_corr": (mcc, M.group(tp_op, tn_op, fp_op, fn_op)),
                "eval_accuracy": accuracy, "eval_loss": loss}

    return metric_fn


def f1_from_precision_and_recall(M):
    def metric_fn(per_example_loss, label_ids, logits, is_real_example):
        predictions = M.argmax(logits, axis=-1, output_type=M.int32)
        precision, precision_op = M.metrics.precision(label_ids, predictions, is_real_example)
        recall, recall_op = M.metrics.recall(label_ids, predictions, is_real_example)
        f1 = 2 * precision * recall / (precision + recall)
        return {"f1": (f1, M.group(precision_op, recall_op)),
                "precision": (precision, precision_op),  # a metric's own pair, repacked
                "recall": [recall, recall_op]}

    return metric_fn


def ratio_of_means(M):
    """A value from two means and a constant, with a metric not reported by itself."""

    def metric_fn(per_example_loss, label_ids, logits, is_real_example):
        loss, loss_op = M.metrics.mean(per_example_loss, weights=is_real_example)
        logit, logit_op = M.metrics.mean(logits)
        return {"ratio": (M.div_no_nan(loss, logit + 10.0), M.group(loss_op, logit_op))}

    return metric_fn


DERIVED = {"albert_cola": albert_cola, "f1": f1_from_precision_and_recall,
           "ratio_of_means": ratio_of_means}
EVAL_BATCH = 8
N_EXAMPLES = 37  # 4 batches of 8 and a short one of 5.


def _classifier_data():
    rng = np.random.default_rng(7)
    # ReLU-like logits: many ties, so argmax's first-index rule matters too.
    logits = np.maximum(rng.integers(-1, 3, size=(N_EXAMPLES, 2)), 0).astype("float32")
    labels = rng.integers(0, 2, size=N_EXAMPLES).astype("int32")
    is_real = (rng.random(N_EXAMPLES) > 0.25).astype("float32")
    return logits, labels, is_real


def _metric_fn_model_fn(make_metric_fn):
    def model_fn(features, labels, mode, params):
        w = kte.get_variable("w", shape=(), initializer="ones")
        logits = features["logits"] * w
        per_example_loss = keras.ops.sum(logits, axis=-1)
        loss = keras.ops.mean(per_example_loss)
        tensors = [per_example_loss, labels, logits, features["is_real"]]
        return kte.TPUEstimatorSpec(mode, loss=loss,
                                    eval_metrics=(make_metric_fn(tf1), tensors))

    return model_fn


def tensorflow_metrics(make_metric_fn, logits, labels, is_real, batch):
    """TF1's values of `make_metric_fn(tf.compat.v1)`, streamed over `batch`-sized batches."""
    import tensorflow as tf

    v1 = tf.compat.v1
    graph = v1.Graph()
    with graph.as_default():
        ph = [v1.placeholder(tf.float32, [None, 2]), v1.placeholder(tf.int32, [None]),
              v1.placeholder(tf.float32, [None])]
        results = make_metric_fn(v1)(tf.reduce_sum(ph[0], -1), ph[1], ph[0], ph[2])
        values = {name: value for name, (value, _) in results.items()}
        update = tf.group(*[op for _, op in results.values()])
        with v1.Session(graph=graph) as session:
            session.run(v1.local_variables_initializer())
            for start in range(0, len(labels), batch):
                rows = slice(start, start + batch)
                session.run(update, dict(zip(ph, (logits[rows], labels[rows], is_real[rows]))))
            return session.run(values)


@pytest.mark.parametrize("loop", [1, 3], ids=["loop1", "loop3_masked"])
@pytest.mark.parametrize("case", sorted(DERIVED))
def test_a_metric_from_metric_values_reports_tensorflows_value_after_the_last_update(case, loop):
    logits, labels, is_real = _classifier_data()
    config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=loop))
    model = kte.EstimatorModel(_metric_fn_model_fn(DERIVED[case]), config=config,
                               eval_batch_size=EVAL_BATCH)
    results = model.evaluate({"logits": logits, "is_real": is_real}, labels,
                             return_dict=True, verbose=0)
    expected = tensorflow_metrics(DERIVED[case], logits, labels, is_real, EVAL_BATCH)
    for name, value in expected.items():
        np.testing.assert_allclose(results[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("estimator_spec", [False, True], ids=["eval_metrics", "eval_metric_ops"])
def test_a_tf1_metric_unpacked_and_repacked_reports_its_value(estimator_spec):
    def metric_fn(labels):
        mean, mean_op = tf1.metrics.mean(labels)
        return {"label_mean": (mean, mean_op)}

    results = evaluate(metric_fn, estimator_spec)
    assert results["label_mean"] == pytest.approx(LABELS.mean())


def test_a_pair_of_plain_tensors_is_refused_beside_tf1_metrics():
    def metric_fn(labels):
        return {"accuracy": tf1.metrics.accuracy(labels, labels),
                "label_mean": tf1_style_mean(labels)}

    with pytest.raises(TypeError, match=r"'label_mean'.*\(value, update_op\)"):
        evaluate(metric_fn)


def test_a_tf1_metric_value_read_in_model_fn_for_eval_metric_ops_is_refused():
    # eval_metric_ops are computed in model_fn, once per batch: a value derived there
    # cannot be recomputed from the final metric values, so it is refused, not averaged.
    def metric_ops(labels):
        total, total_op = tf1.metrics.mean(labels)
        return {"double": (2.0 * total, total_op)}

    with pytest.raises(TypeError, match=r"'double'.*metric_fn"):
        evaluate(metric_ops, estimator_spec=True)


def test_a_metric_fn_that_creates_other_metrics_on_a_later_call_is_an_error():
    calls = []

    def metric_fn(labels):
        calls.append(None)
        make = tf1.metrics.mean if len(calls) == 1 else tf1.metrics.percentage_below
        value, update_op = make(labels, 1.0) if make is tf1.metrics.percentage_below else make(
            labels)
        return {"twice": (2.0 * value, update_op)}

    with pytest.raises(RuntimeError, match=r"percentage_below.*same metrics, in the same order"):
        evaluate(metric_fn)
