"""Export signatures as TensorFlow builds them, and exports older TensorFlow loads.

The reference is TensorFlow's own `build_all_signature_defs` and
`ExportOutput.as_signature_def` (still shipped by TensorFlow), run on the
same receivers in a TensorFlow graph.
"""

import logging
import os
import re
import subprocess
import sys

import jax
import keras
import numpy as np
import pytest
import tensorflow as tf
from jaxlib.mlir.dialects import stablehlo
from tensorflow.python.saved_model.model_utils import export_output as tf_export_output
from tensorflow.python.saved_model.model_utils import export_utils as tf_export_utils

import keras_tpu_estimator as kte
from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.export import compatibility

DIM = 4


def model_fn(features, mode, params):
    """Three kinds of export outputs; `params["kinds"]` picks which, by signature name."""
    logits = kte.get_or_create_layer("logits", lambda: keras.layers.Dense(3))(
        params.get("activation", lambda v: v)(features["x"])
    )
    class_ids = keras.ops.argmax(logits, -1)
    outputs = {
        "predict": kte.PredictOutput({"logits": logits, "class_ids": class_ids}),
        "classify": kte.ClassificationOutput(scores=keras.ops.softmax(logits), classes=class_ids),
        "regress": kte.RegressionOutput(logits[:, 0]),
    }
    kinds = params.get("kinds", {"serving_default": "predict", "classify": "classify",
                                 "regress": "regress"})
    return kte.EstimatorSpec(
        mode, predictions={"logits": logits},
        export_outputs={name: outputs[kind] for name, kind in kinds.items()},
    )


def float_receiver(placeholder):
    x = placeholder((None, DIM), tf.float32, "x")
    return {"x": x}, {"x": x}, None


def examples_receiver(placeholder):
    serialized = placeholder((None,), tf.string, "input_example_tensor")
    features = tf.io.parse_example(serialized, {"x": tf.io.FixedLenFeature([DIM], tf.float32)})
    return features, {"examples": serialized}, None


def examples_and_raw_receiver(placeholder):
    features, receiver_tensors, _ = examples_receiver(placeholder)
    return features, receiver_tensors, {"raw": {"x": features["x"]}}


def two_strings_receiver(placeholder):
    a = placeholder((None,), tf.string, "a")
    b = placeholder((None,), tf.string, "b")
    x = tf.strings.to_number(tf.stack([a, b, a, b], axis=1))
    return {"x": x}, {"a": a, "b": b}, None


RECEIVERS = [float_receiver, examples_receiver, examples_and_raw_receiver, two_strings_receiver]


def export(tmp_path, receiver, **params):
    model = kte.EstimatorModel(model_fn, params=params, predict_batch_size=8)

    def receiver_fn():
        features, receiver_tensors, alternatives = receiver(
            lambda shape, dtype, name: kte.export.placeholder(shape, dtype, name)
        )
        return kte.export.ServingInputReceiver(features, receiver_tensors, alternatives)

    path = str(tmp_path / "export")
    model.export(path, serving_input_receiver_fn=receiver_fn, verbose=False)
    return model, path


def saved_model_proto(path):
    proto = _keras_internals.saved_model_proto()
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        proto.ParseFromString(f.read())
    return proto


def tensorflow_signature_defs(receiver):
    """What TensorFlow's estimators export for `model_fn`'s outputs on `receiver`."""
    with tf.Graph().as_default():
        features, receiver_tensors, alternatives = receiver(
            lambda shape, dtype, name: tf.compat.v1.placeholder(dtype, shape, name)
        )
        logits = tf.matmul(features["x"], tf.ones((DIM, 3)))
        class_ids = tf.argmax(logits, -1, output_type=tf.int32)
        export_outputs = {
            "serving_default": tf_export_output.PredictOutput(
                {"logits": logits, "class_ids": class_ids}
            ),
            "classify": tf_export_output.ClassificationOutput(
                scores=tf.nn.softmax(logits), classes=tf.strings.as_string(class_ids)
            ),
            "regress": tf_export_output.RegressionOutput(logits[:, 0]),
        }
        return tf_export_utils.build_all_signature_defs(
            receiver_tensors, export_outputs, alternatives
        )


def described(signature_def):
    """A signature's method name, and each input's and output's dtype and shape."""

    def tensors(infos):
        return {
            key: (info.dtype, [d.size for d in info.tensor_shape.dim])
            for key, info in infos.items()
        }

    return signature_def.method_name, tensors(signature_def.inputs), tensors(signature_def.outputs)


@pytest.mark.parametrize("receiver", RECEIVERS, ids=lambda r: r.__name__)
def test_signature_defs_are_those_tensorflow_builds(tmp_path, receiver):
    _, path = export(tmp_path, receiver)
    written = {
        name: described(signature_def)
        for name, signature_def in saved_model_proto(path).meta_graphs[0].signature_def.items()
        if not name.startswith("__")  # TensorFlow 2's initializer signature.
    }
    expected = {name: described(s) for name, s in tensorflow_signature_defs(receiver).items()}
    assert written == expected


def test_classify_and_regress_take_serialized_examples_as_inputs(tmp_path):
    model, path = export(tmp_path, examples_receiver)
    x = np.random.default_rng(0).normal(size=(5, DIM)).astype("float32")
    examples = tf.constant([
        tf.train.Example(features=tf.train.Features(feature={
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=row))
        })).SerializeToString()
        for row in x
    ])
    logits = model.predict({"x": x}, verbose=0)["logits"]
    signatures = tf.saved_model.load(path).signatures
    classify = signatures["classify"](inputs=examples)
    np.testing.assert_allclose(classify["scores"].numpy(), keras.ops.softmax(logits), atol=1e-5)
    np.testing.assert_array_equal(
        classify["classes"].numpy(), [str(c).encode() for c in np.argmax(logits, -1)]
    )
    np.testing.assert_allclose(
        signatures["regress"](inputs=examples)["outputs"].numpy(), logits[:, 0], atol=1e-5
    )


def test_left_out_signatures_are_logged_as_tensorflow_logs_them(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="keras_tpu_estimator")
    export(tmp_path, float_receiver)
    messages = [r.getMessage() for r in caplog.records]
    assert "Signatures INCLUDED in export for Predict: ['serving_default']" in messages
    assert "Signatures INCLUDED in export for Classify: None" in messages
    assert any(m.startswith("'classify' : Classification signatures can only accept a single "
                            "tensor input of type tf.string") for m in messages)
    assert any(m.startswith("'regress' : Regression signatures") for m in messages)


def test_a_left_out_default_is_replaced_by_the_first_signature(tmp_path, caplog):
    kinds = {"serving_default": "classify", "predict": "predict"}
    _, path = export(tmp_path, float_receiver, kinds=kinds)
    # TensorFlow would export `predict` alone; Keras's ExportArchive always
    # has a default, its first signature.
    assert set(tensorflow_signature_defs(float_receiver)) == {"serving_default"}
    signature_defs = saved_model_proto(path).meta_graphs[0].signature_def
    assert sorted(k for k in signature_defs if not k.startswith("__")) == [
        "predict", "serving_default"
    ]
    assert described(signature_defs["serving_default"]) == described(signature_defs["predict"])
    assert "Export includes no default signature!" in caplog.text


def test_an_export_with_no_servable_signature_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="No signature can be served through this"):
        export(tmp_path, float_receiver, kinds={"classify": "classify"})
    assert not os.path.exists(tmp_path / "export")


def test_saved_model_cli_shows_the_classify_signature(tmp_path):
    _, path = export(tmp_path, examples_receiver)
    cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    shown = subprocess.run(
        [cli, "show", "--dir", path, "--tag_set", "serve", "--signature_def", "classify"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert "inputs['inputs'] tensor_info:\n      dtype: DT_STRING" in shown
    assert "outputs['classes'] tensor_info:\n      dtype: DT_STRING" in shown
    assert "outputs['scores'] tensor_info:\n      dtype: DT_FLOAT" in shown
    assert "Method name is: tensorflow/serving/classify" in shown


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: kte.ClassificationOutput(scores=np.zeros((2, 3), "int32")), "`scores`.*floats"),
        (lambda: kte.ClassificationOutput(classes=np.zeros((2,), "float32")),
         "`classes`.*integer class ids or string labels"),
        (lambda: kte.RegressionOutput(np.zeros((2,), "int32")), "`value`.*floats"),
    ],
)
def test_export_outputs_check_dtypes_as_tensorflow_does(build, message):
    with pytest.raises(ValueError, match=message):
        build()


# -- Older TensorFlow. ------------------------------------------------------------


def programs(path):
    """`(calling convention version, StableHLO module)` of every XlaCallModule op."""
    graph = saved_model_proto(path).meta_graphs[0].graph_def
    nodes = [n for f in graph.library.function for n in f.node_def] + list(graph.node)
    return [(n.attr["version"].i, n.attr["module"].s) for n in nodes if n.op == "XlaCallModule"]


def stablehlo_version(module):
    return re.search(rb"StableHLO_v([0-9.]+)", module).group(1).decode()


def test_export_writes_the_oldest_calling_convention_jax_can(tmp_path):
    before = jax.config.jax_export_calling_convention_version
    _, path = export(tmp_path, float_receiver)
    versions = {version for version, _ in programs(path)}
    assert versions == {jax.export.minimum_supported_calling_convention_version}
    assert jax.config.jax_export_calling_convention_version == before  # Restored.


def test_programs_are_written_for_the_oldest_tensorflow_that_runs_them(tmp_path):
    _, path = export(tmp_path, float_receiver)
    convention = jax.export.minimum_supported_calling_convention_version
    oldest = next(v for v in compatibility.TENSORFLOW_VERSIONS if v[2] >= convention)
    for _, module in programs(path):
        assert stablehlo_version(module) == oldest[1]
        assert b".py" not in module  # No source locations.


def test_a_program_with_newer_operations_targets_a_newer_tensorflow(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="keras_tpu_estimator")
    model, path = export(tmp_path, float_receiver, activation=keras.ops.tan)
    assert "cannot be written for TensorFlow 2.16 (StableHLO 0.17.7): failed to legalize" in (
        caplog.text
    )
    oldest = [v[1] for v in compatibility.TENSORFLOW_VERSIONS if v[0] == "2.16"][0]
    targets = {stablehlo_version(module) for _, module in programs(path)}
    assert targets <= {v[1] for v in compatibility.TENSORFLOW_VERSIONS} - {oldest}
    x = np.linspace(-1, 1, 2 * DIM, dtype="float32").reshape(2, DIM)
    served = tf.saved_model.load(path).signatures["serving_default"](x=tf.constant(x))
    np.testing.assert_allclose(
        served["logits"].numpy(), model.predict({"x": x}, verbose=0)["logits"], atol=1e-5
    )


def test_the_fingerprint_is_that_of_the_written_file(tmp_path):
    _, path = export(tmp_path, examples_receiver)
    written = tf.saved_model.experimental.read_fingerprint(path)
    _keras_internals.write_saved_model_fingerprint(path)  # From saved_model.pb as it is.
    fresh = tf.saved_model.experimental.read_fingerprint(path)
    assert (written.saved_model_checksum, written.signature_def_hash) == (
        fresh.saved_model_checksum, fresh.signature_def_hash
    )


def test_stablehlo_of_the_table_can_be_targeted():
    # Every version of the table is one this JAX can write.
    minimum = stablehlo.get_minimum_version()
    for _, version, _ in compatibility.TENSORFLOW_VERSIONS:
        assert tuple(map(int, version.split("."))) >= tuple(map(int, minimum.split(".")))
