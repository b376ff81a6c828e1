"""An evaluator never fails because a trainer in another process garbage-collects checkpoints.

TensorFlow's separate eval job (and `train_and_evaluate`) evaluates the
latest checkpoint of a `model_dir` while the trainer saves new ones and
deletes the oldest (`keep_checkpoint_max`). A checkpoint the evaluator lists,
chooses or reads may vanish at any moment; the evaluator then reads the
newest checkpoint left. Here a trainer saves every 5 steps, as fast as a tiny
model trains, keeping 1 or 2 checkpoints, while this process evaluates 30
times in a row; and each moment a deletion can strike (after the state file
is read, after a checkpoint's index is opened) is tested on its own.
"""

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator.checkpoint import readers
from keras_tpu_estimator.checkpoint import tf_files
from model_fns import DIM
from model_fns import estimator_config
from model_fns import input_fn_of
from model_fns import linear_data

BATCH = 8
SAVE_EVERY = 5
EVALUATIONS = 30

PAUSE = 0.01  # Seconds the trainer rests after each save, to share the cores.

# Trains each `model_dir keep` of its arguments in turn until `model_dir.stop` exists.
_TRAINER = textwrap.dedent(
    """
    import os, sys, time
    import keras
    sys.path.insert(0, sys.argv[1])
    import test_evaluate_while_training as t

    class Rest(keras.callbacks.Callback):
        def __init__(self, stop):
            super().__init__()
            self.stop = stop

        def on_train_batch_end(self, batch, logs=None):
            time.sleep(t.PAUSE)
            self.model.stop_training = os.path.exists(self.stop)

    for model_dir, keep in zip(sys.argv[2::2], sys.argv[3::2]):
        t.make_estimator(model_dir, keep=int(keep)).train(
            t.train_input, max_steps=10**9, hooks=[Rest(model_dir + ".stop")])
    """
)


def tiny_fn(features, labels, mode):
    """loss = mean((x w - y)^2) with w of shape (DIM, 1), trained by SGD."""
    import keras

    w = kte.get_variable("w", shape=(features["x"].shape[-1], 1), initializer="zeros")
    loss = keras.ops.mean(keras.ops.square(keras.ops.matmul(features["x"], w)[:, 0] - labels))
    if mode == kte.ModeKeys.EVAL:
        return kte.TPUEstimatorSpec(mode, loss=loss)
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.01))


def make_estimator(model_dir, keep):
    config = estimator_config(model_dir, save_every=SAVE_EVERY, loop=SAVE_EVERY,
                              keep_checkpoint_max=keep)
    return kte.TPUEstimator(model_fn=tiny_fn, config=config, use_tpu=False,
                            train_batch_size=BATCH, eval_batch_size=BATCH)


x, y = linear_data(BATCH)
train_input = input_fn_of(x, y, repeat=True)
eval_input = input_fn_of(x, y)


class Trainer:
    """One process training into `model_dir`s in turn (`keep` checkpoints each) until stopped.

    One process for all (it starts up once, compiles once): `stop(model_dir)`
    ends training there and starts the next.
    """

    def __init__(self, root, keeps):
        self.model_dirs = {keep: root / f"keep{keep}" for keep in keeps}
        self.log = root / "trainer.log"
        env = dict(os.environ, JAX_PLATFORMS="cpu", KERAS_BACKEND="jax",
                   XLA_FLAGS="--xla_force_host_platform_device_count=1")
        arguments = [a for keep, d in self.model_dirs.items() for a in (str(d), str(keep))]
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _TRAINER, os.path.dirname(__file__), *arguments],
                env=env, stdout=subprocess.DEVNULL, stderr=log,
            )

    def check_running(self):
        assert self.process.poll() is None, f"the trainer ended: {self.log.read_text()[-3000:]}"

    def wait_until_deleting(self, keep):
        """Waits until the trainer has deleted a checkpoint (saved `keep` + 1) of `keep`'s."""
        deadline = time.time() + 120
        directory = kte.checkpoint.CheckpointDirectory(str(self.model_dirs[keep]))
        while (directory.latest_step() or 0) < (keep + 1) * SAVE_EVERY:
            self.check_running()
            assert time.time() < deadline, "the trainer saved no checkpoints in 120 s"
            time.sleep(0.05)

    def stop(self, keep):
        open(f"{self.model_dirs[keep]}.stop", "w").close()

    def kill(self):
        self.process.kill()
        self.process.wait()


@pytest.fixture(scope="module")
def trainer(tmp_path_factory):
    started = Trainer(tmp_path_factory.mktemp("trainer"), keeps=(1, 2))
    yield started
    started.kill()


@pytest.mark.parametrize("keep", [1, 2])
def test_30_evaluations_beside_a_trainer_deleting_old_checkpoints_all_succeed(trainer, keep):
    evaluator = make_estimator(trainer.model_dirs[keep], keep)
    trainer.wait_until_deleting(keep)
    steps, failures = [], []
    for _ in range(EVALUATIONS):
        try:
            steps.append(evaluator.evaluate(eval_input, steps=1)["global_step"])
        except Exception as error:  # Counted, to report them all.
            failures.append(f"{type(error).__name__}: {error}")
    trainer.check_running()
    trainer.stop(keep)
    assert failures == [], f"{len(failures)} of {EVALUATIONS} evaluations failed: {failures}"
    assert steps == sorted(steps)  # Each read the latest checkpoint at its time.
    assert len(set(steps)) > 1  # The trainer saved (and deleted) meanwhile.


# -- Each moment a trainer's deletion can strike, alone. ------------------------------


def save(model_dir, step, keep=1):
    """What a trainer's save does: writes `step`, deleting the oldest beyond `keep`."""
    directory = kte.checkpoint.CheckpointDirectory(str(model_dir), max_to_keep=keep)
    directory.save(step, {"w": np.full((DIM, 1), step, "float32"), "global_step": step})


READS = {
    "evaluate": lambda d: make_estimator(d, 1).evaluate(eval_input, steps=1)["global_step"],
    "evaluate(checkpoint_path=model_dir)": lambda d: make_estimator(d, 1).evaluate(
        eval_input, steps=1, checkpoint_path=str(d))["global_step"],
    "get_variable_value": lambda d: int(make_estimator(d, 1).get_variable_value("global_step")),
    "latest_checkpoint": lambda d: kte.checkpoint.checkpoint_step(
        kte.checkpoint.latest_checkpoint(str(d)))[1],
    "CheckpointDirectory.restore": lambda d: int(
        kte.checkpoint.CheckpointDirectory(str(d)).restore()["global_step"]),
    "load_global_step_from_checkpoint_dir": lambda d: (
        kte.checkpoint.load_global_step_from_checkpoint_dir(str(d))),
}


def after_the_state_file_is_read(monkeypatch, model_dir):
    real = tf_files.read_state

    def read_state(directory):
        listed = real(directory)
        if not saved:
            saved.append(True)
            save(model_dir, 10)  # Lists model.ckpt-10, then deletes model.ckpt-5.
        return listed

    saved = []
    monkeypatch.setattr(tf_files, "read_state", read_state)


def after_the_index_is_opened(monkeypatch, model_dir):
    real = readers.TensorFlowReader.read

    def read(self, name):
        if not saved:
            saved.append(True)
            save(model_dir, 10)  # Deletes model.ckpt-5, whose values are not read yet.
        return real(self, name)

    saved = []
    monkeypatch.setattr(readers.TensorFlowReader, "read", read)


CASES = [(read, when) for read in READS
         for when in (after_the_state_file_is_read, after_the_index_is_opened)
         if not (read == "latest_checkpoint" and when is after_the_index_is_opened)]


@pytest.mark.parametrize("read, when", CASES,
                         ids=[f"{read}-{when.__name__}" for read, when in CASES])
def test_a_read_of_the_latest_gets_the_newest_when_a_trainer_deletes_its_choice(
        tmp_path, monkeypatch, read, when):
    save(tmp_path, 5)
    when(monkeypatch, tmp_path)
    assert READS[read](tmp_path) == 10
