"""TensorBoard summaries: scalars and histograms written to event files.

TensorFlow programs wrote summaries from a TPUEstimator `host_call`, inside
`tf.contrib.summary.create_file_writer(model_dir).as_default()`. Here the
host call receives numpy values and writes with this module, into the
writer that `record_summaries` makes the default (`TPUEstimator.train`
records into `model_dir` while it trains):

```python
def host_call(global_step, loss):
    kte.summary.scalar("loss", loss[0], step=global_step[0])

with kte.summary.record_summaries("runs/model", step_fn=lambda: model.global_step):
    model.fit(...)              # the model_fn returns host_call=(host_call, [...])
kte.summary.read_scalars("runs/model")   # {'loss': [(0, 2.3), (1, 2.1), ...]}
```

Outside `record_summaries`, `scalar` and `histogram` write nothing and
return False, as `tf.summary` does without a default writer. The default
writer is per thread. TensorFlow is imported when a summary is first
written, not with this module; the event files are TensorFlow's own
(`tf.summary.create_file_writer`), so TensorBoard reads them.

`SummaryCallback` writes what TensorFlow's estimator wrote while training:
the `loss` and `global_step/sec`, every `RunConfig.save_summary_steps`.
"""

import contextlib
import functools
import glob
import numbers
import os
import sys
import threading
import time

import jax
import keras
import numpy as np

_local = threading.local()
_writers_lock = threading.Lock()
_writers = {}  # absolute logdir -> [tf writer, users]


def _tf():
    import tensorflow as tf

    return tf


def _key(logdir):
    if not isinstance(logdir, (str, os.PathLike)) or not os.fspath(logdir):
        raise ValueError(f"`logdir` must be a directory path. Received: logdir={logdir!r}")
    return os.path.abspath(os.fspath(logdir))


def _acquire(logdir):
    """The event-file writer of `logdir`, shared by everyone writing there.

    One writer per directory in this process: the estimator's summaries and
    a host call's land in one event file. With several processes, only
    process 0 writes (as only TensorFlow's chief did); the others get a
    writer that drops everything.
    """
    key = _key(logdir)
    chief = jax.process_index() == 0
    with _writers_lock:
        entry = _writers.get(key)
        if entry is None or (chief and not os.path.isdir(key)):
            summary = _tf().summary
            # TensorFlow's own function, also while host calls redirect it.
            create = _tf_create_file_writer()
            writer = create(key) if chief else summary.create_noop_writer()
            entry = _writers[key] = [writer, 0]
        entry[1] += 1
        return entry[0]


def _release(logdir):
    key = _key(logdir)
    with _writers_lock:
        entry = _writers.get(key)
        if entry is None:
            return
        entry[0].flush()
        entry[1] -= 1
        if entry[1] <= 0:
            entry[0].close()
            del _writers[key]


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
            summary must give its `step`.

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
    entry = (_acquire(logdir), step_fn)
    if _kept() is not None and getattr(_local, "in_host_call", False):
        _keep(logdir)  # A host call's writer lasts until training ends.
    stack = _stack()
    stack.append(entry)
    try:
        yield
    finally:
        for i in reversed(range(len(stack))):
            if stack[i] is entry:
                del stack[i]
                break
        _release(logdir)


# ----------------------------------------------------------------------
# Writers a host call creates: one per logdir for the whole run.


def _kept():
    return getattr(_local, "kept", None)


def _keep(logdir):
    """The writer of `logdir`, held open until the outermost `keep_writers` block ends."""
    kept, key = _kept(), _key(logdir)
    if key not in kept:
        kept[key] = _acquire(logdir)
    return kept[key]


@contextlib.contextmanager
def keep_writers():
    """Writers a host call opens inside the block stay open until the block ends.

    TensorFlow called a `host_call` function once, to build its graph, so a
    `tf.summary.create_file_writer(model_dir)` inside it made one writer
    and one event file. Here the function runs after every step; inside
    this block (`EstimatorModel.fit` runs in one) the writer it creates for
    a directory is made once and reused until the block ends, when it is
    closed. Blocks nest (the outermost one closes); they are per thread.

    Yields:
        None.
    """
    if _kept() is not None:
        yield
        return
    _local.kept = {}
    try:
        yield
    finally:
        kept, _local.kept = _local.kept, None
        for key in kept:
            _release(key)


def keeps_writers(method):
    """Decorates `method` to run inside `keep_writers()`."""

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        with keep_writers():
            return method(*args, **kwargs)

    return wrapper


_redirect_lock = threading.Lock()
# "tensorflow": TensorFlow's own create_file_writer, once seen; "modules":
# the API modules where it is replaced while `users` blocks are open.
_redirected = {"users": 0, "modules": []}


def _shared_writer_class():
    tf = _tf()
    cls = globals().get("_SharedWriter")
    if cls is None:

        class _SharedWriter(tf.summary.SummaryWriter):
            """What `tf.summary.create_file_writer` returns in a host call: the shared writer.

            `close()` only flushes: the writer is closed when training ends.
            """

            def __init__(self, writer):
                self._writer = writer

            def set_as_default(self, step=None):
                self._writer.set_as_default(step=step)

            def as_default(self, step=None):
                return self._writer.as_default(step=step)

            def init(self):
                return self._writer.init()

            def flush(self):
                return self._writer.flush()

            def close(self):
                return self._writer.flush()

        cls = globals()["_SharedWriter"] = _SharedWriter
    return cls


def _tf_create_file_writer():
    """TensorFlow's own `create_file_writer`, never the redirection below."""
    current = _tf().summary.create_file_writer
    if current is not _create_file_writer:
        _redirected.setdefault("tensorflow", current)
    return _redirected["tensorflow"]


def _create_file_writer(logdir, *args, **kwargs):
    """`tf.summary.create_file_writer` while host calls run: the kept writer of `logdir`."""
    if not getattr(_local, "in_host_call", False) or _kept() is None:
        return _tf_create_file_writer()(logdir, *args, **kwargs)
    return _shared_writer_class()(_keep(logdir))


@contextlib.contextmanager
def host_call_writers():
    """Inside the block, `tf.summary.create_file_writer(logdir)` reuses one writer per logdir.

    `EstimatorModel` runs host calls inside it: the writer a host call
    creates (and its event file) is created once per training run (see
    `keep_writers`), whatever `max_queue`, `flush_millis` or
    `filename_suffix` later calls give. Its `close()` only flushes.
    `tf.summary.create_file_writer` is replaced in TensorFlow's API modules
    (`tf.summary`, `tf.compat.v2.summary`) while a block is open, for this
    thread only: other threads get TensorFlow's own.

    Yields:
        None.
    """
    original = _tf_create_file_writer()
    with _redirect_lock:
        if _redirected["users"] == 0:
            for module in list(sys.modules.values()):
                if getattr(module, "create_file_writer", None) is original:
                    module.create_file_writer = _create_file_writer
                    _redirected["modules"].append(module)
        _redirected["users"] += 1
    previous = getattr(_local, "in_host_call", False)
    _local.in_host_call = True
    try:
        with keep_writers():
            yield
    finally:
        _local.in_host_call = previous
        with _redirect_lock:
            _redirected["users"] -= 1
            if _redirected["users"] == 0:
                for module in _redirected["modules"]:
                    module.create_file_writer = original
                _redirected["modules"] = []


def _current():
    stack = _stack()
    return stack[-1] if stack else None


def _check_name(name):
    if not isinstance(name, str) or not name:
        raise ValueError(f"A summary `name` must be a non-empty string. Received: name={name!r}")


def _step(name, step, step_fn):
    if step is None:
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


def _write_scalar(writer, name, value, step):
    tf = _tf()
    with writer.as_default():
        return bool(tf.summary.scalar(name, value, step=step))


def scalar(name, value, step=None):
    """Writes a scalar summary to the default writer of `record_summaries`.

    Args:
        name: the tag, e.g. `"loss"`.
        value: a number, or a numpy/JAX array with one element.
        step: the step; defaults to the `step_fn()` of `record_summaries`.

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
    writer, step_fn = current
    array = np.asarray(value)
    if array.size != 1 or array.dtype.kind not in "biuf":
        raise ValueError(
            f"The `value` of scalar summary {name!r} must be one number. "
            f"Received: value of shape {array.shape} and dtype {array.dtype}"
        )
    return _write_scalar(writer, name, float(array.reshape(())), _step(name, step, step_fn))


def histogram(name, values, step=None, buckets=None):
    """Writes a histogram summary of `values` to the default writer.

    Args:
        name: the tag, e.g. `"logits"`.
        values: a numpy/JAX array (any shape) or a list of numbers.
        step: the step; defaults to the `step_fn()` of `record_summaries`.
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
    writer, step_fn = current
    array = np.asarray(values)
    if array.dtype.kind not in "biuf":
        raise ValueError(
            f"The `values` of histogram summary {name!r} must be numbers. "
            f"Received dtype {array.dtype}"
        )
    step = _step(name, step, step_fn)
    tf = _tf()
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
    tf = _tf()
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


class SummaryCallback(keras.callbacks.Callback):
    """Writes the training `loss` and `global_step/sec` to TensorBoard.

    What TensorFlow's estimator wrote every `save_summary_steps`: after each
    training loop, the loss of every step of the loop whose step number is
    a multiple of `every_n_steps`, and the steps per second since the last
    write (from the second write on: the first loop compiles). A step's
    number is the global step after it (the loss of the 100th step is at
    step 100, as TensorFlow's `SummarySaverHook` recorded it), and
    `global_step/sec` is at the global step after the loop. The event file
    is flushed when training ends.

    Args:
        logdir: the directory of the event files (the estimator's
            `model_dir`).
        every_n_steps: write every this many steps.
        model: the `EstimatorModel` whose `last_loop` is read; defaults to
            the model the callback is attached to.

    Raises:
        ValueError: for `every_n_steps` that is not an int >= 1, or a
            `logdir` that is not a path.
    """

    def __init__(self, logdir, every_n_steps, model=None):
        super().__init__()
        _key(logdir)
        if (
            isinstance(every_n_steps, bool)
            or not isinstance(every_n_steps, numbers.Integral)
            or every_n_steps < 1
        ):
            raise ValueError(
                f"`every_n_steps` must be an int >= 1. Received: every_n_steps={every_n_steps!r}"
            )
        self.logdir = os.fspath(logdir)
        self.every_n_steps = int(every_n_steps)
        self._owner = model
        self._writer = None
        self._since = None

    def on_train_begin(self, logs=None):
        if self._writer is None:
            self._writer = _acquire(self.logdir)
        self._since = None

    def on_train_batch_end(self, batch, logs=None):
        model = self._owner if self._owner is not None else self.model
        loop = model.last_loop
        losses = np.asarray(loop.losses)
        wrote = False
        for i, loss in enumerate(losses):
            step = int(loop.first_step) + i + 1
            if step % self.every_n_steps == 0:
                _write_scalar(self._writer, "loss", float(loss), step)
                wrote = True
        step, now = int(loop.first_step) + losses.size, time.perf_counter()
        if self._since is None:
            self._since = (step, now)
        elif wrote:
            since_step, since_time = self._since
            rate = (step - since_step) / max(now - since_time, 1e-9)
            _write_scalar(self._writer, "global_step/sec", rate, step)
            self._since = (step, now)
        if wrote:  # A run that fails later keeps what it wrote.
            self._writer.flush()

    def on_train_end(self, logs=None):
        if self._writer is not None:
            self._writer = None
            _release(self.logdir)
