"""Writes slim_batch_norm_tf215.npz: tf_slim's `batch_norm` in TF 2.15 graph mode.

Run with the TF 2.15 reference Python:
`/tmp/venv215/bin/python tests/references/slim_batch_norm_tf215.py`.

`slim.batch_norm` takes three paths in TF1: TF1's fused kernel (rank 2, or
`updates_collections=None`), a `tf.layers.BatchNormalization` (the default
for other ranks: `updates_collections=UPDATE_OPS`), and hand-written moments
(`fused=False` with `updates_collections=None`). The second path needs
`tf.compat.v1.layers`, which TF 2.15 loads from `tf_keras`: this script
points that name at Keras 2.15's own legacy layers (the same code), and
restores `ops.Tensor`, which tf_slim 1.1 still reads, as `tf.Tensor`.

For every case, in a fresh graph: every variable starts from a seeded value
(`param_initializers`), then `is_training=False` gives the inference output,
and `is_training=True` (same variables, `reuse=True`) the training output;
the update ops (or the in-place updates) then move the moving statistics.
tests/test_slim_batch_norm.py runs the library's `batch_norm` on the same
inputs and initial values and compares outputs, moving statistics and the
variables' names in creation order. `checkpoint_names` lists what a TF1
training of a small slim net (conv2d + batch_norm in an arg_scope, Momentum)
saves, for the TPUEstimator test there.
"""

import json
import os
import sys
import types

import keras.src.legacy_tf_layers.normalization as legacy_normalization
import numpy as np
import tensorflow as tf
from tensorflow.python.framework import ops

for name in ("tf_keras", "tf_keras.legacy_tf_layers"):
    sys.modules.setdefault(name, types.ModuleType(name))
sys.modules["tf_keras.legacy_tf_layers.normalization"] = legacy_normalization
ops.Tensor = tf.Tensor

import tf_slim as slim  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()

# (case id, input shape, batch_norm keyword arguments as JSON; "activation": "relu")
CASES = [
    ("default_4d", (2, 4, 4, 3), {}),
    ("scale_small_epsilon_4d", (2, 4, 4, 3), {"scale": True, "epsilon": 1e-6, "decay": 0.9}),
    ("nchw_4d", (2, 3, 4, 4), {"scale": True, "data_format": "NCHW"}),
    ("not_fused_4d", (2, 4, 4, 3), {"fused": False, "scale": True}),
    ("in_place_4d", (2, 4, 4, 3), {"updates_collections": None, "scale": True}),
    ("in_place_not_fused_4d", (2, 4, 4, 3),
     {"updates_collections": None, "fused": False, "scale": True}),
    ("in_place_nchw_4d", (2, 3, 5, 4),
     {"updates_collections": None, "data_format": "NCHW", "decay": 0.5}),
    ("default_2d", (6, 3), {"scale": True}),
    ("not_fused_2d", (6, 3), {"fused": False}),
    ("default_3d", (3, 5, 2), {"scale": True}),
    ("no_center_relu_4d", (2, 4, 4, 3), {"center": False, "scale": True, "activation": "relu"}),
]


def run_case(shape, kwargs, rng):
    kwargs = dict(kwargs)
    if kwargs.pop("activation", None) == "relu":
        kwargs["activation_fn"] = tf.nn.relu
    channels = shape[1] if kwargs.get("data_format") == "NCHW" else shape[-1]
    initial = {
        "beta": rng.normal(size=channels).astype("float32"),
        "gamma": rng.uniform(0.5, 1.5, size=channels).astype("float32"),
        "moving_mean": rng.normal(size=channels).astype("float32"),
        "moving_variance": rng.uniform(0.5, 2.0, size=channels).astype("float32"),
    }
    x = rng.normal(size=shape).astype("float32") * 2.0 + 0.5
    graph = tf.Graph()
    with graph.as_default():
        inputs = tf1.constant(x)
        params = {k: tf1.constant_initializer(v) for k, v in initial.items()}
        y_eval = slim.batch_norm(inputs, is_training=False, param_initializers=params,
                                 scope="BatchNorm", **kwargs)
        y_train = slim.batch_norm(inputs, is_training=True, param_initializers=params,
                                  scope="BatchNorm", reuse=True, **kwargs)
        updates = tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)
        names = [v.op.name for v in tf1.global_variables()]
        with tf1.Session() as session:
            session.run(tf1.global_variables_initializer())
            eval_out = session.run(y_eval)
            train_out = session.run(y_train)
            session.run(updates)
            by_name = {v.op.name: v for v in tf1.global_variables()}
            moving = session.run([by_name["BatchNorm/moving_mean"],
                                  by_name["BatchNorm/moving_variance"]])
    return x, initial, names, eval_out, train_out, moving


def slim_net(images, is_training):
    """The net of tests/test_slim_batch_norm.py's TPUEstimator model_fn, in tf_slim."""
    with slim.arg_scope([slim.conv2d], normalizer_fn=slim.batch_norm,
                        normalizer_params={"is_training": is_training, "scale": True,
                                           "decay": 0.9},
                        weights_regularizer=slim.l2_regularizer(1e-4)):
        net = slim.conv2d(images, 8, [3, 3], scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
        net = slim.conv2d(net, 16, [3, 3], stride=2)
        net = slim.dropout(slim.flatten(net), 0.9, is_training=is_training)
    return slim.fully_connected(net, 3, activation_fn=None, scope="logits")


def checkpoint_names():
    """The variables a TF1 TPUEstimator run of `slim_net` with Momentum saves."""
    graph = tf.Graph()
    with graph.as_default():
        images = tf1.placeholder(tf.float32, [4, 8, 8, 3])
        labels = tf1.placeholder(tf.int32, [4])
        logits = slim_net(images, True)
        loss = (tf1.losses.sparse_softmax_cross_entropy(labels, logits)
                + tf1.losses.get_regularization_loss())
        with tf1.control_dependencies(tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)):
            tf1.train.MomentumOptimizer(0.1, 0.9).minimize(
                loss, global_step=tf1.train.get_or_create_global_step())
        return sorted(v.op.name for v in tf1.global_variables())


def main():
    rng = np.random.default_rng(7)
    arrays, meta = {}, []
    for case_id, shape, kwargs in CASES:
        x, initial, names, eval_out, train_out, (mean, variance) = run_case(shape, kwargs, rng)
        arrays[f"{case_id}/x"] = x
        for key, value in initial.items():
            arrays[f"{case_id}/initial/{key}"] = value
        arrays[f"{case_id}/eval"] = eval_out
        arrays[f"{case_id}/train"] = train_out
        arrays[f"{case_id}/moving_mean"] = mean
        arrays[f"{case_id}/moving_variance"] = variance
        meta.append({"id": case_id, "kwargs": kwargs, "names": names})
    arrays["cases"] = np.array(json.dumps(meta))
    arrays["checkpoint_names"] = np.array(json.dumps(checkpoint_names()))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "slim_batch_norm_tf215.npz")
    np.savez_compressed(path, **arrays)
    print(f"wrote {path}: {len(meta)} cases")


if __name__ == "__main__":
    main()
