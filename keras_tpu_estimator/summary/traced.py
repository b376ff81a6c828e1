"""Summaries made inside the compiled `model_fn`: written from the device at their steps.

TF1's estimator wrote the summaries `model_fn` made (`tf.summary.scalar`,
`image`, `histogram`, ...) every `RunConfig.save_summary_steps` steps, with
its `SummarySaverHook`. Here `model_fn` is traced into the compiled training
step, where nothing can be written. A summary made there becomes, in the
step, a `jax.lax.cond` on the step number whose taken branch hands the
summary's values to the host (`jax.debug.callback`); a writing thread
encodes them (`summary.protos`) and writes them into the event file. So the
values leave the device only at the steps written, also inside an on-device
loop; images and audio are cut to their `max_outputs` first, on the device.
`SummaryCallback` waits for the writes after each loop. The writing thread
keeps each directory's writer open until the training run ends (the
outermost `writers.keep_writers` block), so a run writes one event file per
directory, as TF1's one graph-built writer did.

Where and how often: `SummaryCallback`, while training runs, publishes its
directory and period for the thread that trains (`summary_steps`); the step
reads them when it is traced. The summary of the step that takes the global
step from `s - 1` to `s` is written at step `s` when `s - 1` divides by the
period (steps 1, n + 1, 2n + 1, ..., as TensorFlow's `SummarySaverHook` wrote
them from step 0): the steps `SummaryCallback` writes the loss at, when
training starts at a multiple of the period.

Example (inside `model_fn`, through `compat.v1.summary`):

```python
tf1.summary.image("inputs", features["image"], max_outputs=2)
# -> at steps 1, 101, 201, ... (save_summary_steps=100): inputs/image/0, inputs/image/1
```
"""

import contextlib
import queue
import threading

import jax
import jax.numpy as jnp
import numpy as np

from keras_tpu_estimator.summary import protos
from keras_tpu_estimator.summary import writers

_local = threading.local()


@contextlib.contextmanager
def summary_steps(logdir, every_n_steps):
    """Inside the block, `model_fn` summaries traced on this thread go to `logdir`.

    They are written every `every_n_steps` global steps (1, n + 1, ...). `SummaryCallback`
    opens one for the length of training. Blocks nest (the innermost wins).

    Args:
        logdir: the event files' directory.
        every_n_steps: the period, an int >= 1.

    Yields:
        None.
    """
    previous = getattr(_local, "destination", None)
    _local.destination = (writers.check_logdir(logdir), int(every_n_steps))
    try:
        yield
    finally:
        _local.destination = previous


def destination():
    """`(logdir, every_n_steps)` of the innermost `summary_steps` block, or None."""
    return getattr(_local, "destination", None)


def _replicated(value):
    """`value` laid out whole on every device, when a distribution is in scope.

    The callback reads the whole value; asking for it replicated lets the
    compiler gather it once instead of warning that it cannot.
    """
    import keras

    distribution = keras.distribution.distribution()
    mesh = getattr(getattr(distribution, "device_mesh", None), "backend_mesh", None)
    if mesh is None or value.ndim == 0:
        return value
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    return jax.lax.with_sharding_constraint(value, sharding)


_errors_lock = threading.Lock()
_errors = []  # What writing raised: raised on the host by `raise_pending`.
_queue = queue.Queue()  # (logdir, build, step, arrays) handed over by the steps.
_worker_lock = threading.Lock()
_worker = []  # The writing thread, once started.


_muted = [0]


@contextlib.contextmanager
def muted():
    """Inside the block, summaries the steps hand over are dropped: steps run
    again (a loop rewound to a hook's stop) wrote theirs the first time."""
    _muted[0] += 1
    try:
        yield
    finally:
        _muted[0] -= 1


def _hand_over(logdir, build, step, arrays):
    """The device callback: queues the summary for the writing thread, and returns.

    It must not wait for anything. The arrays it gets live on the host's
    CPU device; reading them can wait for that device's threads, which, on
    a CPU-only machine, are the very threads running the step (the others
    waiting for this one): reading them here could stop the step forever.
    """
    if _muted[0]:
        return
    with _worker_lock:
        if not _worker:
            thread = threading.Thread(target=_work, name="kte-summary-writer", daemon=True)
            thread.start()
            _worker.append(thread)
    _queue.put((logdir, build, step, arrays))


def _work():
    while True:
        item = _queue.get()
        try:
            _write(*item)
        finally:
            _queue.task_done()


# The writers the writing thread holds open for the run: {logdir: writer}.
_held = {}
_held_lock = threading.Lock()


def _held_writer(logdir):
    key = writers.check_logdir(logdir)
    with _held_lock:
        if key not in _held:
            _held[key] = writers.acquire(logdir)
        return _held[key]


def _release_held():
    """At the run's end: the summaries handed over written, the writers given back."""
    wait()
    with _held_lock:
        held = list(_held)
        _held.clear()
    for key in held:
        writers.release(key)


writers.before_release(_release_held)


def _write(logdir, build, step, arrays):
    """The writing thread: encodes the summary and writes it at `step` into `logdir`.

    An error (a histogram of a NaN) is kept: `raise_pending` raises it on
    the training thread once the loop has run.
    """
    try:
        values = build(*[np.asarray(a) for a in arrays])
        kept = writers.keeping()
        writer = _held_writer(logdir) if kept else writers.acquire(logdir)
        try:
            if callable(values):  # It writes itself (TF2 summaries: TensorFlow's functions).
                values(writer, int(np.asarray(step)))
            else:
                protos.write(writer, values, int(np.asarray(step)))
        finally:
            if kept:
                writer.flush()
            else:
                writers.release(logdir)
    except Exception as error:  # noqa: BLE001 - raised again by raise_pending.
        error.add_note(f"(writing a model_fn summary at step {int(np.asarray(step))})")
        with _errors_lock:
            _errors.append(error)


def wait():
    """Blocks until every summary the steps handed over so far is written."""
    _queue.join()


def raise_pending():
    """Waits for the summaries handed over, then raises the first error writing one raised.

    `SummaryCallback` calls it after each loop: training stops there, as
    TF1's did at the step whose summary failed.
    """
    wait()
    with _errors_lock:
        errors, _errors[:] = list(_errors), []
    if errors:
        raise errors[0]


def emit(logdir, build, operands, step, when=None):
    """In a traced step: writes `build(*operands)` at `step` into `logdir` when `when` holds.

    Args:
        logdir: the event files' directory.
        build: `build(*numpy operands)`, run on the host: the
            `[Summary.Value]` to write, or a function `write(writer, step)`
            that writes the summary with TensorFlow's `writer`.
        operands: the summary's arrays (tensors of the step); not
            differentiated.
        step: the step written at (a traced integer).
        when: a traced boolean: write only at steps where it is true; None
            writes every step.
    """
    operands = [_replicated(jax.lax.stop_gradient(jnp.asarray(x))) for x in operands]
    step = jnp.asarray(step)

    def call():
        jax.debug.callback(lambda s, *a: _hand_over(logdir, build, s, a), step, *operands)

    if when is None:
        call()
    else:
        jax.lax.cond(when, call, lambda: None)
