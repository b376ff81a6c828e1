"""How far `TPUEstimator.train` runs, and the callbacks it trains with.

Step limits: `steps` (more steps), `max_steps` (a last global step) and any
`StopAtStepHook` among the hooks; `check_step_limits` validates the first
two, `stop_step` reads the hooks, and `steps_to_run` combines them into the
number of steps to run from the start step. `training_callbacks` puts the
hooks, the checkpoint saver, step logging and summaries in the order they
must run.

```python
check_step_limits(steps=None, max_steps=1000)
remaining = steps_to_run(start, max_steps=1000, stop=stop_step(hooks, start))
callbacks = training_callbacks(hooks, saver, config)
```
"""

import math
import os

from keras_tpu_estimator import hooks as hooks_lib
from keras_tpu_estimator import summary as summary_lib
from keras_tpu_estimator.spec import ModeKeys


def check_step_limits(steps=None, max_steps=None):
    """Checks `train`'s `steps` and `max_steps`.

    Args:
        steps: None, or how many more steps to train.
        max_steps: None, or the global step to train until.

    Raises:
        ValueError: for both given, or either <= 0.

    Example:

    ```python
    check_step_limits(steps=100)                 # fine
    check_step_limits(steps=100, max_steps=10)   # ValueError
    ```
    """
    if steps is not None and max_steps is not None:
        raise ValueError("Can not provide both steps and max_steps.")
    if steps is not None and steps <= 0:
        raise ValueError(f"Must specify steps > 0, given: {steps}")
    if max_steps is not None and max_steps <= 0:
        raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")


def stop_step(hooks, start):
    """The first global step a `StopAtStepHook` in `hooks` stops at.

    Args:
        hooks: the training hooks and callbacks.
        start: the global step training starts from.

    Returns:
        The smallest target step of the `StopAtStepHook`s, or None without one.

    Example:

    ```python
    stop_step([kte.StopAtStepHook(num_steps=10)], start=5)  # 15
    ```
    """
    steps = [h.target_step(start) for h in hooks if isinstance(h, hooks_lib.StopAtStepHook)]
    return min(steps, default=None)


def steps_to_run(start, steps=None, max_steps=None, stop=None, endless=False):
    """How many steps training runs from `start`.

    Args:
        start: the global step training starts from.
        steps: None, or how many more steps to train.
        max_steps: None, or the global step to train until.
        stop: None, or the step a `StopAtStepHook` stops at (`stop_step`):
            loops end exactly there.
        endless: whether the training input never ends (repeated).

    Returns:
        The number of steps (at least 1 when `stop` is given), or None to
        train until the input ends.

    Raises:
        ValueError: for an `endless` input and no limit to stop it.

    Example:

    ```python
    steps_to_run(start=40, max_steps=100)          # 60
    steps_to_run(start=40, steps=100, stop=50)     # 10
    ```
    """
    remaining = steps if steps is not None else (
        max_steps - start if max_steps is not None else None
    )
    if stop is not None:
        until_stop = max(stop - start, 1)
        remaining = until_stop if remaining is None else min(remaining, until_stop)
    if remaining is None and endless:
        raise ValueError(
            "The training input is endless (repeated): give `steps` or `max_steps`."
        )
    return remaining


def training_callbacks(hooks, saver, config):
    """The Keras callbacks `train` runs with, in order.

    NaN checks come first, so that no checkpoint of NaN weights is written
    (a `NanTensorHook` of the user's replaces the built-in one); then the
    other hooks, the checkpoint `saver`, step logging
    (`log_step_count_steps`) and summaries (`save_summary_steps`).

    Args:
        hooks: Keras callbacks or `SessionRunHook`s (the user's and the
            spec's).
        saver: the checkpoint-saving callback.
        config: the estimator's `kte.RunConfig` (its `model_dir` gets the
            summaries).

    Returns:
        A list of Keras callbacks.

    Example:

    ```python
    callbacks = training_callbacks(hooks, checkpoints.saver(model, save_steps=100), config)
    model.fit(source, callbacks=callbacks)
    ```
    """
    nan_hooks = [h for h in hooks if isinstance(h, hooks_lib.NanTensorHook)]
    callbacks = hooks_lib.as_callbacks(
        (nan_hooks or [hooks_lib.NanTensorHook()])
        + [h for h in hooks if not isinstance(h, hooks_lib.NanTensorHook)],
        ModeKeys.TRAIN,
    )
    callbacks.append(saver)
    if config.log_step_count_steps:
        callbacks.append(hooks_lib.LoggingCallback(config.log_step_count_steps))
    if config.save_summary_steps:
        callbacks.append(summary_lib.SummaryCallback(
            config.model_dir, config.save_summary_steps,
            rate_every_n_steps=config.log_step_count_steps or 0))
    return callbacks


def saver_hooks(hooks, model_dir):
    """Takes the `CheckpointSaverHook`s out of the training hooks.

    Their schedules become checkpoint writers of the estimator's (the hooks
    hold schedules only).

    Args:
        hooks: the training hooks and callbacks.
        model_dir: the estimator's model directory.

    Returns:
        `(the other hooks, the CheckpointSaverHooks)`.

    Raises:
        ValueError: if a hook saves into another directory than `model_dir`.
    """
    savers = [h for h in hooks if isinstance(h, hooks_lib.CheckpointSaverHook)]
    for hook in savers:
        if os.path.abspath(os.fspath(hook.checkpoint_dir)) != os.path.abspath(model_dir):
            raise ValueError(
                "CheckpointSaverHook(checkpoint_dir=...) must be the estimator's model_dir "
                f"{model_dir!r}: checkpoints are written there. Received: "
                f"checkpoint_dir={hook.checkpoint_dir!r}")
    return [h for h in hooks if h not in savers], savers


def loop_alignment(save_steps, hooks):
    """The step count loops end on: every save step of `RunConfig` and the saver hooks'."""
    steps = [s for s in [save_steps] + [h.save_steps for h in hooks] if s]
    return math.gcd(*steps) if steps else None
