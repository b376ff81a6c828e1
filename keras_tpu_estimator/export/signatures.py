"""The SavedModel signatures: `model_fn`'s PREDICT outputs served through a receiver.

`serving_signatures` picks the signatures of a PREDICT spec from its
`export_outputs`; `build_archive` converts `model_fn` to TensorFlow once
(`jax2tf`, StableHLO) and adds, for each signature and receiver alternative,
a `tf.function` of the receiver tensors to a `keras.export.ExportArchive`.
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

DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"


def _tf():
    import tensorflow as tf

    return tf


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

    Args:
        model: an `EstimatorModel`; its PREDICT mode is built here if needed.
        serving_input_receiver_fn: see `export_saved_model`.
        global_step: see `export_saved_model`.
        platforms: see `export_saved_model`.
        restore: optional function called once the PREDICT mode is built,
            to load the weights to export; it returns their global step.

    Returns:
        A `keras.export.ExportArchive`, ready for `write_out`.

    Raises:
        ValueError: see `call_receiver_fn` and `serving_signatures`; also for
            a program that compiles for the CPU but not for `platforms`.

    Example:

    ```python
    archive = build_archive(model, receiver_fn)
    archive.write_out("serving/model")
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
                receiver_tensors_for(receiver, alternative), alternative, to_features,
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
        features = named_features(to_features(alternative, inputs))
        features = {k: tf.cast(v, _jax_dtype(v.dtype)) for k, v in features.items()}
        outputs = dict(model_outputs(features)[signature])
        if classification and "classes" in outputs and outputs["classes"].dtype != tf.string:
            # TensorFlow Serving's Classify API returns classes as strings.
            outputs["classes"] = tf.strings.as_string(outputs["classes"])
        return outputs

    signature_function.get_concrete_function()
    return signature_function
