"""`SummaryCallback`: the training summaries TensorFlow's estimator wrote."""

import numbers
import os
import time

import keras

from keras_tpu_estimator.engine import logs as logs_lib
from keras_tpu_estimator.summary import traced
from keras_tpu_estimator.summary import writers


class SummaryCallback(keras.callbacks.Callback):
    """Writes the training `loss` and `global_step/sec` to TensorBoard.

    What TensorFlow's estimator wrote every `save_summary_steps`: after each
    training loop, the loss of every step of the loop whose step number is
    a multiple of `every_n_steps`, and the steps per second since the last
    write (from the second write on: the first loop compiles). A step's
    number is the global step after it (the loss of the 100th step is at
    step 100, as TensorFlow's `SummarySaverHook` recorded it), and
    `global_step/sec` is at the global step after the loop. The event file
    is flushed when training ends.

    While training, the summaries `model_fn` makes (`tf1.summary.scalar`,
    `image`, `histogram`, ...) are written at the same steps, from the
    compiled step itself (see `summary.traced`).

    The loop is read from the `logs` that `EstimatorModel.fit` gives
    `on_train_batch_end`: the global step before the loop
    (`LOOP_FIRST_STEP`) and the loss of each of its steps (`LOOP_LOSSES`).

    Args:
        logdir: the directory of the event files (the estimator's
            `model_dir`).
        every_n_steps: write every this many steps.

    Raises:
        ValueError: for `every_n_steps` that is not an int >= 1, or a
            `logdir` that is not a path; in `on_train_batch_end`, for logs
            without the loop's keys.

    Example:

    ```python
    model.fit(x, callbacks=[kte.summary.SummaryCallback("/tmp/model", 100)])
    kte.summary.read_scalars("/tmp/model")["loss"]   # [(100, 0.52), (200, 0.31), ...]
    ```
    """

    reads_loop_logs = True  # Gets the loop keys of `engine.logs`.

    def __init__(self, logdir, every_n_steps):
        super().__init__()
        writers.check_logdir(logdir)
        if (
            isinstance(every_n_steps, bool)
            or not isinstance(every_n_steps, numbers.Integral)
            or every_n_steps < 1
        ):
            raise ValueError(
                f"`every_n_steps` must be an int >= 1. Received: every_n_steps={every_n_steps!r}"
            )
        self.logdir = os.fspath(logdir)
        self.every_n_steps = int(every_n_steps)
        self._writer = None
        self._since = None
        self._steps = None

    def on_train_begin(self, logs=None):
        if self._writer is None:
            self._writer = writers.acquire(self.logdir)
        if self._steps is None:  # model_fn's summaries go where the loss goes.
            self._steps = traced.summary_steps(self.logdir, self.every_n_steps)
            self._steps.__enter__()
        self._since = None

    def on_train_batch_end(self, batch, logs=None):
        try:
            traced.raise_pending()  # A model_fn summary that failed stops training.
        except Exception:
            self._finish()  # Keras calls no on_train_end after an error.
            raise
        loop = logs_lib.loop_of(logs)
        if loop is None:
            raise logs_lib.missing_loop_error("SummaryCallback")
        first_step, losses = loop
        wrote = False
        for i, loss in enumerate(losses):
            step = first_step + i + 1
            if step % self.every_n_steps == 0:
                writers.write_scalar(self._writer, "loss", float(loss), step)
                wrote = True
        step, now = first_step + losses.size, time.perf_counter()
        if self._since is None:
            self._since = (step, now)
        elif wrote:
            since_step, since_time = self._since
            rate = (step - since_step) / max(now - since_time, 1e-9)
            writers.write_scalar(self._writer, "global_step/sec", rate, step)
            self._since = (step, now)
        if wrote:  # A run that fails later keeps what it wrote.
            self._writer.flush()

    def on_train_end(self, logs=None):
        self._finish()
        traced.raise_pending()

    def _finish(self):
        if self._steps is not None:
            steps, self._steps = self._steps, None
            steps.__exit__(None, None, None)
        if self._writer is not None:
            self._writer = None
            writers.release(self.logdir)
