"""Exporting a `model_fn` as a TensorFlow SavedModel for serving.

What `tf.estimator.export` gave TPUEstimator programs, on Keras's
`keras.export.ExportArchive` with the JAX backend:

- serving receivers: a `serving_input_receiver_fn` returns a
  `ServingInputReceiver` that says what the server receives
  (`receiver_tensors`, e.g. serialized `tf.train.Example`s) and which
  `features` `model_fn` gets from them (e.g. parsed);
- `export_saved_model`: `model_fn` runs in PREDICT mode on those features,
  converted from JAX to a TensorFlow graph (`jax2tf`, StableHLO), with the
  model's weights as SavedModel variables. Every `export_outputs` key of the
  spec becomes a signature; `serving_default` is always present.

```python
def serving_input_receiver_fn():
    x = kte.export.placeholder(shape=(None, 64), dtype="float32", name="x")
    return kte.export.ServingInputReceiver(features={"x": x}, receiver_tensors={"x": x})

path = estimator.export_saved_model("exports", serving_input_receiver_fn)
loaded = tf.saved_model.load(path)
loaded.signatures["serving_default"](x=tf.constant(batch))
```

`serving_input_receiver_fn` runs once, in a TensorFlow graph, so its code is
TensorFlow code (placeholders, `tf.io.parse_example`); `model_fn` runs in JAX
as it does for `predict`. TensorFlow is imported only when exporting.
"""

import collections
import logging
import os
import shutil
import time
import warnings

import keras
import numpy as np

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.spec import ClassificationOutput
from keras_tpu_estimator.spec import ExportOutput
from keras_tpu_estimator.spec import ModeKeys
from keras_tpu_estimator.spec import PredictOutput
from keras_tpu_estimator.spec import RegressionOutput
from keras_tpu_estimator.spec import _describe

_log = logging.getLogger("keras_tpu_estimator")

DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
SINGLE_FEATURE_DEFAULT_NAME = "feature"
SINGLE_RECEIVER_DEFAULT_NAME = "input"
_ASSETS_EXTRA = "assets.extra"
_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")

__all__ = [
    "ClassificationOutput",
    "ExportOutput",
    "PredictOutput",
    "RegressionOutput",
    "ServingInputReceiver",
    "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
    "export_saved_model",
    "inference_on_tpu",
    "placeholder",
    "write_saved_model",
]


def _tf():
    import tensorflow as tf

    return tf


# ----------------------------------------------------------------------
# Serving receivers.


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


# ----------------------------------------------------------------------
# inference_on_tpu.


def inference_on_tpu(
    computation,
    inputs_to_tpu,
    num_batch_threads,
    max_batch_size,
    batch_timeout_micros,
    allowed_batch_sizes=None,
    max_enqueued_batches=100,
):
    """Runs `computation` on the accelerator, as TPUEstimator's helper of API V2.

    TensorFlow needed this wrapper to move part of the serving graph onto
    the TPU (`tpu.rewrite`, `TPUPartitionedCall`) and batch requests
    (`batch_function`). Here the whole `model_fn` is one XLA program,
    compiled for every platform the export targets, so `computation` simply
    runs; the batching arguments are checked and kept for the server to
    configure (TensorFlow Serving's `--enable_batching`).

    Args:
        computation: a function of the tensors in `inputs_to_tpu`.
        inputs_to_tpu: a list of tensors, passed positionally.
        num_batch_threads: threads batching requests (a positive int).
        max_batch_size: the largest batch (a positive int).
        batch_timeout_micros: how long to wait to fill a batch (an int >= 0).
        allowed_batch_sizes: None, or increasing positive ints ending with
            `max_batch_size`.
        max_enqueued_batches: the queue length (a positive int).

    Returns:
        The outputs of `computation`, as a list of tensors.

    Raises:
        ValueError: if a batching argument is out of range, or
            `inputs_to_tpu` is not a list or tuple.

    Example:

    ```python
    if params["use_tpu"]:
        logits = kte.export.inference_on_tpu(
            computation, [x], num_batch_threads=1, max_batch_size=64,
            batch_timeout_micros=100)[0]
    ```
    """
    for name, value, least in (
        ("num_batch_threads", num_batch_threads, 1),
        ("max_batch_size", max_batch_size, 1),
        ("batch_timeout_micros", batch_timeout_micros, 0),
        ("max_enqueued_batches", max_enqueued_batches, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(
                f"Argument `{name}` of inference_on_tpu must be an int >= {least}. "
                f"Received: {name}={value!r}"
            )
    if allowed_batch_sizes is not None:
        sizes = list(allowed_batch_sizes)
        if (
            not sizes
            or any(b <= a for a, b in zip(sizes, sizes[1:]))
            or sizes[-1] != max_batch_size
            or sizes[0] <= 0
        ):
            raise ValueError(
                "Argument `allowed_batch_sizes` of inference_on_tpu must be "
                "increasing positive ints whose last entry equals "
                f"max_batch_size ({max_batch_size}). Received: "
                f"allowed_batch_sizes={allowed_batch_sizes!r}"
            )
    if not isinstance(inputs_to_tpu, (list, tuple)):
        raise ValueError(
            "Argument `inputs_to_tpu` of inference_on_tpu must be a list of "
            f"tensors. Received: inputs_to_tpu={_describe(inputs_to_tpu)}"
        )
    outputs = computation(*inputs_to_tpu)
    if outputs is None:
        return []
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]


# ----------------------------------------------------------------------
# Export.


def export_saved_model(
    model,
    export_dir_base,
    serving_input_receiver_fn,
    assets_extra=None,
    as_text=False,
    global_step=None,
    platforms=("cpu",),
    restore=None,
):
    """Exports `model` to a new timestamped directory under `export_dir_base`.

    The SavedModel is written to `<export_dir_base>/temp-<timestamp>` and
    renamed to `<export_dir_base>/<timestamp>` (Unix seconds) once
    complete, so a directory with a timestamp name is always a whole export.

    Args:
        model: an `EstimatorModel` with the weights to export.
        export_dir_base: the directory the timestamped export goes in
            (created if missing).
        serving_input_receiver_fn: a function of no arguments returning a
            `ServingInputReceiver` or `TensorServingInputReceiver`.
        assets_extra: a dict of destination path (relative to
            `assets.extra/` in the export) to source file path.
        as_text: write `saved_model.pbtxt` instead of `saved_model.pb`.
        global_step: the step saved as the `global_step` variable; defaults
            to `model.global_step`.
        platforms: the platforms the serving program is compiled for, any of
            `"cpu"`, `"cuda"`, `"rocm"`, `"tpu"`.
        restore: optional function called once `model_fn`'s PREDICT layers
            exist, to load the weights to export; returns their global step.

    Returns:
        The export directory, as bytes (as TensorFlow's estimators return it).

    Raises:
        ValueError: for invalid arguments (before anything is written), a
            receiver function that does not return a receiver, features JAX
            cannot take, or a program that cannot be compiled for a platform.

    Example:

    ```python
    path = export_saved_model(model, "exports", receiver_fn)  # b"exports/1700000000"
    ```
    """
    export_dir_base = _directory(export_dir_base, "export_dir_base")
    assets_extra = _check_assets_extra(assets_extra)
    os.makedirs(export_dir_base, exist_ok=True)
    export_dir = _timestamped_dir(export_dir_base)
    temp_dir = os.path.join(export_dir_base, "temp-" + os.path.basename(export_dir))
    _write(model, temp_dir, serving_input_receiver_fn, assets_extra, as_text, global_step,
           platforms, verbose=False, restore=restore)
    os.rename(temp_dir, export_dir)
    _log.info("SavedModel written to: %s", export_dir)
    return os.fsencode(export_dir)


def write_saved_model(
    model,
    export_dir,
    serving_input_receiver_fn,
    assets_extra=None,
    as_text=False,
    global_step=None,
    platforms=("cpu",),
    verbose=False,
):
    """Exports `model` to exactly `export_dir`, replacing what is there.

    Written beside it under a temporary name first and renamed at the end, so
    `export_dir` holds either the previous export or the whole new one.

    Args:
        model: an `EstimatorModel`.
        export_dir: the SavedModel directory.
        serving_input_receiver_fn: see `export_saved_model`.
        assets_extra: see `export_saved_model`.
        as_text: see `export_saved_model`.
        global_step: see `export_saved_model`.
        platforms: see `export_saved_model`.
        verbose: print the signatures written.

    Raises:
        ValueError: see `export_saved_model`.

    Example:

    ```python
    write_saved_model(model, "serving/model", receiver_fn)
    ```
    """
    export_dir = _directory(export_dir, "filepath")
    assets_extra = _check_assets_extra(assets_extra)
    parent = os.path.dirname(os.path.abspath(export_dir))
    os.makedirs(parent, exist_ok=True)
    temp_dir = f"{os.path.abspath(export_dir)}.temp-{os.getpid()}-{time.time_ns()}"
    _write(model, temp_dir, serving_input_receiver_fn, assets_extra, as_text, global_step,
           platforms, verbose)
    old = None
    if os.path.exists(export_dir):
        old = temp_dir + ".old"
        os.rename(export_dir, old)
    os.rename(temp_dir, export_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


_EXPORT_KWARGS = ("serving_input_receiver_fn", "assets_extra", "as_text", "platforms")


def export_model(model, filepath, format="tf_saved_model", verbose=None, input_signature=None,
                 **kwargs):
    """`EstimatorModel.export`: Keras's `model.export` for a `model_fn` model.

    Args:
        model: an `EstimatorModel`.
        filepath: the SavedModel directory; replaced atomically.
        format: only `"tf_saved_model"`.
        verbose: print the signatures written; None means True, as in Keras.
        input_signature: the features: a dict of name to spec, or one spec,
            optionally in a one-element list.
        **kwargs: `serving_input_receiver_fn`, `assets_extra`, `as_text`,
            `platforms`.

    Raises:
        ValueError: for another `format`, neither or both of
            `input_signature` and `serving_input_receiver_fn`, or an unknown
            keyword argument.

    Example:

    ```python
    export_model(model, "serving/model", input_signature={"x": keras.InputSpec((None, 4))})
    ```
    """
    if format != "tf_saved_model":
        raise ValueError(
            "EstimatorModel.export writes TensorFlow SavedModels only: "
            f"`format` must be 'tf_saved_model'. Received: format={format!r}"
        )
    unknown = sorted(set(kwargs) - set(_EXPORT_KWARGS))
    if unknown:
        raise ValueError(
            f"EstimatorModel.export got unexpected keyword arguments {unknown}; "
            f"it takes {list(_EXPORT_KWARGS)}."
        )
    receiver_fn = kwargs.pop("serving_input_receiver_fn", None)
    if (receiver_fn is None) == (input_signature is None):
        raise ValueError(
            "EstimatorModel.export needs exactly one of `input_signature` (the "
            "features' specs) and `serving_input_receiver_fn`. Received: "
            f"input_signature={_describe(input_signature)}, "
            f"serving_input_receiver_fn={_describe(receiver_fn)}"
        )
    if receiver_fn is None:
        if isinstance(input_signature, (list, tuple)):
            if len(input_signature) != 1:
                raise ValueError(
                    "`input_signature` describes the one `features` argument of "
                    "model_fn: a dict of specs, one spec, or a list of one of "
                    f"these. Received: input_signature={_describe(input_signature)}"
                )
            input_signature = input_signature[0]
        receiver_fn = build_raw_serving_input_receiver_fn(input_signature)
    write_saved_model(
        model, filepath, receiver_fn, verbose=True if verbose is None else bool(verbose),
        **kwargs,
    )


def _directory(path, argument):
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ValueError(
            f"Argument `{argument}` must be a directory path (str, bytes or "
            f"os.PathLike). Received: {argument}={_describe(path)}"
        )
    return os.fspath(path)


def _check_assets_extra(assets_extra):
    if assets_extra is None:
        return {}
    if not isinstance(assets_extra, dict):
        raise ValueError(
            "Argument `assets_extra` must be None or a dict of destination "
            "path (relative to assets.extra/) to source file path. Received: "
            f"assets_extra={_describe(assets_extra)}"
        )
    for destination, source in assets_extra.items():
        parts = os.path.normpath(str(destination)).split(os.sep)
        if not isinstance(destination, str) or os.path.isabs(destination) or ".." in parts:
            raise ValueError(
                "The keys of `assets_extra` must be relative paths inside "
                f"assets.extra/. Received: {destination!r}"
            )
        if not os.path.isfile(os.fspath(source)):
            raise ValueError(
                f"`assets_extra[{destination!r}]` must be an existing file. "
                f"Received: {source!r}"
            )
    return dict(assets_extra)


def _timestamped_dir(export_dir_base):
    """`<base>/<unix seconds>`, a name neither taken nor being written."""
    while True:
        name = str(int(time.time()))
        path = os.path.join(export_dir_base, name)
        if not os.path.exists(path) and not os.path.exists(
            os.path.join(export_dir_base, "temp-" + name)
        ):
            return path
        time.sleep(1)


def _write(model, directory, serving_input_receiver_fn, assets_extra, as_text, global_step,
           platforms, verbose, restore=None):
    """Writes the SavedModel to `directory`; removes it on any error."""
    platforms = _check_platforms(platforms)
    if not callable(serving_input_receiver_fn):
        raise ValueError(
            "Argument `serving_input_receiver_fn` must be a function returning a "
            "kte.export.ServingInputReceiver. Received: "
            f"serving_input_receiver_fn={_describe(serving_input_receiver_fn)}"
        )
    try:
        archive = build_archive(model, serving_input_receiver_fn, global_step, platforms, restore)
        archive.write_out(directory, verbose=verbose)
        if as_text:
            _to_text(directory)
        for destination, source in assets_extra.items():
            target = os.path.join(directory, _ASSETS_EXTRA, destination)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(os.fspath(source), target)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise


def _check_platforms(platforms):
    platforms = tuple(platforms) if isinstance(platforms, (list, tuple)) else (platforms,)
    if not platforms or any(p not in _PLATFORMS for p in platforms):
        raise ValueError(
            f"Argument `platforms` must be a non-empty list of {list(_PLATFORMS)}. "
            f"Received: platforms={platforms!r}"
        )
    return platforms


def _to_text(directory):
    """Replaces `saved_model.pb` by the same proto as `saved_model.pbtxt`."""
    from google.protobuf import text_format
    from tensorflow.core.protobuf import saved_model_pb2

    binary = os.path.join(directory, "saved_model.pb")
    proto = saved_model_pb2.SavedModel()
    with open(binary, "rb") as f:
        proto.ParseFromString(f.read())
    with open(os.path.join(directory, "saved_model.pbtxt"), "w") as f:
        f.write(text_format.MessageToString(proto))
    os.remove(binary)


def call_receiver_fn(serving_input_receiver_fn):
    """Runs `serving_input_receiver_fn` in a graph; returns its pieces as functions.

    Returns:
        `(receiver, to_features)`: the receiver (holding graph tensors), and a
        function `to_features(name, inputs)` mapping a dict of input tensors
        of the receiver tensors named `name` (None for the main ones, else an
        alternative's name) to the features, as TensorFlow ops.
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
    for key, feature in _named(receiver.features).items():
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
        tensors = _receiver_tensors(receiver, alternative)
        if alternative not in pruned:
            pruned[alternative] = graph_function.prune(
                feeds=[tensors[k] for k in sorted(tensors)], fetches=receiver.features
            )
        return pruned[alternative](*[inputs[k] for k in sorted(tensors)])

    return receiver, to_features


def _receiver_tensors(receiver, alternative):
    """The receiver tensors named `alternative`; None names the main ones."""
    if alternative is None:
        return receiver.receiver_tensors
    return receiver.receiver_tensors_alternatives[alternative]


def _named(features):
    return features if isinstance(features, dict) else {SINGLE_FEATURE_DEFAULT_NAME: features}


def _input_signature(tensors):
    tf = _tf()
    return {key: tf.TensorSpec(t.shape, t.dtype, name=key) for key, t in tensors.items()}


def _jax_dtype(dtype):
    """The dtype JAX computes `dtype` in (64-bit types are 32-bit without x64)."""
    tf = _tf()
    import jax

    if jax.config.jax_enable_x64:
        return dtype
    return {tf.int64: tf.int32, tf.uint64: tf.uint32, tf.float64: tf.float32}.get(dtype, dtype)


def serving_signatures(spec):
    """`{signature name: ExportOutput}` from a PREDICT spec, as TensorFlow chose them.

    Without `export_outputs`, `serving_default` returns the `predictions`.
    A single export output is also the default; with several, one must be
    named `serving_default`.

    Raises:
        ValueError: with several export outputs and none named
            `serving_default`.
    """
    outputs = spec.export_outputs
    if outputs is None:
        return {DEFAULT_SERVING_SIGNATURE_DEF_KEY: PredictOutput(spec.predictions)}
    outputs = dict(outputs)
    if DEFAULT_SERVING_SIGNATURE_DEF_KEY not in outputs:
        if len(outputs) != 1:
            raise ValueError(
                "Multiple export_outputs were provided, but none of them is "
                "specified as the default. Name one of them "
                f"'{DEFAULT_SERVING_SIGNATURE_DEF_KEY}'. Received the keys "
                f"{sorted(outputs)}."
            )
        outputs[DEFAULT_SERVING_SIGNATURE_DEF_KEY] = next(iter(outputs.values()))
    return outputs


def build_archive(model, serving_input_receiver_fn, global_step=None, platforms=("cpu",),
                  restore=None):
    """The `keras.export.ExportArchive` of `model` served through the receiver.

    `model_fn` runs in PREDICT mode in one JAX function of the features,
    converted to TensorFlow once for all signatures; each signature is a
    `tf.function` of the receiver tensors that computes the features and
    picks its outputs. Tracked: the weights of `model.store` (BatchNorm
    statistics included) and a `global_step` variable; not the optimizer.

    Args:
        model: an `EstimatorModel`; its PREDICT mode is built here if needed.
        serving_input_receiver_fn: see `export_saved_model`.
        global_step: see `export_saved_model`.
        platforms: see `export_saved_model`.
        restore: optional function called once the PREDICT mode is built,
            to load the weights to export; it returns their global step.

    Returns:
        A `keras.export.ExportArchive`, ready for `write_out`.
    """
    tf = _tf()
    import jax.numpy as jnp

    receiver, to_features = call_receiver_fn(serving_input_receiver_fn)
    single = isinstance(receiver, TensorServingInputReceiver)
    features = _named(receiver.features)
    feature_signature = {
        k: tf.TensorSpec(t.shape, _jax_dtype(t.dtype), name=k) for k, t in features.items()
    }
    _build_predict_mode(model, feature_signature, single)
    if restore is not None:
        global_step = restore()
    step = model.global_step if global_step is None else int(global_step)
    classifications = set()

    def serve(features):
        if single:
            features = features[SINGLE_FEATURE_DEFAULT_NAME]
        # model_fn may build an optimizer, which the archive's scope forbids.
        with _keras_internals.stateless_scope_as_bound_values(model.store.variables):
            spec = model.call_model_fn(features, None, ModeKeys.PREDICT, jnp.asarray(step, "int32"),
                               building=False)
        signatures = serving_signatures(spec)
        classifications.update(
            k for k, v in signatures.items() if isinstance(v, ClassificationOutput)
        )
        return {k: dict(v.outputs) for k, v in signatures.items()}

    archive = keras.export.ExportArchive()
    archive.track(model)
    with warnings.catch_warnings():
        # JAX holds it as int32 without x64; the SavedModel variable is int64.
        warnings.simplefilter("ignore", UserWarning)
        step_variable = keras.Variable(step, dtype="int64", trainable=False, name="global_step")
    archive.add_variable_collection("global_step", [step_variable])
    previous = keras.distribution.distribution()
    # Serving runs on one device: no layouts or sharding constraints inside.
    keras.distribution.set_distribution(None)
    try:
        model_outputs, structure = _convert(archive, serve, feature_signature, platforms)
    finally:
        keras.distribution.set_distribution(previous)

    alternatives = [None] + sorted(receiver.receiver_tensors_alternatives)
    for signature in sorted(structure, key=lambda k: k != DEFAULT_SERVING_SIGNATURE_DEF_KEY):
        for alternative in alternatives:
            function = _signature_function(
                _receiver_tensors(receiver, alternative), alternative, to_features,
                model_outputs, signature, signature in classifications,
            )
            name = signature if alternative is None else f"{signature}:{alternative}"
            archive.add_endpoint(name, function)
    return archive


def _convert(archive, serve, feature_signature, platforms):
    """`serve` converted to TensorFlow in `archive`, and its output structure.

    A program that compiles for the CPU but not for another platform asked
    for is reported as such, rather than exported for fewer platforms.
    """

    def convert(platforms):
        with warnings.catch_warnings():
            # Keras passes it too; without it, a GPU host would export a
            # deprecated non-native graph.
            warnings.filterwarnings("ignore", "The `native_serialization` parameter")
            function = _keras_internals.hidden_endpoint(
                archive,
                "model_fn",
                serve,
                input_signature=[feature_signature],
                jax2tf_kwargs={
                    "native_serialization": True,
                    "native_serialization_platforms": platforms,
                    "with_gradient": False,  # A serving graph; no custom gradients.
                },
            )
        return function, function.get_concrete_function().structured_outputs

    try:
        return convert(platforms)
    except Exception as error:
        if platforms == ("cpu",):
            raise
        convert(("cpu",))  # Raises if the program itself is at fault.
        raise ValueError(
            f"The serving program compiles for the CPU but not for {list(platforms)} "
            f"on this runtime: {error}. Export with export_to_tpu=False (or "
            "platforms=('cpu',)) to serve on CPU."
        ) from error


def _build_predict_mode(model, feature_signature, single):
    """Creates `model_fn`'s PREDICT layers from the serving features' specs."""
    import jax

    sample = {
        key: jax.ShapeDtypeStruct(
            tuple(1 if d is None else d for d in spec.shape.as_list()), spec.dtype.as_numpy_dtype
        )
        for key, spec in feature_signature.items()
    }
    if single:
        sample = sample[SINGLE_FEATURE_DEFAULT_NAME]
    model.build_from_batch(ModeKeys.PREDICT, (sample, None))


def _signature_function(tensors, alternative, to_features, model_outputs, signature,
                        classification):
    tf = _tf()

    @tf.function(input_signature=[_input_signature(tensors)], autograph=False)
    def signature_function(inputs):
        features = _named(to_features(alternative, inputs))
        features = {k: tf.cast(v, _jax_dtype(v.dtype)) for k, v in features.items()}
        outputs = dict(model_outputs(features)[signature])
        if classification and "classes" in outputs and outputs["classes"].dtype != tf.string:
            # TensorFlow Serving's Classify API returns classes as strings.
            outputs["classes"] = tf.strings.as_string(outputs["classes"])
        return outputs

    signature_function.get_concrete_function()
    return signature_function
