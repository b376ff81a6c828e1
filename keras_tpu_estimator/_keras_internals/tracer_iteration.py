"""Iterating a traced tensor of unknown length raises TF1's TypeError.

A JAX tracer iterates over its leading axis when that axis has a known
size, as a TF1 tensor of known shape could be unstacked; the build pass,
the compiled step and an export agree there. Under an export the batch
dimension is symbolic, and JAX raises its `InconclusiveDimensionOperation`
(not a TypeError) when asked for its length; TF1 raised TypeError
("Tensor objects are only iterable when eager execution is enabled"), which
TF1 code may catch. Inside `tf1_iteration`, `jax.core.Tracer.__iter__`
raises that TypeError for a symbolic leading dimension and otherwise
iterates as before. A JAX reach (a class attribute patched while a block is
open), kept here with the library's other reaches.
"""

import jax

from keras_tpu_estimator._keras_internals.shared_patch import SharedPatch

_original = None

NOT_ITERABLE = (
    "Tensor objects are only iterable when eager execution is enabled. To "
    "iterate over this tensor use tf.map_fn."
)


def _iter(tracer):
    shape = tracer.shape
    if shape and jax.export.is_symbolic_dim(shape[0]):
        raise TypeError(f"{NOT_ITERABLE} (Its leading dimension, {shape[0]}, is unknown here.)")
    return _original(tracer)


def _install():
    global _original
    from jax._src import core  # noqa: PLC0415

    _original = core.Tracer.__iter__
    core.Tracer.__iter__ = _iter


def _uninstall():
    from jax._src import core  # noqa: PLC0415

    core.Tracer.__iter__ = _original


_patch = SharedPatch(_install, _uninstall)


def tf1_iteration():
    """Inside the block, iterating a tracer of symbolic length raises TF1's TypeError.

    The patch is installed while at least one block is open (in any thread).

    Example:

    ```python
    with tf1_iteration():
        rows = list(x)  # TypeError if x.shape[0] is an export's symbolic batch.
    ```
    """
    return _patch.active()
