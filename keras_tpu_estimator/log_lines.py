"""The library's log lines, shown at the verbosity TensorFlow 1 programs set.

TensorFlow's estimator logged through TensorFlow's logger, so its INFO lines
(`loss = 0.31, step = 100 (0.052 sec)`, `global_step/sec: ...`, `Saving
checkpoints for ...`, `Saving dict for global step ...`) appeared after
`tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)`, or with
absl's verbosity (`absl.logging.set_verbosity`, `--verbosity` under
`absl.app.run`). This library logs to the Python logger
`"keras_tpu_estimator"` through `logger`, which follows those switches too:

- Configured through Python's `logging` (a level on `"keras_tpu_estimator"`,
  or on the root logger it inherits from), it is an ordinary logger: its
  level decides and its handlers print.
- Left without a level of its own, a line is also shown when TensorFlow's
  logger (`"tensorflow"`) or absl's (`"absl"`) is enabled for the line's
  level, by the handlers nearest that logger (its own, else its parent's).

Each line goes one of these ways only, and through a followed logger only
to its nearest handlers, so it is never shown twice. At the default
verbosity (WARNING, for TensorFlow, and for absl outside `absl.app.run`,
whose `--verbosity` defaults to INFO) INFO lines are not shown.

```python
from keras_tpu_estimator.log_lines import logger

logger.info("Saving checkpoints for %d into %s.", 100, "runs/mnist/100")
```
"""

import logging
import sys

NAME = "keras_tpu_estimator"

# The loggers whose verbosity TF1 programs set: `tf.compat.v1.logging` and absl's.
FOLLOWED = ("tensorflow", "absl")


class VerbosityLogger(logging.LoggerAdapter):
    """A logger that also shows its lines at other loggers' verbosity.

    Args:
        logger: the `logging.Logger` whose name and level the lines have.
        followed: names of loggers whose level also enables a line, when
            `logger` has no level of its own.

    Example:

    ```python
    import logging

    log = VerbosityLogger(logging.getLogger("my_library"), followed=("tensorflow",))
    logging.getLogger("tensorflow").setLevel(logging.INFO)
    log.isEnabledFor(logging.INFO)   # True
    ```
    """

    def __init__(self, logger, followed=FOLLOWED):
        super().__init__(logger, {})
        self.followed = tuple(followed)

    def target(self, level):
        """The logger whose handlers show a line of `level`, or None when it is not shown."""
        if self.logger.isEnabledFor(level):
            return self.logger
        if self.logger.level != logging.NOTSET:  # A level set on ours decides alone.
            return None
        for name in self.followed:
            other = logging.getLogger(name)
            if other.isEnabledFor(level):
                return other
        return None

    def isEnabledFor(self, level):
        return self.target(level) is not None

    def log(self, level, msg, *args, exc_info=None, stack_info=False, stacklevel=1, extra=None):
        target = self.target(level)
        if target is None:
            return
        # The caller's frame: past this method (LoggerAdapter's own frames are skipped).
        filename, line, function, stack = self.logger.findCaller(stack_info, stacklevel + 1)
        if isinstance(exc_info, BaseException):
            exc_info = (type(exc_info), exc_info, exc_info.__traceback__)
        elif exc_info and not isinstance(exc_info, tuple):
            exc_info = sys.exc_info()
        record = self.logger.makeRecord(self.logger.name, level, filename, line, msg, args,
                                        exc_info, function, extra, stack)
        if target is self.logger:
            if target.hasHandlers():
                target.handle(record)
            else:
                _last_resort(record)
        elif not target.disabled and target.filter(record):
            _nearest_handlers(target, record)


def _nearest_handlers(logger, record):
    """Hands `record` to the handlers nearest `logger`: its own, else its parent's, ...

    Not to all of them up the hierarchy, as propagation would: TensorFlow adds
    a handler to its logger when the root logger had none at the time, and a
    library that configures the root logger later (absl does, on its first
    log call) would make every line appear twice.
    """
    while logger is not None:
        if logger.handlers:
            for handler in logger.handlers:
                if record.levelno >= handler.level:
                    handler.handle(record)
            return
        logger = logger.parent if logger.propagate else None
    _last_resort(record)


def _last_resort(record):
    """Nothing is configured: Python's handler of last resort, without its
    WARNING threshold, since this level was asked for."""
    if logging.lastResort is not None:
        logging.lastResort.handle(record)


logger = VerbosityLogger(logging.getLogger(NAME))
