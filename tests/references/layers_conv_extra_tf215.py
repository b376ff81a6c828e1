"""Writes layers_conv_extra_tf215.npz: TF 2.15's `tf.compat.v1.layers` separable/3D convolutions.

Run with the TF 2.15 reference Python (TF 2.21's `tf.compat.v1.layers` need
Keras 2): `/tmp/venv215/bin/python tests/references/layers_conv_extra_tf215.py`.

For every case, in a fresh graph: one layer call on a seeded input, its
variables (TF1 names, values) and its output. tests/test_layers_conv_extra.py
gives the library's layer the same input and variable values and compares.
"""

import json
import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

# (case id, tf.layers function, input shape, keyword arguments as JSON)
CASES = [
    ("separable_conv2d_same_stride2", "separable_conv2d", (2, 7, 7, 3),
     dict(filters=5, kernel_size=3, strides=2, padding="same", depth_multiplier=2,
          activation="relu")),
    ("separable_conv2d_valid_dilated_named", "separable_conv2d", (2, 9, 9, 2),
     dict(filters=4, kernel_size=(3, 2), dilation_rate=2, name="sep", use_bias=False)),
    ("separable_conv1d_valid", "separable_conv1d", (2, 11, 3),
     dict(filters=4, kernel_size=3, depth_multiplier=2)),
    ("separable_conv1d_same_stride2", "separable_conv1d", (2, 10, 2),
     dict(filters=3, kernel_size=4, strides=2, padding="SAME")),
    ("conv3d_same_strided", "conv3d", (2, 5, 6, 6, 2),
     dict(filters=4, kernel_size=(2, 3, 3), strides=(1, 2, 2), padding="same")),
    ("conv3d_valid_dilated", "conv3d", (1, 7, 7, 7, 3),
     dict(filters=2, kernel_size=2, dilation_rate=2, name="c3")),
    ("conv3d_transpose_same_stride2", "conv3d_transpose", (2, 3, 4, 4, 3),
     dict(filters=2, kernel_size=3, strides=2, padding="same")),
    ("conv3d_transpose_valid", "conv3d_transpose", (1, 3, 3, 2, 2),
     dict(filters=3, kernel_size=(2, 3, 2), strides=(2, 1, 2))),
]

ACTIVATIONS = {"relu": tf.nn.relu}


def run_case(function, shape, kwargs, seed):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        x = np.random.default_rng(seed).normal(size=shape).astype("float32")
        kwargs = dict(kwargs)
        if "activation" in kwargs:
            kwargs["activation"] = ACTIVATIONS[kwargs["activation"]]
        # A bias that is not zero, so that it is compared too.
        kwargs["bias_initializer"] = tf.random_normal_initializer(seed=seed)
        y = getattr(tf.layers, function)(tf.constant(x), **kwargs)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            variables = tf.global_variables()
            values = session.run(variables)
            out = session.run(y)
    return x, [v.name for v in variables], values, out


# `tf.layers.InputSpec` checks: (spec arguments, input shape); the fixture
# records whether TF 2.15's layer accepted the input.
INPUT_SPECS = [
    (dict(ndim=4, axes={-1: 3}), (2, 5, 5, 3)),
    (dict(ndim=4, axes={-1: 3}), (2, 5, 5, 2)),
    (dict(ndim=4, axes={-1: 3}), (2, 5, 3)),
    (dict(ndim=5, axes={1: 4}), (1, 4, 2, 2, 2)),
    (dict(ndim=5, axes={1: 4}), (1, 2, 2, 2, 4)),
    (dict(min_ndim=3), (2, 3)),
    (dict(min_ndim=3), (2, 3, 4, 5)),
    (dict(max_ndim=3), (2, 3, 4, 5)),
    (dict(shape=(None, 3)), (7, 3)),
    (dict(shape=(None, 3)), (7, 4)),
]


def input_spec_accepts(spec_kwargs, shape):
    class Checked(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.input_spec = tf.layers.InputSpec(**spec_kwargs)

        def call(self, inputs):
            return inputs

    layer = Checked()
    layer(tf.zeros(shape))  # builds
    try:
        layer(tf.zeros(shape))
        return True
    except ValueError:
        return False


def main():
    arrays = {}
    with tf.Graph().as_default():
        accepted = [input_spec_accepts(k, s) for k, s in INPUT_SPECS]
    arrays["input_spec/cases"] = np.array(json.dumps(
        [[{k: ({str(a): n for a, n in v.items()} if k == "axes" else v)
           for k, v in kwargs.items()}, list(shape), ok]
         for (kwargs, shape), ok in zip(INPUT_SPECS, accepted)]))
    for seed, (case, function, shape, kwargs) in enumerate(CASES):
        x, names, values, out = run_case(function, shape, kwargs, seed)
        arrays[f"{case}/function"] = np.array(function)
        arrays[f"{case}/kwargs"] = np.array(json.dumps(kwargs))
        arrays[f"{case}/input"] = x
        arrays[f"{case}/output"] = out
        arrays[f"{case}/names"] = np.array(names)
        for name, value in zip(names, values):
            arrays[f"{case}/var/{name}"] = value
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers_conv_extra_tf215.npz")
    np.savez(path, **arrays)
    print("wrote", path, tf.__version__)


if __name__ == "__main__":
    main()
