"""What the modules of `kte.checkpoint` share: the logger, path and argument helpers.

These are public so that each module of the package imports them by name;
they are not part of `kte.checkpoint`'s own namespace.
"""

import os

import numpy as np

from keras_tpu_estimator.log_lines import logger  # noqa: F401  (the checkpoint modules' logger)


def directory_string(path, argument):
    """Returns `path` as a string: absolute when local, unchanged when a URL (`gs://...`).

    Args:
        path: a string or `os.PathLike`.
        argument: the argument name used in error messages.

    Returns:
        A string.

    Raises:
        ValueError: if `path` is empty or not a path.

    Example:

    ```python
    directory_string("runs/mnist", "model_dir")   # "/abs/runs/mnist"
    ```
    """
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ValueError(
            f"Argument `{argument}` must be a non-empty path. Received: "
            f"{argument}={path!r}"
        )
    path = os.fspath(path)
    return path if "://" in path else os.path.abspath(path)


def join(directory, name):
    """Returns `directory/name`, for local directories and URLs alike.

    Example:

    ```python
    join("gs://bucket/run/", "100")   # "gs://bucket/run/100"
    ```
    """
    if "://" in directory:
        return directory.rstrip("/") + "/" + name
    return os.path.join(directory, name)


def check_step(step):
    """Returns `step` as an int, checking that it is an int >= 0.

    Raises:
        ValueError: for a negative, boolean or non-integer `step`.
    """
    if isinstance(step, (bool, np.bool_)) or not isinstance(step, (int, np.integer)) or step < 0:
        raise ValueError(f"Argument `step` must be an int >= 0. Received: step={step!r}")
    return int(step)


def few(names, limit=8):
    """Returns the first `limit` of `names` for an error message: `['a', 'b', ...]`."""
    names = list(names)
    shown = ", ".join(repr(n) for n in names[:limit])
    return f"[{shown}{', ...' if len(names) > limit else ''}]"


def short_repr(value, limit=200):
    """Returns `repr(value)`, cut to `limit` characters for an error message."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
