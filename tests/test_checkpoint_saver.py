"""`kte.checkpoint.CheckpointSaver`, driven only by the logs `EstimatorModel.fit` gives it.

The global step after a loop is `logs["loop_first_step"] + len(logs["loop_losses"])`;
the model's own `global_step` is read only when the logs report no loop.
"""

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator import checkpoint as ckpt

from model_fns import regression_fn


@pytest.fixture(scope="module")
def model():
    """A model built for evaluation (global step 0); the saver only reads its variables."""
    model = kte.EstimatorModel(
        regression_fn, params={"lr": 0.1}, config=kte.RunConfig(), eval_batch_size=8
    )
    model.compile()
    x = np.ones((8, 3), "float32")
    model.evaluate(({"x": x}, np.ones((8,), "float32")), verbose=0)
    return model


@pytest.fixture
def checkpoints(tmp_path):
    with ckpt.CheckpointDirectory(tmp_path / "model") as checkpoints:
        yield checkpoints


def loop_logs(first_step, steps):
    """The logs of `on_train_batch_end` after a loop of `steps` steps from `first_step`."""
    return {"loss": 0.5, "loop_first_step": first_step, "loop_losses": np.full((steps,), 0.5)}


def saver_for(model, checkpoints, **kwargs):
    saver = ckpt.CheckpointSaver(checkpoints, **kwargs)
    saver.set_model(model)
    return saver


class Recorder(kte.CheckpointSaverListener):
    def __init__(self, stop=False):
        self.calls, self.stop = [], stop

    def begin(self):
        self.calls.append(("begin",))

    def before_save(self, session, global_step_value):
        self.calls.append(("before_save", global_step_value))

    def after_save(self, session, global_step_value):
        self.calls.append(("after_save", global_step_value))
        return self.stop

    def end(self, session, global_step_value):
        self.calls.append(("end", global_step_value))


def test_a_loop_ending_on_a_multiple_of_save_steps_is_saved_at_its_last_step(model, checkpoints):
    saver = saver_for(model, checkpoints, save_steps=4)
    saver.on_train_batch_end(0, loop_logs(first_step=2, steps=2))
    assert checkpoints.all_steps() == [4]


def test_a_loop_ending_between_save_steps_is_not_saved(model, checkpoints):
    saver = saver_for(model, checkpoints, save_steps=4)
    saver.on_train_batch_end(0, loop_logs(first_step=0, steps=3))
    assert checkpoints.all_steps() == []


def test_a_one_step_loop_whose_losses_keras_made_a_float_counts_one_step(model, checkpoints):
    saver = saver_for(model, checkpoints, save_steps=4)
    saver.on_train_batch_end(0, {"loss": 0.5, "loop_first_step": 3, "loop_losses": 0.5})
    assert checkpoints.all_steps() == [4]


def test_save_secs_saves_the_first_loop_after_the_interval(model, checkpoints):
    saver = saver_for(model, checkpoints, save_secs=1e-9)
    saver.on_train_batch_end(0, loop_logs(first_step=0, steps=3))
    assert checkpoints.all_steps() == [3]


def test_train_end_saves_the_step_of_the_last_loop(model, checkpoints):
    saver = saver_for(model, checkpoints, save_steps=100)
    saver.on_train_end(loop_logs(first_step=4, steps=2))
    assert checkpoints.all_steps() == [6]


def test_train_end_without_a_loop_saves_the_model_global_step(model, checkpoints):
    saver = saver_for(model, checkpoints, save_steps=100)
    saver.on_train_end({})
    assert checkpoints.all_steps() == [model.global_step]


def test_train_begin_saves_when_the_directory_holds_no_checkpoint(model, checkpoints):
    saver = saver_for(model, checkpoints, save_steps=100)
    saver.on_train_begin()
    assert checkpoints.all_steps() == [model.global_step]


def test_a_step_that_is_the_latest_checkpoint_is_not_saved_again(model, checkpoints):
    listener = Recorder()
    saver = saver_for(model, checkpoints, save_steps=2, listeners=[listener])
    saver.on_train_batch_end(0, loop_logs(first_step=0, steps=2))
    saver.on_train_end(loop_logs(first_step=0, steps=2))
    assert [c for c in listener.calls if c[0] == "before_save"] == [("before_save", 2)]


def test_listeners_are_called_around_each_save_with_the_step(model, checkpoints):
    listener = Recorder()
    saver = saver_for(model, checkpoints, save_steps=2, listeners=[listener])
    saver.on_train_begin()
    saver.on_train_batch_end(0, loop_logs(first_step=0, steps=2))
    saver.on_train_end(loop_logs(first_step=2, steps=1))
    assert listener.calls == [
        ("begin",),
        ("before_save", 0), ("after_save", 0),
        ("before_save", 2), ("after_save", 2),
        ("before_save", 3), ("after_save", 3),
        ("end", 3),
    ]


def test_a_listener_returning_true_after_save_stops_training(model, checkpoints):
    saver = saver_for(model, checkpoints, save_steps=2, listeners=[Recorder(stop=True)])
    model.stop_training = False
    try:
        saver.on_train_batch_end(0, loop_logs(first_step=0, steps=2))
        assert model.stop_training
    finally:
        model.stop_training = False


def test_on_saved_is_told_each_step_written(model, checkpoints):
    saved = []
    saver = saver_for(model, checkpoints, save_steps=2, on_saved=saved.append)
    saver.on_train_batch_end(0, loop_logs(first_step=0, steps=2))
    saver.on_train_batch_end(1, loop_logs(first_step=2, steps=2))
    assert saved == [2, 4]


def test_without_save_steps_or_secs_nothing_is_saved_but_listeners_run(model, checkpoints):
    listener = Recorder()
    saver = saver_for(model, checkpoints, listeners=[listener])
    saver.on_train_begin()
    saver.on_train_batch_end(0, loop_logs(first_step=0, steps=2))
    saver.on_train_end(loop_logs(first_step=0, steps=2))
    assert checkpoints.all_steps() == []
    assert listener.calls == [("begin",), ("end", 2)]


def test_the_saved_checkpoint_holds_the_model_values(model, checkpoints):
    saver = saver_for(model, checkpoints, save_steps=2)
    saver.on_train_batch_end(0, loop_logs(first_step=0, steps=2))
    restored = checkpoints.restore(2)
    assert sorted(restored) == sorted(ckpt.model_values(model))
    np.testing.assert_array_equal(
        restored["dense/kernel"], np.asarray(ckpt.model_values(model)["dense/kernel"].value)
    )


# -- ModelDirCheckpoints: which checkpoint each model holds. -------------------


def test_loading_the_checkpoint_a_model_holds_reads_nothing(model, tmp_path, monkeypatch):
    checkpoints = ckpt.ModelDirCheckpoints(tmp_path / "model")
    checkpoints.directory.save(3, ckpt.model_values(model))
    assert checkpoints.load(model) == 3
    monkeypatch.setattr(ckpt.model_dir, "load_checkpoint", pytest.fail)
    assert checkpoints.load(model) == 3


def test_a_saved_step_counts_as_held(model, tmp_path, monkeypatch):
    checkpoints = ckpt.ModelDirCheckpoints(tmp_path / "model")
    checkpoints.directory.save(5, ckpt.model_values(model))
    checkpoints.saved(model, 5)
    monkeypatch.setattr(ckpt.model_dir, "load_checkpoint", pytest.fail)
    assert checkpoints.load(model) == 5


def test_training_without_checkpoints_continues_from_memory(model, tmp_path):
    checkpoints = ckpt.ModelDirCheckpoints(tmp_path / "model")
    assert checkpoints.training_start(model) == (0, False)
    checkpoints.training_began(model)
    checkpoints.training_ended(model)  # The step has no checkpoint: kept in memory.
    assert checkpoints.training_start(model) == (model.global_step, True)
