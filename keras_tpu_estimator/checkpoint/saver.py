"""`CheckpointSaver`: the Keras callback that writes checkpoints while `EstimatorModel.fit` trains.

It knows only what it is given: the `CheckpointDirectory` to write, when to
save, whom to tell, and the global step, read from the `logs` of
`on_train_batch_end` (`EstimatorModel.fit` reports each on-device loop there).

```python
model.align_loops_to = 100   # loops end exactly at the steps saved
model.fit(train_input_fn, steps_per_epoch=1000, callbacks=[
    kte.checkpoint.CheckpointSaver(kte.checkpoint.CheckpointDirectory("runs/mnist"),
                                   save_steps=100)])
```
"""

import time

import keras

from keras_tpu_estimator.checkpoint.common import few
from keras_tpu_estimator.checkpoint.common import logger
from keras_tpu_estimator.checkpoint.model_state import model_values
from keras_tpu_estimator.checkpoint.model_state import non_finite_names
from keras_tpu_estimator.engine.logs import loop_of
from keras_tpu_estimator.hooks.stock import NanLossDuringTrainingError


class CheckpointSaver(keras.callbacks.Callback):
    """Saves checkpoints of an `EstimatorModel` during `fit`, as `RunConfig` says.

    Saves a checkpoint when training begins and the directory holds none,
    after each loop that ends on a multiple of `save_steps` or at least
    `save_secs` seconds after the last save, and when training ends. A step
    the directory already holds as its latest checkpoint is not saved again.
    With `save_steps` and `save_secs` both None nothing is saved, as in
    TensorFlow; the listeners' `begin` and `end` are still called.

    The global step after a loop is read from the `logs` that
    `EstimatorModel.fit` gives `on_train_batch_end`:
    `logs["loop_first_step"] + len(logs["loop_losses"])`. At `on_train_begin`,
    and at `on_train_end` when no loop ran, it is `model.global_step`.
    Loops must end exactly on the steps to save: set
    `model.align_loops_to = save_steps`.

    Args:
        checkpoints: the `CheckpointDirectory` to save into.
        save_steps: save every this many global steps; None or 0: not by steps.
        save_secs: save when this many seconds passed since the last save
            (checked after each loop); None or 0: not by time.
        listeners: `kte.CheckpointSaverListener`s, called around each save
            with `session=None`; `after_save` returning True stops training.
        on_saved: None, or a function called as `on_saved(step)` after each
            checkpoint this callback writes (e.g. to note that the model
            holds the checkpoint of `step`).

    Example:

    ```python
    checkpoints = kte.checkpoint.CheckpointDirectory("runs/mnist", max_to_keep=3)
    saver = kte.checkpoint.CheckpointSaver(checkpoints, save_steps=100)
    model.align_loops_to = 100
    model.fit(train_input_fn, steps_per_epoch=1000, callbacks=[saver])
    checkpoints.all_steps()   # [800, 900, 1000]
    ```
    """

    reads_loop_logs = True  # Gets the loop keys of `engine.logs`.

    def __init__(self, checkpoints, save_steps=None, save_secs=None, listeners=(),
                 on_saved=None):
        super().__init__()
        self._checkpoints = checkpoints
        self._every_steps = save_steps
        self._every_secs = save_secs
        self._listeners = list(listeners)
        self._on_saved = on_saved
        self._enabled = bool(save_steps or save_secs)
        self._last_time = time.time()

    def on_train_begin(self, logs=None):
        for listener in self._listeners:
            listener.begin()
        if self._enabled and self._checkpoints.latest_step() is None:
            self._save(self.model.global_step)

    def on_train_batch_end(self, batch, logs=None):
        if not self._enabled:
            return
        step = self._step_after(logs)
        due_steps = self._every_steps and step % self._every_steps == 0
        due_secs = self._every_secs and time.time() - self._last_time >= self._every_secs
        if due_steps or due_secs:
            self._save(step)

    def on_train_end(self, logs=None):
        step = self._step_after(logs)
        if self._enabled:
            self._save(step)
        for listener in self._listeners:
            listener.end(None, step)

    def _step_after(self, logs):
        """The global step after the loop `logs` reports; the model's without one."""
        loop = loop_of(logs)
        if loop is not None:
            first_step, losses = loop
            return first_step + len(losses)
        return self.model.global_step

    def _save(self, step):
        if self._checkpoints.latest_step() == step:
            return
        values = model_values(self.model)
        bad = non_finite_names(values)
        if bad:
            error = NonFiniteWeightsError(step, bad, self._checkpoints.latest_step())
            logger.error("%s", error)
            raise error
        for listener in self._listeners:
            listener.before_save(None, step)
        self._checkpoints.save(step, values)
        if self._on_saved is not None:
            self._on_saved(step)
        self._last_time = time.time()
        for listener in self._listeners:
            if listener.after_save(None, step):
                self.model.stop_training = True


class NonFiniteWeightsError(NanLossDuringTrainingError):
    """Raised instead of saving a checkpoint whose weights are NaN or infinite.

    A step can have a finite loss and a NaN gradient: its update makes the
    weights NaN, which no loss check sees before the next step. Such weights
    are never saved, so the latest checkpoint stays the last good one and
    training resumes from it. A `NanLossDuringTrainingError`, as TensorFlow's
    `NanTensorHook` raised for NaN losses.

    Attributes:
        global_step: the global step of the weights not saved (a gradient of
            a step before it was not finite).
        names: the names of the non-finite variables.
        latest_step: the step of the latest checkpoint, kept (or None).
    """

    def __init__(self, global_step, names, latest_step=None):
        super().__init__(global_step)
        self.names = list(names)
        self.latest_step = latest_step
        kept = (f"the latest checkpoint stays step {latest_step}" if latest_step is not None
                else "no checkpoint was written")
        self.args = (
            f"NaN or infinite weights at global step {global_step}: the variables "
            f"{few(self.names)} are not finite (a gradient of a step before step "
            f"{global_step} was, though its loss may be finite). Not saved: {kept}.",
        )

    def __str__(self):
        return self.args[0]
