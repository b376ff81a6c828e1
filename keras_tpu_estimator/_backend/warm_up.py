"""One-time start-up costs of the CPU runtimes, paid beside the tracing.

A process's first step pays, once, for what its runtimes set up at first
use: XLA:CPU's dot runtime (30-60 ms at the first dot of a process on a
2-core CPU, whatever the program) and each TensorFlow kernel the convolutions
call, per shape (10-25 ms: instantiated, oneDNN's code generated).
TensorFlow's step rate excluded its first step; a loop's steps share their
time. Both are set up on a daemon thread when they are known to be needed,
while the calling thread traces and compiles, so the first step finds them
done.

```python
with warm_up.xla_cpu_runtime(mesh.devices.flat):  # Once per process.
    program.lower(*args).compile()
warm_up.beside(run, *zeros)  # `run(*zeros)`, on the warm-up thread.
```
"""

import collections
import contextlib
import os
import threading

import jax
import numpy as np

THREAD_NAME = "kte-warm-up"

_started = threading.Event()
_lock = threading.Lock()
_pending = collections.deque()  # (fn, args, done): run in order by one thread.
_worker = None


def beside(fn, *args):
    """Runs `fn(*args)` on the warm-up thread, after what it was given before.

    One thread runs them one at a time (a model's kernels do not all start
    at once), and ends when none is left. What `fn` raises is dropped: the
    real call reports it.

    Returns:
        A `threading.Event` set when `fn` has run.
    """
    global _worker
    done = threading.Event()
    with _lock:
        _pending.append((fn, args, done))
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_run_pending, daemon=True, name=THREAD_NAME)
            _worker.start()
    return done


def _after_fork_in_child():
    """A forked child has no warm-up thread; its lock may have been held."""
    global _lock, _worker
    _lock, _worker = threading.Lock(), None
    _pending.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _run_pending():
    while True:
        with _lock:
            if not _pending:
                return
            fn, args, done = _pending.popleft()
        try:
            fn(*args)
        except Exception:  # noqa: BLE001, S110
            pass
        finally:
            done.set()


@contextlib.contextmanager
def xla_cpu_runtime(devices):
    """Sets up XLA:CPU's dot runtime while the block runs, once per process.

    The block (tracing and compiling a loop) runs beside it; the set-up
    has ended when the block has, so that nothing of it overlaps the loop.
    Does nothing unless `devices` are CPU devices.
    """
    devices = list(devices)
    done = None
    if devices and devices[0].platform == "cpu" and not _started.is_set():
        _started.set()
        ones = jax.device_put(np.ones((4, 4), np.float32), devices[0])
        done = beside(lambda: jax.block_until_ready(_first_dot(ones, ones)))
    try:
        yield
    finally:
        if done is not None:
            done.wait()


@jax.jit
def _first_dot(a, b):
    return a @ b
