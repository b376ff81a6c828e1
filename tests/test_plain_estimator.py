"""`kte.Estimator` and `kte.train_and_evaluate` against TF 2.15's `tf.estimator`.

The fixture `references/estimator_tf215.json` holds what TensorFlow 2.15's
`tf.estimator.Estimator` computed for the same `model_fn` and inputs
(`references/make_estimator_reference.py`, which the test imports to run
that very `model_fn` on `keras_tpu_estimator.compat.v1`).
"""

import importlib.util
import json
import os

import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
from keras_tpu_estimator import convert
from keras_tpu_estimator.compat import v1 as tf1

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "make_estimator_reference", os.path.join(HERE, "references", "make_estimator_reference.py"))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)
with open(ref.FIXTURE) as _f:
    FIXTURE = json.load(_f)

model_fn = ref.make_model_fn(tf1, kte.EstimatorSpec, kte.ModeKeys)
train_input_fn = ref.make_input_fn(tf, 12, 1, repeat=True)
eval_input_fn = ref.make_input_fn(tf, 10, 2, repeat=False)  # batches of 4, 4, 2


def _estimator(tmp_path, **config):
    return kte.Estimator(model_fn, model_dir=str(tmp_path), params=dict(ref.PARAMS),
                         config=kte.RunConfig(tf_random_seed=1, **config))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    estimator = _estimator(tmp_path_factory.mktemp("plain"))
    estimator.train(train_input_fn, max_steps=5)
    return estimator


def test_training_gives_tensorflows_variables(trained):
    expected = FIXTURE["train"]
    assert trained.get_variable_names() == ["b", "global_step", "w"]
    for name, value in expected["variables"].items():
        np.testing.assert_allclose(trained.get_variable_value(name), value, rtol=1e-5)
    assert trained.get_variable_value("global_step") == expected["global_step"]


def test_params_reach_model_fn_and_input_fn_as_given(trained):
    assert trained.params == ref.PARAMS  # `batch_size` is the user's, not reserved


def test_evaluate_of_equal_batches_gives_tensorflows_results(trained):
    results = trained.evaluate(eval_input_fn, steps=2)
    expected = FIXTURE["evaluate_steps_2"]
    assert results["global_step"] == expected["global_step"]
    np.testing.assert_allclose([results["loss"], results["mae"]],
                               [expected["loss"], expected["mae"]], rtol=1e-5)


def test_evaluate_counts_the_short_last_batch_per_example(trained):
    results = trained.evaluate(eval_input_fn)
    expected = FIXTURE["evaluate"]
    np.testing.assert_allclose(results["mae"], expected["mae"], rtol=1e-5)
    # TensorFlow's `loss` is the mean of the per-batch losses (the short
    # batch of 2 weighs as much as one of 4); here it is the mean over the
    # examples, the loss of the whole evaluation set.
    x, y = ref.data(10, 2)
    predictions = np.asarray(FIXTURE["predict"])
    np.testing.assert_allclose(results["loss"], np.mean((predictions - y) ** 2), rtol=1e-5)
    batch_means = [np.mean((predictions[i:i + 4] - y[i:i + 4]) ** 2) for i in (0, 4, 8)]
    np.testing.assert_allclose(expected["loss"], np.mean(batch_means), rtol=1e-5)


def test_predict_gives_tensorflows_predictions_for_every_example(trained):
    predictions = [p["y"] for p in trained.predict(eval_input_fn)]
    np.testing.assert_allclose(np.asarray(predictions), FIXTURE["predict"], rtol=1e-5)


def test_export_saved_model_serves_tensorflows_predictions(trained, tmp_path):
    receiver_fn = kte.export.build_raw_serving_input_receiver_fn(
        {"x": tf.TensorSpec([None, 3], tf.float32, name="x")})
    path = trained.export_saved_model(str(tmp_path), receiver_fn)
    served = tf.saved_model.load(path.decode()).signatures["serving_default"]
    x, _ = ref.data(10, 2)
    np.testing.assert_allclose(served(x=tf.constant(x))["y"], FIXTURE["predict"], rtol=1e-5)


class Recorder(kte.Exporter):
    def __init__(self):
        self.seen = []

    @property
    def name(self):
        return "recorder"

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        assert export_path == os.path.join(estimator.model_dir, "export", "recorder")
        self.seen.append([eval_result["global_step"], eval_result["mae"], is_the_final_export])
        return export_path


@pytest.mark.parametrize("throttle_secs", [0, 600])
def test_train_and_evaluate_evaluates_after_checkpoints_as_tensorflow(tmp_path, throttle_secs):
    expected = FIXTURE[f"train_and_evaluate_throttle_{throttle_secs}"]
    recorder = Recorder()
    estimator = _estimator(tmp_path, save_checkpoints_steps=3)
    metrics, exports = kte.train_and_evaluate(
        estimator, kte.TrainSpec(train_input_fn, max_steps=7),
        kte.EvalSpec(eval_input_fn, steps=None, exporters=recorder, throttle_secs=throttle_secs))
    # (global step, mae, is_the_final_export) of each evaluation.
    assert [(s[0], s[2]) for s in recorder.seen] == [(e[0], e[2]) for e in expected["evaluations"]]
    np.testing.assert_allclose([s[1] for s in recorder.seen],
                               [e[1] for e in expected["evaluations"]], rtol=1e-5)
    assert metrics["global_step"] == expected["metrics"]["global_step"]
    np.testing.assert_allclose(metrics["mae"], expected["metrics"]["mae"], rtol=1e-5)
    assert exports == [os.path.join(estimator.model_dir, "export", "recorder")] * len(
        recorder.seen)


def test_a_model_fn_without_labels_given_labels_fails_as_in_tensorflow(tmp_path):
    def features_only(features, mode):
        return kte.EstimatorSpec(mode, predictions=features["x"])

    estimator = kte.Estimator(features_only, model_dir=str(tmp_path), params=dict(ref.PARAMS))
    with pytest.raises(ValueError, match="model_fn does not take labels, but input_fn returns"):
        estimator.train(train_input_fn, steps=1)


@pytest.mark.parametrize("make, error, message", [
    (lambda: kte.Estimator(lambda features, foo: None), ValueError, "not expected args: \\['foo'\\]"),
    (lambda: kte.Estimator(model_fn, params=[1]), ValueError, "`params` must be None or a dict"),
    (lambda: kte.Estimator(model_fn, config={"a": 1}), ValueError, "`config` must be a `kte.RunConfig`"),
    (lambda: kte.TrainSpec(train_input_fn, max_steps=0), ValueError, "Must specify max_steps > 0, given: 0"),
    (lambda: kte.TrainSpec("data"), TypeError, "`input_fn` must be callable, given: 'data'"),
    (lambda: kte.EvalSpec(eval_input_fn, steps=-1), ValueError, "Must specify steps > 0, given: -1"),
    (lambda: kte.EvalSpec(eval_input_fn, name=3), TypeError, "`name` must be string, given: 3"),
    (lambda: kte.EvalSpec(eval_input_fn, throttle_secs=-1), ValueError,
     "Must specify throttle_secs >= 0, given: -1"),
    (lambda: kte.EvalSpec(eval_input_fn, exporters=[Recorder(), Recorder()]), ValueError,
     "`exporters` must have unique"),
    (lambda: kte.EvalSpec(eval_input_fn, exporters=[object()]), TypeError,
     "`exporters` must be Exporters"),
    (lambda: kte.train_and_evaluate(object(), kte.TrainSpec(train_input_fn),
                                    kte.EvalSpec(eval_input_fn)), TypeError,
     "`estimator` must be a kte.Estimator or kte.TPUEstimator"),
])
def test_bad_arguments_are_refused(make, error, message):
    with pytest.raises(error, match=message):
        make()


@pytest.mark.parametrize("tf_name, kte_name", [
    ("tf.estimator.Estimator(model_fn)", "kte.Estimator(model_fn)"),
    ("tf.compat.v1.estimator.Estimator(model_fn)", "kte.Estimator(model_fn)"),
    ("tf.estimator.train_and_evaluate(e, t, v)", "kte.train_and_evaluate(e, t, v)"),
    ("tf.estimator.TrainSpec(f, max_steps=3)", "kte.TrainSpec(f, max_steps=3)"),
    ("tf.estimator.EvalSpec(f, throttle_secs=0)", "kte.EvalSpec(f, throttle_secs=0)"),
])
def test_the_converter_maps_the_estimator_names_to_kte(tf_name, kte_name):
    result = convert.convert_source(f"import tensorflow as tf\nx = {tf_name}\n")
    assert f"x = {kte_name}" in result.source
    assert result.errors == []
