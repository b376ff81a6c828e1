"""Keras's JAX-backend convolution, `keras.src.backend.jax.nn.conv`, replaced in place.

`keras.ops.conv` (and through it `keras.layers.Conv1D/2D/3D` and the
pointwise half of `SeparableConv*`) looks `conv` up on that module at every
call, so setting the module attribute reroutes all of them.
`tests/test_cpu_conv.py` pins that route.
"""

from keras.src.backend.jax import nn as _jax_nn


def keras_conv():
    """Keras's own backend `conv` (the one in place before `install`)."""
    current = _jax_nn.conv
    return getattr(current, "keras_conv", current)


def install(make_conv):
    """Sets the backend `conv` to `make_conv(keras_conv)`; installing twice wraps once.

    Args:
        make_conv: called with Keras's own `conv`; returns the replacement,
            which must carry it as its `keras_conv` attribute.
    """
    replacement = make_conv(keras_conv())
    if getattr(replacement, "keras_conv", None) is None:
        raise ValueError("Argument `make_conv` must return a function with a `keras_conv` attribute.")
    _jax_nn.conv = replacement


def uninstall():
    """Puts Keras's own backend `conv` back."""
    _jax_nn.conv = keras_conv()


def installed():
    """Whether the backend `conv` is a replacement made by `install`."""
    return getattr(_jax_nn.conv, "keras_conv", None) is not None
