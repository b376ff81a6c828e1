"""The variables TF1 optimizers and EMA create: by TF1 name, at absolute paths.

Slots (`dense/kernel/Adam`), non-slot variables (`beta1_power`) and EMA
shadows (`dense/kernel/ExponentialMovingAverage`) are store variables at
absolute paths, whatever scopes are open where they are made, made unique
per `model_fn` call as TF1 made them unique in its graph.
"""

import keras
from keras import ops

from keras_tpu_estimator.compat.v1._variable_views import VariableView
from keras_tpu_estimator.compat.v1._variable_views import keras_variable
from keras_tpu_estimator.compat.v1.variables import absolute_scope
from keras_tpu_estimator.model_fn import store as store_lib

_NAMES_TAKEN = "compat.v1.train.names"


def unique_path(path):
    """`path`, or `path_1`, `path_2`, ...: the first not taken in this `model_fn` call.

    TF1 made names unique in the graph; counting per call replays the same
    names on every trace.
    """
    taken = store_lib.call_state(_NAMES_TAKEN, set)
    candidate, index = path, 0
    while candidate in taken:
        index += 1
        candidate = f"{path}_{index}"
    taken.add(candidate)
    return candidate


def store_variable(path, initializer, shape, dtype):
    """The non-trainable store variable at the absolute `path`, created once."""
    parent, _, leaf = path.rpartition("/")
    with absolute_scope(parent):
        return store_lib.get_variable(
            leaf, shape=tuple(shape), dtype=dtype, initializer=initializer, trainable=False
        )


def copy_initializer(source):
    """An initializer giving `source`'s value: read only when the variable is created."""

    def initializer(shape, dtype=None):
        # A copy: two variables sharing one buffer break the step's donation.
        return ops.copy(ops.cast(ops.reshape(source, shape), dtype))

    return initializer


def resolve_value(x):
    """A tensor for `x` (a variable, a view, a callable rate, a number)."""
    if callable(x) and not isinstance(x, (keras.Variable, VariableView)):
        x = x()
    return keras_variable(x)
