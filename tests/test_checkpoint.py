"""Checkpoints: save/restore in TensorFlow's format, inspection, crash safety, warm start."""

import glob
import os
import subprocess
import sys
import textwrap

import jax
import keras
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec

import keras_tpu_estimator as kte
from keras_tpu_estimator import checkpoint as ckpt

from compile_counter import CompileCounter
from model_fns import estimator_model
from model_fns import store_value
from model_fns import write_tf1_checkpoint

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model_fn(features, labels, mode, params):
    with kte.variable_scope("encoder"):
        hidden = kte.get_or_create_layer(
            "hidden", lambda: keras.layers.Dense(params["hidden"], activation="relu")
        )(features["x"])
        stats = kte.get_variable(
            "stats", shape=(params["hidden"],), initializer="zeros", trainable=False
        )
    output = kte.get_or_create_layer("head", lambda: keras.layers.Dense(1))(hidden + stats)
    prediction = output[:, 0]
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"y": prediction})
    loss = keras.ops.mean((prediction - labels) ** 2)
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.Adam(0.01))


STORE_NAMES = ["encoder/hidden/kernel", "encoder/hidden/bias", "encoder/stats", "head/kernel",
               "head/bias"]


def make_model(hidden=4):
    return estimator_model(model_fn, loop=2, params={"hidden": hidden})


def make_data(n=32, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype("float32")
    return {"x": x}, (x.sum(axis=1) * 0.5).astype("float32")


def trained_model(steps=4):
    model = make_model()
    features, labels = make_data()
    model.fit((features, labels), epochs=steps // 2, verbose=0, shuffle=False)
    assert model.global_step == steps
    return model


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model trained 4 steps and its checkpoint; tests must not change either."""
    model = trained_model(steps=4)
    manager = ckpt.CheckpointDirectory(tmp_path_factory.mktemp("trained"))
    assert ckpt.save_model(manager, model) == 4
    return model, manager


def eval_built_model(hidden=4):
    """A fresh model with its store built (by evaluate) and no optimizer."""
    model = make_model(hidden)
    model.evaluate(make_data(16), verbose=0)
    return model


def values_of(variables):
    return {name: np.asarray(v.value) for name, v in variables.items()}


class Restore(keras.callbacks.Callback):
    """Resumes a fit from a checkpoint once the model and optimizer are built."""

    def __init__(self, manager):
        super().__init__()
        self.manager, self.step = manager, None

    def on_train_begin(self, logs=None):
        self.step = ckpt.restore_model(self.manager, self.model)


# -- CheckpointDirectory. ------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        np.arange(6, dtype="float32").reshape(2, 3),
        np.arange(4, dtype="int32"),
        np.array(7, dtype="int64"),
        np.array([True, False]),
        jax.numpy.ones((2, 2), "bfloat16"),
        keras.Variable(np.full((3,), 2.5, "float32")),
    ],
    ids=["float32", "int32", "int64-scalar", "bool", "jax-bfloat16", "keras-variable"],
)
def test_save_then_restore_returns_the_same_numpy_values(tmp_path, value):
    expected = np.asarray(value.value if isinstance(value, keras.Variable) else value)
    with ckpt.CheckpointDirectory(tmp_path) as manager:
        assert manager.save(3, {"a/b": value, "global_step": 3}) is True
        restored = manager.restore()
    assert set(restored) == {"a/b", "global_step"}
    assert isinstance(restored["a/b"], np.ndarray)
    assert restored["a/b"].dtype == expected.dtype
    np.testing.assert_array_equal(restored["a/b"], expected)
    assert int(restored["global_step"]) == 3


def test_restore_with_targets_places_values_like_the_targets(tmp_path):
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("batch",))
    sharded = NamedSharding(mesh, PartitionSpec("batch", None))
    target = jax.device_put(np.zeros((8, 2), "float32"), sharded)
    saved = np.arange(16, dtype="float32").reshape(8, 2)
    with ckpt.CheckpointDirectory(tmp_path) as manager:
        manager.save(1, {"w": saved, "other": np.ones(3)})
        restored = manager.restore(targets={"w": target})
    assert set(restored) == {"w"}  # Only the targets are read.
    assert restored["w"].sharding == sharded
    np.testing.assert_array_equal(np.asarray(restored["w"]), saved)


def test_saving_an_existing_step_keeps_the_first_checkpoint(tmp_path):
    with ckpt.CheckpointDirectory(tmp_path) as manager:
        assert manager.save(5, {"w": np.zeros(2)}) is True
        assert manager.save(5, {"w": np.ones(2)}) is False
        np.testing.assert_array_equal(manager.restore(5)["w"], np.zeros(2))
        assert manager.all_steps() == [5]


def test_saving_a_step_older_than_the_latest_is_an_error(tmp_path):
    with ckpt.CheckpointDirectory(tmp_path) as manager:
        manager.save(5, {"w": np.zeros(2)})
        with pytest.raises(ValueError, match="step 3 .*newer checkpoint \\(step 5\\)"):
            manager.save(3, {"w": np.zeros(2)})


@pytest.mark.parametrize(
    "max_to_keep, kept", [(2, [4, 5]), (1, [5]), (None, [1, 2, 3, 4, 5]), (0, [1, 2, 3, 4, 5])]
)
def test_max_to_keep_keeps_the_newest_checkpoints(tmp_path, max_to_keep, kept):
    with ckpt.CheckpointDirectory(tmp_path, max_to_keep=max_to_keep) as manager:
        for step in range(1, 6):
            manager.save(step, {"w": np.full(2, step)})
        assert manager.all_steps() == kept
        assert manager.latest_step() == 5
    on_disk = [int(n[len("model.ckpt-"):-len(".index")]) for n in os.listdir(tmp_path)
               if n.endswith(".index")]
    assert sorted(on_disk) == kept
    assert not [n for n in os.listdir(tmp_path) if n.startswith(("model.ckpt-1.", "model.ckpt-2."))
                and kept[0] > 2]  # Every file of a deleted checkpoint goes (.data, .meta too).


def test_paths_of_checkpoints(tmp_path):
    with ckpt.CheckpointDirectory(tmp_path) as manager:
        assert manager.latest_checkpoint() is None
        manager.save(10, {"w": np.zeros(1)})
        manager.save(20, {"w": np.zeros(1)})
        assert manager.path(10) == str(tmp_path / "model.ckpt-10")
        assert manager.latest_checkpoint() == str(tmp_path / "model.ckpt-20")
    assert ckpt.latest_checkpoint(tmp_path) == str(tmp_path / "model.ckpt-20")


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.restore(),
        lambda m: ckpt.restore_model(m, make_model()),
        lambda m: ckpt.list_variables(m.directory),
    ],
    ids=["restore", "restore_model", "list_variables"],
)
def test_no_checkpoint_is_a_value_error_naming_the_directory(tmp_path, call):
    # (restore_model looks for a checkpoint before it looks at the model.)
    with ckpt.CheckpointDirectory(tmp_path / "empty") as manager:
        assert manager.latest_step() is None
        with pytest.raises(ValueError, match="empty"):
            call(manager)


def test_latest_checkpoint_of_a_missing_directory_is_none(tmp_path):
    assert ckpt.latest_checkpoint(tmp_path / "missing") is None
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda d: ckpt.CheckpointDirectory(d, max_to_keep=-1), "max_to_keep=-1"),
        (lambda d: ckpt.CheckpointDirectory(d, max_to_keep="3"), "max_to_keep='3'"),
        (lambda d: ckpt.CheckpointDirectory(""), "directory=''"),
        (lambda d: ckpt.CheckpointDirectory(d).save(-1, {"w": 1}), "step=-1"),
        (lambda d: ckpt.CheckpointDirectory(d).save(1.5, {"w": 1}), "step=1.5"),
        (lambda d: ckpt.CheckpointDirectory(d).save(1, [1, 2]), "values=\\[1, 2\\]"),
        (lambda d: ckpt.CheckpointDirectory(d).restore(7), "No checkpoint of step 7"),
        (lambda d: ckpt.load_variable(str(d), "w"), "must name a complete checkpoint.*Received"),
    ],
    ids=["negative-max", "str-max", "empty-dir", "negative-step", "float-step", "list-values",
         "missing-step", "load-from-empty"],
)
def test_invalid_arguments_name_the_argument_and_value(tmp_path, call, message):
    with pytest.raises(ValueError, match=message):
        call(tmp_path)


def test_restore_targets_must_exist_with_the_saved_shape(tmp_path):
    with ckpt.CheckpointDirectory(tmp_path) as manager:
        manager.save(1, {"w": np.zeros((2, 3))})
        with pytest.raises(ValueError, match="no values named \\['v'\\]"):
            manager.restore(targets={"v": np.zeros(1)})
        with pytest.raises(ValueError, match="shape \\(3, 2\\).*\\(2, 3\\)"):
            manager.restore(targets={"w": np.zeros((3, 2))})


# -- Crash safety. -------------------------------------------------------------

_KILLED_SAVE = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from keras_tpu_estimator.checkpoint import CheckpointDirectory
    from keras_tpu_estimator.checkpoint import tf_files

    manager = CheckpointDirectory(sys.argv[1])
    manager.save(1, {"w": np.full((1000,), 1.0)})

    def stop_here(*args, **kwargs):
        print("WRITTEN, NOT COMMITTED", flush=True)
        time.sleep(600)

    # Stop the save at `sys.argv[2]`, to be killed there.
    setattr(tf_files, sys.argv[2], stop_here)
    manager.save(2, {"w": np.full((1000,), 2.0)})
    """
)


@pytest.mark.parametrize(
    "killed_at, left",
    [("rename", "model.ckpt-2_temp"), ("write_state", "model.ckpt-2.index")],
    ids=["before-its-files-are-renamed", "before-the-state-file-names-it"],
)
def test_a_process_killed_mid_save_leaves_the_previous_checkpoint_latest(tmp_path, killed_at,
                                                                         left):
    import tensorflow as tf

    script = tmp_path / "save.py"
    script.write_text(_KILLED_SAVE)
    directory = tmp_path / "model"
    env = dict(os.environ, JAX_PLATFORMS="cpu", KERAS_BACKEND="jax",
               PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    process = subprocess.Popen([sys.executable, str(script), str(directory), killed_at],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True)
    try:
        line = process.stdout.readline()
        assert "WRITTEN, NOT COMMITTED" in line
    finally:
        process.kill()  # SIGKILL
        process.wait()
    assert (directory / left).exists()  # The half-done save.

    latest = str(directory / "model.ckpt-1")
    assert ckpt.latest_checkpoint(directory) == latest
    assert tf.train.latest_checkpoint(str(directory)) == latest
    with ckpt.CheckpointDirectory(directory) as manager:
        assert manager.latest_step() == 1
        np.testing.assert_array_equal(manager.restore()["w"], np.full((1000,), 1.0))
        # The step can be saved again, completely this time.
        assert manager.save(2, {"w": np.full((1000,), 2.0)}) is True
        assert manager.latest_step() == 2
        np.testing.assert_array_equal(manager.restore()["w"], np.full((1000,), 2.0))
    assert not (directory / "model.ckpt-2_temp").exists()


def test_an_unfinished_save_is_never_read(tmp_path):
    with ckpt.CheckpointDirectory(tmp_path) as manager:
        manager.save(1, {"w": np.zeros(2)})
    # What a save of step 9 killed before its rename leaves behind.
    (tmp_path / "model.ckpt-9_temp").mkdir()
    (tmp_path / "model.ckpt-9_temp" / "part-00000-of-00001.index").write_bytes(b"")
    assert ckpt.latest_checkpoint(tmp_path) == str(tmp_path / "model.ckpt-1")
    with pytest.raises(ValueError, match="must name a complete checkpoint"):
        ckpt.list_variables(tmp_path / "model.ckpt-9")


@pytest.mark.parametrize("value, finite", [
    (np.array([1.0, -2.5, 0.0], np.float32), True),
    (np.array([1.0, np.nan], np.float32), False),
    (np.array([np.inf, 1.0], np.float64), False),
    (np.array([-np.inf, np.inf]), False),
    # Finite values whose sum overflows are finite.
    (np.array([3e38, 3e38], np.float32), True),
    (np.full(5, 60000.0, np.float16), True),
    (np.array([1.0, np.nan], np.float16), False),
    (jax.numpy.array([1.0, 2.0], jax.numpy.bfloat16), True),
    (jax.numpy.array([1.0, np.nan], jax.numpy.bfloat16), False),
    (np.array(np.nan, np.float32), False),
    (np.zeros((0, 3), np.float32), True),
    (np.array([1 + 2j, np.nan], np.complex64), False),
])
def test_non_finite_names_checks_every_element(value, finite):
    from keras_tpu_estimator.checkpoint.model_state import non_finite_names

    values = {"w": value, "step": np.int64(3), "v": keras.Variable([0.5])}
    assert non_finite_names(values) == ([] if finite else ["w"])


def test_non_finite_names_of_arrays_this_process_holds_compiles_nothing():
    from keras_tpu_estimator.checkpoint.model_state import non_finite_names

    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("x",))
    values = {"sharded": jax.device_put(np.arange(8.0), NamedSharding(mesh, PartitionSpec("x"))),
              "variable": keras.Variable([np.inf])}
    with CompileCounter() as compiles:
        assert non_finite_names(values) == ["variable"]
    assert compiles.count == 0


# -- An EstimatorModel's checkpoint. -------------------------------------------


def test_model_values_names_store_optimizer_and_global_step(trained):
    model, _ = trained
    values = ckpt.model_values(model)
    assert set(list(values)[:5]) == set(STORE_NAMES)  # Store variables first.
    assert values["global_step"] is model.train_optimizer.iterations
    assert "optimizer/adam/iteration" in values
    assert "optimizer/adam/encoder_hidden_kernel_momentum" in values
    # Keras numbers optimizers (adam_1, adam_2, ...): the numbering is not in the names.
    assert all(n.startswith("optimizer/adam/") for n in values if n.startswith("optimizer/"))


def test_model_values_before_training_are_the_store_only():
    assert sorted(ckpt.model_values(eval_built_model())) == sorted(STORE_NAMES)


def test_resuming_from_a_checkpoint_continues_training_exactly(tmp_path):
    features, labels = make_data()
    original = trained_model(steps=4)
    manager = ckpt.CheckpointDirectory(tmp_path)
    assert ckpt.save_model(manager, original) == 4
    original.fit((features, labels), epochs=2, verbose=0, shuffle=False)

    resumed = make_model()  # Its optimizer is another adam_N: the same names.
    restore = Restore(manager)
    resumed.fit((features, labels), epochs=2, verbose=0, shuffle=False, callbacks=[restore])
    assert restore.step == 4
    assert resumed.global_step == original.global_step == 8
    expected, actual = ckpt.model_values(original), ckpt.model_values(resumed)
    for name in expected:
        np.testing.assert_allclose(np.asarray(actual[name].value),
                                   np.asarray(expected[name].value), rtol=1e-5, atol=1e-6,
                                   err_msg=name)


def test_restore_model_keeps_the_live_sharding_and_restores_the_step(trained):
    source, manager = trained
    target = make_model()
    target.fit(make_data(), epochs=1, verbose=0)  # Builds the optimizer; step 2.
    variables = ckpt.model_values(target)
    shardings = {name: v.value.sharding for name, v in variables.items()}
    assert ckpt.restore_model(manager, target) == 4
    assert target.global_step == 4
    for name, variable in variables.items():
        assert variable.value.sharding == shardings[name], name
        assert len(variable.value.sharding.device_set) == 8
    np.testing.assert_array_equal(
        np.asarray(variables["optimizer/adam/head_kernel_velocity"].value),
        np.asarray(ckpt.model_values(source)["optimizer/adam/head_kernel_velocity"].value),
    )


def test_restore_into_a_model_built_for_prediction_only(trained):
    source, manager = trained
    features, _ = make_data(16, seed=1)
    fresh = make_model()
    fresh.predict(features, verbose=0)  # Builds the store, no optimizer.
    assert ckpt.restore_model(manager, fresh) == 4  # Optimizer values ignored.
    np.testing.assert_allclose(fresh.predict(features, verbose=0)["y"],
                               source.predict(features, verbose=0)["y"], rtol=1e-6)


@pytest.mark.parametrize(
    "make_target, message",
    [
        (lambda: eval_built_model(hidden=5),
         "shape \\((3, )?5,?\\) in the model but \\((3, )?4,?\\)"),
        (lambda: make_model(), "no variables yet"),
    ],
    ids=["shape-changed", "not-built"],
)
def test_restore_model_into_a_changed_model_is_an_error(trained, make_target, message):
    _, manager = trained
    with pytest.raises(ValueError, match=message):
        ckpt.restore_model(manager, make_target())


def test_restore_model_names_a_variable_missing_from_the_checkpoint(tmp_path):
    manager = ckpt.CheckpointDirectory(tmp_path)
    manager.save(0, {n: v for n, v in ckpt.model_values(eval_built_model()).items()
                     if n != "head/bias"})
    with pytest.raises(ValueError, match="\\['head/bias'\\].*model changed"):
        ckpt.restore_model(manager, eval_built_model())


def test_list_and_load_variables_of_a_model_checkpoint(trained):
    model, manager = trained
    listed = ckpt.list_variables(manager.latest_checkpoint())
    names = [name for name, _ in listed]
    assert names == sorted(names)
    assert set(names) == set(ckpt.model_values(model))
    assert dict(listed)["encoder/hidden/kernel"] == (3, 4)
    assert dict(listed)["global_step"] == ()
    for path in [manager.path(4), manager.directory]:  # A checkpoint, or its model_dir.
        np.testing.assert_array_equal(ckpt.load_variable(path, "head/kernel"),
                                      np.asarray(ckpt.model_values(model)["head/kernel"].value))
        assert int(ckpt.load_variable(path, "global_step")) == 4
    with pytest.raises(ValueError, match="no variable named 'head/kernal'.*'encoder/hidden/bias'"):
        ckpt.load_variable(manager.path(4), "head/kernal")


# -- Warm start. ---------------------------------------------------------------

SOURCE = {
    "encoder/hidden/kernel": np.full((3, 4), 1.0, "float32"),
    "encoder/hidden/bias": np.full((4,), 2.0, "float32"),
    "encoder/stats": np.full((4,), 3.0, "float32"),
    "head/kernel": np.full((4, 1), 4.0, "float32"),
    "old_head/bias": np.full((1,), 5.0, "float32"),
    "optimizer/adam/iteration": np.array(100, "int32"),
    "global_step": np.array(100, "int64"),
}


@pytest.fixture
def source_dir(tmp_path):
    with ckpt.CheckpointDirectory(tmp_path / "source") as manager:
        manager.save(100, SOURCE)
    return str(tmp_path / "source")


@pytest.mark.parametrize(
    "vars_to_warm_start, matched, unmatched",
    [
        (".*", ["encoder/hidden/kernel", "encoder/hidden/bias", "head/kernel"], ["head/bias"]),
        ("encoder/", ["encoder/hidden/kernel", "encoder/hidden/bias"], []),
        ("hidden", [], []),  # re.match: from the start of the name.
        ([".*stats", "head/k"], ["encoder/stats", "head/kernel"], []),  # Lists: non-trainable too.
        (None, [], []),
    ],
    ids=["all-trainable", "scope", "match-from-start", "list-with-non-trainable", "none"],
)
def test_warm_start_selects_variables_by_regex(source_dir, vars_to_warm_start, matched,
                                               unmatched):
    model = eval_built_model()
    before = values_of(model.store.variables_by_name())
    settings = ckpt.WarmStartSettings(source_dir, vars_to_warm_start=vars_to_warm_start)
    report = ckpt.warm_start(model, settings)
    assert report == ckpt.WarmStartReport(matched, unmatched, [])
    for name, value in values_of(model.store.variables_by_name()).items():
        np.testing.assert_array_equal(value, SOURCE[name] if name in matched else before[name])


def test_warm_start_with_a_list_of_variables(source_dir):
    model = eval_built_model()
    variable = model.store.variables_by_name()["encoder/stats"]
    report = ckpt.warm_start(model, ckpt.WarmStartSettings(source_dir, [variable]))
    assert report.matched == ["encoder/stats"]
    np.testing.assert_array_equal(np.asarray(variable.value), SOURCE["encoder/stats"])


def test_warm_start_reads_renamed_variables(source_dir):
    model = eval_built_model()
    settings = ckpt.WarmStartSettings(
        source_dir,
        vars_to_warm_start="head/",
        var_name_to_prev_var_name={"head/bias": "old_head/bias"},
    )
    assert ckpt.warm_start(model, settings).matched == ["head/kernel", "head/bias"]
    np.testing.assert_array_equal(store_value(model, "head/bias"), [5.0])


def test_warm_start_reports_and_skips_shape_mismatches(source_dir, caplog):
    model = eval_built_model(hidden=5)
    kernel = store_value(model, "encoder/hidden/kernel")
    with caplog.at_level("INFO", logger="keras_tpu_estimator"):
        report = ckpt.warm_start(model, source_dir)  # A path: all trainable variables.
    assert report.shape_mismatched == [
        ("encoder/hidden/kernel", (3, 5), (3, 4)),
        ("encoder/hidden/bias", (5,), (4,)),
        ("head/kernel", (5, 1), (4, 1)),
    ]
    assert report.matched == [] and report.unmatched == ["head/bias"]
    np.testing.assert_array_equal(store_value(model, "encoder/hidden/kernel"), kernel)
    assert "another shape" in caplog.text and "not in the checkpoint" in caplog.text


def test_warm_start_leaves_optimizer_and_global_step_alone(source_dir):
    model = trained_model(steps=2)
    ckpt.warm_start(model, ckpt.WarmStartSettings(source_dir, vars_to_warm_start=[".*"]))
    assert model.global_step == 2
    name = "encoder/hidden/kernel"
    np.testing.assert_array_equal(store_value(model, name), SOURCE[name])


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(var_name_to_vocab_info={"a": object()}), "not supported"),
        (dict(var_name_to_prev_var_name={"head/kernal": "x"}), "not used: \\['head/kernal'\\]"),
        (dict(vars_to_warm_start=3), "vars_to_warm_start=3"),
        (dict(vars_to_warm_start=["a", 1]), "all `keras.Variable` or all `str`"),
        (dict(vars_to_warm_start="("), "Invalid regex"),
    ],
    ids=["vocab-info", "unused-rename", "bad-type", "mixed-list", "bad-regex"],
)
def test_warm_start_settings_errors(source_dir, settings, message):
    with pytest.raises(ValueError, match=message):
        ckpt.warm_start(eval_built_model(), ckpt.WarmStartSettings(source_dir, **settings))


# -- TensorFlow checkpoints. ---------------------------------------------------


TF1_VARIABLES = {  # As a legacy TPUEstimator model_dir has them; head/kernel of another shape.
    "encoder/hidden/kernel": SOURCE["encoder/hidden/kernel"],
    "encoder/hidden/bias": SOURCE["encoder/hidden/bias"],
    "head/kernel": np.full((7, 1), 4.0, "float32"),
}


@pytest.mark.parametrize("which", ["prefix", "model_dir"])
def test_warm_start_from_a_tf1_checkpoint(tmp_path, which):
    prefix = write_tf1_checkpoint(str(tmp_path), TF1_VARIABLES)
    assert ckpt.list_variables(prefix) == [
        ("encoder/hidden/bias", (4,)), ("encoder/hidden/kernel", (3, 4)),
        ("global_step", ()), ("head/kernel", (7, 1)),
    ]
    model = eval_built_model()
    report = ckpt.warm_start(model, prefix if which == "prefix" else str(tmp_path))
    assert report == ckpt.WarmStartReport(
        ["encoder/hidden/kernel", "encoder/hidden/bias"], ["head/bias"],
        [("head/kernel", (4, 1), (7, 1))],
    )
    name = "encoder/hidden/bias"
    np.testing.assert_array_equal(store_value(model, name), SOURCE[name])
    sharding = model.store.variables_by_name()[name].value.sharding
    assert len(sharding.device_set) == 8  # Laid out as before, on every device.


def test_tf2_object_checkpoint_names_drop_the_attribute_suffix(tmp_path):
    import tensorflow as tf

    prefix = tf.train.Checkpoint(w=tf.Variable(np.ones((2, 3), "float32"))).write(
        str(tmp_path / "tf2")
    )
    assert ckpt.list_variables(prefix) == [("w", (2, 3))]
    np.testing.assert_array_equal(ckpt.load_variable(prefix, "w"), np.ones((2, 3)))
