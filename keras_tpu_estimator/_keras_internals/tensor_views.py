"""A traced tensor's `shape` and `dtype` as the code reading them expects.

JAX, Keras, numpy and this library read `tracer.shape` as a tuple and
`tracer.dtype` as a numpy dtype, and must go on doing so while a user's
function is traced. TF1 code reads them as a `TensorShape`
(`x.shape.as_list()`, `x.shape[-1].value`) and a `DType`
(`x.dtype.is_floating`). Inside `tracer_views(...)`, `jax.core.Tracer.shape`
and `.dtype` answer code outside those libraries (a `model_fn`, a
`metric_fn`, the helpers they call) with `shape(tuple)` and
`dtype(numpy dtype)`, told apart by the module of the reading frame; the
libraries get JAX's own values. Tracers also have `methods` there
(`get_shape`, `set_shape`), and an export's symbolic dimension answers
TF1's `.value` of an unknown dimension, None. A JAX reach: class attributes
patched while at least one block is open (in any thread).
"""

import sys

from jax._src import core
from jax._src.export import shape_poly

from keras_tpu_estimator._keras_internals.shared_patch import SharedPatch

# Top-level packages whose code reads JAX's own shapes and dtypes.
LIBRARIES = frozenset({
    "jax", "jaxlib", "keras", "numpy", "ml_dtypes", "keras_tpu_estimator", "opt_einsum",
    "scipy", "tensorflow", "optree", "flax", "optax", "orbax",
})

_saved = {}
_views = {}
_is_library = {}


def _read_by_library(frame):
    module = frame.f_globals.get("__name__") or ""
    known = _is_library.get(module)
    if known is None:
        known = _is_library[module] = module.partition(".")[0] in LIBRARIES
    return known


def _viewed(name, raw):
    def fget(tracer):
        value = raw.__get__(tracer)
        if _read_by_library(sys._getframe(1)):
            return value
        return _views[name](value)

    return property(fget)


def _install(shape, dtype, methods):
    _views.update(shape=shape, dtype=dtype)
    for name in ("shape", "dtype"):
        _saved[name] = core.Tracer.__dict__[name]
        setattr(core.Tracer, name, _viewed(name, _saved[name]))
    for name, method in methods.items():
        setattr(core.Tracer, name, method)
    _saved["methods"] = tuple(methods)
    shape_poly._DimExpr.value = property(lambda dimension: None)


def _uninstall():
    for name in ("shape", "dtype"):
        setattr(core.Tracer, name, _saved.pop(name))
    for name in _saved.pop("methods"):
        delattr(core.Tracer, name)
    del shape_poly._DimExpr.value
    _views.clear()


_patch = SharedPatch(_install, _uninstall)


def tracer_views(shape, dtype, methods):
    """Inside the block, a user's code reads tracers' `shape`/`dtype` through views.

    Args:
        shape: a function of JAX's shape tuple: what `x.shape` is to the user.
        dtype: a function of JAX's numpy dtype: what `x.dtype` is to the user.
        methods: `{name: function(tracer, ...)}` added to tracers in the block.

    Example:

    ```python
    with tracer_views(TensorShape, as_dtype, {"get_shape": lambda t: t.shape}):
        model_fn(features, labels, mode)  # features["x"].shape.as_list() works
    ```
    """
    return _patch.active(shape, dtype, methods)
