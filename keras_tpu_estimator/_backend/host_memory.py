"""Freed host memory kept for the next step (glibc's `malloc`), on CPU devices.

XLA:CPU allocates a program's buffers with `malloc` when it runs and frees
them when it ends. glibc serves an allocation over its mmap threshold
(128 KiB, rising with what is freed up to 32 MiB) with fresh pages from the
kernel and gives them back when freed, and gives back the free top of its
heap past a trim threshold. A loop of steps then asks the kernel for the
same memory every step, and the kernel zeroes each page again at its first
touch: in a warm run of the corpus's DCGAN (batch 32, two 6272x1024 dense
layers) a sixth of the CPU time was page faults and page clearing, and 50
steps took 7.0-7.6 s.

`keep_freed_memory` asks glibc, once per process, to serve every allocation
from its heaps (`M_MMAP_MAX` 0) and never to give their free memory back
(`M_TRIM_THRESHOLD` 2 GiB): the same 50 steps take 5.5-5.6 s. The process
keeps the memory of its largest step (or array) for reuse, as TensorFlow's
and XLA's pooling allocators on accelerators keep theirs.

It does nothing off CPU devices, without glibc, when the environment already
sets glibc's malloc options (`MALLOC_*` variables or `glibc.malloc`
tunables), or with `KTE_KEEP_HOST_MEMORY=0`.

```python
host_memory.keep_freed_memory(mesh.devices.flat)  # Before a CPU loop runs.
```
"""

import ctypes
import os
import threading

from keras_tpu_estimator._backend import switches

ENV_VAR = "KTE_KEEP_HOST_MEMORY"

# glibc's <malloc.h>.
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
TRIM_THRESHOLD = 2**31 - 1  # mallopt takes an int.

_lock = threading.Lock()
_applied = None  # None: not asked yet; then whether the options were set.


def keep_freed_memory(devices):
    """Makes glibc keep freed memory for reuse, once per process, on CPU devices.

    Args:
        devices: the devices a loop runs on; nothing is changed unless they
            are CPU devices.

    Returns:
        Whether glibc keeps freed memory in this process (set now or before).
    """
    global _applied
    devices = list(devices)
    if not devices or any(device.platform != "cpu" for device in devices):
        return bool(_applied)
    with _lock:
        if _applied is None:
            _applied = _wanted() and _set_options()
    return _applied


def _wanted():
    if switches.is_off(ENV_VAR):
        return False
    # What the user chose for glibc's malloc stands.
    if any(name.startswith("MALLOC_") for name in os.environ):
        return False
    return "glibc.malloc." not in os.environ.get("GLIBC_TUNABLES", "")


def _set_options():
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (glibc's; musl has mallopt too)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
