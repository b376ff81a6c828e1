"""Keras's process-wide state (`keras.src.backend.common.global_state`), set for a block."""

import contextlib

from keras.src.backend.common import global_state


@contextlib.contextmanager
def global_attribute(name, value):
    """Keras's global attribute `name` is `value` inside the block, as before after it."""
    saved = global_state.get_global_attribute(name)
    global_state.set_global_attribute(name, value)
    try:
        yield
    finally:
        global_state.set_global_attribute(name, saved)
