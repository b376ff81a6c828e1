"""Keras on its JAX backend: which backend runs, and how it computes on the CPU.

Holds `selection` (Keras loaded, or reloaded, on JAX when the package is
imported) and the CPU lowerings behind Keras's JAX `conv` (`cpu_conv`) and
`max_pool` (`cpu_pool`). May import `log_lines` and `_keras_internals`; no
Keras at import time (it may be reloaded on JAX first).
"""

from keras_tpu_estimator._backend.selection import BACKEND
from keras_tpu_estimator._backend.selection import use_jax_backend

__all__ = ["BACKEND", "use_jax_backend"]
