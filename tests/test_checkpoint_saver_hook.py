"""`CheckpointSaverHook` (and TPU's `AsyncCheckpointSaverHook`): the estimator saves on its schedule."""

import re

import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator import convert

from model_fns import estimator_config
from model_fns import input_fn_of
from model_fns import linear_data
from model_fns import regression_fn


def _estimator(model_dir, save_every=None, loop=2):
    config = estimator_config(model_dir, save_every, loop, keep_checkpoint_max=20)
    return kte.TPUEstimator(model_fn=regression_fn, config=config, params={"lr": 0.05},
                            train_batch_size=16, eval_batch_size=16)


def _steps(estimator):
    with kte.checkpoint.CheckpointDirectory(estimator.model_dir) as checkpoints:
        return checkpoints.all_steps()


def test_the_hook_alone_saves_every_save_steps_and_at_the_end(tmp_path):
    # ResNet with --use_async_checkpointing: RunConfig saves nothing, the hook does.
    estimator = _estimator(tmp_path)
    hook = kte.CheckpointSaverHook(checkpoint_dir=str(tmp_path), save_steps=4)
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=10, hooks=[hook])
    assert _steps(estimator) == [0, 4, 8, 10]


def test_the_hook_saves_beside_the_run_configs_schedule(tmp_path):
    estimator = _estimator(tmp_path, save_every=6, loop=1)
    hook = kte.CheckpointSaverHook(checkpoint_dir=str(tmp_path), save_steps=4)
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=12, hooks=[hook])
    assert _steps(estimator) == [0, 4, 6, 8, 12]


def test_the_hooks_listeners_are_called_around_its_saves(tmp_path):
    saved = []

    class Listener(kte.CheckpointSaverListener):
        def after_save(self, session, global_step_value):
            saved.append(global_step_value)

    estimator = _estimator(tmp_path)
    hook = kte.CheckpointSaverHook(str(tmp_path), save_steps=5, listeners=[Listener()])
    estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=10, hooks=[hook])
    assert saved[-1] == 10 and 5 in saved


def test_a_hook_saving_elsewhere_is_refused_before_training(tmp_path):
    estimator = _estimator(tmp_path / "a")
    hook = kte.CheckpointSaverHook(str(tmp_path / "b"), save_steps=5)
    with pytest.raises(ValueError, match="must be the estimator's model_dir"):
        estimator.train(input_fn_of(*linear_data(), repeat=True), max_steps=4, hooks=[hook])
    assert not (tmp_path / "a").exists() or _steps(estimator) == []


@pytest.mark.parametrize("kwargs, match", [
    ({}, "exactly one of save_secs or save_steps"),
    ({"save_steps": 5, "save_secs": 60}, "exactly one of save_secs or save_steps"),
    ({"save_steps": 0}, "save_steps=0"),
    ({"save_secs": -1}, "save_secs=-1"),
    ({"save_steps": 5, "saver": object()}, "saver=...) must be None"),
    ({"save_steps": 5, "checkpoint_basename": "x.ckpt"}, "must be 'model.ckpt'"),
])
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        kte.CheckpointSaverHook("dir", **kwargs)


@pytest.mark.parametrize("imports, use", [
    ("from tensorflow.contrib.tpu.python.tpu import async_checkpoint",
     "async_checkpoint.AsyncCheckpointSaverHook(checkpoint_dir=d, save_steps=5)"),
    ("import tensorflow as tf", "tf.train.CheckpointSaverHook(checkpoint_dir=d, save_steps=5)"),
    ("import tensorflow as tf", "tf.estimator.CheckpointSaverHook(d, save_steps=5)"),
])
def test_converter_maps_tensorflows_saver_hooks(imports, use):
    result = convert.convert_source(f"{imports}\n\ndef hooks(d):\n    return [{use}]\n")
    assert not result.errors
    assert "kte.CheckpointSaverHook(" in result.source
