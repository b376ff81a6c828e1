"""`kte.checkpoint.load_global_step_from_checkpoint_dir`: TPUEstimator's
private `estimator._load_global_step_from_checkpoint_dir`, which DCGAN and
EfficientNet call between training rounds, on the same checkpoints."""

import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte


def write_tf1_checkpoint(model_dir, step, values):
    """Writes `values` (and `global_step` unless `step` is None) as TF1's Saver does."""
    graph = tf.Graph()
    with graph.as_default():
        for name, value in values.items():
            tf.compat.v1.get_variable(name, initializer=np.asarray(value, np.float32))
        if step is not None:
            global_step = tf.compat.v1.train.get_or_create_global_step()
            assign = global_step.assign(step)
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer())
            if step is not None:
                session.run(assign)
            saver.save(session, str(model_dir / "model.ckpt"), global_step=step)


@pytest.mark.parametrize("steps, expected", [([7], 7), ([3, 12], 12)])
def test_reads_the_global_step_of_the_latest_checkpoint(tmp_path, steps, expected):
    for step in steps:
        write_tf1_checkpoint(tmp_path, step, {"w": [1.0, 2.0]})
    found = kte.checkpoint.load_global_step_from_checkpoint_dir(str(tmp_path))
    assert found == expected and isinstance(found, int)


@pytest.mark.parametrize("make", ["missing", "empty", "no_global_step"])
def test_is_zero_where_there_is_no_step_to_read(tmp_path, make):
    model_dir = tmp_path / "model"
    if make != "missing":
        model_dir.mkdir()
    if make == "no_global_step":
        write_tf1_checkpoint(model_dir, None, {"w": [1.0]})
    assert kte.checkpoint.load_global_step_from_checkpoint_dir(str(model_dir)) == 0
