"""The estimator's INFO lines as TensorFlow's estimator wrote them: training and evaluation.

`LoggingCallback` logs the loss and the steps per second while training,
`EvaluationLoggingCallback` the start, end and results of an evaluation.
Both log to `kte.log_lines.logger`, so the lines show at
`tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)`, absl's
INFO verbosity, or a Python `logging` configuration of the
`"keras_tpu_estimator"` logger.
"""

import time

import keras

from keras_tpu_estimator.hooks._common import Timer
from keras_tpu_estimator.hooks._common import check_count
from keras_tpu_estimator.hooks._common import global_step_of
from keras_tpu_estimator.hooks._common import log
from keras_tpu_estimator.engine.logs import LOOP_RUNS
from keras_tpu_estimator.engine.logs import loop_of
from keras_tpu_estimator.engine.logs import missing_loop_error
from keras_tpu_estimator.engine.logs import run_steps
from keras_tpu_estimator.engine.logs import runs_of


class LoggingCallback(keras.callbacks.Callback):
    """Logs the loss and the training speed, as TensorFlow's estimator did.

    At INFO level, to the `keras_tpu_estimator` logger (see `kte.log_lines`):

        loss = 1.0, step = 0
        global_step/sec: 812.4
        loss = 0.123, step = 100 (0.123 sec)

    and when training ends, `Loss for final step: 0.123.`

    As TensorFlow's `LoggingTensorHook` and `StepCounterHook`, over the runs
    of each loop (`engine.logs.LOOP_RUNS`: every step with `use_tpu=False`,
    the loop on a TPU): the loss of the first run's (last) step, then of
    each run that starts `every_n_steps` steps (or more) after the last one
    logged, beside the global step that step read, before its increment
    (`step = 0, 100, 200, ...` from step 0); the seconds are those since
    the previous log. `global_step/sec` is logged at the first run
    `every_n_steps` steps after the first one (which only starts the
    clock), and so on (steps 101, 201, ... from step 0); a loop's runs
    share its time evenly. All is read from the `logs` that
    `EstimatorModel.fit` gives `on_train_batch_end`: the global step before
    the loop (`LOOP_FIRST_STEP`), the loss of each of its steps
    (`LOOP_LOSSES`) and its runs (`LOOP_RUNS`, `LOOP_STOP_RUN`).

    Args:
        every_n_steps: log every this many global steps
            (`RunConfig.log_step_count_steps`).

    Raises:
        ValueError: for `every_n_steps` that is not an int >= 1; in
            `on_train_batch_end`, for logs without those keys.

    Example:

    ```python
    model.fit(x, callbacks=[kte.hooks.LoggingCallback(every_n_steps=100)])
    ```
    """

    reads_loop_logs = True  # Gets the loop keys of `engine.logs`.

    def __init__(self, every_n_steps):
        super().__init__()
        check_count("every_n_steps", every_n_steps, 1, allow_none=False)
        self.every_n_steps = int(every_n_steps)
        self._timer = Timer(every_steps=self.every_n_steps)
        self._last_loss = None
        self._start = None  # The global step training started from.
        self._rate_since = None  # (step, time) the rate was last measured from.
        self._loop_began = None

    def on_train_begin(self, logs=None):
        self._timer.reset()
        self._last_loss = self._start = self._rate_since = None

    def on_train_batch_begin(self, batch, logs=None):
        self._loop_began = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        loop = loop_of(logs)
        if loop is None:
            raise missing_loop_error("LoggingCallback")
        first_step, losses = loop
        if not losses.size:
            return
        if self._start is None:
            self._start = first_step
        now = time.perf_counter()
        began = now if self._loop_began is None else self._loop_began
        total = int(logs.get(LOOP_RUNS, 1))
        for run in range(runs_of(logs)):
            start, stop = run_steps(run, total, losses.size)
            at = began + (now - began) * stop / losses.size
            self._rate(first_step + stop, at)
            loss, self._last_loss = losses[stop - 1], losses[stop - 1]
            # As LoggingTensorHook counted iterations: the steps done since
            # training began, when the run starts.
            iteration = first_step + start - self._start
            if self._timer.should_trigger(iteration):
                seconds = self._timer.update(iteration)[0]
                step = first_step + stop - 1  # The step the run's last step read.
                if seconds is None:
                    log.info("loss = %s, step = %d", loss, step)
                else:
                    log.info("loss = %s, step = %d (%.3f sec)", loss, step, seconds)
        self._loop_began = None

    def _rate(self, step, at):
        """Logs `global_step/sec` at `step` (reached at time `at`), when due."""
        if self._rate_since is None:
            self._rate_since = (step, at)
            return
        since_step, since_time = self._rate_since
        if step == since_step or step < since_step + self.every_n_steps:
            return
        log.info("global_step/sec: %g", (step - since_step) / max(at - since_time, 1e-9))
        self._rate_since = (step, at)

    def on_train_end(self, logs=None):
        if self._last_loss is not None:
            log.info("Loss for final step: %s.", self._last_loss)


def _timestamp():
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())


def format_results(results):
    """`results` as TensorFlow's estimator logged them: `"accuracy = 0.9, loss = 0.3"`.

    Keys sorted; byte strings left out.
    """
    return ", ".join(f"{key} = {value}" for key, value in sorted(results.items())
                     if not isinstance(value, bytes))


class EvaluationLoggingCallback(keras.callbacks.Callback):
    """Logs an evaluation's start, end and results, as TensorFlow's estimator did.

    At INFO level, to the `keras_tpu_estimator` logger (see `kte.log_lines`):

        Starting evaluation at 2026-11-24T08:30:00
        Inference Time : 0.41234s
        Finished evaluation at 2026-11-24T08:30:01
        Saving dict for global step 100: global_step = 100, loss = 0.31

    The results are the `logs` `evaluate` gives `on_test_end`, with the
    model's global step.

    Example:

    ```python
    model.evaluate(x, callbacks=[kte.hooks.EvaluationLoggingCallback()])
    ```
    """

    def __init__(self):
        super().__init__()
        self._started = None

    def on_test_begin(self, logs=None):
        self._started = time.perf_counter()
        log.info("Starting evaluation at %s", _timestamp())

    def on_test_end(self, logs=None):
        if self._started is not None:
            log.info("Inference Time : %.5fs", time.perf_counter() - self._started)
        log.info("Finished evaluation at %s", _timestamp())
        step = global_step_of(self.model)
        results = dict(logs or {}, global_step=step)
        log.info("Saving dict for global step %d: %s", step, format_results(results))
