"""Serving input receivers: what a server receives and the features `model_fn` gets.

A `serving_input_receiver_fn` returns a `ServingInputReceiver` (or a
`TensorServingInputReceiver`) built from graph inputs (`placeholder`) and the
TensorFlow ops that turn them into features (e.g. `tf.io.parse_example`);
`build_raw_serving_input_receiver_fn` and
`build_parsing_serving_input_receiver_fn` write the usual ones.
`call_receiver_fn` runs such a function in a TensorFlow graph for the export.
"""

import collections

import numpy as np

from keras_tpu_estimator.spec import describe as _describe

SINGLE_FEATURE_DEFAULT_NAME = "feature"
SINGLE_RECEIVER_DEFAULT_NAME = "input"


def _tf():
    import tensorflow as tf

    return tf


def placeholder(shape=None, dtype="float32", name=None):
    """A serving input: a tensor the server feeds, as `tf.compat.v1.placeholder`.

    Call it inside a `serving_input_receiver_fn`, which the export runs in a
    TensorFlow graph.

    Args:
        shape: the input's shape; `None` entries (typically the batch) are
            left free. None accepts any shape.
        dtype: the input's dtype, a string (`"float32"`, `"string"`) or a
            `tf.DType`.
        name: the name of the graph input.

    Returns:
        A graph `tf.Tensor`.

    Raises:
        ValueError: if called outside a `serving_input_receiver_fn` being
            exported, or `dtype` is not a dtype.

    Example:

    ```python
    def serving_input_receiver_fn():
        x = kte.export.placeholder(shape=(None, 64), dtype="float32", name="x")
        return kte.export.ServingInputReceiver({"x": x}, {"x": x})
    ```
    """
    tf = _tf()
    if tf.executing_eagerly():
        raise ValueError(
            "kte.export.placeholder creates a graph input: call it inside the "
            "serving_input_receiver_fn given to export_saved_model, which runs "
            f"in a TensorFlow graph. Received a call outside one (name={name!r})."
        )
    try:
        dtype = tf.as_dtype(dtype)
    except TypeError:
        raise ValueError(
            f"Argument `dtype` of placeholder must be a dtype such as 'float32', "
            f"'int32' or 'string'. Received: dtype={dtype!r}"
        ) from None
    return tf.compat.v1.placeholder(dtype, shape=shape, name=name)


def _is_tensor(value):
    tf = _tf()
    return isinstance(value, (tf.Tensor, tf.SparseTensor, tf.RaggedTensor))


def _tensor_dict(value, argument, owner, default_name):
    """`value` (a tensor or a dict of string to tensor) as a dict."""
    if _is_tensor(value):
        return {default_name: value}
    if not isinstance(value, dict) or not value:
        raise ValueError(
            f"Argument `{argument}` of {owner} must be a tensor or a non-empty "
            f"dict of string to tensor. Received: {argument}={_describe(value)}"
        )
    for key, tensor in value.items():
        if not isinstance(key, str):
            raise ValueError(
                f"Argument `{argument}` of {owner} must have string keys. "
                f"Received the key {key!r} in {argument}={_describe(value)}"
            )
        if not _is_tensor(tensor):
            raise ValueError(
                f"Argument `{argument}` of {owner} must hold TensorFlow tensors "
                "(from kte.export.placeholder or ops on them). Received: "
                f"{argument}[{key!r}]={_describe(tensor)}"
            )
    return dict(value)


def _alternatives(value, owner):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(
            f"Argument `receiver_tensors_alternatives` of {owner} must be None "
            "or a dict of alternative name to receiver tensors. Received: "
            f"receiver_tensors_alternatives={_describe(value)}"
        )
    return {
        name: _tensor_dict(
            tensors, f"receiver_tensors_alternatives[{name!r}]", owner,
            SINGLE_RECEIVER_DEFAULT_NAME,
        )
        for name, tensors in value.items()
    }


_RECEIVER_FIELDS = ["features", "receiver_tensors", "receiver_tensors_alternatives"]


class ServingInputReceiver(collections.namedtuple("ServingInputReceiver", _RECEIVER_FIELDS)):
    """What a server receives and the features `model_fn` gets from it.

    As `tf.estimator.export.ServingInputReceiver`: each signature takes the
    `receiver_tensors` as named inputs; `features` are computed from them by
    the TensorFlow ops between the two (e.g. parsing) and passed to
    `model_fn`.

    Args:
        features: a tensor or a dict of string to tensor, what `model_fn`
            receives as `features`. A single tensor becomes
            `{"feature": tensor}`.
        receiver_tensors: a tensor or a dict of string to tensor, the
            signature's inputs (their keys are the input names). A single
            tensor is named `"input"`.
        receiver_tensors_alternatives: optional dict of name to receiver
            tensors: each adds signatures `"<signature>:<name>"` that take
            those inputs instead.

    Raises:
        ValueError: if an argument is not a tensor or a dict of string to
            tensor.

    Example:

    ```python
    serialized = kte.export.placeholder((None,), "string", name="examples")
    features = tf.io.parse_example(serialized, {"x": tf.io.FixedLenFeature([4], tf.float32)})
    kte.export.ServingInputReceiver(features, {"examples": serialized})
    ```
    """

    __slots__ = ()

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        owner = cls.__name__
        return super().__new__(
            cls,
            features=_tensor_dict(features, "features", owner, SINGLE_FEATURE_DEFAULT_NAME),
            receiver_tensors=_tensor_dict(
                receiver_tensors, "receiver_tensors", owner, SINGLE_RECEIVER_DEFAULT_NAME
            ),
            receiver_tensors_alternatives=_alternatives(receiver_tensors_alternatives, owner),
        )


class TensorServingInputReceiver(
    collections.namedtuple("TensorServingInputReceiver", _RECEIVER_FIELDS)
):
    """A `ServingInputReceiver` whose `features` is one tensor, passed as is.

    As `tf.estimator.export.TensorServingInputReceiver`: for a `model_fn`
    that takes `features` as a tensor rather than a dict.

    Args:
        features: a tensor, what `model_fn` receives as `features`.
        receiver_tensors: a tensor or a dict of string to tensor, the
            signature's inputs. A single tensor is named `"input"`.
        receiver_tensors_alternatives: see `ServingInputReceiver`.

    Raises:
        ValueError: if `features` is not a tensor, or `receiver_tensors` is
            not a tensor or a dict of string to tensor.

    Example:

    ```python
    x = kte.export.placeholder((None, 28, 28), "float32", name="images")
    kte.export.TensorServingInputReceiver(x, {"images": x})
    ```
    """

    __slots__ = ()

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        owner = cls.__name__
        if not _is_tensor(features):
            raise ValueError(
                f"Argument `features` of {owner} must be a tensor. Received: "
                f"features={_describe(features)}"
            )
        return super().__new__(
            cls,
            features=features,
            receiver_tensors=_tensor_dict(
                receiver_tensors, "receiver_tensors", owner, SINGLE_RECEIVER_DEFAULT_NAME
            ),
            receiver_tensors_alternatives=_alternatives(receiver_tensors_alternatives, owner),
        )


def _spec_of(value, key):
    """`(shape, dtype)` of a tensor-like description (spec, tensor, array)."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None and not hasattr(value, "dtype"):
        raise ValueError(
            "Argument `features` of build_raw_serving_input_receiver_fn must "
            "hold tensors or specs with a shape and a dtype (tf.TensorSpec, "
            f"keras.InputSpec, arrays). Received: features[{key!r}]={_describe(value)}"
        )
    dtype = getattr(dtype, "name", dtype) or "float32"
    return (None if shape is None else list(shape)), dtype


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A `serving_input_receiver_fn` that feeds `features` directly.

    Each feature becomes a signature input of the same name, shape (its
    first dimension, the batch, set to `default_batch_size`) and dtype.

    Args:
        features: a dict of string to `tf.TensorSpec`, `keras.InputSpec`,
            tensor or array describing each feature; or one such, giving a
            `model_fn` that takes `features` as a tensor (input `"input"`).
        default_batch_size: the batch dimension of every input; None leaves
            it variable.

    Returns:
        A function returning a `ServingInputReceiver` (a
        `TensorServingInputReceiver` for a single feature).

    Raises:
        ValueError: if a feature has no shape and dtype, or
            `default_batch_size` is not a positive int or None.

    Example:

    ```python
    receiver_fn = kte.export.build_raw_serving_input_receiver_fn(
        {"x": tf.TensorSpec((None, 64), tf.float32)})
    estimator.export_saved_model("exports", receiver_fn)
    ```
    """
    _check_batch_size(default_batch_size, "build_raw_serving_input_receiver_fn")
    single = not isinstance(features, dict)
    described = {SINGLE_RECEIVER_DEFAULT_NAME: features} if single else dict(features)
    if not described:
        raise ValueError(
            "Argument `features` of build_raw_serving_input_receiver_fn must "
            "not be empty. Received: features={}"
        )
    specs = {key: _spec_of(value, key) for key, value in described.items()}

    def serving_input_receiver_fn():
        receiver = {}
        for key, (shape, dtype) in specs.items():
            if shape is not None:
                shape = [default_batch_size] + shape[1:] if shape else shape
            receiver[key] = placeholder(shape, dtype, name=key)
        if single:
            return TensorServingInputReceiver(receiver[SINGLE_RECEIVER_DEFAULT_NAME], receiver)
        return ServingInputReceiver(dict(receiver), receiver)

    return serving_input_receiver_fn


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A `serving_input_receiver_fn` that parses serialized `tf.train.Example`s.

    The signatures take one input, `examples`: a batch of serialized
    `tf.train.Example` protos, the usual TensorFlow Serving request; the
    features are `tf.io.parse_example(examples, feature_spec)`.

    Args:
        feature_spec: a dict of feature name to `tf.io.FixedLenFeature`
            (dense features; JAX takes no sparse tensors).
        default_batch_size: the number of examples per request; None leaves
            it variable.

    Returns:
        A function returning a `ServingInputReceiver`.

    Raises:
        ValueError: if `feature_spec` is not a non-empty dict, or
            `default_batch_size` is not a positive int or None.

    Example:

    ```python
    receiver_fn = kte.export.build_parsing_serving_input_receiver_fn(
        {"x": tf.io.FixedLenFeature([64], tf.float32)})
    path = estimator.export_saved_model("exports", receiver_fn)
    tf.saved_model.load(path).signatures["serving_default"](
        examples=tf.constant([example.SerializeToString()]))
    ```
    """
    _check_batch_size(default_batch_size, "build_parsing_serving_input_receiver_fn")
    if not isinstance(feature_spec, dict) or not feature_spec:
        raise ValueError(
            "Argument `feature_spec` of build_parsing_serving_input_receiver_fn "
            "must be a non-empty dict of feature name to tf.io.FixedLenFeature. "
            f"Received: feature_spec={_describe(feature_spec)}"
        )
    feature_spec = dict(feature_spec)

    def serving_input_receiver_fn():
        tf = _tf()
        serialized = placeholder([default_batch_size], tf.string, name="input_example_tensor")
        features = tf.io.parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {"examples": serialized})

    return serving_input_receiver_fn


def _check_batch_size(batch_size, owner):
    if batch_size is not None and (
        isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer))
        or batch_size <= 0
    ):
        raise ValueError(
            f"Argument `default_batch_size` of {owner} must be a positive int "
            f"or None. Received: default_batch_size={batch_size!r}"
        )



def call_receiver_fn(serving_input_receiver_fn):
    """Runs `serving_input_receiver_fn` in a graph; returns its pieces as functions.

    Args:
        serving_input_receiver_fn: a function of no arguments returning a
            `ServingInputReceiver` or `TensorServingInputReceiver`.

    Returns:
        `(receiver, to_features)`: the receiver (holding graph tensors), and a
        function `to_features(name, inputs)` mapping a dict of input tensors
        of the receiver tensors named `name` (None for the main ones, else an
        alternative's name) to the features, as TensorFlow ops.

    Raises:
        ValueError: if the function returns no receiver, or a feature is not
            a dense numeric tensor (the model runs in JAX).

    Example:

    ```python
    receiver, to_features = call_receiver_fn(receiver_fn)
    features = to_features(None, {"x": tf.ones((2, 64))})
    ```
    """
    tf = _tf()
    received = []
    graph_function = tf.compat.v1.wrap_function(
        lambda: received.append(serving_input_receiver_fn()), signature=[]
    )
    receiver = received[0]
    if not isinstance(receiver, (ServingInputReceiver, TensorServingInputReceiver)):
        raise ValueError(
            "serving_input_receiver_fn must return a kte.export.ServingInputReceiver "
            "or TensorServingInputReceiver. It returned: "
            f"{_describe(receiver)}"
        )
    for key, feature in named_features(receiver.features).items():
        if not isinstance(feature, tf.Tensor):
            raise ValueError(
                f"Feature {key!r} is a {type(feature).__name__}: the model runs "
                "in JAX, which takes dense tensors only. Densify it in "
                "serving_input_receiver_fn (e.g. tf.sparse.to_dense, or "
                "tf.io.FixedLenFeature when parsing)."
            )
        if feature.dtype == tf.string:
            raise ValueError(
                f"Feature {key!r} is a string tensor: the model runs in JAX, "
                "which has no strings. Turn it into numbers in "
                "serving_input_receiver_fn (parsing, tf.strings.to_number, a "
                "lookup table)."
            )
    pruned = {}

    def to_features(alternative, inputs):
        tensors = receiver_tensors_for(receiver, alternative)
        if alternative not in pruned:
            pruned[alternative] = graph_function.prune(
                feeds=[tensors[k] for k in sorted(tensors)], fetches=receiver.features
            )
        return pruned[alternative](*[inputs[k] for k in sorted(tensors)])

    return receiver, to_features


def receiver_tensors_for(receiver, alternative):
    """The receiver tensors a signature takes as inputs.

    Args:
        receiver: a `ServingInputReceiver` or `TensorServingInputReceiver`.
        alternative: the name of one of its
            `receiver_tensors_alternatives`, or None for its
            `receiver_tensors`.

    Returns:
        A dict of input name to tensor.

    Raises:
        KeyError: if `alternative` is not one of the receiver's alternatives.

    Example:

    ```python
    receiver_tensors_for(receiver, None) is receiver.receiver_tensors  # True
    ```
    """
    if alternative is None:
        return receiver.receiver_tensors
    return receiver.receiver_tensors_alternatives[alternative]


def named_features(features):
    """`features` as a dict: a single tensor is named `"feature"`.

    Args:
        features: a receiver's `features`, a tensor or a dict of string to
            tensor.

    Returns:
        A dict of string to tensor.

    Example:

    ```python
    named_features(x)  # {"feature": x}
    ```
    """
    return features if isinstance(features, dict) else {SINGLE_FEATURE_DEFAULT_NAME: features}
