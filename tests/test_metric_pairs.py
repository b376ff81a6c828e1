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
def test_the_library_metrics_and_scalars_report_the_mean(metric):
    results = evaluate(lambda labels: {"label_mean": metric(labels)})
    assert results["label_mean"] == pytest.approx(LABELS.mean())
