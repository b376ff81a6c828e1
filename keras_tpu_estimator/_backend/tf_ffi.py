"""TensorFlow's CPU kernels as an XLA FFI custom call, built on first use.

`tf_kernels` calls TensorFlow's convolution kernels from compiled JAX code.
Through a Python host callback each call takes the GIL, wraps every buffer
in Python and runs TensorFlow's op from Python; through this custom call
(`tf_ffi.cc`, TensorFlow's eager C API in the process's own eager context)
none of that happens: MNIST's warm steps ran 10-11% faster, cifar_keras's
2-6% (`docs/benchmarks.md`, issue 31's eighth pass). The kernels, and so
the values, are the same.

The shared library is compiled once per source, flags, TensorFlow and
jaxlib version (about 3 s, with `$CXX` or `g++`) into `$KTE_TF_FFI_CACHE`
(default `~/.cache/keras_tpu_estimator`), written whole under a lock, and
loaded from there afterwards. Without a compiler, or with `KTE_TF_FFI` set
to `0`/`false`/`off`/`no`, `available()` is False and `tf_kernels` keeps its
Python callbacks.

```python
if tf_ffi.available():
    y = tf_ffi.call("Conv2D", x, k, y_shape, strides=(1, 1, 1, 1),
                    padding="SAME", dilations=(1, 1, 1, 1))
```
"""

import ctypes
import functools
import hashlib
import logging
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import jax
import numpy as np

from keras_tpu_estimator._backend import switches
from keras_tpu_estimator._keras_internals import tf_eager_context

ENV_VAR = "KTE_TF_FFI"
CACHE_ENV_VAR = "KTE_TF_FFI_CACHE"
TARGET = "kte_tf_op"
SOURCE = pathlib.Path(__file__).with_name("tf_ffi.cc")
TENSORFLOW_LIBRARIES = ("libtensorflow_framework.so.2", "libtensorflow_cc.so.2")
# Not linked against `TENSORFLOW_LIBRARIES`: linking against the 790 MB
# libtensorflow_cc took 10 s of a 13 s build. Their symbols are bound when
# `_load` opens the library in this process. -O1: a call cost the same at
# -O0 to -O2 (TensorFlow's eager op is most of it); it compiles in 2.4 s,
# -O2 in 2.9 s.
FLAGS = ("-std=c++17", "-O1", "-shared", "-fPIC", "-w")

_log = logging.getLogger(__name__)


def _package_dir(name):
    return pathlib.Path(__import__(name).__file__).parent


def library_path():
    """Where the compiled library for this source and these versions lives."""
    import jaxlib  # noqa: PLC0415
    import tensorflow as tf  # noqa: PLC0415

    key = hashlib.sha256(SOURCE.read_bytes())
    key.update(f"{FLAGS} {tf.__version__} {jaxlib.__version__} {sys.platform}".encode())
    cache = os.environ.get(CACHE_ENV_VAR) or pathlib.Path.home() / ".cache" / "keras_tpu_estimator"
    return pathlib.Path(cache) / f"tf_ffi-{key.hexdigest()[:16]}.so"


def _compile(target):
    """Compiles `SOURCE` into `target`, written whole (a temporary file renamed)."""
    compiler = os.environ.get("CXX") or "g++"
    if shutil.which(compiler) is None:
        raise OSError(f"no C++ compiler ({compiler!r}) to build {SOURCE.name}")
    tensorflow = _package_dir("tensorflow")
    jaxlib = _package_dir("jaxlib")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".so", delete=False) as f:
        partial = pathlib.Path(f.name)
    try:
        subprocess.run(
            [compiler, *FLAGS, str(SOURCE), f"-I{jaxlib / 'include'}",
             f"-I{tensorflow / 'include'}", "-o", str(partial)],
            check=True, capture_output=True, text=True)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def _load():
    import filelock  # noqa: PLC0415

    path = library_path()
    with filelock.FileLock(f"{path}.lock"):
        if not path.exists():
            _compile(path)
    for name in TENSORFLOW_LIBRARIES:
        # Already loaded by TensorFlow's import; made global so the symbols
        # the library leaves undefined bind to them.
        ctypes.CDLL(str(_package_dir("tensorflow") / name), mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
    library = ctypes.CDLL(str(path))
    library.KteSetContext.argtypes = [ctypes.c_void_p]
    library.KteSetContext(tf_eager_context.pointer())
    jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(library.KteTfOp), platform="cpu")
    return library


def available():
    """Whether `call` can be used: the switch is on and the library loads.

    The first call builds the library if it is not cached yet; a failure is
    logged once and not retried, and `tf_kernels` keeps its Python callbacks.
    """
    return not switches.is_off(ENV_VAR) and _loaded()


@functools.cache
def _loaded():
    """Loads the library once per process; a failure is not retried."""
    try:
        _load()
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", "") or ""
        _log.warning("TensorFlow's kernels go through Python callbacks: %s %s", error,
                     detail[-2000:])
        return False
    return True


def call(op, a, b, shape, strides, padding, dilations, sizes_at=None):
    """TensorFlow's `op(a, b)` (float32, a convolution's attributes) from compiled code.

    Args:
        op: the op's name (`"Conv2D"`, `"Conv2DBackpropInput"`, ...).
        a, b: its two tensor inputs, float32.
        shape: the result's shape.
        strides, padding, dilations: the op's attributes, TensorFlow's form.
        sizes_at: for a backprop op, where its sizes input (`shape`, as
            int32) goes among the inputs (0 or 1); None for none.

    Returns:
        The result, float32, of `shape`.
    """
    result = jax.ShapeDtypeStruct(tuple(shape), np.float32)
    return jax.ffi.ffi_call(TARGET, result, vmap_method="sequential")(
        a, b, op=op, strides=np.asarray(strides, np.int64),
        dilations=np.asarray(dilations, np.int64), padding=padding,
        sizes_at=np.int64(-1 if sizes_at is None else sizes_at))
