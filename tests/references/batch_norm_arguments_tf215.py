"""Writes batch_norm_arguments_tf215.npz: TF 2.15's batch normalization with renorm,
virtual batches, adjustment, batch weights and zero-debiased moving means.

Run with the TF 2.15 reference Python (TF 2.21's `tf.compat.v1.layers` need
Keras 2): `/work/venv215/bin/python tests/references/batch_norm_arguments_tf215.py`.

Two tables, each case in a fresh graph (`disable_v2_behavior`, as TF1):

- `LAYER_CASES`: `tf.compat.v1.layers.batch_normalization`. The first call
  (`training=False`) creates the variables from seeded initial values and
  gives the inference output; a second call (`training=True`, `reuse=True`)
  then runs `STEPS` training steps (its output and the `UPDATE_OPS`
  together), each on another batch; the inference output after them
  closes the case.
- `CONTRIB_CASES`: tf_slim's `batch_norm` (`tf.contrib.layers.batch_norm`),
  `is_training=True` for `STEPS` steps (the update ops run with the output,
  or in place with `updates_collections=None`), then the variables.

For each case the npz holds the batches, the outputs, every variable's
name (in creation order) and final value. tests/test_batch_norm_arguments.py
runs the library's layers on the same batches and initial values.
`ADJUSTMENTS` and the tensor-valued clipping must be written the same way
there.
"""

import json
import os
import sys
import types

import keras.src.legacy_tf_layers.normalization as legacy_normalization
import numpy as np
import tensorflow as tf
from tensorflow.python.framework import ops

# tf_slim's batch_norm builds `tf.compat.v1.layers` from `tf_keras`; TF 2.15 has Keras 2's.
for name in ("tf_keras", "tf_keras.legacy_tf_layers"):
    sys.modules.setdefault(name, types.ModuleType(name))
sys.modules["tf_keras.legacy_tf_layers.normalization"] = legacy_normalization
ops.Tensor = tf.Tensor

import tf_slim as slim  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_v2_behavior()

STEPS = 3


def channel_adjustment(ns):
    """An `adjustment` whose scale and bias differ per channel (the last axis)."""
    def adjust(shape):
        channels = ns.cast(ns.range(shape[-1]), ns.float32)
        return 0.8 + 0.2 * channels, 0.1 * channels - 0.05
    return adjust


ADJUSTMENTS = {"channels": channel_adjustment}

# (case id, input shape, keyword arguments as JSON; "adjustment" names ADJUSTMENTS,
# "tensor_clipping" makes the clipping values tensors). Cases of batch 8 run again in the
# tests' compiled loop too (8 CPU devices).
LAYER_CASES = [
    ("renorm_4d", (4, 3, 3, 2), {"renorm": True, "momentum": 0.9, "renorm_momentum": 0.8}),
    ("renorm_defaults_2d", (6, 3), {"renorm": True}),
    ("renorm_clipped_4d", (4, 3, 3, 2),
     {"renorm": True, "renorm_clipping": {"rmax": 1.05, "rmin": 0.95, "dmax": 0.1},
      "momentum": 0.9, "renorm_momentum": 0.7}),
    ("renorm_clipped_tensors_2d", (8, 3),
     {"renorm": True, "renorm_clipping": {"rmax": 1.1, "dmax": 0.2}, "tensor_clipping": True,
      "renorm_momentum": 0.5}),
    ("renorm_fused_axis1_4d", (8, 3, 2, 2),
     {"renorm": True, "fused": True, "axis": 1, "scale": False, "momentum": 0.8}),
    ("renorm_no_center_3d", (4, 5, 3),
     {"renorm": True, "center": False, "epsilon": 1e-2, "renorm_momentum": 0.9}),
    ("renorm_axis1_3d", (4, 3, 5), {"renorm": True, "axis": 1, "renorm_clipping": {"rmin": 0.99}}),
    ("virtual_2d", (8, 3), {"virtual_batch_size": 4, "momentum": 0.9}),
    # trainable=False: training normalizes with the batch's moments and updates nothing.
    ("frozen_fused_4d", (4, 3, 3, 2), {"trainable": False, "momentum": 0.9}),
    ("frozen_2d", (6, 3), {"trainable": False, "fused": False}),
    ("frozen_renorm_2d", (6, 3), {"trainable": False, "renorm": True}),
    ("virtual_4d", (8, 2, 2, 3), {"virtual_batch_size": 2, "momentum": 0.8}),
    ("virtual_fused_axis1_4d", (4, 3, 2, 2),
     {"virtual_batch_size": 2, "axis": 1, "fused": True, "momentum": 0.8}),
    ("virtual_whole_batch_3d", (4, 2, 3), {"virtual_batch_size": 4, "momentum": 0.5}),
    ("virtual_renorm_3d", (8, 2, 3),
     {"virtual_batch_size": 4, "renorm": True, "renorm_clipping": {"rmax": 1.2},
      "momentum": 0.9, "renorm_momentum": 0.6}),
    ("adjustment_4d", (4, 3, 3, 2), {"adjustment": "channels", "momentum": 0.9}),
    ("adjustment_no_scale_2d", (6, 3),
     {"adjustment": "channels", "scale": False, "center": False}),
    ("adjustment_renorm_2d", (8, 4),
     {"adjustment": "channels", "renorm": True, "renorm_clipping": {"dmax": 0.3},
      "momentum": 0.8}),
]

# tf_slim's batch_norm (tf.contrib.layers.batch_norm); "batch_weights" seeds per-example weights.
CONTRIB_CASES = [
    ("renorm_4d", (4, 3, 3, 2), {"renorm": True, "scale": True, "decay": 0.9,
                                 "renorm_decay": 0.8}),
    ("renorm_clipped_nchw_4d", (8, 2, 3, 3),
     {"renorm": True, "data_format": "NCHW", "renorm_clipping": {"rmax": 1.05, "dmax": 0.1},
      "decay": 0.8}),
    ("renorm_2d", (6, 3), {"renorm": True, "decay": 0.5}),
    ("adjustment_3d", (4, 5, 3), {"adjustment": "channels", "scale": True, "decay": 0.9}),
    ("batch_weights_2d", (8, 3), {"batch_weights": True, "scale": True, "decay": 0.8}),
    ("batch_weights_nchw_4d", (4, 3, 2, 2),
     {"batch_weights": True, "data_format": "NCHW", "decay": 0.8}),
    ("batch_weights_in_place_3d", (4, 5, 3),
     {"batch_weights": True, "updates_collections": None, "decay": 0.9}),
    ("zero_debias_fused_4d", (4, 3, 3, 2),
     {"zero_debias_moving_mean": True, "scale": True, "decay": 0.9}),
    ("zero_debias_fused_2d", (8, 3), {"zero_debias_moving_mean": True, "decay": 0.5}),
    ("zero_debias_not_fused_3d", (4, 5, 3),
     {"zero_debias_moving_mean": True, "decay": 0.8, "scale": True}),
    ("zero_debias_not_fused_in_place_4d", (8, 3, 3, 2),
     {"zero_debias_moving_mean": True, "fused": False, "updates_collections": None,
      "decay": 0.8}),
    ("zero_debias_in_place_nchw_4d", (4, 2, 3, 3),
     {"zero_debias_moving_mean": True, "updates_collections": None, "data_format": "NCHW",
      "decay": 0.7}),
    # TF1 ignored `adjustment` on its hand-written path (here: in-place updates).
    ("adjustment_in_place_3d", (4, 5, 3),
     {"adjustment": "channels", "updates_collections": None, "decay": 0.9}),
]


def channels_of(shape, kwargs):
    axis = kwargs.get("axis", -1)
    if kwargs.get("data_format") == "NCHW":
        axis = 1
    return shape[axis]


def initial_values(channels, rng):
    return {
        "beta": rng.normal(size=channels).astype("float32"),
        "gamma": rng.uniform(0.5, 1.5, size=channels).astype("float32"),
        "moving_mean": rng.normal(size=channels).astype("float32"),
        "moving_variance": rng.uniform(0.5, 2.0, size=channels).astype("float32"),
    }


def batches(shape, rng):
    """STEPS batches, each with its own offset and scale, so the statistics move."""
    return np.stack([(rng.normal(size=shape) * (1.0 + 0.5 * step) + 0.3 * step)
                     .astype("float32") for step in range(STEPS)])


def layer_arguments(kwargs):
    kwargs = dict(kwargs)
    if "adjustment" in kwargs:
        kwargs["adjustment"] = ADJUSTMENTS[kwargs["adjustment"]](tf)
    if kwargs.pop("tensor_clipping", False):
        kwargs["renorm_clipping"] = {k: tf.constant(v) for k, v in
                                     kwargs["renorm_clipping"].items()}
    return kwargs


def run_layer_case(shape, kwargs, rng):
    initial = initial_values(channels_of(shape, kwargs), rng)
    xs = batches(shape, rng)
    with tf.Graph().as_default():
        x = tf1.placeholder(tf.float32, shape)
        params = {f"{k}_initializer": tf1.constant_initializer(v) for k, v in initial.items()}
        y_eval = tf1.layers.batch_normalization(x, training=False, **params,
                                                **layer_arguments(kwargs))
        y_train = tf1.layers.batch_normalization(
            x, training=True, name="batch_normalization", reuse=True,
            **layer_arguments(kwargs))
        updates = tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)
        with tf1.Session() as session:
            session.run(tf1.global_variables_initializer())
            eval_before = session.run(y_eval, {x: xs[-1]})
            train = np.stack([session.run([y_train, updates], {x: batch})[0]
                              for batch in xs])
            eval_after = session.run(y_eval, {x: xs[-1]})
            variables = tf1.global_variables()
            values = session.run(variables)
    return initial, xs, eval_before, train, eval_after, variables, values


def run_contrib_case(shape, kwargs, rng):
    initial = initial_values(channels_of(shape, kwargs), rng)
    xs = batches(shape, rng)
    weights = rng.uniform(0.2, 2.0, size=shape[0]).astype("float32")
    with tf.Graph().as_default():
        kwargs = layer_arguments(kwargs)
        if kwargs.pop("batch_weights", False):
            kwargs["batch_weights"] = tf.constant(weights)
        x = tf1.placeholder(tf.float32, shape)
        params = {k: tf1.constant_initializer(v) for k, v in initial.items()}
        y = slim.batch_norm(x, is_training=True, param_initializers=params, **kwargs)
        updates = tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)
        with tf1.Session() as session:
            session.run(tf1.global_variables_initializer())
            train = np.stack([session.run([y, updates], {x: batch})[0] for batch in xs])
            variables = tf1.global_variables()
            values = session.run(variables)
    return initial, xs, weights, train, variables, values


def main():
    rng = np.random.default_rng(0)
    arrays, cases = {}, {"layers": [], "contrib": []}
    for case_id, shape, kwargs in LAYER_CASES:
        initial, xs, eval_before, train, eval_after, variables, values = run_layer_case(
            shape, kwargs, rng)
        key = f"layers/{case_id}"
        arrays.update({f"{key}/x": xs, f"{key}/eval_before": eval_before,
                       f"{key}/train": train, f"{key}/eval_after": eval_after})
        arrays.update({f"{key}/initial/{k}": v for k, v in initial.items()})
        names = [v.op.name for v in variables]
        arrays.update({f"{key}/final/{n}": v for n, v in zip(names, values)})
        cases["layers"].append({"id": case_id, "kwargs": kwargs, "names": names,
                                "shapes": [list(v.shape) for v in values]})
    for case_id, shape, kwargs in CONTRIB_CASES:
        initial, xs, weights, train, variables, values = run_contrib_case(shape, kwargs, rng)
        key = f"contrib/{case_id}"
        arrays.update({f"{key}/x": xs, f"{key}/train": train, f"{key}/weights": weights})
        arrays.update({f"{key}/initial/{k}": v for k, v in initial.items()})
        names = [v.op.name for v in variables]
        arrays.update({f"{key}/final/{n}": v for n, v in zip(names, values)})
        cases["contrib"].append({"id": case_id, "kwargs": kwargs, "names": names,
                                 "shapes": [list(v.shape) for v in values]})
    arrays["cases"] = json.dumps(cases)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "batch_norm_arguments_tf215.npz")
    np.savez_compressed(path, **arrays)
    print(json.dumps(cases, indent=1))


if __name__ == "__main__":
    main()
