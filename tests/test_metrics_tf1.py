"""Every `compat.v1.metrics` function against TensorFlow's `tf.compat.v1.metrics`.

Each case streams the same batches through both: TensorFlow's update op in a
graph session, the library's metric as the model applies it (the update of
every batch's `MetricPair`, stateless, the result read after the last).
The batches have ties (equal logits, predictions on the thresholds), an
empty batch in the middle, and weights with zeros; a second input weighs
every example 0, a third has no weights.
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.metrics import values as values_lib

BATCH_SIZES = (5, 0, 3, 4)
NUM_CLASSES = 4


def _binary(rng, n):
    return rng.integers(0, 2, size=n).astype("int32")


def _bool_cast(rng, n):
    return rng.integers(0, 3, size=n).astype("int32")  # 2 is True too.


def _probabilities(rng, n):
    return rng.integers(0, 11, size=n).astype("float32") / 10  # 0.0, 0.1, ..., 1.0: on thresholds.


def _classes(rng, n):
    return rng.integers(0, NUM_CLASSES, size=n).astype("int32")


def _classes64(rng, n):
    return _classes(rng, n).astype("int64")  # What TF's recall_at_k takes.


def _tied_logits(rng, n):
    return np.maximum(rng.integers(-2, 2, size=(n, NUM_CLASSES)), 0).astype("float32")  # ReLU ties.


def _top_ids(rng, n):
    return np.argsort(-_tied_logits(rng, n), axis=-1, kind="stable")[:, :2].astype("int64")


def _fixed_tensor(rng, n):
    return rng.integers(-3, 4, size=(2, 3)).astype("float32")  # One shape for every batch.


def _fixed_weights(rng, n):
    return rng.choice(np.array([0.0, 0.5, 2.0], "float32"), size=(2, 1))


def _floats(rng, n):
    return rng.integers(-3, 4, size=n).astype("float32") / 2  # Zeros, and values tied at 0.


def _unit_vectors(rng, n):
    v = rng.normal(size=(n, 3)).astype("float32")
    return v / np.linalg.norm(v, axis=1, keepdims=True)


# (name, {argument: generator(rng, batch_size)}, constant keyword arguments)
CASES = [
    ("accuracy", {"labels": _classes, "predictions": _classes}, {}),
    ("mean", {"values": _floats}, {}),
    ("percentage_below", {"values": _floats}, {"threshold": 0.0}),
    ("precision", {"labels": _binary, "predictions": _bool_cast}, {}),
    ("recall", {"labels": _binary, "predictions": _bool_cast}, {}),
    ("true_positives", {"labels": _binary, "predictions": _bool_cast}, {}),
    ("false_positives", {"labels": _binary, "predictions": _bool_cast}, {}),
    ("true_negatives", {"labels": _binary, "predictions": _bool_cast}, {}),
    ("false_negatives", {"labels": _binary, "predictions": _bool_cast}, {}),
    ("precision_at_thresholds", {"labels": _binary, "predictions": _probabilities},
     {"thresholds": [0.0, 0.3, 0.5, 1.0]}),
    ("recall_at_thresholds", {"labels": _binary, "predictions": _probabilities},
     {"thresholds": [0.0, 0.3, 0.5, 1.0]}),
    ("auc", {"labels": _binary, "predictions": _probabilities}, {}),
    ("auc", {"labels": _binary, "predictions": _probabilities}, {"num_thresholds": 11}),
    ("auc", {"labels": _binary, "predictions": _probabilities},
     {"summation_method": "careful_interpolation"}),
    ("auc", {"labels": _binary, "predictions": _probabilities}, {"summation_method": "minoring"}),
    ("auc", {"labels": _binary, "predictions": _probabilities}, {"summation_method": "majoring"}),
    ("auc", {"labels": _binary, "predictions": _probabilities}, {"curve": "PR"}),
    ("auc", {"labels": _binary, "predictions": _probabilities},
     {"curve": "PR", "summation_method": "careful_interpolation"}),
    ("auc", {"labels": _binary, "predictions": _probabilities},
     {"curve": "PR", "summation_method": "minoring"}),
    ("auc", {"labels": _binary, "predictions": _probabilities},
     {"curve": "PR", "summation_method": "majoring"}),
    ("auc", {"labels": _binary, "predictions": _probabilities},
     {"thresholds": [0.25, 0.5, 0.75]}),
    ("mean_squared_error", {"labels": _floats, "predictions": _floats}, {}),
    ("root_mean_squared_error", {"labels": _floats, "predictions": _floats}, {}),
    ("mean_absolute_error", {"labels": _floats, "predictions": _floats}, {}),
    ("mean_relative_error", {"labels": _floats, "predictions": _floats, "normalizer": _floats}, {}),
    ("mean_cosine_distance", {"labels": _unit_vectors, "predictions": _unit_vectors}, {"dim": 1}),
    ("mean_per_class_accuracy", {"labels": _classes, "predictions": _classes},
     {"num_classes": NUM_CLASSES}),
    ("mean_iou", {"labels": _classes, "predictions": _classes}, {"num_classes": NUM_CLASSES}),
    ("recall_at_k", {"labels": _classes64, "predictions": _tied_logits}, {"k": 1}),
    ("recall_at_k", {"labels": _classes64, "predictions": _tied_logits}, {"k": 2}),
    ("recall_at_k", {"labels": _classes64, "predictions": _tied_logits}, {"k": 2, "class_id": 1}),
    ("precision_at_k", {"labels": _classes64, "predictions": _tied_logits}, {"k": 1}),
    ("precision_at_k", {"labels": _classes64, "predictions": _tied_logits}, {"k": 2}),
    ("precision_at_k", {"labels": _classes64, "predictions": _tied_logits},
     {"k": 2, "class_id": 0}),
    ("sparse_precision_at_k", {"labels": _classes64, "predictions": _tied_logits}, {"k": 2}),
    ("average_precision_at_k", {"labels": _classes64, "predictions": _tied_logits}, {"k": 1}),
    ("average_precision_at_k", {"labels": _classes64, "predictions": _tied_logits}, {"k": 3}),
    ("sparse_average_precision_at_k", {"labels": _classes64, "predictions": _tied_logits},
     {"k": 2}),
    ("recall_at_top_k", {"labels": _classes64, "predictions_idx": _top_ids}, {}),
    ("recall_at_top_k", {"labels": _classes64, "predictions_idx": _top_ids},
     {"k": 1, "class_id": 2}),
    ("precision_at_top_k", {"labels": _classes64, "predictions_idx": _top_ids}, {}),
    ("precision_at_top_k", {"labels": _classes64, "predictions_idx": _top_ids},
     {"k": 2, "class_id": 0}),
    *[(f"{count}_at_thresholds", {"labels": _binary, "predictions": _probabilities},
       {"thresholds": [0.0, 0.3, 0.5, 1.0]})
      for count in ("true_positives", "false_positives", "true_negatives", "false_negatives")],
    ("sensitivity_at_specificity", {"labels": _binary, "predictions": _probabilities},
     {"specificity": 0.5}),
    ("sensitivity_at_specificity", {"labels": _binary, "predictions": _probabilities},
     {"specificity": 0.8, "num_thresholds": 11}),
    ("specificity_at_sensitivity", {"labels": _binary, "predictions": _probabilities},
     {"sensitivity": 0.5}),
    ("specificity_at_sensitivity", {"labels": _binary, "predictions": _probabilities},
     {"sensitivity": 0.3, "num_thresholds": 11}),
    # TF1's mean_tensor takes one static shape: every batch has it, none is empty.
    ("mean_tensor", {"values": _fixed_tensor, "weights": _fixed_weights}, {}),
]


def _weights_mixed(rng, n):
    return rng.choice(np.array([0.0, 0.5, 1.0, 2.0], "float32"), size=n)


WEIGHTS = ["mixed_weights", "zero_weights", "no_weights"]


def _batches(arguments, weights, seed):
    """The batches of a case, weighted as `weights` (one of WEIGHTS) says.

    A case's own `weights` generator replaces `_weights_mixed`.
    """
    arguments = dict(arguments)
    make_weights = arguments.pop("weights", _weights_mixed)
    rng = np.random.default_rng(seed)
    batches = []
    for n in BATCH_SIZES:
        batch = {name: make(rng, n) for name, make in arguments.items()}
        if weights != "no_weights":
            w = make_weights(rng, n)
            batch["weights"] = np.zeros_like(w) if weights == "zero_weights" else w
        batches.append(batch)
    return batches


def tensorflow_value(name, batches, kwargs):
    """TF1's value after streaming `batches` through `tf.compat.v1.metrics.<name>`."""
    graph = tf.compat.v1.Graph()
    with graph.as_default():
        # A static batch dimension where every batch has the same (mean_tensor needs it).
        placeholders = {
            key: tf.compat.v1.placeholder(
                tf.as_dtype(value.dtype),
                value.shape if len({b[key].shape for b in batches}) == 1
                else (None,) + value.shape[1:])
            for key, value in batches[0].items()
        }
        value, update_op = getattr(tf.compat.v1.metrics, name)(**placeholders, **kwargs)
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.local_variables_initializer())
            for batch in batches:
                session.run(update_op, {placeholders[k]: v for k, v in batch.items()})
            return session.run(value)


def library_value(name, batches, kwargs):
    """The library's value: each batch's update applied as the model applies it."""
    fn = getattr(tf1.metrics, name)
    metric = state = None
    for batch in batches:
        [update] = values_lib.metric_values(
            lambda **tensors: {name: fn(**tensors, **kwargs)}, batch
        ).values()
        if metric is None:
            metric = update.factory()
            state = [v.value for v in metric.variables]
        state = metric.stateless_update_state(state, *update.args, **update.kwargs)
    return np.asarray(metric.stateless_result(state))


def _id(case):
    name, _, kwargs = case
    return "-".join([name] + [f"{k}={v}" for k, v in kwargs.items()])


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_each_metric_streams_tensorflows_value(case, weights):
    name, arguments, kwargs = case
    batches = _batches(arguments, weights, seed=len(_id(case)))
    expected = tensorflow_value(name, batches, kwargs)
    np.testing.assert_allclose(
        library_value(name, batches, kwargs), expected, rtol=1e-5, atol=1e-6, equal_nan=True
    )


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_each_metric_unpacks_as_tensorflows_value_and_update_op(case):
    name, arguments, kwargs = case
    batch = _batches(arguments, "mixed_weights", seed=0)[0]
    expected = tensorflow_value(name, [batch], kwargs)
    value, update_op = getattr(tf1.metrics, name)(**batch, **kwargs)
    assert tuple(value.shape) == tuple(update_op.shape) == np.shape(expected)


def test_the_library_offers_every_tf1_metric_and_the_table_tests_each():
    tensorflow_names = {name for name in dir(tf.compat.v1.metrics) if not name.startswith("_")}
    offered = {name for name in tensorflow_names if hasattr(tf1.metrics, name)}
    assert offered == tensorflow_names
    assert {name for name, _, _ in CASES} == tensorflow_names
