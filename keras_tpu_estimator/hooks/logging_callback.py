"""`LoggingCallback`: the loss and steps per second in the log, as TensorFlow's estimator wrote them."""

import keras

from keras_tpu_estimator.hooks._common import Timer
from keras_tpu_estimator.hooks._common import check_count
from keras_tpu_estimator.hooks._common import log
from keras_tpu_estimator.engine.logs import loop_of
from keras_tpu_estimator.engine.logs import missing_loop_error


class LoggingCallback(keras.callbacks.Callback):
    """Logs the loss and the training speed, as TensorFlow's estimator did.

    After a training loop whose global step reaches a new multiple of
    `every_n_steps` (and after the first loop), logs at INFO level to the
    `keras_tpu_estimator` logger:

        global_step/sec: 812.4
        loss = 0.123, step = 100 (0.123 sec)

    The loss is that of the loop's last step, and the step the global step
    after the loop; the speed and the seconds are measured since the
    previous log, in wall time (the first log has neither: its loop
    included compilation). Both are read from the `logs` that
    `EstimatorModel.fit` gives `on_train_batch_end`: the global step before
    the loop (`LOOP_FIRST_STEP`) and the loss of each of its steps
    (`LOOP_LOSSES`).

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

    def __init__(self, every_n_steps):
        super().__init__()
        check_count("every_n_steps", every_n_steps, 1, allow_none=False)
        self.every_n_steps = int(every_n_steps)
        self._timer = Timer(every_steps=self.every_n_steps)

    def on_train_begin(self, logs=None):
        self._timer.reset()

    def on_train_batch_end(self, batch, logs=None):
        loop = loop_of(logs)
        if loop is None:
            raise missing_loop_error("LoggingCallback")
        first_step, losses = loop
        step = first_step + losses.size
        if not self._timer.should_trigger(step):
            return
        seconds, steps = self._timer.update(step)
        loss = losses[-1]
        if seconds is None:
            log.info("loss = %s, step = %d", loss, step)
            return
        log.info("global_step/sec: %g", steps / max(seconds, 1e-9))
        log.info("loss = %s, step = %d (%.3f sec)", loss, step, seconds)
