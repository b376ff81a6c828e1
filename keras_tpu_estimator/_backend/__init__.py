"""Keras on its JAX backend: which backend runs, and how it computes on the CPU.

Holds `selection` (Keras loaded, or reloaded, on JAX when the package is
imported) and the CPU lowerings behind Keras's JAX `conv`, `conv_transpose`
and `max_pool` (`routing` installs `tf_kernels`, `im2col` and `tiled_pool`,
each switched by `lowering`), and what the CPU runtimes set up once per
process (`warm_up`, `host_memory`), and the XLA options loop programs
compile with on CPU devices (`compiler_options`). May import `log_lines` and `_keras_internals`; no
Keras at import time (it may be reloaded on JAX first).
"""

from keras_tpu_estimator._backend.selection import BACKEND
from keras_tpu_estimator._backend.selection import use_jax_backend

__all__ = ["BACKEND", "use_jax_backend"]
