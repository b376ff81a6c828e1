"""TF1's variable scopes beside Keras's name scopes (`compat.v1.variable_scope`).

Keras keeps one stack of name scopes; a Keras layer's call opens one named
after the layer. TF1 kept two: name scopes (which named Keras layers'
variables) and variable scopes (which named `tf.layers` and `get_variable`),
and a Keras call opened only a name scope. The entries of Keras's stack say
which is which here.
"""

import contextlib

import keras
from keras.src.backend.common import global_state
from keras.src.backend.common.name_scope import current_path


def variable_scope_path():
    """The path TF1's variable scopes give now: the name scopes open, less layer calls'.

    A Keras layer's call opens a name scope named after the layer: TF1 named
    the variables of Keras layers by name scopes, and those of `tf.layers`
    and `get_variable` by variable scopes, which a layer's call does not
    open. A scope opened by `variable_scope_entry` gives its path whole.
    """
    parts = []
    for entry in global_state.get_global_attribute("name_scope_stack") or ():
        path = getattr(entry, "variable_path", None)
        if path is not None:
            parts = [p for p in path.split("/") if p]
        elif getattr(entry, "caller", None) is None:
            if entry.override_parent is not None:
                parts = [p for p in entry.override_parent.split("/") if p]
            parts.append(entry.name)
    return "/".join(parts)


@contextlib.contextmanager
def variable_scope_entry(path):
    """Opens TF1's variable scope `path` (a full path): see `variable_scope_path`.

    Outside Keras layer calls, the Keras name scope becomes `path` too;
    inside one, the scope's last name is added to the layer's name scope,
    as TF1's `variable_scope` opened a name scope of that name.
    """
    parent, _, last = path.rpartition("/")
    inside_a_call = current_path() != variable_scope_path()
    scope = keras.name_scope(last, override_parent=None if inside_a_call else parent)
    scope.variable_path = path
    with scope:
        yield
