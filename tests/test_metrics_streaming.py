"""`compat.v1.contrib.metrics`: `tf.contrib.metrics`' streaming statistics.

TensorFlow 2 has no `tf.contrib`, so the reference is TF1's definition on all
the data at once: with `n` the summed weight and `C_xy = sum(w (x - mean_x)
(y - mean_y))` (weighted means), covariance `C_xy / (n - 1)` and Pearson's r
`C_xy / sqrt(C_xx C_yy)`, both NaN while `n <= 1`.
"""

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.metrics import values as values_lib

BATCH_SIZES = (5, 0, 3, 4)


def _batches(weights, seed=3):
    rng = np.random.default_rng(seed)
    batches = []
    for n in BATCH_SIZES:
        batch = {"predictions": rng.normal(size=n).astype("float32"),
                 "labels": rng.integers(0, 6, size=n).astype("float32")}  # STS-B's 0..5
        if weights == "mixed":
            batch["weights"] = rng.choice(np.array([0.0, 0.5, 1.0, 2.0], "float32"), size=n)
        elif weights == "zero":
            batch["weights"] = np.zeros(n, "float32")
        batches.append(batch)
    return batches


def reference(name, batches):
    data = {k: np.concatenate([b[k] for b in batches]).astype("float64") for k in batches[0]}
    x, y = data["predictions"], data["labels"]
    w = data.get("weights", np.ones_like(x))
    n = w.sum()
    if n <= 1:
        return np.nan
    dx, dy = x - (w * x).sum() / n, y - (w * y).sum() / n
    c_xy, c_xx, c_yy = (w * dx * dy).sum(), (w * dx * dx).sum(), (w * dy * dy).sum()
    if name == "streaming_covariance":
        return c_xy / (n - 1)
    return c_xy / np.sqrt(c_xx * c_yy)


def stream(name, batches, **kwargs):
    """The value after every batch's update, applied as the model applies it."""
    fn = getattr(tf1.contrib.metrics, name)
    metric = state = None
    for batch in batches:
        [update] = values_lib.metric_values(lambda **t: {name: fn(**t, **kwargs)}, batch).values()
        if metric is None:
            metric = update.factory()
            state = [v.value for v in metric.variables]
        state = metric.stateless_update_state(state, *update.args, **update.kwargs)
    for variable, value in zip(metric.variables, state):
        variable.assign(value)
    return np.asarray(metric.result())


@pytest.mark.parametrize("weights", ["mixed", "none", "zero"])
@pytest.mark.parametrize("name", ["streaming_pearson_correlation", "streaming_covariance"])
def test_streams_tf1s_statistic_over_batches(name, weights):
    batches = _batches(weights)
    np.testing.assert_allclose(stream(name, batches), reference(name, batches),
                               rtol=1e-5, equal_nan=True)


@pytest.mark.parametrize("name", ["streaming_pearson_correlation", "streaming_covariance"])
def test_is_nan_while_the_summed_weight_is_at_most_one(name):
    batches = _batches("none")[:1]
    batches[0] = {k: v[:1] for k, v in batches[0].items()}
    assert np.isnan(stream(name, batches))


def test_concat_keeps_every_row_in_order():
    batches = [{"values": np.arange(n * 2, dtype="float32").reshape(n, 2) + 10 * i}
               for i, n in enumerate(BATCH_SIZES)]
    np.testing.assert_array_equal(stream("streaming_concat", batches),
                                  np.concatenate([b["values"] for b in batches]))


def test_concat_drops_rows_past_max_size_as_tf1():
    batches = [{"values": np.arange(n, dtype="int32") + 10 * i} for i, n in enumerate(BATCH_SIZES)]
    np.testing.assert_array_equal(stream("streaming_concat", batches, max_size=6),
                                  np.concatenate([b["values"] for b in batches])[:6])


def test_concat_past_its_default_capacity_asks_for_max_size():
    wide = np.zeros((2, 1 << 20), "float32")  # Rows of 2**20 elements: one row fits.
    with pytest.raises(ValueError, match=r"streaming_concat.*2 rows.*max_size"):
        stream("streaming_concat", [{"values": wide}])


@pytest.mark.parametrize("arguments, error, match", [
    ({"values": np.ones((2, 3)), "axis": 1}, NotImplementedError, "axis=0"),
    ({"values": np.float32(1.0)}, ValueError, "rank >= 1"),
    ({"values": np.ones(3), "max_size": 0}, ValueError, "max_size"),
])
def test_concat_refuses_what_it_cannot_keep(arguments, error, match):
    with pytest.raises(error, match=match):
        tf1.contrib.metrics.streaming_concat(**arguments)


def albert_sts_b(per_example_loss, label_ids, logits, is_real_example):
    """ALBERT's STS-B metric_fn (classifier_utils.py), with `tf1` for `tf`."""
    concat1 = tf1.contrib.metrics.streaming_concat(logits)
    concat2 = tf1.contrib.metrics.streaming_concat(label_ids)
    pearson = tf1.contrib.metrics.streaming_pearson_correlation(
        logits, label_ids, weights=is_real_example)
    mse = tf1.metrics.mean_squared_error(label_ids, logits, weights=is_real_example)
    loss = tf1.metrics.mean(values=per_example_loss, weights=is_real_example)
    return {"pred": concat1, "label_ids": concat2, "pearson": pearson,
            "MSE": mse, "eval_loss": loss}


@pytest.mark.parametrize("loop", [1, 3], ids=["loop1", "loop3_masked"])
def test_albert_sts_b_metric_fn_reports_tf1s_values(loop):
    rng = np.random.default_rng(11)
    n = 37  # 4 batches of 8 and a short one.
    logits = rng.normal(size=n).astype("float32")
    labels = rng.integers(0, 6, size=n).astype("float32")
    is_real = (rng.random(n) > 0.2).astype("float32")

    def model_fn(features, labels, mode, params):
        w = kte.get_variable("w", shape=(), initializer="ones")
        logits = features["logits"] * w
        per_example_loss = keras.ops.square(logits - labels)
        return kte.TPUEstimatorSpec(
            mode, loss=keras.ops.mean(per_example_loss),
            eval_metrics=(albert_sts_b, [per_example_loss, labels, logits, features["is_real"]]))

    config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=loop))
    model = kte.EstimatorModel(model_fn, config=config, eval_batch_size=8)
    results = model.evaluate({"logits": logits, "is_real": is_real}, labels,
                             return_dict=True, verbose=0)
    everything = [{"predictions": logits, "labels": labels, "weights": is_real}]
    np.testing.assert_allclose(results["pearson"],
                               reference("streaming_pearson_correlation", everything), rtol=1e-5)
    np.testing.assert_array_equal(results["pred"], logits)
    np.testing.assert_array_equal(results["label_ids"], labels)
    squared = (labels - logits) ** 2
    np.testing.assert_allclose(results["MSE"], (squared * is_real).sum() / is_real.sum(),
                               rtol=1e-5)
