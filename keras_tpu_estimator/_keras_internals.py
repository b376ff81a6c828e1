"""The few places where this library reaches into Keras internals.

Keras's public `StatelessScope` refuses to create variables, but real
`model_fn`s build an optimizer (and so its variables) on every call. Inside the
compiled steps we therefore bind traced values to variables directly, and set
the `training` flag of the layer call context without an entry layer, so that
layers called from a plain function (not from a `Layer.call`) see it. Keeping
these reaches here means a Keras upgrade has one file to check, and
`tests/test_keras_internals.py` pins each of them.
"""

import contextlib

from keras.src.backend.common import global_state
from keras.src.layers.layer import CallContext


@contextlib.contextmanager
def bound_values(variables, values):
    """Makes `variables` read `values` (e.g. tracers) inside the block.

    Assignments made inside the block (e.g. BatchNormalization moving
    statistics) are visible through `current_values`; every variable gets its
    original value back on exit, even on error.

    Args:
        variables: list of `keras.Variable`.
        values: list of arrays, one per variable.
    """
    saved = [v._value for v in variables]
    try:
        for variable, value in zip(variables, values):
            variable._value = value
        yield
    finally:
        for variable, value in zip(variables, saved):
            variable._value = value


def current_values(variables):
    """The values `variables` hold now (inside `bound_values`, the bound ones)."""
    return [v._value for v in variables]


@contextlib.contextmanager
def training_context(training):
    """Layers called inside the block resolve `training` to this value."""
    previous = global_state.get_global_attribute("current_call_ctx")
    context = CallContext(entry_layer=None)
    context.set_value("training", training)
    global_state.set_global_attribute("current_call_ctx", context)
    try:
        yield
    finally:
        global_state.set_global_attribute("current_call_ctx", previous)


def pin_layer_path(layer, parent_path):
    """Builds `layer`'s variables under `parent_path`, wherever it is called."""
    layer._parent_path = parent_path


def current_scope_path():
    """The path of the Keras name scopes open now (`""` at the top level)."""
    from keras.src.backend.common.name_scope import current_path

    return current_path()


def traced_learning_rate(optimizer):
    """The rate of an optimizer given `learning_rate=callable`, evaluated now.

    Returns None for a float rate (a variable that callbacks may change) or a
    `LearningRateSchedule` (evaluated by the optimizer at its own step).
    """
    import keras

    rate = optimizer._learning_rate
    if isinstance(rate, (keras.Variable, keras.optimizers.schedules.LearningRateSchedule)):
        return None
    return rate() if callable(rate) else None


@contextlib.contextmanager
def learning_rate_override(optimizer, rate):
    """Makes `optimizer` apply with `rate` (e.g. a tracer) inside the block."""
    saved = optimizer._learning_rate
    optimizer._learning_rate = lambda: rate
    try:
        yield
    finally:
        optimizer._learning_rate = saved
