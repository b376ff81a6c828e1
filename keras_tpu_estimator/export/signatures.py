"""The SavedModel signatures: `model_fn`'s PREDICT outputs served through a receiver.

`serving_signatures` picks the signatures of a PREDICT spec from its
`export_outputs`; `build_archive` converts `model_fn` to TensorFlow once
(`jax2tf`, StableHLO) and adds, for each signature and receiver alternative,
a `tf.function` of the receiver tensors to a `keras.export.ExportArchive`.

Signatures follow TensorFlow's `build_all_signature_defs`: a
`ClassificationOutput` or `RegressionOutput` is a TensorFlow Serving Classify
or Regress signature, whose one input `inputs` is the receiver's single
string tensor (serialized `tf.train.Example`s); with other receiver tensors
it is left out, and the report of what was included and excluded is logged.
"""

import warnings

import keras

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.export.receivers import SINGLE_FEATURE_DEFAULT_NAME
from keras_tpu_estimator.export.receivers import TensorServingInputReceiver
from keras_tpu_estimator.export.receivers import call_receiver_fn
from keras_tpu_estimator.export.receivers import named_features
from keras_tpu_estimator.export.receivers import receiver_tensors_for
from keras_tpu_estimator.spec import ClassificationOutput
from keras_tpu_estimator.spec import ModeKeys
from keras_tpu_estimator.spec import PredictOutput
from keras_tpu_estimator.spec import RegressionOutput
from keras_tpu_estimator.spec import scaffold as scaffold_lib
from keras_tpu_estimator.log_lines import logger as _log


DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"


def _tf():
    import tensorflow as tf

    return tf


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

    Args:
        spec: the `EstimatorSpec` (or `TPUEstimatorSpec`) `model_fn` returned
            in PREDICT mode.

    Returns:
        A dict of signature name to `ExportOutput`, with
        `"serving_default"` always present.

    Raises:
        ValueError: with several export outputs and none named
            `serving_default`.

    Example:

    ```python
    spec = kte.EstimatorSpec(mode, predictions={"y": y})
    serving_signatures(spec)  # {"serving_default": PredictOutput({"y": y})}
    ```
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

    Signature names, inputs and kinds are TensorFlow's
    (`build_all_signature_defs`): `<alternative>:<signature>` for receiver
    alternatives; a Classify or Regress signature takes the receiver's one
    string tensor as `inputs`, and is left out (logged) for other receivers.

    Args:
        model: an `EstimatorModel`; its PREDICT mode is built here if needed.
        serving_input_receiver_fn: see `export_saved_model`.
        global_step: see `export_saved_model`.
        platforms: see `export_saved_model`.
        restore: optional function called once the PREDICT mode is built,
            to load the weights to export; it returns their global step.

    Returns:
        `(archive, method_names)`: a `keras.export.ExportArchive`, ready for
        `write_out`, and the TensorFlow Serving method name of each signature
        (`"tensorflow/serving/classify"`, ...), which TensorFlow 2's
        SavedModel writer does not set (see `set_method_names`).

    Raises:
        ValueError: see `call_receiver_fn` and `serving_signatures`; also for
            a program that compiles for the CPU but not for `platforms`, and
            when no signature can be served through the receiver.

    Example:

    ```python
    archive, method_names = build_archive(model, receiver_fn)
    archive.write_out("serving/model")  # Then set_method_names on its proto.
    ```
    """
    tf = _tf()
    import jax.numpy as jnp

    receiver, to_features = call_receiver_fn(serving_input_receiver_fn)
    single = isinstance(receiver, TensorServingInputReceiver)
    features = named_features(receiver.features)
    feature_signature = {
        k: tf.TensorSpec(t.shape, _jax_dtype(t.dtype), name=k) for k, t in features.items()
    }
    with model.restoring():  # Initial values only for what `restore` leaves.
        _build_predict_mode(model, feature_signature, single)
        if restore is not None:
            global_step = restore()
    step = model.global_step if global_step is None else int(global_step)
    kinds = {}

    def serve(features):
        if single:
            features = features[SINGLE_FEATURE_DEFAULT_NAME]
        # model_fn may build an optimizer, which the archive's scope forbids.
        restores = model.scaffold_restores.get(ModeKeys.PREDICT)
        # Serving runs on one device: what model_fn assigns (a random draw's
        # seed state) keeps no training layout (no Shardy mesh in the program).
        with _keras_internals.stateless_scope_as_bound_values(model.store.variables), \
                _keras_internals.layouts_removed(model.store.variables), \
                scaffold_lib.restored(restores):
            spec = model.call_model_fn(features, None, ModeKeys.PREDICT, jnp.asarray(step, "int32"),
                               building=False)
        signatures = serving_signatures(spec)
        kinds.update((k, type(v)) for k, v in signatures.items())
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
        model_outputs = _convert(archive, serve, feature_signature, platforms)
    finally:
        keras.distribution.set_distribution(previous)

    method_names = _add_signatures(archive, receiver, to_features, model_outputs, kinds)
    return archive, method_names


def _add_signatures(archive, receiver, to_features, model_outputs, kinds):
    """Adds each servable signature to `archive`; returns their method names.

    As TensorFlow's `build_all_signature_defs`: every export output on the
    receiver tensors, then on each alternative (`<alternative>:<name>`);
    those TensorFlow Serving cannot take are left out, and logged.
    """
    method_names, excluded = {}, {}
    for alternative in [None] + sorted(receiver.receiver_tensors_alternatives):
        tensors = receiver_tensors_for(receiver, alternative)
        for signature in sorted(kinds, key=lambda k: k != DEFAULT_SERVING_SIGNATURE_DEF_KEY):
            name = signature if alternative is None else f"{alternative}:{signature}"
            try:
                inputs = _signature_inputs(kinds[signature], tensors)
            except ValueError as error:
                excluded[name] = str(error)
                continue
            archive.add_endpoint(name, _signature_function(
                tensors, inputs, alternative, to_features, model_outputs, signature, kinds[signature]
            ))
            method_names[name] = _method_name(kinds[signature])
    _log_signature_report(method_names, excluded)
    if not method_names:
        raise ValueError(
            "No signature can be served through this serving_input_receiver_fn: "
            f"{excluded}. Classification and regression outputs need a receiver "
            "of serialized tf.train.Examples (one string tensor); add a "
            "PredictOutput for other receivers."
        )
    # keras.export.ExportArchive serves its first endpoint as the default.
    method_names.setdefault(DEFAULT_SERVING_SIGNATURE_DEF_KEY, next(iter(method_names.values())))
    return method_names


def set_method_names(saved_model, method_names):
    """Sets the signatures' method names in a `SavedModel` proto.

    TensorFlow 2's SavedModel writer names every signature
    `tensorflow/serving/predict`; TensorFlow Serving's Classify and Regress
    APIs serve only signatures named `tensorflow/serving/classify` and
    `tensorflow/serving/regress`, as TensorFlow 1's writer named them.

    Args:
        saved_model: the `SavedModel` proto of `saved_model.pb`, changed in
            place.
        method_names: a dict of signature name to method name.

    Example:

    ```python
    set_method_names(proto, {"classify": "tensorflow/serving/classify"})
    ```
    """
    for meta_graph in saved_model.meta_graphs:
        for name, method_name in method_names.items():
            if name in meta_graph.signature_def:
                meta_graph.signature_def[name].method_name = method_name


def _method_name(kind):
    tf = _tf()
    return {
        ClassificationOutput: tf.saved_model.CLASSIFY_METHOD_NAME,
        RegressionOutput: tf.saved_model.REGRESS_METHOD_NAME,
    }.get(kind, tf.saved_model.PREDICT_METHOD_NAME)


def _signature_inputs(kind, tensors):
    """`{input name: receiver tensor name}` of a signature of `kind`.

    As TensorFlow's `ClassificationOutput.as_signature_def` (and
    `RegressionOutput`'s): one string tensor, serialized `tf.train.Example`s,
    input `inputs`; anything else raises TensorFlow's `ValueError`.
    """
    tf = _tf()
    if kind is PredictOutput:
        return {key: key for key in tensors}
    api = "Classification" if kind is ClassificationOutput else "Regression"
    if len(tensors) != 1 or next(iter(tensors.values())).dtype != tf.string:
        raise ValueError(
            f"{api} signatures can only accept a single tensor input of type "
            "tf.string. Please check to make sure that you have structured the "
            "serving_input_receiver_fn so that it creates a single string "
            "placeholder. If your model function expects multiple inputs, then "
            "use `tf.io.parse_example()` to parse the string into multiple "
            f"tensors. Received: {_describe_tensors(tensors)}"
        )
    return {tf.saved_model.CLASSIFY_INPUTS: next(iter(tensors))}


def _describe_tensors(tensors):
    return "{" + ", ".join(
        f"{k!r}: {t.dtype.name} {t.shape}" for k, t in tensors.items()
    ) + "}"


_FRIENDLY_METHOD_NAMES = {
    "tensorflow/serving/classify": "Classify",
    "tensorflow/serving/regress": "Regress",
    "tensorflow/serving/predict": "Predict",
}


def _log_signature_report(method_names, excluded):
    """Logs which signatures were exported and why others were not, as TensorFlow does."""
    for method_name, friendly in _FRIENDLY_METHOD_NAMES.items():
        names = [k for k, v in method_names.items() if v == method_name]
        _log.info("Signatures INCLUDED in export for %s: %s", friendly, names or "None")
    if excluded:
        _log.info("Signatures EXCLUDED from export because they cannot be served "
                  "via TensorFlow Serving APIs:")
        for name, message in excluded.items():
            _log.info("'%s' : %s", name, message)
    if method_names and DEFAULT_SERVING_SIGNATURE_DEF_KEY not in method_names:
        first = next(iter(method_names))
        _log.warning(
            "Export includes no default signature! As keras.export.ExportArchive "
            "does, '%s' is also served as '%s'.", first, DEFAULT_SERVING_SIGNATURE_DEF_KEY,
        )


def _convert(archive, serve, feature_signature, platforms):
    """`serve` converted to TensorFlow in `archive`, and traced once.

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
        function.get_concrete_function()
        return function

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


def _signature_function(tensors, inputs, alternative, to_features, model_outputs, signature,
                        kind):
    """The `tf.function` of a signature; `inputs` maps its input names to keys of `tensors`."""
    tf = _tf()
    specs = {
        name: tf.TensorSpec(tensors[key].shape, tensors[key].dtype, name=name)
        for name, key in inputs.items()
    }

    @tf.function(input_signature=[specs], autograph=False)
    def signature_function(received):
        features = named_features(
            to_features(alternative, {key: received[name] for name, key in inputs.items()})
        )
        features = {k: tf.cast(v, _jax_dtype(v.dtype)) for k, v in features.items()}
        outputs = dict(model_outputs(features)[signature])
        if kind is not PredictOutput:
            # TensorFlow Serving's Classify and Regress APIs carry float32
            # scores and values, and classes as strings (JAX has no strings).
            outputs = {
                k: tf.strings.as_string(v) if k == "classes" and v.dtype != tf.string
                else tf.cast(v, tf.float32) if v.dtype.is_floating else v
                for k, v in outputs.items()
            }
        return outputs

    signature_function.get_concrete_function()
    return signature_function
