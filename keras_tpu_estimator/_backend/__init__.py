"""Keras on its JAX backend: which backend runs, and how it computes on the CPU.

Holds `selection` (Keras loaded, or reloaded, on JAX when the package is
imported); the CPU lowerings behind Keras's JAX `conv`, `conv_transpose`
and `max_pool` (`routing` installs `tf_kernels`, `im2col` and `tiled_pool`,
each switched by `lowering`; `tf_kernels` reaches TensorFlow through
`tf_ffi`'s custom call, which `tf_ffi_build` builds); what the CPU runtimes set up once per process
(`warm_up`, `host_memory`); the XLA options loop programs compile with on
CPU devices (`compiler_options`); and `switches`, which reads the settings'
environment variables. May import `log_lines` and `_keras_internals`; no
Keras at import time (it may be reloaded on JAX first).
"""

from keras_tpu_estimator._backend.selection import BACKEND
from keras_tpu_estimator._backend.selection import use_jax_backend

__all__ = ["BACKEND", "use_jax_backend"]
