"""`tf.contrib.training.checkpoints_iterator` / `wait_for_new_checkpoint` and their spellings.

TF1's `tf.contrib.training` (and its module `python.training.evaluation`,
which DenseNet imports) gave `tf.train`'s iterator to evaluation jobs; the
reference is TensorFlow's own `tf.compat.v1.train` functions, run on the
same `model_dir`.
"""

import os
import threading

import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator import convert

training = tf1.contrib.training


def save_steps(directory, steps):
    with kte.checkpoint.CheckpointDirectory(directory, max_to_keep=None) as manager:
        for step in steps:
            manager.save(step, {"w": np.full((2,), step, "float32")})


def test_yields_what_tensorflows_iterator_yields_on_the_same_model_dir(tmp_path):
    import tensorflow as tf

    save_steps(tmp_path, [0, 10])
    ours = list(training.checkpoints_iterator(str(tmp_path), timeout=0))
    theirs = list(tf.compat.v1.train.checkpoints_iterator(str(tmp_path), timeout=0))
    assert ours == theirs == [os.path.join(str(tmp_path), "model.ckpt-10")]


def test_yields_a_checkpoint_written_while_it_waits(tmp_path):
    save_steps(tmp_path, [0])
    seen = []
    for path in training.checkpoints_iterator(str(tmp_path), timeout=2):
        seen.append(os.path.basename(path))
        if len(seen) == 1:
            writer = threading.Timer(0.2, save_steps, args=(tmp_path, [5]))
            writer.start()
            writer.join()
    assert seen == ["model.ckpt-0", "model.ckpt-5"]


def test_wait_for_new_checkpoint_agrees_with_tensorflow(tmp_path):
    from tensorflow.python.training import checkpoint_utils  # not exported by TF 2

    save_steps(tmp_path, [3])
    latest = os.path.join(str(tmp_path), "model.ckpt-3")
    for wait in (training.wait_for_new_checkpoint, checkpoint_utils.wait_for_new_checkpoint):
        assert wait(str(tmp_path), None, timeout=0) == latest
        assert wait(str(tmp_path), latest, seconds_to_sleep=0.01, timeout=0.05) is None


def test_timeout_fn_decides_whether_to_keep_waiting(tmp_path):
    save_steps(tmp_path, [1])
    answers = iter([False, True])
    paths = list(training.checkpoints_iterator(
        str(tmp_path), timeout=0, timeout_fn=lambda: next(answers)))
    assert [os.path.basename(p) for p in paths] == ["model.ckpt-1"]


@pytest.mark.parametrize("source, spelling", [
    ("from tensorflow.contrib import training as contrib_training\n"
     "contrib_training.checkpoints_iterator(d)", "contrib_training.checkpoints_iterator"),
    ("from tensorflow.contrib.training.python.training import evaluation\n"
     "evaluation.checkpoints_iterator(d, timeout=1)", "evaluation.checkpoints_iterator"),
    ("import tensorflow as tf\ntf.contrib.training.wait_for_new_checkpoint(d)",
     "tf.contrib.training.wait_for_new_checkpoint"),
    ("from tensorflow.contrib import training as contrib_training\n"
     "contrib_training.HParams(lr=0.1)", "contrib_training.HParams"),
])
def test_the_converter_maps_every_spelling_to_tf1_contrib_training(source, spelling):
    result = convert.convert_source(source)
    name = spelling.split(".")[-1]
    assert f"tf1.contrib.training.{name}(" in result.source
    assert "tensorflow" not in result.source


def test_the_converter_maps_contrib_training_on_the_input_side_too():
    source = (
        "from tensorflow.contrib import training as contrib_training\n"
        "def input_fn(params):\n"
        "    hparams = contrib_training.HParams(cutout_const=100)\n"
        "    return dataset(hparams)\n"
    )
    result = convert.convert_source(source)
    assert "hparams = tf1.contrib.training.HParams(cutout_const=100)" in result.source
    assert result.errors == []
