"""A model_dir as TensorFlow writes it: TF tools and TF1 program code read the library's
checkpoints, and the library resumes from TensorFlow's."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1

from model_fns import estimator_config

TF215 = "/tmp/venv215/bin/python"  # TensorFlow 2.15 with tensorflow-estimator.
BATCH = 16
rng = np.random.default_rng(0)
X = rng.normal(size=(BATCH, 4)).astype("float32")
Y = (X @ np.array([1.0, -2.0, 0.5, 3.0], "float32") + 0.25).astype("float32")
TF1_NAMES = ["beta1_power", "beta2_power", "dense/bias", "dense/bias/Adam", "dense/bias/Adam_1",
             "dense/kernel", "dense/kernel/Adam", "dense/kernel/Adam_1", "global_step"]


def model_fn(features, labels, mode, params):
    """A TF1 program's model_fn: tf.layers.dense, AdamOptimizer, the global step."""
    predictions = tf1.squeeze(tf1.layers.dense(features["x"], 1, name="dense"), -1)
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"y": predictions})
    loss = tf1.reduce_mean(tf1.square(predictions - labels))
    train_op = tf1.train.AdamOptimizer(0.1).minimize(
        loss, global_step=tf1.train.get_or_create_global_step())
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(params):
    import tensorflow as tf

    dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
    return dataset.repeat().batch(params["batch_size"], drop_remainder=True)


def predict_input_fn(params):
    import tensorflow as tf

    return tf.data.Dataset.from_tensor_slices({"x": X}).batch(params["batch_size"])


def make_estimator(model_dir, keep=5):
    return kte.TPUEstimator(model_fn=model_fn, config=estimator_config(
        model_dir, save_every=2, keep_checkpoint_max=keep), train_batch_size=BATCH,
        eval_batch_size=BATCH, predict_batch_size=BATCH)


def predictions_of(estimator, **kwargs):
    return np.array([p["y"] for p in estimator.predict(predict_input_fn, **kwargs)])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """An estimator trained 4 steps (checkpoints of steps 0, 2 and 4); tests copy its dir."""
    estimator = make_estimator(tmp_path_factory.mktemp("trained") / "model")
    estimator.train(input_fn, max_steps=4)
    return estimator


def copy_of(estimator, tmp_path, keep=5):
    """A new estimator on a copy of `estimator`'s model_dir."""
    shutil.copytree(estimator.model_dir, tmp_path / "model",
                    ignore=shutil.ignore_patterns(".trainer.lock"))
    return make_estimator(tmp_path / "model", keep)


# -- TensorFlow's files. -----------------------------------------------------------


def test_model_dir_holds_tensorflow_checkpoint_files_and_state_file(trained):
    import tensorflow as tf

    names = set(os.listdir(trained.model_dir))
    for step in (0, 2, 4):
        for suffix in (".index", ".data-00000-of-00001", ".meta"):
            assert f"model.ckpt-{step}{suffix}" in names
    state = tf.train.get_checkpoint_state(trained.model_dir)
    prefixes = [os.path.join(trained.model_dir, f"model.ckpt-{s}") for s in (0, 2, 4)]
    assert state.model_checkpoint_path == prefixes[-1]
    assert list(state.all_model_checkpoint_paths) == prefixes
    # Relative names, as TensorFlow's estimators wrote them: a moved model_dir reads.
    text = open(os.path.join(trained.model_dir, "checkpoint")).read()
    assert 'model_checkpoint_path: "model.ckpt-4"' in text


def test_tensorflow_finds_the_latest_checkpoint(trained):
    import tensorflow as tf

    assert tf.train.latest_checkpoint(trained.model_dir) == trained.latest_checkpoint()
    assert trained.latest_checkpoint() == os.path.join(trained.model_dir, "model.ckpt-4")


def test_tensorflow_reads_every_variable_with_its_value_and_tf1_name(trained):
    import tensorflow as tf

    reader = tf.train.load_checkpoint(trained.model_dir)
    assert sorted(reader.get_variable_to_shape_map()) == TF1_NAMES
    assert sorted(trained.get_variable_names()) == TF1_NAMES
    assert reader.get_variable_to_dtype_map()["global_step"] == tf.int64
    assert reader.get_tensor("global_step") == 4
    for name in TF1_NAMES:
        np.testing.assert_array_equal(reader.get_tensor(name), trained.get_variable_value(name))
    assert dict(tf.train.list_variables(trained.model_dir))["dense/kernel"] == [4, 1]


def test_inspect_checkpoint_prints_the_library_checkpoint(trained, capsys):
    from tensorflow.python.tools import inspect_checkpoint

    inspect_checkpoint.print_tensors_in_checkpoint_file(
        trained.latest_checkpoint(), tensor_name="", all_tensors=False)
    printed = capsys.readouterr().out
    for name in TF1_NAMES:
        assert name in printed


def test_the_names_are_those_tensorflow_1_gives_the_same_program():
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 4])
        with tf.compat.v1.variable_scope("dense"):
            kernel = tf.compat.v1.get_variable("kernel", [4, 1])
            bias = tf.compat.v1.get_variable("bias", [1])
        loss = tf.reduce_mean(tf.square(tf.matmul(x, kernel) + bias))
        tf.compat.v1.train.AdamOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_or_create_global_step())
        names = sorted(v.op.name for v in tf.compat.v1.global_variables())
    assert names == TF1_NAMES


# -- TF1 program code on the model_dir (ALBERT's run_classifier.py). --------------------


def test_albert_keeps_the_best_checkpoint_by_renaming_its_files_and_predicts_from_it(
        trained, tmp_path):
    import tensorflow as tf

    estimator = copy_of(trained, tmp_path, keep=0)
    output_dir = estimator.model_dir
    steps_and_files = {}
    for filename in tf.io.gfile.listdir(output_dir):  # ALBERT's eval loop.
        if filename.endswith(".index"):
            ckpt_name = filename[:-6]
            steps_and_files[int(ckpt_name.split("-")[-1])] = os.path.join(output_dir, ckpt_name)
    assert sorted(steps_and_files) == [0, 2, 4]
    results = {step: estimator.evaluate(input_fn, steps=1, checkpoint_path=path)
               for step, path in steps_and_files.items()}
    assert {step: r["global_step"] for step, r in results.items()} == {0: 0, 2: 2, 4: 4}
    for ext in ["meta", "data-00000-of-00001", "index"]:  # _remove_checkpoint(step 0).
        tf.io.gfile.remove(os.path.join(output_dir, f"model.ckpt-0.{ext}"))
    expected = predictions_of(estimator, checkpoint_path=steps_and_files[2])
    for ext in ["meta", "data-00000-of-00001", "index"]:  # The best, kept as model.ckpt-best.
        tf.io.gfile.rename(os.path.join(output_dir, f"model.ckpt-2.{ext}"),
                           os.path.join(output_dir, f"model.ckpt-best.{ext}"), overwrite=True)
    best = os.path.join(output_dir, "model.ckpt-best")
    assert estimator.evaluate(input_fn, steps=1, checkpoint_path=best)["global_step"] == 2
    np.testing.assert_array_equal(predictions_of(estimator, checkpoint_path=best), expected)
    export = estimator.export_saved_model(str(tmp_path / "export"), serving_input_fn,
                                          checkpoint_path=best)
    assert os.path.exists(os.path.join(export, b"saved_model.pb"))
    # Training goes on: the checkpoints the state file lists and the program removed are skipped.
    assert estimator.latest_checkpoint() == os.path.join(output_dir, "model.ckpt-4")
    estimator.train(input_fn, max_steps=6)
    assert estimator.latest_checkpoint() == os.path.join(output_dir, "model.ckpt-6")


def test_a_checkpoint_renamed_over_one_a_model_holds_is_read_again(trained, tmp_path):
    import tensorflow as tf

    estimator = copy_of(trained, tmp_path, keep=0)
    best = os.path.join(estimator.model_dir, "model.ckpt-best")
    for step in (2, 4):
        for ext in ["meta", "data-00000-of-00001", "index"]:
            tf.io.gfile.rename(os.path.join(estimator.model_dir, f"model.ckpt-{step}.{ext}"),
                               f"{best}.{ext}", overwrite=True)
        assert estimator.evaluate(input_fn, steps=1, checkpoint_path=best)["global_step"] == step


def serving_input_fn():
    features = {"x": kte.export.placeholder(shape=(None, 4), dtype="float32", name="x")}
    return kte.export.ServingInputReceiver(features=features, receiver_tensors=features)


# -- Resuming from TensorFlow 1's checkpoints. ------------------------------------------


def tf1_checkpoint_and_continuation(model_dir, steps, more_steps):
    """Trains the TF1 program `steps` steps in a graph, saves with `tf.compat.v1.train.Saver`
    (global_step included), then trains `more_steps` more; returns the variables then."""
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(X)
        with tf.compat.v1.variable_scope("dense"):
            kernel = tf.compat.v1.get_variable(
                "kernel", initializer=rng.normal(size=(4, 1)).astype("float32"))
            bias = tf.compat.v1.get_variable("bias", initializer=np.zeros(1, "float32"))
        predictions = tf.squeeze(tf.matmul(x, kernel) + bias, -1)
        loss = tf.reduce_mean(tf.square(predictions - Y))
        global_step = tf.compat.v1.train.get_or_create_global_step()
        train_op = tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss, global_step=global_step)
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer())
            for _ in range(steps):
                session.run(train_op)
            saver.save(session, os.path.join(model_dir, "model.ckpt"), global_step=global_step)
            for _ in range(more_steps):
                session.run(train_op)
            return {v.op.name: session.run(v) for v in tf.compat.v1.global_variables()}


def test_training_resumes_from_a_tf1_saver_checkpoint_with_its_optimizer_state(tmp_path):
    model_dir = tmp_path / "tf1_model"
    expected = tf1_checkpoint_and_continuation(str(model_dir), steps=3, more_steps=2)
    estimator = make_estimator(model_dir)
    estimator.train(input_fn, max_steps=5)
    assert estimator.latest_checkpoint() == os.path.join(str(model_dir), "model.ckpt-5")
    assert int(estimator.get_variable_value("global_step")) == 5
    # Where TensorFlow got in the same 2 steps: Adam's slots and powers were resumed too.
    for name in TF1_NAMES:
        np.testing.assert_allclose(estimator.get_variable_value(name), expected[name],
                                   rtol=1e-4, atol=1e-6, err_msg=name)


def test_evaluate_reads_a_tf1_model_dir(tmp_path):
    model_dir = tmp_path / "tf1_model"
    tf1_checkpoint_and_continuation(str(model_dir), steps=3, more_steps=0)
    assert make_estimator(model_dir).evaluate(input_fn, steps=1)["global_step"] == 3


# -- An original TPUEstimator (TensorFlow 2.15) on the library's model_dir. -----------------

_TF215_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import tensorflow as tf

    tf1 = tf.compat.v1
    model_dir, data, out = sys.argv[1:4]
    X, Y = np.load(data)["x"], np.load(data)["y"]

    def model_fn(features, labels, mode, params):
        predictions = tf1.squeeze(tf1.layers.dense(features["x"], 1, name="dense"), -1)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf1.estimator.tpu.TPUEstimatorSpec(mode, predictions={"y": predictions})
        loss = tf1.reduce_mean(tf1.square(predictions - labels))
        train_op = tf1.train.AdamOptimizer(0.1).minimize(
            loss, global_step=tf1.train.get_or_create_global_step())
        return tf1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
        return dataset.repeat().batch(params["batch_size"], drop_remainder=True)

    def predict_input_fn(params):
        return tf.data.Dataset.from_tensor_slices({"x": X}).batch(params["batch_size"])

    reader = tf.train.load_checkpoint(model_dir)
    read = {name: reader.get_tensor(name).tolist() for name in reader.get_variable_to_shape_map()}
    config = tf1.estimator.tpu.RunConfig(
        model_dir=model_dir, save_checkpoints_steps=2,
        tpu_config=tf1.estimator.tpu.TPUConfig(iterations_per_loop=2))
    estimator = tf1.estimator.tpu.TPUEstimator(
        model_fn=model_fn, config=config, use_tpu=False, train_batch_size=len(X),
        predict_batch_size=len(X))
    predictions = [float(p["y"]) for p in estimator.predict(predict_input_fn)]
    estimator.train(input_fn, max_steps=6)
    after = {name: estimator.get_variable_value(name).tolist()
             for name in estimator.get_variable_names()}
    json.dump({"read": read, "predictions": predictions, "after": after,
               "latest": tf.train.latest_checkpoint(model_dir)}, open(out, "w"))
    """
)


@pytest.fixture(scope="module")
def tf215():
    if not os.path.exists(TF215):
        pytest.skip(f"TensorFlow 2.15 with tensorflow-estimator is not installed at {TF215}")
    return TF215


def test_an_original_tpu_estimator_resumes_from_the_library_model_dir(trained, tmp_path,
                                                                      tf215):
    estimator = copy_of(trained, tmp_path)
    np.savez(tmp_path / "data.npz", x=X, y=Y)
    (tmp_path / "tf215.py").write_text(_TF215_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "XLA_FLAGS")}
    env["CUDA_VISIBLE_DEVICES"] = ""
    run = subprocess.run([tf215, str(tmp_path / "tf215.py"), estimator.model_dir,
                          str(tmp_path / "data.npz"), str(tmp_path / "out.json")],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((tmp_path / "out.json").read_text())
    # TensorFlow 2.15 reads every variable with its value.
    assert sorted(report["read"]) == TF1_NAMES
    for name in TF1_NAMES:
        np.testing.assert_array_equal(report["read"][name], trained.get_variable_value(name))
    # Its TPUEstimator predicts with the library's weights...
    np.testing.assert_allclose(report["predictions"], predictions_of(trained), rtol=1e-5,
                               atol=1e-6)
    # ... and resumes training at step 4, as the library does on the same model_dir.
    assert report["latest"] == os.path.join(estimator.model_dir, "model.ckpt-6")
    assert report["after"]["global_step"] == 6
    continued = copy_of(trained, tmp_path / "library")
    continued.train(input_fn, max_steps=6)
    for name in TF1_NAMES:
        np.testing.assert_allclose(report["after"][name], continued.get_variable_value(name),
                                   rtol=1e-4, atol=1e-6, err_msg=name)
    # And the library resumes from the checkpoint TensorFlow 2.15 wrote.
    estimator.train(input_fn, max_steps=8)
    assert estimator.evaluate(input_fn, steps=1)["global_step"] == 8
