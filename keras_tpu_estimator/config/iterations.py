"""`iterations_per_loop`: a number of steps, or a time, per on-device loop."""

import collections
import re

from keras_tpu_estimator.config.checks import is_int


class IterationsPerLoop(collections.namedtuple("IterationsPerLoop", ["value", "unit"])):
    """A parsed `iterations_per_loop`: a number of steps or of seconds.

    Attributes:
        value: a positive int.
        unit: `"count"` (`value` steps per loop) or `"seconds"` (loop for
            `value` seconds; minutes and hours are converted).

    Example:

    ```python
    IterationsPerLoop(100, "count") == parse_iterations_per_loop(100)  # True
    ```
    """

    __slots__ = ()


_ITERATIONS_PER_LOOP_RE = re.compile(r"(?P<value>[1-9][0-9]*)(?P<unit>[smh]?)")
_SECONDS_PER_UNIT = {"s": 1, "m": 60, "h": 3600}


def parse_iterations_per_loop(value):
    """Parses an `iterations_per_loop` value.

    Args:
        value: a positive int (a number of steps), or a string `"<N>s"`,
            `"<N>m"` or `"<N>h"` with `N` a positive int (a time per loop).
            A string of digits alone counts steps, as in TensorFlow.

    Returns:
        An `IterationsPerLoop(value, unit)`, `unit` being `"count"` or
        `"seconds"`.

    Raises:
        ValueError: if `value` is none of these.

    Example:

    >>> parse_iterations_per_loop(100)
    IterationsPerLoop(value=100, unit='count')
    >>> parse_iterations_per_loop("2m")
    IterationsPerLoop(value=120, unit='seconds')
    """
    match = None
    if is_int(value):
        match = _ITERATIONS_PER_LOOP_RE.fullmatch(str(int(value)))
    elif isinstance(value, str):
        match = _ITERATIONS_PER_LOOP_RE.fullmatch(value)
    if match is None:
        raise ValueError(
            "Invalid TPUConfig `iterations_per_loop` value. Value must be "
            "positive integer value or time-based value `<N><s|m|h>` where "
            "<N> is any positive integer and `s`, `m`, `h` are unit of time in "
            "seconds, minutes, hours respectively. Examples of valid values: "
            f"`3600s`, `60m`, `1h`. Received: iterations_per_loop={value!r}"
        )
    steps, unit = int(match["value"]), match["unit"]
    if not unit:
        return IterationsPerLoop(steps, "count")
    return IterationsPerLoop(steps * _SECONDS_PER_UNIT[unit], "seconds")
