"""`tf1.contrib.slim.batch_norm` against tf_slim's in TF 2.15, and a slim model_fn trained
by `kte.TPUEstimator` whose checkpoint holds the names a TF1 run of it saves.

The reference (tests/references/slim_batch_norm_tf215.npz) comes from
tests/references/slim_batch_norm_tf215.py: tf_slim's batch_norm needs
`tf.compat.v1.layers`, which TF 2.21 no longer has.
"""

import json
import os

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib

from model_fns import estimator_config

slim = tf1.contrib.slim
REF = np.load(os.path.join(os.path.dirname(__file__), "references", "slim_batch_norm_tf215.npz"))
CASES = json.loads(str(REF["cases"]))


def run(program, mode=kte.ModeKeys.TRAIN):
    with store_lib.model_fn_call(store_lib.VariableStore(), mode, True, 0,
                                 mode == kte.ModeKeys.TRAIN):
        return program()


def batch_norm_call(case, is_training):
    """Runs the library's batch_norm as the reference did; the output, the variables'
    names in creation order and their values after the call."""
    kwargs = dict(case["kwargs"])
    if kwargs.pop("activation", None) == "relu":
        kwargs["activation_fn"] = tf1.nn.relu
    params = {key: tf1.constant_initializer(REF[f"{case['id']}/initial/{key}"])
              for key in ("beta", "gamma", "moving_mean", "moving_variance")}

    def program():
        out = slim.batch_norm(REF[f"{case['id']}/x"], is_training=is_training,
                              param_initializers=params, **kwargs)
        variables = tf1.global_variables()
        return (np.asarray(out), [v.op.name for v in variables],
                {v.op.name: np.asarray(v) for v in variables})

    return run(program)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_batch_norm_inference_and_names_match_tf_slim(case):
    out, names, _ = batch_norm_call(case, is_training=False)
    assert names == case["names"]
    np.testing.assert_allclose(out, REF[f"{case['id']}/eval"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_batch_norm_training_output_and_moving_statistics_match_tf_slim(case):
    out, _, values = batch_norm_call(case, is_training=True)
    np.testing.assert_allclose(out, REF[f"{case['id']}/train"], rtol=1e-4, atol=1e-5)
    for name in ("moving_mean", "moving_variance"):
        np.testing.assert_allclose(values[f"BatchNorm/{name}"], REF[f"{case['id']}/{name}"],
                                   rtol=1e-5, atol=1e-6)


def test_batch_norm_keeps_bfloat16_outputs_with_float32_parameters():
    x = np.random.default_rng(0).normal(size=(4, 3, 3, 2)).astype("float32")

    def program():
        out = slim.batch_norm(tf1.cast(x, tf1.bfloat16), scale=True, is_training=True)
        return out.dtype, [str(v.dtype) for v in tf1.global_variables()]

    dtype, variable_dtypes = run(program)
    assert dtype == "bfloat16" and set(variable_dtypes) == {"float32"}


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"is_training": keras.KerasTensor((), dtype="bool")}, ValueError, "`is_training`"),
        ({"data_format": "NWHC"}, ValueError, "data_format='NWHC'"),
        # renorm's and the other arguments' errors: tests/test_batch_norm_arguments.py.
    ],
)
def test_batch_norm_bad_arguments_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        run(lambda: slim.batch_norm(np.zeros((2, 3), "float32"), **kwargs))


# -- A slim model_fn trained by TPUEstimator. ------------------------------------------


def slim_net(images, is_training):
    """The reference generator's `slim_net`, on the library."""
    with slim.arg_scope([slim.conv2d], normalizer_fn=slim.batch_norm,
                        normalizer_params={"is_training": is_training, "scale": True,
                                           "decay": 0.9},
                        weights_regularizer=slim.l2_regularizer(1e-4)):
        net = slim.conv2d(images, 8, [3, 3], scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
        net = slim.conv2d(net, 16, [3, 3], stride=2)
        net = slim.dropout(slim.flatten(net), 0.9, is_training=is_training)
    return slim.fully_connected(net, 3, activation_fn=None, scope="logits")


def model_fn(features, labels, mode, params):
    training = mode == tf1.estimator.ModeKeys.TRAIN
    logits = slim_net(features["image"], training)
    if mode == tf1.estimator.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"classes": tf1.argmax(logits, 1)})
    loss = (tf1.losses.sparse_softmax_cross_entropy(labels, logits)
            + tf1.losses.get_regularization_loss())
    with tf1.control_dependencies(tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)):
        train_op = tf1.train.MomentumOptimizer(0.05, 0.9).minimize(
            loss, global_step=tf1.train.get_or_create_global_step())
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(params):
    import tensorflow as tf

    rng = np.random.default_rng(0)
    images = rng.normal(size=(64, 8, 8, 3)).astype("float32")
    labels = (images.mean((1, 2)).argmax(1)).astype("int32")
    dataset = tf.data.Dataset.from_tensor_slices(({"image": images}, labels))
    return dataset.repeat().batch(params["batch_size"], drop_remainder=True)


def test_slim_model_fn_trains_and_saves_tf1_slim_names(tmp_path):
    estimator = kte.TPUEstimator(
        model_fn=model_fn, config=estimator_config(tmp_path / "model", save_every=4),
        train_batch_size=16, eval_batch_size=16)
    estimator.train(input_fn, max_steps=4)

    # Besides TF1's variables, the checkpoint holds the state of dropout's seed generator.
    names = [n for n in estimator.get_variable_names() if not n.startswith("random/")]
    assert sorted(names) == json.loads(str(REF["checkpoint_names"]))
    moving_mean = estimator.get_variable_value("conv1/BatchNorm/moving_mean")
    assert np.abs(moving_mean).max() > 0  # updated by the training steps
