"""`tf.contrib.summary`'s writers and recording conditions, on `kte.summary`.

TPU programs wrote their training summaries in the `host_call`, into a
writer they opened on `model_dir`, under a recording condition:

```python
def host_call_fn(gs, loss, lr):
    gs = gs[0]
    with tf1.contrib.summary.create_file_writer(model_dir).as_default():
        with tf1.contrib.summary.always_record_summaries():
            tf1.contrib.summary.scalar("loss", loss[0], step=gs)
            return tf1.contrib.summary.all_summary_ops()
```

The writer's `as_default()` is `kte.summary.record_summaries` on its
directory (sharing the event file `TPUEstimator.train` writes there). As in
TF1, a contrib summary is recorded only inside `always_record_summaries()`
or `record_summaries_every_n_global_steps(n)` (at steps that divide by `n`);
`recording_rule()` tells `summary.tf1` which one is open. Summaries are
written when made, so `all_summary_ops()` has nothing to return.
"""

import contextlib
import numbers
import os
import threading

from keras_tpu_estimator.summary import recording

_local = threading.local()


class SummaryWriter:
    """A writer on one directory; `as_default()` makes it the destination."""

    def __init__(self, logdir):
        self.logdir = logdir

    def as_default(self, step=None):
        """A context in which summaries are written into `logdir`."""
        del step
        return recording.record_summaries(self.logdir)

    def set_as_default(self, step=None):
        raise NotImplementedError(
            "SummaryWriter.set_as_default() has no end: use `with writer.as_default():`."
        )

    def init(self):
        """Nothing to initialize: the event file is opened by `as_default()`."""
        return None

    def flush(self):
        recording.flush()

    def close(self):
        recording.flush()

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


@contextlib.contextmanager
def _recording(rule):
    previous = getattr(_local, "rule", None)
    _local.rule = rule
    try:
        yield
    finally:
        _local.rule = previous


def recording_rule():
    """The open recording condition: a period (1: always), `(period, global_step)`, or None."""
    return getattr(_local, "rule", None)


def always_record_summaries():
    """A context in which every contrib summary is recorded."""
    return _recording(1)


def never_record_summaries():
    """A context in which no contrib summary is recorded."""
    return _recording(None)


def record_summaries_every_n_global_steps(n, global_step=None):
    """A context in which contrib summaries are recorded at steps that divide by `n`.

    Args:
        n: the period, an int >= 1.
        global_step: the step checked; default: each summary's step.

    Raises:
        ValueError: if `n` is not a positive integer.
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(
            "`n` of record_summaries_every_n_global_steps must be a positive "
            f"integer. Received: n={n!r}"
        )
    return _recording(int(n) if global_step is None else (int(n), global_step))


def all_summary_ops():
    """Returns None: summaries are written when made, there are no ops to run."""
    return None
