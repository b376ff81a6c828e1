"""Writing summaries: the default writer of `record_summaries`, `at_step`, `scalar`, `histogram`.

Also `read_scalars`, which reads scalars back from event files.
"""

import contextlib
import glob
import os
import threading

import numpy as np

from keras_tpu_estimator.summary import protos
from keras_tpu_estimator.summary import writers

_local = threading.local()


def _stack():
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


@contextlib.contextmanager
def record_summaries(logdir, step_fn=None):
    """Makes `logdir` the default destination of `scalar` and `histogram`.

    The default is per thread; contexts nest (the innermost wins). Leaving
    the context flushes the event file.

    Args:
        logdir: the directory of the event files (created if needed).
        step_fn: a function returning the step a summary written without
            `step=` gets: typically `lambda: model.global_step`. None: every
            summary must give its `step` (or be written inside `at_step`).

    Yields:
        None.

    Raises:
        ValueError: for a `logdir` that is not a path, or a `step_fn` that is
            not callable.

    Example:

    ```python
    with kte.summary.record_summaries("/tmp/logs", lambda: 7):
        kte.summary.scalar("accuracy", 0.9)   # at step 7
    ```
    """
    if step_fn is not None and not callable(step_fn):
        raise ValueError(
            "`step_fn` must be None or a function returning the step. "
            f"Received: step_fn={step_fn!r}"
        )
    entry = (writers.acquire(logdir), step_fn, writers.check_logdir(logdir))
    writers.hold_for_run(logdir)  # One event file per training run.
    stack = _stack()
    stack.append(entry)
    try:
        yield
    finally:
        for i in reversed(range(len(stack))):
            if stack[i] is entry:
                del stack[i]
                break
        writers.release(logdir)




def _steps():
    if not hasattr(_local, "steps"):
        _local.steps = []
    return _local.steps


@contextlib.contextmanager
def at_step(step):
    """Records the summaries written without `step=` at `step`.

    Inside the context, `scalar` and `histogram` (and the `compat.v1`
    summaries built on them) called without `step=` within
    `record_summaries` are recorded at `step` instead of at the
    `step_fn()` of `record_summaries`; a `step=` given to the summary still
    wins. The override is per thread; contexts nest (the innermost wins),
    and it applies whichever of `at_step` and `record_summaries` is
    entered first. `at_step` opens no writer: outside `record_summaries`
    nothing is written.

    Args:
        step: the step, an integer (a Python or numpy integer, or an array
            holding one).

    Yields:
        None.

    Raises:
        ValueError: for a `step` that is not one integer.

    Example:

    ```python
    with kte.summary.record_summaries("/tmp/logs", lambda: 100):
        kte.summary.scalar("a", 1.0)          # at step 100
        with kte.summary.at_step(97):
            kte.summary.scalar("b", 2.0)      # at step 97
            kte.summary.scalar("c", 3.0, step=5)  # at step 5
    ```
    """
    array = np.asarray(step)
    if array.size != 1 or array.dtype.kind not in "iu":
        raise ValueError(f"`step` must be an integer. Received: step={step!r}")
    steps = _steps()
    steps.append(int(array.reshape(())))
    try:
        yield
    finally:
        steps.pop()


def _current():
    stack = _stack()
    return stack[-1] if stack else None


def current_logdir():
    """The directory of the innermost `record_summaries` on this thread, or None."""
    current = _current()
    return None if current is None else current[2]


def write_values(values, step=None, name=None):
    """Writes TF1 `Summary.Value`s at `step` to the default writer of `record_summaries`.

    Args:
        values: a list of `Summary.Value` (see `summary.protos`).
        step: the step; defaults as in `scalar`.
        name: the summary's name, for messages.

    Returns:
        True when written; False outside `record_summaries`.
    """
    current = _current()
    if current is None:
        return False
    writer, step_fn, _ = current
    return protos.write(writer, values, _step(name, step, step_fn))


def resolve_step(name, step=None):
    """The step a summary written now gets (see `scalar`); None outside `record_summaries`."""
    current = _current()
    if current is None:
        return None
    return _step(name, step, current[1])


def _check_name(name):
    if not isinstance(name, str) or not name:
        raise ValueError(f"A summary `name` must be a non-empty string. Received: name={name!r}")


def _step(name, step, step_fn):
    if step is None:
        steps = _steps()
        if steps:
            return steps[-1]
        if step_fn is None:
            raise ValueError(
                f"Summary {name!r} has no `step`, and record_summaries was given "
                "no `step_fn`: pass `step=`."
            )
        step = step_fn()
    array = np.asarray(step)
    if array.size != 1 or array.dtype.kind not in "iu":
        raise ValueError(
            f"The `step` of summary {name!r} must be an integer. Received: step={step!r}"
        )
    return int(array.reshape(()))


def scalar(name, value, step=None):
    """Writes a scalar summary to the default writer of `record_summaries`.

    Args:
        name: the tag, e.g. `"loss"`.
        value: a number, or a numpy/JAX array with one element.
        step: the step; defaults to the step of the enclosing `at_step`,
            else to the `step_fn()` of `record_summaries`.

    Returns:
        True when written; False outside `record_summaries` (nothing is
        written, as `tf.summary.scalar` does without a default writer).

    Raises:
        ValueError: for an empty `name`, a `value` that is not one number,
            or no step.
    """
    _check_name(name)
    current = _current()
    if current is None:
        return False
    writer, step_fn, _ = current
    array = np.asarray(value)
    if array.size != 1 or array.dtype.kind not in "biuf":
        raise ValueError(
            f"The `value` of scalar summary {name!r} must be one number. "
            f"Received: value of shape {array.shape} and dtype {array.dtype}"
        )
    return writers.write_scalar(writer, name, float(array.reshape(())), _step(name, step, step_fn))


def histogram(name, values, step=None, buckets=None):
    """Writes a histogram summary of `values` to the default writer.

    Args:
        name: the tag, e.g. `"logits"`.
        values: a numpy/JAX array (any shape) or a list of numbers.
        step: the step; defaults to the step of the enclosing `at_step`,
            else to the `step_fn()` of `record_summaries`.
        buckets: the number of buckets; TensorFlow's default (30) if None.

    Returns:
        True when written; False outside `record_summaries`.

    Raises:
        ValueError: for an empty `name`, non-numeric `values`, or no step.
    """
    _check_name(name)
    current = _current()
    if current is None:
        return False
    writer, step_fn, _ = current
    array = np.asarray(values)
    if array.dtype.kind not in "biuf":
        raise ValueError(
            f"The `values` of histogram summary {name!r} must be numbers. "
            f"Received dtype {array.dtype}"
        )
    step = _step(name, step, step_fn)
    tf = writers.tf_module()
    with writer.as_default():
        return bool(tf.summary.histogram(name, array.astype("float64"), step=step, buckets=buckets))


def flush():
    """Flushes the default writer's event file; a no-op outside `record_summaries`."""
    current = _current()
    if current is not None:
        current[0].flush()


def read_scalars(logdir):
    """Reads the scalar summaries of the event files in `logdir`.

    Reads `logdir` itself, not its subdirectories (evaluation writes to
    `<model_dir>/eval`). Both kinds of scalar are read: TensorFlow 2's
    tensor summaries (what `scalar` writes) and TensorFlow 1's
    `simple_value`s.

    Args:
        logdir: a directory holding `events.out.tfevents.*` files.

    Returns:
        A dict `tag -> [(step, value), ...]`, sorted by step (in writing
        order for equal steps); `{}` when there is no event file.

    Raises:
        ValueError: if `logdir` is not a directory.
    """
    if not os.path.isdir(logdir):
        raise ValueError(f"`logdir` is not a directory. Received: logdir={logdir!r}")
    tf = writers.tf_module()
    from tensorflow.core.util import event_pb2

    scalars = {}
    pattern = os.path.join(glob.escape(os.fspath(logdir)), "events.out.tfevents.*")
    for path in sorted(glob.glob(pattern)):
        for record in tf.data.TFRecordDataset(path):
            event = event_pb2.Event.FromString(record.numpy())
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    number = float(value.simple_value)
                elif value.metadata.plugin_data.plugin_name == "scalars":
                    number = float(tf.make_ndarray(value.tensor))
                else:
                    continue
                scalars.setdefault(value.tag, []).append((int(event.step), number))
    return {tag: sorted(points, key=lambda point: point[0]) for tag, points in scalars.items()}


