"""Writes `estimator_tf215.json`: what TF 2.15's `tf.estimator.Estimator` computes on a tiny model.

TensorFlow 2.21 no longer ships `tf.estimator`, so the reference numbers
come from TensorFlow 2.15 with `tensorflow-estimator` 2.15, once, into a
committed fixture that `tests/test_plain_estimator.py` reads:

    /tmp/venv215/bin/python tests/references/make_estimator_reference.py

The model is linear regression `y = x @ w + b` with `w` and `b` starting at
fixed values, trained by plain SGD; its `params` hold a `batch_size` (not
reserved in `tf.estimator.Estimator`) that `input_fn(params)` batches with.
The fixture records, for each scenario, what the test compares:

- `train`: 5 steps of batches of 4 (12 examples, repeated), then the
  variables' names and values and the global step;
- `evaluate`: 10 examples in batches of 4 (the last one short), all of them
  and with `steps=2`: `loss`, `mae` and `global_step`;
- `predict`: the 10 predictions;
- `train_and_evaluate_*`: `save_checkpoints_steps=3`, `max_steps=7`, and
  `throttle_secs` 0 or 600: the global step and `mae` of each evaluation (as
  an exporter sees it), whether it was the final export, and the returned
  metrics.
"""

import json
import os
import tempfile

import numpy as np

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "estimator_tf215.json")
W0 = [[0.1], [-0.2], [0.3]]
B0 = [0.05]
PARAMS = {"batch_size": 4, "learning_rate": 0.1}


def data(n, seed):
    """`n` examples (`x` [n, 3], `y` [n, 1]), seeded."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype("float32")
    y = (x @ np.array([[1.0], [2.0], [-1.0]], "float32") + 0.5).astype("float32")
    return x, y


def make_model_fn(tf, spec_class, mode_keys):
    """The model_fn, written against TF1 module `tf` (TensorFlow's or the library's)."""

    def model_fn(features, labels, mode, params):
        w = tf.get_variable("w", initializer=tf.constant(W0))
        b = tf.get_variable("b", initializer=tf.constant(B0))
        predictions = tf.matmul(features["x"], w) + b
        if mode == mode_keys.PREDICT:
            return spec_class(mode, predictions={"y": predictions})
        loss = tf.reduce_mean(tf.square(predictions - labels))
        metrics = {"mae": tf.metrics.mean_absolute_error(labels, predictions)}
        train_op = tf.train.GradientDescentOptimizer(params["learning_rate"]).minimize(
            loss, global_step=tf.train.get_global_step())
        return spec_class(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)

    return model_fn


def make_input_fn(tf, n, seed, repeat):
    x, y = data(n, seed)

    def input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        if repeat:
            dataset = dataset.repeat()
        return dataset.batch(params["batch_size"])

    return input_fn


def main():
    import tensorflow as tf

    estimator_lib = tf.estimator
    tf1 = tf.compat.v1
    model_fn = make_model_fn(tf1, estimator_lib.EstimatorSpec, estimator_lib.ModeKeys)
    train_input = make_input_fn(tf, 12, 1, repeat=True)
    eval_input = make_input_fn(tf, 10, 2, repeat=False)
    fixture = {}

    estimator = estimator_lib.Estimator(
        model_fn, model_dir=tempfile.mkdtemp(), params=dict(PARAMS),
        config=estimator_lib.RunConfig(tf_random_seed=1))
    estimator.train(train_input, max_steps=5)
    fixture["train"] = {
        "variables": {name: estimator.get_variable_value(name).tolist()
                      for name in ("w", "b")},
        "global_step": int(estimator.get_variable_value("global_step")),
    }
    results = estimator.evaluate(eval_input)
    fixture["evaluate"] = {k: float(v) for k, v in results.items()}
    results = estimator.evaluate(eval_input, steps=2)
    fixture["evaluate_steps_2"] = {k: float(v) for k, v in results.items()}
    fixture["predict"] = [p["y"].tolist() for p in estimator.predict(eval_input)]

    class Recorder(estimator_lib.Exporter):
        def __init__(self):
            self.seen = []

        @property
        def name(self):
            return "recorder"

        def export(self, estimator, export_path, checkpoint_path, eval_result,
                   is_the_final_export):
            self.seen.append([int(eval_result["global_step"]), float(eval_result["mae"]),
                              bool(is_the_final_export)])
            return export_path

    for throttle in (0, 600):
        recorder = Recorder()
        estimator = estimator_lib.Estimator(
            model_fn, model_dir=tempfile.mkdtemp(), params=dict(PARAMS),
            config=estimator_lib.RunConfig(save_checkpoints_steps=3, tf_random_seed=1))
        metrics, _ = estimator_lib.train_and_evaluate(
            estimator,
            estimator_lib.TrainSpec(train_input, max_steps=7),
            estimator_lib.EvalSpec(eval_input, steps=None, exporters=[recorder],
                                   throttle_secs=throttle, start_delay_secs=0))
        fixture[f"train_and_evaluate_throttle_{throttle}"] = {
            "evaluations": recorder.seen,
            "metrics": {k: float(v) for k, v in metrics.items()},
        }
    with open(FIXTURE, "w") as f:
        json.dump(fixture, f, indent=1, sort_keys=True)
    print(json.dumps(fixture, indent=1))


if __name__ == "__main__":
    main()
