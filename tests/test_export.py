"""Export: SavedModels reloaded with TensorFlow serve what `predict` computes."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
from keras_tpu_estimator import export as export_lib

from model_fns import DIM
from model_fns import estimator_config
from model_fns import input_fn_of
from model_fns import linear_data


def model_fn(features, labels, mode, params):
    """Classifier with BatchNormalization, three kinds of export outputs."""
    h = kte.get_or_create_layer("norm", lambda: keras.layers.BatchNormalization())(features["x"])
    logits = kte.get_or_create_layer("logits", lambda: keras.layers.Dense(3))(h)
    if mode == kte.ModeKeys.PREDICT:
        predictions = {"logits": logits, "class_ids": keras.ops.argmax(logits, -1)}
        export_outputs = None
        if params.get("export_outputs"):
            export_outputs = {
                "serving_default": kte.PredictOutput(predictions),
                "classify": kte.ClassificationOutput(
                    scores=keras.ops.softmax(logits), classes=keras.ops.argmax(logits, -1)
                ),
                "regress": kte.RegressionOutput(logits[:, 0]),
            }
        return kte.TPUEstimatorSpec(mode, predictions=predictions, export_outputs=export_outputs)
    loss = keras.ops.mean(
        keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    )
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.Adam(0.05))


def raw_receiver_fn():
    x = kte.export.placeholder(shape=(None, DIM), dtype="float32", name="x")
    return kte.export.ServingInputReceiver(features={"x": x}, receiver_tensors={"x": x})


def make_estimator(model_dir, model_fn=model_fn, **params):
    return kte.TPUEstimator(
        model_fn=model_fn, config=estimator_config(model_dir, save_every=4), params=params,
        train_batch_size=16, predict_batch_size=8,
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """An estimator trained 4 steps (BatchNorm statistics moved), exported once."""
    keras.utils.set_random_seed(0)
    x, y = linear_data(32, binary=True)
    estimator = make_estimator(tmp_path_factory.mktemp("model"), export_outputs=True)
    estimator.train(input_fn_of(x, y, repeat=True), max_steps=4)
    base = tmp_path_factory.mktemp("exports")
    path = estimator.export_saved_model(str(base), raw_receiver_fn)
    predictions = list(estimator.predict(input_fn_of(x), yield_single_examples=False))
    predicted = {k: np.concatenate([p[k] for p in predictions]) for k in predictions[0]}
    return estimator, base, path, x, predicted


def test_export_saved_model_returns_the_timestamped_directory_as_bytes(trained):
    _, base, path, _, _ = trained
    assert isinstance(path, bytes)
    assert os.path.dirname(path) == os.fsencode(str(base))
    assert os.path.basename(path).isdigit()
    assert os.listdir(base) == [os.fsdecode(os.path.basename(path))]  # No temp dir left.
    assert os.path.isfile(os.path.join(path, b"saved_model.pb"))


def serialized_examples(rows):
    return tf.constant([
        tf.train.Example(features=tf.train.Features(feature={
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=row))
        })).SerializeToString()
        for row in rows
    ])


@pytest.fixture(scope="module")
def parsing_export(trained):
    """The trained estimator exported with a receiver of serialized tf.train.Examples."""
    estimator, base = trained[:2]
    receiver_fn = kte.export.build_parsing_serving_input_receiver_fn(
        {"x": tf.io.FixedLenFeature([DIM], tf.float32)}
    )
    return estimator.export_saved_model(str(base / "parsing"), receiver_fn)


def test_every_signature_serves_the_numbers_predict_gives(trained, parsing_export):
    x, predicted = trained[3:]
    loaded = tf.saved_model.load(parsing_export)
    assert sorted(loaded.signatures) == ["classify", "regress", "serving_default"]
    examples = serialized_examples(x[:11])  # Any batch size: the batch dimension is variable.

    served = {k: v.numpy() for k, v in loaded.signatures["serving_default"](examples=examples).items()}
    np.testing.assert_allclose(served["logits"], predicted["logits"][:11], atol=1e-5)
    np.testing.assert_array_equal(served["class_ids"], predicted["class_ids"][:11])

    classify = loaded.signatures["classify"](inputs=examples)
    np.testing.assert_allclose(
        classify["scores"].numpy(), keras.ops.softmax(predicted["logits"][:11]), atol=1e-5
    )
    np.testing.assert_array_equal(  # Classes are strings, as TensorFlow Serving wants.
        classify["classes"].numpy(), [str(c).encode() for c in predicted["class_ids"][:11]]
    )

    regress = loaded.signatures["regress"](inputs=examples)
    np.testing.assert_allclose(regress["outputs"].numpy(), predicted["logits"][:11, 0], atol=1e-5)


def test_a_float_receiver_serves_the_predict_signature_only(trained):
    loaded = tf.saved_model.load(trained[2])
    assert list(loaded.signatures) == ["serving_default"]  # classify, regress: left out.


def test_batch_normalization_exports_its_inference_behaviour(trained):
    estimator, _, path, x, _ = trained
    loaded = tf.saved_model.load(path)
    moving_mean = estimator.get_variable_value("norm/moving_mean")
    assert np.abs(moving_mean).max() > 1e-3  # Training moved the statistics.
    one = loaded.signatures["serving_default"](x=tf.constant(x[:1]))["logits"].numpy()
    many = loaded.signatures["serving_default"](x=tf.constant(x))["logits"].numpy()
    # Inference: moving statistics, so an example's output ignores its batch.
    np.testing.assert_allclose(one[0], many[0], atol=1e-5)
    second = loaded.signatures["serving_default"](x=tf.constant(x[:1]))["logits"].numpy()
    np.testing.assert_allclose(one, second, atol=0)  # Serving updates no statistic.


def test_variables_hold_the_weights_and_global_step_but_no_optimizer_slots(trained):
    estimator, _, path, _, _ = trained
    loaded = tf.saved_model.load(path)
    assert loaded.global_step[0].numpy() == 4
    assert loaded.global_step[0].dtype == tf.int64
    names = sorted(estimator.get_variable_names())
    weights = [n for n in names if not n.startswith("optimizer/") and n != "global_step"]
    assert len(weights) < len(names) - 1  # The checkpoint does hold optimizer slots.
    saved = [n for n, _ in tf.train.list_variables(os.path.join(path, b"variables", b"variables"))
             if n != "_CHECKPOINTABLE_OBJECT_GRAPH"]
    assert len(saved) == len(weights) + 1  # The weights and global_step only.
    loaded_values = sorted(float(np.sum(v.numpy())) for v in loaded.variables)
    expected = sorted(float(np.sum(estimator.get_variable_value(n))) for n in weights)
    np.testing.assert_allclose(loaded_values, expected, rtol=1e-6)


def test_serialized_tf_examples_are_served(trained, parsing_export):
    x, predicted = trained[3:]
    signature = tf.saved_model.load(parsing_export).signatures["serving_default"]
    assert list(signature.structured_input_signature[1]) == ["examples"]
    served = signature(examples=serialized_examples(x[:5]))
    np.testing.assert_allclose(served["logits"].numpy(), predicted["logits"][:5], atol=1e-5)


def test_receiver_alternatives_add_signatures_taking_other_inputs(trained):
    estimator, base, _, x, predicted = trained

    def receiver_fn():
        serialized = kte.export.placeholder((None,), "string", name="examples")
        parsed = tf.io.parse_example(serialized, {"x": tf.io.FixedLenFeature([DIM], tf.float32)})
        return kte.export.ServingInputReceiver(
            parsed, {"examples": serialized},
            receiver_tensors_alternatives={"raw": {"x": parsed["x"]}},
        )

    path = estimator.export_saved_model(str(base / "alternatives"), receiver_fn)
    signatures = tf.saved_model.load(path).signatures
    # Named "<alternative>:<signature>"; classify and regress take examples only.
    assert sorted(signatures) == ["classify", "raw:serving_default", "regress", "serving_default"]
    served = signatures["raw:serving_default"](x=tf.constant(x[:3]))
    np.testing.assert_allclose(served["logits"].numpy(), predicted["logits"][:3], atol=1e-5)


def test_export_without_export_outputs_serves_the_predictions_dict(trained, tmp_path):
    x = trained[3]
    estimator = make_estimator(trained[0].model_dir)  # Same checkpoints, no export_outputs.
    receiver_fn = kte.export.build_raw_serving_input_receiver_fn(
        {"x": tf.TensorSpec((None, DIM), tf.float32)}
    )
    path = estimator.export_savedmodel(str(tmp_path / "exports"), receiver_fn,
                                       strip_default_attrs=True)
    loaded = tf.saved_model.load(path)
    assert list(loaded.signatures) == ["serving_default"]
    served = loaded.signatures["serving_default"](x=tf.constant(x[:4]))
    assert sorted(served) == ["class_ids", "logits"]
    expected = next(estimator.predict(input_fn_of(x[:4]), yield_single_examples=False))
    np.testing.assert_allclose(served["logits"].numpy(), expected["logits"], atol=1e-5)


def test_export_needs_a_checkpoint(tmp_path):
    estimator = make_estimator(tmp_path / "model")
    with pytest.raises(ValueError, match="Couldn't find trained model at"):
        estimator.export_saved_model(str(tmp_path / "exports"), raw_receiver_fn)
    assert not os.path.exists(tmp_path / "exports")


def test_assets_extra_as_text_and_an_older_checkpoint(trained, tmp_path):
    estimator, _, _, x, _ = trained
    vocabulary = tmp_path / "vocab.txt"
    vocabulary.write_text("a\nb\n")
    checkpoint = sorted(
        (p for p in _checkpoints(estimator)), key=lambda p: int(p.split("-")[-1])
    )[0]
    path = estimator.export_saved_model(
        str(tmp_path / "exports"), raw_receiver_fn, assets_extra={"data/vocab.txt": str(vocabulary)},
        as_text=True, checkpoint_path=checkpoint,
    )
    assert open(os.path.join(path, b"assets.extra", b"data", b"vocab.txt")).read() == "a\nb\n"
    assert os.path.isfile(os.path.join(path, b"saved_model.pbtxt"))
    assert not os.path.exists(os.path.join(path, b"saved_model.pb"))
    loaded = tf.saved_model.load(path)
    assert loaded.global_step[0].numpy() == int(checkpoint.split("-")[-1])


def _checkpoints(estimator):
    latest = estimator.latest_checkpoint()
    directory = os.path.dirname(latest)
    return [os.path.join(directory, n[:-len(".index")]) for n in os.listdir(directory)
            if n.endswith(".index")]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"assets_extra": ["vocab.txt"]}, "`assets_extra` must be None or a dict"),
        ({"assets_extra": {"../x": __file__}}, "must be relative paths"),
        ({"assets_extra": {"x": "/no/such/file"}}, "must be an existing file"),
        ({"experimental_mode": kte.ModeKeys.TRAIN}, "`experimental_mode` must be"),
        ({"checkpoint_path": "/no/such/checkpoint"}, "must name a complete checkpoint"),
    ],
)
def test_bad_arguments_fail_before_anything_is_written(trained, tmp_path, kwargs, message):
    estimator = trained[0]
    with pytest.raises(ValueError, match=message):
        estimator.export_saved_model(str(tmp_path / "exports"), raw_receiver_fn, **kwargs)
    assert not os.path.exists(tmp_path / "exports") or not os.listdir(tmp_path / "exports")


def test_a_receiver_fn_returning_something_else_is_rejected_and_nothing_is_left(trained, tmp_path):
    estimator = trained[0]
    with pytest.raises(ValueError, match="must return a kte.export.ServingInputReceiver"):
        estimator.export_saved_model(str(tmp_path / "exports"), lambda: {"x": 1})
    assert os.listdir(tmp_path / "exports") == []


def test_string_features_are_rejected_with_a_clear_error(trained, tmp_path):
    def receiver_fn():
        text = kte.export.placeholder((None,), "string", name="text")
        return kte.export.ServingInputReceiver({"x": text}, {"text": text})

    with pytest.raises(ValueError, match="Feature 'x' is a string tensor"):
        trained[0].export_saved_model(str(tmp_path / "exports"), receiver_fn)


def test_export_to_neither_cpu_nor_tpu_is_an_error(tmp_path):
    estimator = make_estimator(tmp_path)
    estimator.export_to_cpu = estimator.export_to_tpu = False
    with pytest.raises(ValueError, match="One of export_to_cpu and export_to_tpu must be true"):
        estimator.export_saved_model(str(tmp_path / "exports"), raw_receiver_fn)


@pytest.mark.parametrize(
    "export_outputs, signatures",
    [
        (None, ["serving_default"]),
        ({"logits": "predict"}, ["logits", "serving_default"]),
        ({"serving_default": "predict", "classify": "classify"}, ["classify", "serving_default"]),
    ],
)
def test_signatures_follow_tensorflows_default_rules(export_outputs, signatures):
    logits = np.zeros((2, 3), "float32")
    kinds = {"predict": kte.PredictOutput(logits), "classify": kte.ClassificationOutput(logits)}
    spec = kte.TPUEstimatorSpec(
        kte.ModeKeys.PREDICT, predictions={"logits": logits},
        export_outputs=None if export_outputs is None else {
            k: kinds[v] for k, v in export_outputs.items()
        },
    )
    chosen = export_lib.serving_signatures(spec)
    assert sorted(chosen) == signatures
    assert chosen["serving_default"].outputs.keys() <= {"logits", "output"}


def test_several_export_outputs_need_a_default():
    logits = np.zeros((2, 3), "float32")
    spec = kte.TPUEstimatorSpec(
        kte.ModeKeys.PREDICT, predictions=logits,
        export_outputs={"a": kte.PredictOutput(logits), "b": kte.RegressionOutput(logits[:, 0])},
    )
    with pytest.raises(ValueError, match="none of them is specified as the default"):
        export_lib.serving_signatures(spec)


# -- Receivers. ---------------------------------------------------------------


def test_placeholder_outside_an_export_is_an_error():
    with pytest.raises(ValueError, match="inside the serving_input_receiver_fn"):
        kte.export.placeholder((None, 3), name="x")


@pytest.mark.parametrize(
    "features, receiver_tensors, message",
    [
        ([1, 2], None, "`features` of ServingInputReceiver must be a tensor or a non-empty dict"),
        ({1: "t"}, None, "must have string keys"),
        ({"x": np.zeros(3)}, None, "must hold TensorFlow tensors"),
        (None, "nope", "`receiver_tensors` of ServingInputReceiver"),
    ],
)
def test_receivers_check_their_arguments(features, receiver_tensors, message):
    def build():
        tensor = kte.export.placeholder((None, 3), name="x")
        kte.export.ServingInputReceiver(
            tensor if features is None else features,
            tensor if receiver_tensors is None else receiver_tensors,
        )

    with pytest.raises(ValueError, match=message):
        tf.compat.v1.wrap_function(build, [])


def test_receivers_name_single_tensors_as_tensorflow_does():
    received = []

    def build():
        tensor = kte.export.placeholder((None, 3), name="x")
        received.append(kte.export.ServingInputReceiver(tensor, tensor))
        received.append(kte.export.TensorServingInputReceiver(tensor, tensor))

    tf.compat.v1.wrap_function(build, [])
    plain, tensor = received
    assert list(plain.features) == ["feature"] and list(plain.receiver_tensors) == ["input"]
    assert isinstance(tensor.features, tf.Tensor)


@pytest.mark.parametrize(
    "function, args, message",
    [
        (kte.export.build_raw_serving_input_receiver_fn, ({"x": object()},), "features\\['x'\\]"),
        (kte.export.build_raw_serving_input_receiver_fn, ({},), "must not be empty"),
        (kte.export.build_raw_serving_input_receiver_fn,
         ({"x": tf.TensorSpec((None, 2))}, 0), "`default_batch_size`"),
        (kte.export.build_parsing_serving_input_receiver_fn, ([],), "`feature_spec`"),
    ],
)
def test_receiver_builders_check_their_arguments(function, args, message):
    with pytest.raises(ValueError, match=message):
        function(*args)


def test_tensor_features_and_int64_examples_serve_through_estimator_model(tmp_path):
    """A model_fn taking a tensor; an int64 feature parsed from examples."""

    def tensor_model_fn(features, mode):
        logits = kte.get_or_create_layer("dense", lambda: keras.layers.Dense(2))(
            keras.ops.cast(features, "float32")
        )
        return kte.TPUEstimatorSpec(mode, predictions=logits)

    model = kte.EstimatorModel(tensor_model_fn, predict_batch_size=8)
    ids = np.arange(8 * 3, dtype="int32").reshape(8, 3) % 5

    def receiver_fn():
        serialized = kte.export.placeholder((None,), "string", name="examples")
        parsed = tf.io.parse_example(serialized, {"ids": tf.io.FixedLenFeature([3], tf.int64)})
        return kte.export.TensorServingInputReceiver(parsed["ids"], {"examples": serialized})

    model.export(str(tmp_path / "model"), serving_input_receiver_fn=receiver_fn, verbose=False)
    expected = model.predict(ids, verbose=0)
    examples = [
        tf.train.Example(features=tf.train.Features(feature={
            "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=row))
        })).SerializeToString()
        for row in ids
    ]
    served = tf.saved_model.load(str(tmp_path / "model")).signatures["serving_default"](
        examples=tf.constant(examples)
    )
    np.testing.assert_allclose(served["output"].numpy(), expected, atol=1e-5)


# -- EstimatorModel.export: Keras's model.export. --------------------------------


def test_estimator_model_export_keeps_keras_signature(tmp_path):
    x, y = linear_data(32, binary=True)
    model = kte.EstimatorModel(model_fn, train_batch_size=16, predict_batch_size=8)
    model.compile()
    model.fit(({"x": x}, y), epochs=1, verbose=0)
    target = tmp_path / "serving"
    target.mkdir()
    (target / "stale.txt").write_text("previous export")
    model.export(
        str(target), "tf_saved_model", verbose=False,
        input_signature=[{"x": keras.InputSpec(shape=(None, DIM), dtype="float32")}],
    )
    assert not (target / "stale.txt").exists()  # Replaced whole.
    assert sorted(os.listdir(tmp_path)) == ["serving"]
    loaded = tf.saved_model.load(str(target))
    served = loaded.signatures["serving_default"](x=tf.constant(x[:6]))
    np.testing.assert_allclose(
        served["logits"].numpy(), model.predict({"x": x[:6]}, verbose=0)["logits"], atol=1e-5
    )
    assert loaded.global_step[0].numpy() == model.global_step


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"format": "onnx", "input_signature": [{}]}, "`format` must be 'tf_saved_model'"),
        ({}, "exactly one of `input_signature`"),
        ({"input_signature": [{}, {}]}, "the one `features` argument"),
        ({"input_signature": {"x": keras.InputSpec(shape=(None, DIM))}, "jax2tf_kwargs": {}},
         "unexpected keyword arguments \\['jax2tf_kwargs'\\]"),
    ],
)
def test_estimator_model_export_checks_its_arguments(tmp_path, kwargs, message):
    model = kte.EstimatorModel(model_fn)
    with pytest.raises(ValueError, match=message):
        model.export(str(tmp_path / "m"), **kwargs)
    assert not os.path.exists(tmp_path / "m")


def test_a_model_fn_building_an_optimizer_in_every_mode_exports(tmp_path):
    def optimizer_first_model_fn(features, labels, mode):
        optimizer = keras.optimizers.Adam(0.1)  # Before the mode is looked at, as TF1 code does.
        logits = kte.get_or_create_layer("dense", lambda: keras.layers.Dense(2))(features["x"])
        if mode == kte.ModeKeys.PREDICT:
            return kte.TPUEstimatorSpec(mode, predictions={"logits": logits})
        loss = keras.ops.mean(keras.ops.square(logits))
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=optimizer)

    model = kte.EstimatorModel(optimizer_first_model_fn, predict_batch_size=8)
    x = linear_data(8)[0]
    model.export(str(tmp_path / "m"), input_signature={"x": keras.InputSpec(shape=(None, DIM))},
                 verbose=False)
    served = tf.saved_model.load(str(tmp_path / "m")).signatures["serving_default"](x=tf.constant(x))
    np.testing.assert_allclose(
        served["logits"].numpy(), model.predict({"x": x}, verbose=0)["logits"], atol=1e-5
    )


# -- Sharded models, TPU programs, inference_on_tpu. -----------------------------


def sharded_model_fn(features, mode):
    hidden = kte.get_or_create_layer("hidden", lambda: keras.layers.Dense(8))(features["x"])
    return kte.TPUEstimatorSpec(mode, predictions={"y": hidden})


def test_a_model_parallel_model_exports_its_gathered_weights(tmp_path):
    mesh = keras.distribution.DeviceMesh((4, 2), ("batch", "model"))
    layout_map = keras.distribution.LayoutMap(mesh)
    layout_map[".*hidden.*kernel"] = (None, "model")
    model = kte.EstimatorModel(sharded_model_fn, predict_batch_size=8)
    model.distribution = keras.distribution.ModelParallel(
        layout_map=layout_map, batch_dim_name="batch"
    )
    x = linear_data(8)[0]
    expected = model.predict({"x": x}, verbose=0)["y"]
    kernel = model.store.variables_by_name()["hidden/kernel"]
    assert len(kernel.value.sharding.device_set) == 8
    assert kernel.value.addressable_shards[0].data.shape == (DIM, 4)  # Really sharded.
    model.export(str(tmp_path / "m"), input_signature={"x": keras.InputSpec(shape=(None, DIM))},
                 verbose=False)
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert sorted(tuple(v.shape) for v in loaded.variables) == [(DIM, 8), (8,)]
    served = loaded.signatures["serving_default"](x=tf.constant(x[:3]))
    np.testing.assert_allclose(served["y"].numpy(), expected[:3], atol=1e-5)


def compiled_platforms(path):
    """The platforms of the XlaCallModule ops (JAX programs) of a SavedModel."""
    from tensorflow.core.protobuf import saved_model_pb2

    proto = saved_model_pb2.SavedModel()
    with open(os.path.join(path, b"saved_model.pb"), "rb") as f:
        proto.ParseFromString(f.read())
    return {
        tuple(p.decode() for p in node.attr["platforms"].list.s)
        for function in proto.meta_graphs[0].graph_def.library.function
        for node in function.node_def
        if node.op == "XlaCallModule"
    }


def test_export_to_tpu_compiles_the_program_for_cpu_and_tpu(trained, tmp_path):
    estimator = trained[0]
    assert estimator.export_to_tpu and estimator.export_to_cpu  # The defaults.
    path = estimator.export_saved_model(str(tmp_path / "exports"), raw_receiver_fn)
    assert compiled_platforms(path) == {("CPU", "TPU")}
    estimator.export_to_tpu = False
    try:
        cpu_only = estimator.export_saved_model(str(tmp_path / "cpu"), raw_receiver_fn)
    finally:
        estimator.export_to_tpu = True
    assert compiled_platforms(cpu_only) == {("CPU",)}


def test_inference_on_tpu_runs_the_computation():
    outputs = kte.export.inference_on_tpu(
        lambda a, b: a * 2 + b, [np.ones(3), np.arange(3.0)],
        num_batch_threads=1, max_batch_size=2, batch_timeout_micros=100,
        allowed_batch_sizes=[1, 2],
    )
    assert len(outputs) == 1
    np.testing.assert_allclose(outputs[0], [2.0, 3.0, 4.0])
    assert kte.inference_on_tpu is kte.export.inference_on_tpu


@pytest.mark.parametrize(
    "name, value",
    [
        ("num_batch_threads", 0),
        ("max_batch_size", -1),
        ("batch_timeout_micros", 1.5),
        ("allowed_batch_sizes", [2, 1]),
    ],
)
def test_inference_on_tpu_checks_batching_arguments(name, value):
    kwargs = dict(num_batch_threads=1, max_batch_size=2, batch_timeout_micros=0)
    kwargs[name] = value
    with pytest.raises(ValueError, match=f"`{name}`"):
        kte.export.inference_on_tpu(lambda a: a, [np.ones(2)], **kwargs)


def test_importing_the_library_does_not_import_tensorflow():
    import subprocess
    import sys

    code = "import sys, keras_tpu_estimator; print('tensorflow' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"
