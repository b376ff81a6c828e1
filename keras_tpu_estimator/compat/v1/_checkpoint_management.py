"""`tf.train.latest_checkpoint` and `checkpoints_iterator` over this library's checkpoints.

TF1 programs find checkpoints by their TensorFlow names and parse the step
from them; an evaluation job waits for each new one:

```python
for ckpt in tf1.train.checkpoints_iterator(model_dir, timeout=600):
    results = estimator.evaluate(input_fn, steps=100, checkpoint_path=ckpt)
    step = int(os.path.basename(ckpt).split("-")[1])
    if step >= train_steps:
        break
```

A `model_dir` holds TensorFlow checkpoints (`model.ckpt-<step>.index`, ...,
and the `checkpoint` state file), whether this library or TensorFlow wrote
them, and these functions give their prefixes as TensorFlow did:
`model_dir/model.ckpt-<step>`. `TPUEstimator.evaluate`, `predict` and
`export_saved_model`, `list_variables`, `load_variable` and warm starts
take them. They are re-exported by `keras_tpu_estimator.compat.v1.train`.
"""

import numbers
import os
import time

from keras_tpu_estimator import checkpoint as checkpoint_lib
from keras_tpu_estimator.log_lines import logger


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The newest checkpoint in `checkpoint_dir`, as `tf.compat.v1.train.latest_checkpoint`.

    Args:
        checkpoint_dir: a `model_dir`.
        latest_filename: the name of the state file (default `checkpoint`).

    Returns:
        The prefix of the newest complete checkpoint the state file lists
        (`checkpoint_dir/model.ckpt-<step>`; one whose files were removed is
        skipped); None when there is none (or no such directory).

    Raises:
        ValueError: if `checkpoint_dir` is not a path.

    Example:

    ```python
    latest_checkpoint("runs/resnet")   # "/abs/runs/resnet/model.ckpt-1200"
    ```
    """
    if latest_filename not in (None, "checkpoint"):
        import tensorflow as tf  # Another state file: TensorFlow's own reading.

        return tf.train.latest_checkpoint(os.fspath(checkpoint_dir), latest_filename)
    return checkpoint_lib.latest_checkpoint(checkpoint_dir)


def wait_for_new_checkpoint(checkpoint_dir, last_checkpoint=None, seconds_to_sleep=1,
                            timeout=None):
    """Waits until `latest_checkpoint(checkpoint_dir)` differs from `last_checkpoint`.

    As `tf.compat.v1.train.wait_for_new_checkpoint`.

    Args:
        checkpoint_dir: a `model_dir`.
        last_checkpoint: the checkpoint seen last (None: any checkpoint is new).
        seconds_to_sleep: how long to sleep between looks, in seconds.
        timeout: the most seconds to wait; None waits forever.

    Returns:
        The new checkpoint's path, or None on timeout.

    Raises:
        ValueError: for a negative `seconds_to_sleep` or `timeout`.
    """
    _check_seconds("seconds_to_sleep", seconds_to_sleep)
    _check_seconds("timeout", timeout, allow_none=True)
    logger.info("Waiting for new checkpoint at %s", checkpoint_dir)
    stop_time = time.time() + timeout if timeout is not None else None
    while True:
        path = latest_checkpoint(checkpoint_dir)
        if path is not None and path != last_checkpoint:
            logger.info("Found new checkpoint at %s", path)
            return path
        if stop_time is not None and time.time() + seconds_to_sleep > stop_time:
            return None
        time.sleep(seconds_to_sleep)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new checkpoint of `checkpoint_dir`, as `tf.compat.v1.train.checkpoints_iterator`.

    Waits for a checkpoint newer than the one yielded last and yields its
    path (`checkpoint_dir/model.ckpt-<step>` for this library's
    checkpoints). Only the newest is yielded: checkpoints written while the
    caller was busy are skipped, as in TensorFlow.

    Args:
        checkpoint_dir: a `model_dir`.
        min_interval_secs: the fewest seconds between two yields.
        timeout: the most seconds to wait for a new checkpoint; None waits
            forever.
        timeout_fn: called on timeout: the iterator ends if it returns
            True, and waits again otherwise. None: the iterator ends on
            timeout.

    Returns:
        An iterator of checkpoint paths (strings).

    Raises:
        ValueError: for a negative `min_interval_secs` or `timeout`, or a
            `timeout_fn` that is not callable.

    Example:

    ```python
    for ckpt in checkpoints_iterator("runs/resnet", timeout=60):
        estimator.evaluate(eval_input_fn, checkpoint_path=ckpt)
    ```
    """
    _check_seconds("min_interval_secs", min_interval_secs)
    _check_seconds("timeout", timeout, allow_none=True)
    if timeout_fn is not None and not callable(timeout_fn):
        raise ValueError(
            "Argument `timeout_fn` must be None or a function of no arguments "
            f"returning a bool. Received: timeout_fn={timeout_fn!r}"
        )
    return _iterate(checkpoint_dir, min_interval_secs, timeout, timeout_fn)


def _iterate(checkpoint_dir, min_interval_secs, timeout, timeout_fn):
    path = None
    while True:
        new_path = wait_for_new_checkpoint(checkpoint_dir, path, timeout=timeout)
        if new_path is None:
            if not timeout_fn:
                logger.info("Timed-out waiting for a checkpoint.")
                return
            if timeout_fn():
                return
            continue
        start = time.time()
        path = new_path
        yield path
        time_to_next = start + min_interval_secs - time.time()
        if time_to_next > 0:
            time.sleep(time_to_next)


def _check_seconds(name, value, allow_none=False):
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value < 0:
        allowed = "None or a number >= 0" if allow_none else "a number >= 0"
        raise ValueError(f"Argument `{name}` must be {allowed}. Received: {name}={value!r}")
