"""TensorFlow's CPU kernels as an XLA FFI custom call, loaded on first use.

`tf_kernels` calls TensorFlow's convolution kernels from compiled JAX code.
Through a Python host callback each call takes the GIL, wraps every buffer
in Python and runs TensorFlow's op from Python; through this custom call
(`tf_ffi.cc`, TensorFlow's eager C API in the process's own eager context)
none of that happens: MNIST's warm steps ran 10-11% faster, cifar_keras's
2-6% (`docs/benchmarks.md`, issue 31's eighth pass). The kernels, and so
the values, are the same.

The shared library is built by `tf_ffi_build` (at import, on a thread of
its own, once per installation) and loaded here on first use. Without a
compiler, or with `KTE_TF_FFI` set to `0`/`false`/`off`/`no`, `available()`
is False and `tf_kernels` keeps its Python callbacks.

```python
if tf_ffi.available():
    y = tf_ffi.call("Conv2D", x, k, y_shape, strides=(1, 1, 1, 1),
                    padding="SAME", dilations=(1, 1, 1, 1))
```
"""

import ctypes
import functools
import logging
import os
import subprocess

import jax
import numpy as np

from keras_tpu_estimator._backend import switches
from keras_tpu_estimator._backend import tf_ffi_build
from keras_tpu_estimator._keras_internals import tf_eager_context

ENV_VAR = tf_ffi_build.ENV_VAR
TARGET = "kte_tf_op"
# Already loaded by TensorFlow's import; made global before the library is
# opened, so the symbols it leaves undefined bind to them.
TENSORFLOW_LIBRARIES = ("libtensorflow_framework.so.2", "libtensorflow_cc.so.2")

_log = logging.getLogger(__name__)


def _load():
    path = tf_ffi_build.built()
    context = tf_eager_context.pointer()  # TensorFlow imported
    tensorflow = tf_ffi_build.package_dir("tensorflow")
    for name in TENSORFLOW_LIBRARIES:
        ctypes.CDLL(str(tensorflow / name), mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
    library = ctypes.CDLL(str(path))
    library.KteSetContext.argtypes = [ctypes.c_void_p]
    library.KteSetContext(context)
    jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(library.KteTfOp), platform="cpu")
    return library


def available():
    """Whether `call` can be used: the switch is on and the library loads.

    The first call waits for the library's build if it is not cached yet; a
    failure is logged once and not retried, and `tf_kernels` keeps its Python callbacks.
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
