"""Functions of Keras's JAX backend (`keras.src.backend.jax.nn`) replaced in place.

`keras.ops.conv`, `keras.ops.conv_transpose` and `keras.ops.max_pool` (and
through them `keras.layers.Conv1D/2D/3D`, `Conv*Transpose`, the pointwise
half of `SeparableConv*` and `MaxPooling1D/2D/3D`) look these functions up on
that module at every call, so setting the module attribute reroutes all of
them. `tests/test_im2col.py`, `tests/test_tf_kernels.py` and
`tests/test_tiled_pool.py` pin that route.
"""

from keras.src.backend.jax import nn as _jax_nn

_REPLACEABLE = ("conv", "depthwise_conv", "conv_transpose", "max_pool")


def _check(name):
    if name not in _REPLACEABLE:
        raise ValueError(f"Argument `name` must be one of {_REPLACEABLE}, received {name!r}.")


def keras_function(name):
    """Keras's own backend function `name` (the one in place before `install`)."""
    _check(name)
    current = getattr(_jax_nn, name)
    return getattr(current, "keras_original", current)


def install(name, make):
    """Sets the backend function `name` to `make(keras_function(name))`; twice wraps once.

    Args:
        name: one of `_REPLACEABLE`.
        make: called with Keras's own function; returns the replacement.
    """
    replacement = make(keras_function(name))
    replacement.keras_original = keras_function(name)
    setattr(_jax_nn, name, replacement)


def uninstall(name):
    """Puts Keras's own backend function `name` back."""
    setattr(_jax_nn, name, keras_function(name))


def installed(name):
    """Whether the backend function `name` is a replacement made by `install`."""
    _check(name)
    return getattr(getattr(_jax_nn, name), "keras_original", None) is not None
