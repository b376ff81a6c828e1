"""What the hook modules share: argument checks, the step timer, the loop a `logs` dict reports."""

import numbers
import time

import numpy as np

from keras_tpu_estimator.log_lines import logger as log  # noqa: F401  (the hooks' logger)


def describe(value):
    """`repr(value)`, shortened for error messages."""
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def check_count(name, value, minimum, allow_none=True):
    """Raises ValueError unless `value` is an int >= `minimum` (or None, if allowed)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(
            f"`{name}` must be {'None or ' if allow_none else ''}an int >= "
            f"{minimum}. Received: {name}={value!r}"
        )


def global_step_of(model):
    """The model's global step: `EstimatorModel.global_step`, or its optimizer's iterations."""
    step = getattr(model, "global_step", None)
    if step is None:
        optimizer = getattr(model, "optimizer", None)
        step = 0 if optimizer is None else np.asarray(optimizer.iterations.value)
    return int(step)


class Timer:
    """When to act: every `every_steps` global steps or `every_secs` seconds.

    The first call triggers. By steps, a later one triggers when the step
    has reached a new multiple of `every_steps` (loops may jump over the
    multiple itself); by seconds, when `every_secs` have passed.
    """

    def __init__(self, every_steps=None, every_secs=None):
        self.every_steps, self.every_secs = every_steps, every_secs
        self.reset()

    def reset(self):
        self.last_step = self.last_time = None

    def should_trigger(self, step):
        if self.last_step is None:
            return True
        if step == self.last_step:
            return False
        if self.every_secs is not None:
            return time.perf_counter() - self.last_time >= self.every_secs
        if self.every_steps is not None:
            return step // self.every_steps > self.last_step // self.every_steps
        return False

    def update(self, step):
        """Marks `step` done; returns `(seconds, steps)` since the last, or Nones."""
        now = time.perf_counter()
        elapsed = (None, None)
        if self.last_step is not None:
            elapsed = (now - self.last_time, step - self.last_step)
        self.last_step, self.last_time = step, now
        return elapsed
