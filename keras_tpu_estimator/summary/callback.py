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

    What TensorFlow's estimator wrote, at the steps it wrote them. Each
    `session.run` the loop stands for (`engine.logs.LOOP_RUNS`: every step
    with `use_tpu=False`, the whole loop on a TPU) is a run, as
    TensorFlow's `SummarySaverHook` and `StepCounterHook` saw it:

    - `loss`: the loss of the first run's (last) step, then of the first run
      whose step, counted from there, is `every_n_steps` further: with runs
      of one step, a training from step 0 writes at steps 1, n + 1, 2n + 1,
      ...; from step s, at s + 1, s + n + 1, .... A loss is written at the
      global step after its step (the loss of the first step at step 1).
    - `global_step/sec`: the steps per second, at the first run `rate_every_n_steps`
      steps after the first one (which only starts the clock), and so on:
      n + 1, 2n + 1, ... from step 0. A loop's runs share its time evenly.

    The event file is flushed when training ends.

    While training, the summaries `model_fn` makes (`tf1.summary.scalar`,
    `image`, `histogram`, ...) are written from the compiled step itself
    (see `summary.traced`), at the steps 1, n + 1, 2n + 1, ... .

    The loop is read from the `logs` that `EstimatorModel.fit` gives
    `on_train_batch_end`: the global step before the loop
    (`LOOP_FIRST_STEP`), the loss of each of its steps (`LOOP_LOSSES`) and
    its runs (`LOOP_RUNS`, `LOOP_STOP_RUN`).

    Args:
        logdir: the directory of the event files (the estimator's
            `model_dir`).
        every_n_steps: write the loss every this many steps
            (`RunConfig.save_summary_steps`).
        rate_every_n_steps: write `global_step/sec` every this many steps
            (`RunConfig.log_step_count_steps`, as TensorFlow's
            `StepCounterHook`); None: `every_n_steps`; 0: never.

    Raises:
        ValueError: for `every_n_steps` that is not an int >= 1, a
            `rate_every_n_steps` that is not None or an int >= 0, or a
            `logdir` that is not a path; in `on_train_batch_end`, for logs
            without the loop's keys.

    Example:

    ```python
    model.fit(x, callbacks=[kte.summary.SummaryCallback("/tmp/model", 100)])
    kte.summary.read_scalars("/tmp/model")["loss"]   # [(1, 0.93), (101, 0.52), ...]
    ```
    """

    reads_loop_logs = True  # Gets the loop keys of `engine.logs`.

    def __init__(self, logdir, every_n_steps, rate_every_n_steps=None):
        super().__init__()
        writers.check_logdir(logdir)
        if not _is_count(every_n_steps, 1):
            raise ValueError(
                f"`every_n_steps` must be an int >= 1. Received: every_n_steps={every_n_steps!r}"
            )
        if rate_every_n_steps is not None and not _is_count(rate_every_n_steps, 0):
            raise ValueError(
                "`rate_every_n_steps` must be None or an int >= 0. Received: "
                f"rate_every_n_steps={rate_every_n_steps!r}"
            )
        self.logdir = os.fspath(logdir)
        self.every_n_steps = int(every_n_steps)
        self.rate_every_n_steps = (
            self.every_n_steps if rate_every_n_steps is None else int(rate_every_n_steps))
        self._writer = None
        self._steps = None
        self._last_loss_step = None  # The step the loss was last written at.
        self._next_step = None  # The step after the last run (SummarySaverHook's).
        self._rate_since = None  # (step, time) the rate was last measured from.
        self._loop_began = None

    def on_train_begin(self, logs=None):
        if self._writer is None:
            self._writer = writers.acquire(self.logdir)
        if self._steps is None:  # model_fn's summaries go where the loss goes.
            self._steps = traced.summary_steps(self.logdir, self.every_n_steps)
            self._steps.__enter__()
        self._last_loss_step = self._next_step = self._rate_since = None

    def on_train_batch_begin(self, batch, logs=None):
        self._loop_began = time.perf_counter()

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
        now = time.perf_counter()
        began = now if self._loop_began is None else self._loop_began
        total = int(logs.get(logs_lib.LOOP_RUNS, 1))
        wrote = False
        for run in range(logs_lib.runs_of(logs)):
            _, stop = logs_lib.run_steps(run, total, losses.size)
            step = first_step + stop
            if self._next_step is None or _due(self._next_step, self._last_loss_step,
                                               self.every_n_steps):
                writers.write_scalar(self._writer, "loss", float(losses[stop - 1]), step)
                self._last_loss_step, wrote = step, True
            self._next_step = step + 1
            at = began + (now - began) * stop / max(losses.size, 1)
            wrote = self._rate(step, at) or wrote
        self._loop_began = None
        if wrote:  # A run that fails later keeps what it wrote.
            self._writer.flush()

    def _rate(self, step, at):
        """`global_step/sec` at `step` (reached at time `at`), when due; whether written."""
        if not self.rate_every_n_steps:
            return False
        if self._rate_since is None:
            self._rate_since = (step, at)
            return False
        since_step, since_time = self._rate_since
        if not _due(step, since_step, self.rate_every_n_steps):
            return False
        rate = (step - since_step) / max(at - since_time, 1e-9)
        writers.write_scalar(self._writer, "global_step/sec", rate, step)
        self._rate_since = (step, at)
        return True

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


def _is_count(value, minimum):
    return (not isinstance(value, bool) and isinstance(value, numbers.Integral)
            and value >= minimum)


def _due(step, last, every):
    """TensorFlow's `SecondOrStepTimer` by steps: due at `last + every` or later."""
    return last is None or (step != last and step >= last + every)
