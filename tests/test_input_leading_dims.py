"""Each feature and label is split over the replicas along its own leading dimension.

As TensorFlow's TPUEstimator split each tensor over the shards: a
semi-supervised input feeds an unlabeled batch `k` times the labeled one,
`{"x": [B, ...], "u": [3B, ...]}`. The batch is the smallest leading
dimension: `params['batch_size']` stays the batch size, a short last batch
is measured by it (and, in prediction, padded by it: `u` to three times the
batch size). The math is global, so one device and eight agree. A tensor
whose leading dimension does not divide over the replicas is refused, named.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte

B, K, D = 16, 3, 4  # Batch size, unlabeled batches per labeled one, features.


def semi_supervised_fn(features, labels, mode, params):
    """A linear regression on `x` with a penalty on the outputs of `u`."""
    assert params["batch_size"] in (B, 8)  # 8: the short last batch.
    w = kte.get_variable("w", shape=(D,), initializer="ones")
    x, u = features["x"], features["u"]
    assert u.shape[0] == K * x.shape[0]
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"y": keras.ops.matmul(x, w)})
    supervised = keras.ops.mean(keras.ops.square(keras.ops.matmul(x, w) - labels))
    loss = supervised + 0.1 * keras.ops.mean(keras.ops.square(keras.ops.matmul(u, w)))
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.05))


def data(n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=(n, D)).astype("float32")
    u = rng.normal(size=(K * n, D)).astype("float32")
    return x, u, (x @ np.arange(D, dtype="float32")).astype("float32")


def input_fn(n, drop_remainder):
    def make(params):
        x, u, y = data(n)
        labeled = tf.data.Dataset.from_tensor_slices((x, y)).batch(
            params["batch_size"], drop_remainder=drop_remainder)
        unlabeled = tf.data.Dataset.from_tensor_slices(u).batch(
            K * params["batch_size"], drop_remainder=drop_remainder)
        return tf.data.Dataset.zip((labeled, unlabeled)).map(
            lambda xy, u: ({"x": xy[0], "u": u}, xy[1]))
    return make


def run(tmp_path, use_tpu):
    estimator = kte.TPUEstimator(
        model_fn=semi_supervised_fn, use_tpu=use_tpu,
        config=kte.RunConfig(model_dir=str(tmp_path / str(use_tpu)), log_step_count_steps=None,
                             tpu_config=kte.TPUConfig(iterations_per_loop=2)),
        train_batch_size=B, eval_batch_size=B, predict_batch_size=B,
    )
    estimator.train(input_fn(4 * B, drop_remainder=True), max_steps=4)
    # 2 full batches and a short one of 8 (u: 24), each tensor split on its own.
    metrics = estimator.evaluate(input_fn(2 * B + 8, drop_remainder=False))
    # A short last batch of 4 (u: 12), padded to B (u: 3B) and cut again.
    predictions = [p["y"] for p in estimator.predict(input_fn(B + 4, drop_remainder=False))]
    return estimator.get_variable_value("w"), metrics["loss"], np.array(predictions)


def test_tensors_of_different_leading_dimensions_train_evaluate_and_predict_alike_on_1_and_8(
        tmp_path):
    one = run(tmp_path, use_tpu=False)
    eight = run(tmp_path, use_tpu=True)
    assert one[2].shape == (B + 4,)
    for a, b in zip(one, eight):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # The loss is the global one: the mean over the evaluated examples' batches.
    assert not np.allclose(one[0], np.ones(D))


def test_a_tensor_whose_leading_dimension_does_not_divide_over_the_replicas_is_refused():
    model = kte.EstimatorModel(semi_supervised_fn, train_batch_size=8)
    model.compile()
    x, u, y = data(8)
    batches = [({"x": x, "u": u[:12]}, y)] * 2  # 12 rows on 8 replicas.
    with pytest.raises(ValueError, match=r"features\['u'\] has a leading dimension of 12, "
                                         r"which does not divide over the 8 replicas"):
        model.fit(iter(batches), verbose=0)
