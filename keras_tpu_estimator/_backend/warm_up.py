"""One-time start-up costs of the CPU runtimes, paid beside the tracing.

A process's first step pays, once, for what its runtimes set up at first
use: XLA:CPU's dot runtime (30-60 ms at the first dot of a process on a
2-core CPU, whatever the program) and each TensorFlow graph the convolutions
call (10-25 ms: its kernels instantiated, oneDNN's code generated).
TensorFlow's step rate excluded its first step; a loop's steps share their
time. Both are started on a daemon thread when they are known to be
needed, while the calling thread traces and compiles, so the first step
finds them done.

```python
with warm_up.xla_cpu_runtime(mesh.devices.flat):  # Once per process.
    program.lower(*args).compile()
warm_up.beside(graph, *zeros)  # Runs `graph(*zeros)` on a thread.
```
"""

import contextlib
import threading

import jax
import numpy as np

THREAD_NAME = "kte-warm-up"

_started = threading.Event()


def beside(fn, *args):
    """Runs `fn(*args)` on a daemon thread; returns the thread at once.

    What it raises is dropped: the real call reports it.
    """

    def run():
        try:
            fn(*args)
        except Exception:  # noqa: BLE001, S110
            pass

    thread = threading.Thread(target=run, daemon=True, name=THREAD_NAME)
    thread.start()
    return thread


@contextlib.contextmanager
def xla_cpu_runtime(devices):
    """Sets up XLA:CPU's dot runtime while the block runs, once per process.

    The block (tracing and compiling a loop) runs beside it; the set-up
    has ended when the block has, so that nothing of it overlaps the loop.
    Does nothing unless `devices` are CPU devices.
    """
    devices = list(devices)
    thread = None
    if devices and devices[0].platform == "cpu" and not _started.is_set():
        _started.set()
        ones = jax.device_put(np.ones((4, 4), np.float32), devices[0])
        thread = beside(lambda: jax.block_until_ready(_first_dot(ones, ones)))
    try:
        yield
    finally:
        if thread is not None:
            thread.join()


@jax.jit
def _first_dot(a, b):
    return a @ b
