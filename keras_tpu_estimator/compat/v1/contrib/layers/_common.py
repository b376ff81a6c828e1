"""What the `tf.contrib.layers` functions share: arguments, model variables, outputs.

`tf.contrib.layers` (and `tf.contrib.slim`, which re-exports it) takes
sizes as an int or a list, `padding` as 'SAME'/'VALID', `data_format` as
'NHWC'/'NCHW', `is_training` as a bool, and puts each variable it creates
in the `variables_collections` asked for (a list, or a dict by variable
name). These helpers read those arguments alike everywhere. The module is
private: its names are not part of the TF1 namespace.
"""

import keras
import numpy as np

from keras_tpu_estimator.compat.v1._op_helpers import static_value
from keras_tpu_estimator.compat.v1._variable_views import VariableView
from keras_tpu_estimator.compat.v1._variable_views import keras_variable
from keras_tpu_estimator.compat.v1.graph import GraphKeys
from keras_tpu_estimator.compat.v1.graph import add_to_collection
from keras_tpu_estimator.compat.v1.graph import get_collection
from keras_tpu_estimator.compat.v1.variables import get_variable
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.model_fn.tensor_shape import TensorShape

NHWC, NCHW = "NHWC", "NCHW"
# The collections the variable store computes: never stored (see `graph`).
_COMPUTED = frozenset(
    [GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, GraphKeys.MODEL_VARIABLES])


def as_tensor(value):
    """`value` as a tensor (KerasTensors of the build pass stay as they are)."""
    if isinstance(value, keras.KerasTensor):
        return value
    return keras.ops.convert_to_tensor(keras_variable(value))


def dtype_of(tensor):
    return keras.backend.standardize_dtype(tensor.dtype)


def _int(value):
    """An int from an int, a numpy integer or a TF1 `Dimension` (an int); else None."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)


def sizes(value, rank, argument, function):
    """An int or a sequence of `rank` ints (TF1's `kernel_size`, `stride`, `rate`) as a tuple.

    A sequence may be a `TensorShape` (`kernel_size=net.shape[1:3]`, as TF1 allowed).

    Raises:
        ValueError: for anything else, naming `argument` of `function`.
    """
    single = _int(value)
    values = [single] * rank if single is not None else (
        [_int(v) for v in value] if isinstance(value, (list, tuple, TensorShape)) else None)
    if values is None or len(values) != rank or not all(v is not None and v > 0 for v in values):
        raise ValueError(
            f"Argument `{argument}` of {function} must be a positive int or a list of "
            f"{rank} positive ints. Received: {argument}={value!r}")
    return tuple(values)


def padding_argument(padding, function):
    """'SAME' or 'VALID' (any case) as Keras's 'same' / 'valid'.

    Raises:
        ValueError: for any other value.
    """
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(
            f"Argument `padding` of {function} must be 'SAME' or 'VALID'. "
            f"Received: padding={padding!r}")
    return padding.lower()


def image_data_format(data_format, function):
    """'NHWC' / 'NCHW' as Keras's 'channels_last' / 'channels_first'.

    Raises:
        ValueError: for any other value.
    """
    if data_format not in (NHWC, NCHW):
        raise ValueError(
            f"Argument `data_format` of {function} must be 'NHWC' or 'NCHW'. "
            f"Received: data_format={data_format!r}")
    return "channels_first" if data_format == NCHW else "channels_last"


def is_training_argument(is_training, function):
    """`is_training` as a Python bool: it decides what is compiled.

    A Python or numpy bool, or an array whose value is known while tracing
    (a constant), is accepted.

    Raises:
        ValueError: for a value known only when the step runs.
    """
    if isinstance(is_training, (bool, np.bool_)):
        return bool(is_training)
    value = static_value(is_training)
    if value is not None and value.shape == () and value.dtype == bool:
        return bool(value)
    raise ValueError(
        f"Argument `is_training` of {function} must be a Python bool (e.g. "
        "`mode == tf1.estimator.ModeKeys.TRAIN`): it decides what is compiled. "
        f"Received: is_training={is_training!r}")


def variable_collections(variables_collections, name):
    """TF1's `utils.get_variable_collections`: the collections of variable `name`."""
    if isinstance(variables_collections, dict):
        found = variables_collections.get(name)
    else:
        found = variables_collections
    if found is None:
        return []
    return [found] if isinstance(found, str) else list(found)


def model_variable(name, shape, dtype, initializer, regularizer=None, trainable=True,
                   collections=()):
    """Gets or creates a model variable `name` in the current variable scope.

    `tf1.get_variable` (so `regularizer`'s penalty is counted once, when the
    variable is created in this `model_fn` call), and a new variable joins
    `collections` as a `VariableView` (the variable collections themselves
    are computed by the store).

    Returns:
        What `get_variable` returns: the `keras.Variable`, or a bfloat16
        tensor reading it inside `bfloat16_scope`.
    """
    used_before = store_lib.used_in_call()
    value = get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                         regularizer=regularizer, trainable=trainable)
    found = keras_variable(value)
    if isinstance(found, keras.Variable) and found.path not in used_before:
        view = VariableView(found)
        for collection in collections:
            if collection not in _COMPUTED and view not in get_collection(collection):
                add_to_collection(collection, view)
    return value


def collect_outputs(outputs_collections, outputs):
    """Appends `outputs` to each of `outputs_collections` (a name or a list); returns it."""
    names = [outputs_collections] if isinstance(outputs_collections, str) else (
        outputs_collections or [])
    for name in names:
        add_to_collection(name, outputs)
    return outputs


def use_bias(normalizer_fn, biases_initializer):
    """TF1's rule: biases only without a normalizer and with an initializer."""
    return normalizer_fn is None and biases_initializer is not None


def finish(outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections):
    """Applies the normalizer, then the activation, and collects the outputs (TF1's order)."""
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return collect_outputs(outputs_collections, outputs)
