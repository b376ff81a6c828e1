"""`tf.contrib.summary` as TPU host calls use it, on `kte.summary`.

TPU programs wrote their training summaries in the `host_call`, into a
writer they opened on `model_dir`:

```python
def host_call_fn(gs, loss, lr):
    gs = gs[0]
    with tf1.contrib.summary.create_file_writer(model_dir).as_default():
        with tf1.contrib.summary.always_record_summaries():
            tf1.contrib.summary.scalar("loss", loss[0], step=gs)
            tf1.contrib.summary.scalar("learning_rate", lr[0], step=gs)
            return tf1.contrib.summary.all_summary_ops()
```

Here the host call runs on the host with numpy values after each on-device
loop, and that same code writes TensorBoard event files through
`kte.summary`: the writer's `as_default()` is `kte.summary.record_summaries`
on its directory (sharing the event file `TPUEstimator.train` writes there),
and summaries are written when made, so `all_summary_ops()` has nothing to
return.
"""

import contextlib
import os
import threading

from keras_tpu_estimator import summary as _summary
from keras_tpu_estimator.compat.v1 import summary as _v1_summary

_local = threading.local()


class SummaryWriter:
    """A writer on one directory; `as_default()` makes it the destination."""

    def __init__(self, logdir):
        self.logdir = logdir

    def as_default(self):
        """A context in which `scalar` and `histogram` write into `logdir`."""
        return _summary.record_summaries(self.logdir)

    def flush(self):
        _summary.flush()

    def close(self):
        _summary.flush()

    def __repr__(self):
        return f"SummaryWriter(logdir={self.logdir!r})"


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None):
    """A `SummaryWriter` on `logdir`; the queue and flush settings are accepted.

    Args:
        logdir: the directory of the event files.
        max_queue, flush_millis, filename_suffix, name: accepted for
            compatibility; `kte.summary` manages its event files.

    Returns:
        A `SummaryWriter`.

    Raises:
        ValueError: if `logdir` is not a directory path.
    """
    if not isinstance(logdir, (str, os.PathLike)) or not os.fspath(logdir):
        raise ValueError(
            "`logdir` of create_file_writer must be a directory path. "
            f"Received: logdir={logdir!r}"
        )
    return SummaryWriter(logdir)


def _every():
    return getattr(_local, "every", 1)


@contextlib.contextmanager
def _recording(every):
    previous = _every()
    _local.every = every
    try:
        yield
    finally:
        _local.every = previous


def always_record_summaries():
    """A context in which every summary is written."""
    return _recording(1)


def record_summaries_every_n_global_steps(n, global_step=None):
    """A context in which summaries are written when their step divides by `n`.

    Raises:
        ValueError: if `n` is not a positive integer.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(
            "`n` of record_summaries_every_n_global_steps must be a positive "
            f"integer. Received: n={n!r}"
        )
    return _recording(n)


def _should_record(step):
    return step is None or int(step) % _every() == 0


def scalar(name, tensor, family=None, step=None):
    """Writes a scalar summary at `step`; True when written."""
    if not _should_record(step):
        return False
    return _v1_summary.scalar(name, tensor, family=family, step=step)


def histogram(name, tensor, family=None, step=None):
    """Writes a histogram summary at `step`; True when written."""
    if not _should_record(step):
        return False
    return _v1_summary.histogram(name, tensor, family=family, step=step)


def all_summary_ops():
    """Returns None: summaries are written when made, there are no ops to run."""
    return None
