"""When the CPU lowerings of `_backend` apply: one switch, read at trace time.

The lowerings (`im2col`, `tiled_pool`, `tf_kernels`) replace XLA:CPU's own
convolutions and poolings where they are faster. They apply only on the CPU
backend, only while `KTE_CPU_CONV` is not `"0"`/`"off"`, and never inside
`xla_only()`, which the SavedModel export enters (`jax2tf` cannot serialize a
host callback, and the exported graph runs on TensorFlow's kernels anyway).

```python
with lowering.xla_only():
    jax.jit(step).lower(*args)     # XLA's own convolutions, on any backend
```
"""

import contextlib
import math
import threading

import jax
import numpy as np
from jax import lax

from keras_tpu_estimator._backend import switches

ENV_VAR = "KTE_CPU_CONV"

_state = threading.local()


def enabled():
    """Whether the CPU lowerings may apply to what is traced now.

    False off the CPU backend, when `KTE_CPU_CONV` is `"0"`/`"false"`/`"off"`/
    `"no"`, and inside `xla_only()`. Read when a function is traced, so a
    change affects the functions compiled after it.
    """
    if getattr(_state, "xla_only", 0):
        return False
    if switches.is_off(ENV_VAR):
        return False
    return jax.default_backend() == "cpu"


@contextlib.contextmanager
def xla_only():
    """Traces inside it use XLA's own convolutions and poolings (nests; per thread)."""
    _state.xla_only = getattr(_state, "xla_only", 0) + 1
    try:
        yield
    finally:
        _state.xla_only -= 1


def spatial_tuple(value, rank, name):
    """`value` (an int, or `rank` ints) as a tuple of `rank` Python ints.

    Raises:
        ValueError: naming `name`, for anything else.
    """
    if isinstance(value, (int, np.integer)):
        return (int(value),) * rank
    value = tuple(value)
    if len(value) != rank or not all(isinstance(v, (int, np.integer)) for v in value):
        raise ValueError(
            f"Argument `{name}` must be an int or {rank} ints, received {value!r}."
        )
    return tuple(int(v) for v in value)


def output_positions(inputs_shape, kernel_shape, strides, padding, dilation_rate,
                     data_format="channels_last"):
    """Number of output positions per image (the product of the output's spatial sizes)."""
    rank = len(inputs_shape) - 2
    sizes = inputs_shape[1:-1] if data_format == "channels_last" else inputs_shape[2:]
    strides = spatial_tuple(strides, rank, "strides")
    dilation = spatial_tuple(dilation_rate, rank, "dilation_rate")
    dilated = [(t - 1) * d + 1 for t, d in zip(kernel_shape[:rank], dilation)]
    pads = lax.padtype_to_pads(sizes, dilated, strides, padding.upper())
    return math.prod(
        max(0, (s + lo + hi - k) // st + 1)
        for s, (lo, hi), k, st in zip(sizes, pads, dilated, strides)
    )
