"""What the hook modules share: argument checks (hooks, saving listeners, counts), the step timer, the loop a `logs` dict reports."""

import numbers
import time

import keras
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


def is_session_run_hook(value):
    """Whether `value` has any of the `SessionRunHook` methods (duck-typed, as TF1 code subclasses)."""
    return any(
        callable(getattr(value, name, None)) for name in ("begin", "before_run", "after_run", "end")
    )


def check_hook(hook, name):
    """Returns `hook` if it is one hook; `name` says where it was given (`"training_hooks[0]"`).

    A hook is a `SessionRunHook` (any object with its methods `begin`,
    `before_run`, `after_run` or `end`) or a `keras.callbacks.Callback`
    instance.

    Raises:
        TypeError: otherwise (a class, a string, any other object), naming
            `name` and the value.

    Example:

    ```python
    check_hook(object(), "training_hooks[0]")   # TypeError naming training_hooks[0]
    ```
    """
    if isinstance(hook, type) or not (
        isinstance(hook, keras.callbacks.Callback) or is_session_run_hook(hook)
    ):
        instance = " (a class: pass an instance of it)" if isinstance(hook, type) else ""
        raise TypeError(
            f"`{name}` must be a SessionRunHook (an object with begin, before_run, "
            f"after_run or end) or a keras.callbacks.Callback. Received: "
            f"{name}={describe(hook)}{instance}"
        )
    return hook


def check_hooks(hooks):
    """Returns `hooks` as a list, if it is None or a list of hooks.

    A hook is a `SessionRunHook` (any object with its methods `begin`,
    `before_run`, `after_run` or `end`) or a `keras.callbacks.Callback`: an
    instance, not a class.

    Args:
        hooks: the `hooks` argument of `train`, `evaluate` or `predict`.

    Returns:
        A new list (`[]` for None).

    Raises:
        TypeError: for a `hooks` that is not a list or tuple (a string, a
            single hook, a dict), or an element that is not a hook; the
            first words are TensorFlow's.

    Example:

    ```python
    check_hooks([kte.StopAtStepHook(last_step=100)])  # the list
    check_hooks("logging")                            # TypeError
    ```
    """
    if hooks is None:
        return []
    if not isinstance(hooks, (list, tuple)):
        raise TypeError(
            "`hooks` must be None or a list of SessionRunHook (or "
            f"keras.callbacks.Callback). Received: hooks={describe(hooks)} of "
            f"type {type(hooks).__name__}"
        )
    for hook in hooks:
        is_hook = isinstance(hook, keras.callbacks.Callback) or is_session_run_hook(hook)
        if isinstance(hook, type) or not is_hook:
            raise TypeError(
                "Hooks must be a SessionRunHook (an object with begin, before_run, "
                "after_run or end) or a keras.callbacks.Callback, given: "
                f"{describe(hook)} in hooks={describe(hooks)}"
            )
    return list(hooks)


_LISTENER_METHODS = ("begin", "before_save", "after_save", "end")


def check_saving_listeners(listeners):
    """Returns `train`'s `saving_listeners` as a list, if each is a listener.

    A listener is a `kte.CheckpointSaverListener`, or any object with its
    four methods `begin`, `before_save`, `after_save` and `end` (all are
    called).

    Args:
        listeners: None, or a list or tuple of listeners.

    Returns:
        A new list (`[]` for None).

    Raises:
        TypeError: otherwise, in TensorFlow's words, naming the value.

    Example:

    ```python
    check_saving_listeners([kte.CheckpointSaverListener()])  # the list
    check_saving_listeners([object()])                       # TypeError
    ```
    """
    if listeners is None:
        return []
    if not isinstance(listeners, (list, tuple)):
        raise TypeError(
            "saving_listeners must be a list of CheckpointSaverListener, given: "
            f"saving_listeners={describe(listeners)} of type {type(listeners).__name__}"
        )
    for listener in listeners:
        missing = [m for m in _LISTENER_METHODS if not callable(getattr(listener, m, None))]
        if isinstance(listener, type) or missing:
            raise TypeError(
                "saving_listeners must be a list of CheckpointSaverListener, given: "
                f"{describe(listener)} in saving_listeners={describe(listeners)} "
                "(a listener is a kte.CheckpointSaverListener instance, or has "
                f"methods {', '.join(_LISTENER_METHODS)})"
            )
    return list(listeners)
