"""Writes layers_argument_tables_tf215.npz: TF 2.15's `tf.compat.v1.layers` on the argument table.

Run with the TF 2.15 reference Python (TF 2.21's `tf.compat.v1.layers` need
Keras 2): `/work/venv215/bin/python tests/references/layers_argument_tables_tf215.py`.

For every case of tests/layers_argument_cases.py, in a fresh graph
(`disable_v2_behavior`, as TF1) in a fresh process: a seeded input (fed),
the program's outputs, its global variables (names in creation order,
shapes, initial values), the trainable variables' names and the
regularization losses. tests/test_layers_argument_tables.py gives the
library the same input and variable values and compares.

One process per case: TF 2.15's oneDNN kernels on CPU computed an NCHW
average pooling wrongly after an NHWC one of other shapes had run in the
same process (its channels-first values were those of another layout).
"""

import json
import multiprocessing
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from layers_argument_cases import CASES  # noqa: E402


def _list(outputs):
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]


def run_case(index_and_case):
    """The fixture's arrays of one case, computed in this (fresh) process."""
    import tensorflow.compat.v1 as tf
    import tf_slim

    tf.disable_v2_behavior()
    index, case = index_and_case
    shape, program, _ = CASES[case]
    x = np.random.default_rng(index).normal(size=shape).astype("float32")
    with tf.Graph().as_default():
        tf.set_random_seed(index)
        inputs = tf.placeholder(tf.float32, shape)
        outputs = _list(program(tf, tf_slim, inputs))
        variables = tf.global_variables()
        trainable = [v.op.name for v in tf.trainable_variables()]
        losses = tf.losses.get_regularization_losses()
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            values, outs, loss_values = session.run([variables, outputs, losses], {inputs: x})
    arrays = {f"{case}/input": x, f"{case}/outputs": np.array(len(outs)),
              f"{case}/names": np.array(json.dumps([v.op.name for v in variables])),
              f"{case}/trainable": np.array(json.dumps(trainable)),
              f"{case}/losses": np.array(loss_values, "float32")}
    for i, out in enumerate(outs):
        arrays[f"{case}/output/{i}"] = out
    for variable, value in zip(variables, values):
        arrays[f"{case}/var/{variable.op.name}"] = value
    return arrays


def main():
    arrays = {}
    context = multiprocessing.get_context("spawn")
    with context.Pool(2, maxtasksperchild=1) as pool:
        for case_arrays in pool.imap(run_case, list(enumerate(CASES))):
            arrays.update(case_arrays)
    np.savez_compressed(os.path.join(HERE, "layers_argument_tables_tf215.npz"), **arrays)


if __name__ == "__main__":
    main()
