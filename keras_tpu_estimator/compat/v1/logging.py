"""`tf.compat.v1.logging` on Python's `logging` (logger `"tensorflow"`).

```python
tf1.logging.set_verbosity(tf1.logging.INFO)
tf1.logging.info("*** Features ***")
```
"""

import logging as _logging

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = WARNING = _logging.WARNING
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_logger = _logging.getLogger("tensorflow")


def set_verbosity(level):
    """Sets the level of the `"tensorflow"` logger."""
    _logger.setLevel(level)


def get_verbosity():
    return _logger.getEffectiveLevel()


def debug(msg, *args, **kwargs):
    _logger.debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    _logger.info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    _logger.warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    _logger.error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    _logger.fatal(msg, *args, **kwargs)


def log(level, msg, *args, **kwargs):
    _logger.log(level, msg, *args, **kwargs)
