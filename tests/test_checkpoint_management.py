"""compat.v1.train.latest_checkpoint / checkpoints_iterator over this library's checkpoints."""

import os
import threading

import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1


def save_steps(directory, steps):
    with kte.checkpoint.CheckpointDirectory(directory, max_to_keep=None) as manager:
        for step in steps:
            manager.save(step, {"w": np.full((2,), step, "float32")})


def test_latest_checkpoint_names_the_newest_checkpoint_as_tensorflow_did(tmp_path):
    save_steps(tmp_path, [0, 5, 10])
    path = tf1.train.latest_checkpoint(str(tmp_path))
    assert path == os.path.join(str(tmp_path), "model.ckpt-10")
    assert int(os.path.basename(path).split("-")[1]) == 10  # resnet_main's parsing.


@pytest.mark.parametrize("make", ["empty", "missing"])
def test_latest_checkpoint_of_a_directory_without_checkpoints_is_none(tmp_path, make):
    directory = tmp_path / "model"
    if make == "empty":
        directory.mkdir()
    assert tf1.train.latest_checkpoint(str(directory)) is None


def test_latest_checkpoint_of_tensorflow_checkpoints_is_tensorflows_prefix(tmp_path):
    import tensorflow as tf

    prefix = tf.train.Checkpoint(v=tf.Variable(1.0)).save(str(tmp_path / "ckpt"))
    assert tf1.train.latest_checkpoint(str(tmp_path)) == prefix


@pytest.mark.parametrize("read", ["list_variables", "load_variable"])
def test_tensorflow_style_names_are_read_as_the_checkpoint_they_name(tmp_path, read):
    save_steps(tmp_path, [3, 7])
    path = str(tmp_path / "model.ckpt-3")
    if read == "list_variables":
        assert tf1.train.list_variables(path) == [("w", [2])]
    else:
        np.testing.assert_array_equal(tf1.train.load_variable(path, "w"), [3, 3])


def test_checkpoints_iterator_yields_each_new_checkpoint_then_times_out(tmp_path):
    save_steps(tmp_path, [0])
    seen = []
    for path in tf1.train.checkpoints_iterator(str(tmp_path), timeout=2):
        seen.append(os.path.basename(path))
        if len(seen) == 1:
            # A trainer writes the next checkpoint while the evaluation runs.
            thread = threading.Thread(target=save_steps, args=(tmp_path, [5]))
            thread.start()
            thread.join()
    assert seen == ["model.ckpt-0", "model.ckpt-5"]


def test_checkpoints_iterator_asks_timeout_fn_whether_to_stop(tmp_path):
    save_steps(tmp_path, [1])
    calls = []

    def timeout_fn():
        calls.append(1)
        return len(calls) == 2  # Wait once more, then stop.

    paths = list(tf1.train.checkpoints_iterator(str(tmp_path), timeout=0, timeout_fn=timeout_fn))
    assert [os.path.basename(p) for p in paths] == ["model.ckpt-1"]
    assert len(calls) == 2


def test_checkpoints_iterator_waits_min_interval_secs_between_checkpoints(tmp_path, monkeypatch):
    from keras_tpu_estimator.compat.v1 import _checkpoint_management as checkpoint_management

    sleeps = []
    monkeypatch.setattr(checkpoint_management.time, "sleep", sleeps.append)
    save_steps(tmp_path, [1])
    iterator = tf1.train.checkpoints_iterator(str(tmp_path), min_interval_secs=30, timeout=0)
    next(iterator)
    save_steps(tmp_path, [2])
    assert os.path.basename(next(iterator)) == "model.ckpt-2"
    assert sleeps and sleeps[0] == pytest.approx(30, abs=1)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"min_interval_secs": -1}, "`min_interval_secs` must be a number >= 0. Received: min_interval_secs=-1"),
        ({"timeout": -5}, "`timeout` must be None or a number >= 0. Received: timeout=-5"),
        ({"timeout": "1m"}, "Received: timeout='1m'"),
        ({"timeout_fn": 3}, "`timeout_fn` must be None or a function"),
    ],
)
def test_checkpoints_iterator_arguments_are_checked_when_called(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        tf1.train.checkpoints_iterator(str(tmp_path), **kwargs)


@pytest.mark.parametrize("name", ["model.ckpt-4", "4", "model.ckpt", "events"])
def test_checkpoint_prefix_names_the_argument_the_value_and_the_allowed_forms(tmp_path, name):
    save_steps(tmp_path, [3, 7])
    path = str(tmp_path / name)
    with pytest.raises(ValueError) as error:
        kte.checkpoint.checkpoint_prefix(path)
    message = str(error.value)
    assert f"checkpoint_path={path!r}" in message
    assert "`<model_dir>/model.ckpt-<step>` (with its `.index` file) or a model_dir" in message
    assert "holds the checkpoints ['model.ckpt-3', 'model.ckpt-7']" in message


@pytest.mark.parametrize("name", ["model.ckpt-7", "", "/"])
def test_checkpoint_step_reads_a_prefix_or_a_model_dir(tmp_path, name):
    save_steps(tmp_path, [3, 7])
    assert kte.checkpoint.checkpoint_step(str(tmp_path) + "/" + name) == (str(tmp_path), 7)
