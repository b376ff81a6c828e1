"""Writes dense_features_tf215.json: Keras 2's `DenseFeatures` and TPU columns (TF 2.15).

Run with the TF 2.15 reference Python:
`/tmp/venv215/bin/python tests/references/dense_features_tf215.py`.

TensorFlow 2.21 has no `tf.keras.layers.DenseFeatures` (Keras 3), and its
`input_layer` refuses the TPU shared embedding columns, so these cases are
recorded under TF 2.15 in graph mode (as TPUEstimator ran model_fn): each
case's variables, in creation order, are set to `arange(size) / 10 - 1`
reshaped (deterministic), and the output is recorded with the variable
names. tests/test_feature_columns_input.py builds the same cases with the
library and compares.
"""

import json
import os

import numpy as np
import tensorflow as tf

FEATURES = {
    "i": [[1, 3], [0, -1], [3, 3]],
    "j": [[2], [1], [0]],
    "x": [[0.5], [1.5], [-2.0]],
}


def case_two_dense_features(fc, tpu):
    embedded = fc.embedding_column(fc.categorical_column_with_identity("i", 4), 3)
    first = tf.keras.layers.DenseFeatures([embedded, fc.numeric_column("x")])
    second = tf.keras.layers.DenseFeatures(
        fc.indicator_column(fc.categorical_column_with_identity("j", 4)))
    return lambda f: tf.concat([first(f), second(f), first(f)], 1)


def case_tpu_shared_and_single(fc, tpu):
    shared = tpu.shared_embedding_columns(
        [fc.categorical_column_with_identity("i", 4), fc.categorical_column_with_identity("j", 4)],
        2, combiner=None)
    single = tpu.embedding_column(fc.categorical_column_with_identity("j", 4), 3, combiner="sum")
    layers = [tf.keras.layers.DenseFeatures(c) for c in shared + [single]]
    return lambda f: tf.concat([layer(f) for layer in layers], 1)


def record(case):
    with tf.Graph().as_default():
        features = {k: tf.constant(v, tf.float32 if k == "x" else tf.int64)
                    for k, v in FEATURES.items()}
        call = case(tf.compat.v1.feature_column, tf.compat.v1.tpu.experimental)
        output = call(features)
        variables = tf.compat.v1.global_variables()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            for v in variables:
                size = int(np.prod(v.shape))
                v.load((np.arange(size) / 10 - 1).reshape(v.shape), session)
            return {"names": [v.name for v in variables],
                    "output": session.run(output).tolist()}


if __name__ == "__main__":
    cases = {name[5:]: record(fn) for name, fn in sorted(globals().items())
             if name.startswith("case_")}
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dense_features_tf215.json")
    with open(out, "w") as f:
        json.dump({"tensorflow": tf.__version__, "features": FEATURES, "cases": cases}, f,
                  indent=1)
