"""Event-file writers: one per directory, shared; the writers host calls create.

Everything that writes summaries goes through `acquire(logdir)` /
`release(logdir)`: one TensorFlow writer (one event file) per directory in
this process, closed when its last user releases it. Host calls may create
`tf.summary.create_file_writer(model_dir)` after every step;
`host_call_writers` and `keep_writers` make that one writer per training run.
"""

import contextlib
import functools
import os
import sys
import threading

import jax

from keras_tpu_estimator._backend import warm_up

_local = threading.local()
_writers_lock = threading.Lock()
_writers = {}  # absolute logdir -> [tf writer, users]


def tf_module():
    """TensorFlow, imported when first needed."""
    import tensorflow as tf

    return tf


def check_logdir(logdir):
    """The absolute path of `logdir`; ValueError if it is not a path."""
    if not isinstance(logdir, (str, os.PathLike)) or not os.fspath(logdir):
        raise ValueError(f"`logdir` must be a directory path. Received: logdir={logdir!r}")
    return os.path.abspath(os.fspath(logdir))


def acquire(logdir):
    """The event-file writer of `logdir`, shared by everyone writing there.

    One writer per directory in this process: the estimator's summaries and
    a host call's land in one event file. With several processes, only
    process 0 writes (as only TensorFlow's chief did); the others get a
    writer that drops everything.
    """
    key = check_logdir(logdir)
    chief = jax.process_index() == 0
    with _writers_lock:
        entry = _writers.get(key)
        if entry is None or (chief and not os.path.isdir(key)):
            summary = tf_module().summary
            # TensorFlow's own function, also while host calls redirect it.
            create = _tf_create_file_writer()
            writer = create(key) if chief else summary.create_noop_writer()
            entry = _writers[key] = [writer, 0]
            if not _scalars_warmed.is_set():
                _scalars_warmed.set()
                warm_up.beside(_scalar_to_noop_writer)
        entry[1] += 1
        return entry[0]


_scalars_warmed = threading.Event()


def _scalar_to_noop_writer():
    """A process's first `tf.summary.scalar` costs 35-60 ms (2-core CPU), 34 of
    them whatever the writer: paid here, on the warm-up thread, writing
    nothing (summary writers are per thread), not at the first step's loss."""
    tf = tf_module()
    with tf.summary.create_noop_writer().as_default():
        tf.summary.scalar("warm_up", 0.0, step=0)


def release(logdir):
    """Gives back a writer of `acquire`: flushed, and closed with its last user."""
    key = check_logdir(logdir)
    with _writers_lock:
        entry = _writers.get(key)
        if entry is None:
            return
        entry[0].flush()
        entry[1] -= 1
        if entry[1] <= 0:
            entry[0].close()
            del _writers[key]


# ----------------------------------------------------------------------
# Writers a host call creates: one per logdir for the whole run.


def kept_writers():
    """The writers held open by the current `keep_writers` block (per thread), or None."""
    return getattr(_local, "kept", None)


# Open `keep_writers` blocks, of every thread; functions run as the outermost
# one of a thread ends, before its writers are released.
_keeping = [0]
_before_release = []


def keeping():
    """Whether a `keep_writers` block is open on any thread (a training run)."""
    return _keeping[0] > 0


def before_release(fn):
    """Registers `fn()` to run when a `keep_writers` block ends: `summary.traced`
    gives back the writers its writing thread held for the run."""
    _before_release.append(fn)


def keep(logdir):
    """The writer of `logdir`, held open until the outermost `keep_writers` block ends."""
    kept, key = kept_writers(), check_logdir(logdir)
    if key not in kept:
        kept[key] = acquire(logdir)
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
    if kept_writers() is not None:
        yield
        return
    _local.kept = {}
    with _writers_lock:
        _keeping[0] += 1
    try:
        yield
    finally:
        with _writers_lock:
            _keeping[0] -= 1
        for fn in _before_release:
            fn()
        kept, _local.kept = _local.kept, None
        for key in kept:
            release(key)


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
    tf = tf_module()
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
    current = tf_module().summary.create_file_writer
    if current is not _create_file_writer:
        _redirected.setdefault("tensorflow", current)
    return _redirected["tensorflow"]


def _create_file_writer(logdir, *args, **kwargs):
    """`tf.summary.create_file_writer` while host calls run: the kept writer of `logdir`."""
    if not getattr(_local, "in_host_call", False) or kept_writers() is None:
        return _tf_create_file_writer()(logdir, *args, **kwargs)
    return _shared_writer_class()(keep(logdir))


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




def hold_for_run(logdir):
    """In a training run (`keep_writers`), holds `logdir`'s writer open until it ends.

    TF1 built a writer once per graph: a host call or a `model_fn` that opens
    one (`create_file_writer(d).as_default()`), run or traced again at every
    step here, writes one event file per run.
    """
    if kept_writers() is not None:
        keep(logdir)


def write_scalar(writer, name, value, step):
    """Writes the scalar `name = value` at `step` with `writer`; True when written."""
    tf = tf_module()
    with writer.as_default():
        return bool(tf.summary.scalar(name, value, step=step))

