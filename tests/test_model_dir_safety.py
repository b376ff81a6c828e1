"""A model_dir is never lost or misread: NaN weights are not saved, a shared model_dir is safe,
killed exports leave nothing behind, damaged checkpoints and bad model_dirs are named."""

import logging
import os
import signal
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator.checkpoint import model_dir as model_dir_module
from model_fns import DIM
from model_fns import estimator_config
from model_fns import input_fn_of
from model_fns import linear_data

BATCH = 8
NAN_STEP = 3  # The global step whose gradient is NaN: the last step of the loop 2..4.


def poisoned_fn(features, labels, mode, params):
    """loss = mean(x) * w, trained by SGD; at global step params["nan_step"] the loss stays
    finite but the gradient of w is NaN (0 * d sqrt(0))."""
    w = kte.get_variable("w", shape=(), initializer="ones")
    loss = keras.ops.mean(features["x"]) * w
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"y": features["x"][:, 0] * w})
    if mode == kte.ModeKeys.EVAL:
        return kte.TPUEstimatorSpec(mode, loss=loss)
    poison = keras.ops.where(kte.get_global_step() == params["nan_step"], 0.0, 1.0)
    loss = loss + 0.0 * keras.ops.sqrt(keras.ops.abs(w) * poison)
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.01))


def make_estimator(model_dir, keep=5, nan_step=-1):
    config = estimator_config(model_dir, save_every=2, loop=2, keep_checkpoint_max=keep)
    return kte.TPUEstimator(model_fn=poisoned_fn, config=config, params={"nan_step": nan_step},
                            train_batch_size=BATCH, eval_batch_size=BATCH,
                            predict_batch_size=BATCH)


x, y = linear_data(4 * BATCH)
train_input = input_fn_of(x, y, repeat=True)
eval_input = input_fn_of(x, y)


def checkpoint_steps(model_dir):
    return kte.checkpoint.CheckpointDirectory(str(model_dir)).all_steps()


# -- Point 2: non-finite weights never become a checkpoint. ------------------------


def test_nan_gradient_on_a_loops_last_step_is_not_saved_and_the_error_names_the_step(tmp_path):
    estimator = make_estimator(tmp_path, nan_step=NAN_STEP)
    with pytest.raises(RuntimeError, match=r"step 4\b") as raised:
        estimator.train(train_input, max_steps=8)
    assert isinstance(raised.value, kte.NanLossDuringTrainingError)
    assert raised.value.global_step == 4
    assert checkpoint_steps(tmp_path) == [0, 2]


def test_training_resumes_from_the_last_good_checkpoint_after_nan_weights(tmp_path):
    with pytest.raises(RuntimeError):
        make_estimator(tmp_path, nan_step=NAN_STEP).train(train_input, max_steps=8)
    make_estimator(tmp_path).train(train_input, max_steps=6)
    assert checkpoint_steps(tmp_path)[-1] == 6
    assert np.isfinite(make_estimator(tmp_path).get_variable_value("w"))


def test_evaluating_a_checkpoint_with_nan_weights_warns_naming_it(tmp_path, caplog):
    make_estimator(tmp_path).train(train_input, max_steps=2)
    with kte.checkpoint.CheckpointDirectory(str(tmp_path)) as directory:  # Another writer's.
        directory.save(4, {**directory.restore(2), "w": np.float32("nan"), "global_step": 4})
    with caplog.at_level(logging.WARNING, logger="keras_tpu_estimator"):
        results = make_estimator(tmp_path).evaluate(eval_input)
    assert results["global_step"] == 4
    assert "model.ckpt-4 holds NaN or infinite values in ['w']" in caplog.text


# -- Point 5: a shared model_dir. ------------------------------------------------------


def test_evaluate_reads_the_next_latest_checkpoint_when_its_choice_is_deleted(tmp_path,
                                                                             monkeypatch):
    make_estimator(tmp_path, keep=1).train(train_input, max_steps=2)
    evaluator = make_estimator(tmp_path, keep=1)
    real_load = model_dir_module.load_checkpoint
    chosen = []

    def load_while_a_trainer_saves(prefix, model):
        chosen.append(os.path.basename(prefix))
        if len(chosen) == 1:  # A trainer's next save deletes the chosen checkpoint (keep=1).
            trainer_dir = kte.checkpoint.CheckpointDirectory(str(tmp_path), max_to_keep=1)
            trainer_dir.save(4, dict(trainer_dir.restore(2), global_step=4))
            trainer_dir.close()
        return real_load(prefix, model)

    monkeypatch.setattr(model_dir_module, "load_checkpoint", load_while_a_trainer_saves)
    results = evaluator.evaluate(eval_input)
    assert chosen == ["model.ckpt-2", "model.ckpt-4"]
    assert results["global_step"] == 4


@pytest.mark.parametrize("read", ["get_variable_value", "get_variable_names"])
def test_reading_variables_follows_the_latest_when_its_choice_is_deleted(tmp_path, monkeypatch,
                                                                        read):
    from keras_tpu_estimator.checkpoint import readers

    make_estimator(tmp_path, keep=1).train(train_input, max_steps=2)
    real_reader = readers.TensorFlowReader
    chosen = []

    def reader_while_a_trainer_saves(prefix):
        chosen.append(os.path.basename(prefix))
        if len(chosen) == 1:  # A trainer's next save deletes the chosen checkpoint (keep=1).
            trainer_dir = kte.checkpoint.CheckpointDirectory(str(tmp_path), max_to_keep=1)
            trainer_dir.save(4, dict(trainer_dir.restore(2), global_step=4))
        return real_reader(prefix)

    monkeypatch.setattr(readers, "TensorFlowReader", reader_while_a_trainer_saves)
    estimator = make_estimator(tmp_path, keep=1)
    if read == "get_variable_value":
        assert int(estimator.get_variable_value("global_step")) == 4
    else:
        assert "w" in estimator.get_variable_names()
    assert chosen == ["model.ckpt-2", "model.ckpt-4"]


class _SecondTrainer(keras.callbacks.Callback):
    """While the first trainer trains, starts a second one on the same model_dir."""

    def __init__(self, model_dir):
        super().__init__()
        self.model_dir = model_dir
        self.error = None

    def on_train_batch_end(self, batch, logs=None):
        if self.error is None:
            calls = []
            try:
                make_estimator(self.model_dir).train(input_fn_of(x, y, repeat=True, calls=calls),
                                                     max_steps=8)
            except RuntimeError as error:
                self.error = error
            assert calls == []  # Refused before its input_fn ran.


def test_a_second_trainer_on_the_same_model_dir_is_refused_at_start(tmp_path):
    second = _SecondTrainer(tmp_path)
    make_estimator(tmp_path).train(train_input, max_steps=4, hooks=[second])
    assert second.error is not None
    assert str(tmp_path) in str(second.error)
    assert "another" in str(second.error)
    assert checkpoint_steps(tmp_path) == [0, 2, 4]


def test_evaluate_while_training_does_not_take_the_trainer_lock(tmp_path):
    make_estimator(tmp_path).train(train_input, max_steps=2)
    with kte.checkpoint.TrainerLock(str(tmp_path)):
        assert make_estimator(tmp_path).evaluate(eval_input)["global_step"] == 2


_HOLD_LOCK = """
import sys, time
import keras_tpu_estimator as kte
lock = kte.checkpoint.TrainerLock(sys.argv[1])
lock.acquire()
print("locked", flush=True)
time.sleep(600)
"""


def test_a_trainer_lock_held_by_a_killed_process_does_not_block(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_LOCK, str(tmp_path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RuntimeError, match="another"):
            kte.checkpoint.TrainerLock(str(tmp_path)).acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    make_estimator(tmp_path).train(train_input, max_steps=2)
    assert checkpoint_steps(tmp_path)[-1] == 2


def test_taking_the_trainer_lock_removes_saves_a_killed_trainer_left_unfinished(tmp_path):
    make_estimator(tmp_path).train(train_input, max_steps=2)
    unfinished = tmp_path / "model.ckpt-4_temp"
    unfinished.mkdir()
    (unfinished / "part-00000-of-00001.index").write_bytes(b"")
    with kte.checkpoint.TrainerLock(str(tmp_path)):
        assert not unfinished.exists()
    assert checkpoint_steps(tmp_path) == [0, 2]


# -- Point 6: a killed export. --------------------------------------------------------


def receiver_fn():
    features = kte.export.placeholder(shape=(None, DIM), dtype="float32", name="x")
    return kte.export.ServingInputReceiver(features={"x": features},
                                           receiver_tensors={"x": features})


_KILLED_EXPORT = """
import os, signal, sys
sys.path.insert(0, sys.argv[3])
import test_model_dir_safety as t
from keras_tpu_estimator.export import saved_model

def killed(*args, **kwargs):  # The SavedModel is written, not yet renamed.
    os.kill(os.getpid(), signal.SIGKILL)

saved_model._finish = killed
t.make_estimator(sys.argv[1]).export_saved_model(sys.argv[2], t.receiver_fn)
"""


def test_an_export_killed_half_way_leaves_no_visible_directory_after_the_next(tmp_path):
    model_dir, base = tmp_path / "model", tmp_path / "exports"
    estimator = make_estimator(model_dir)
    estimator.train(train_input, max_steps=2)
    env = dict(os.environ, JAX_PLATFORMS="cpu", KERAS_BACKEND="jax")
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_EXPORT, str(model_dir), str(base),
         os.path.dirname(__file__)], env=env, capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert os.listdir(base)  # The killed export left its temporary directory.
    export_dir = estimator.export_saved_model(str(base), receiver_fn)
    assert os.listdir(base) == [os.path.basename(os.fsdecode(export_dir))]


# -- Point 8: a model_dir that is a file, a damaged checkpoint. --------------------------


@pytest.mark.parametrize("where", ["RunConfig", "TPUEstimator"])
def test_a_model_dir_that_is_a_file_is_refused(tmp_path, where):
    path = tmp_path / "notes.txt"
    path.write_text("not a directory")
    with pytest.raises(ValueError, match=r"`model_dir` must be a directory.*notes\.txt"):
        if where == "RunConfig":
            kte.RunConfig(model_dir=str(path))
        else:
            kte.TPUEstimator(model_fn=poisoned_fn, model_dir=str(path), config=kte.RunConfig(),
                             params={"nan_step": -1}, train_batch_size=BATCH)


@pytest.mark.parametrize("part", ["index", "data-00000-of-00001"])
def test_a_truncated_checkpoint_is_named_as_damaged(tmp_path, part):
    make_estimator(tmp_path).train(train_input, max_steps=2)
    damaged = tmp_path / f"model.ckpt-2.{part}"
    with open(damaged, "r+b") as f:
        f.truncate(os.path.getsize(damaged) // 2)
    with pytest.raises(kte.checkpoint.DamagedCheckpointError, match="damaged") as raised:
        make_estimator(tmp_path).evaluate(eval_input)
    assert isinstance(raised.value, ValueError)
    assert f"checkpoint {tmp_path / 'model.ckpt-2'} is damaged" in str(raised.value)
