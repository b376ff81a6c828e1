"""The source converter: TF1 TPUEstimator programs in, keras_tpu_estimator programs out."""

import importlib
import os
import subprocess
import sys
import textwrap

import pytest

from keras_tpu_estimator import convert

HEADER = "import tensorflow as tf\n"
KTE = "import keras_tpu_estimator as kte\n"
TF1 = "import keras_tpu_estimator.compat.v1 as tf1\n"


def converted(body):
    return convert.convert_source(HEADER + textwrap.dedent(body)).source


@pytest.mark.parametrize(
    "before, after, imports",
    [
        ("tf.contrib.tpu.TPUEstimator(model_fn)", "kte.TPUEstimator(model_fn)", KTE),
        ("tf.estimator.tpu.TPUEstimatorSpec(mode)", "kte.TPUEstimatorSpec(mode)", KTE),
        ("tf.compat.v1.estimator.tpu.RunConfig()", "kte.RunConfig()", KTE),
        ("tf.contrib.tpu.TPUConfig(iterations_per_loop=10)", "kte.TPUConfig(iterations_per_loop=10)", KTE),
        (
            "tf.estimator.tpu.InputPipelineConfig.PER_HOST_V2",
            "kte.InputPipelineConfig.PER_HOST_V2",
            KTE,
        ),
        ("tf.estimator.ModeKeys.TRAIN", "kte.ModeKeys.TRAIN", KTE),
        ("tf.estimator.export.PredictOutput(o)", "kte.PredictOutput(o)", KTE),
        ("tf.train.latest_checkpoint(d)", "tf1.train.latest_checkpoint(d)", TF1),
        ("tf.layers.dense(x, 10)", "tf1.layers.dense(x, 10)", TF1),
        ("tf.compat.v1.layers.conv2d(x, 8, 3)", "tf1.layers.conv2d(x, 8, 3)", TF1),
        ("tf.nn.relu(x)", "tf1.nn.relu(x)", TF1),
        ("tf.losses.softmax_cross_entropy(y, x)", "tf1.losses.softmax_cross_entropy(y, x)", TF1),
        ("tf.metrics.accuracy(y, p)", "tf1.metrics.accuracy(y, p)", TF1),
        ("tf.train.AdamOptimizer(1e-3)", "tf1.train.AdamOptimizer(1e-3)", TF1),
        ("tf.train.get_or_create_global_step()", "tf1.train.get_or_create_global_step()", TF1),
        ("tf.contrib.tpu.CrossShardOptimizer(o)", "tf1.tpu.CrossShardOptimizer(o)", TF1),
        ("tf.tpu.cross_replica_sum(x)", "tf1.tpu.cross_replica_sum(x)", TF1),
        ("tf.contrib.layers.layer_norm(x)", "tf1.contrib.layers.layer_norm(x)", TF1),
        ("tf.variable_scope('a', reuse=tf.AUTO_REUSE)", "tf1.variable_scope('a', reuse=tf1.AUTO_REUSE)", TF1),
        ("tf.get_collection(tf.GraphKeys.UPDATE_OPS)", "tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)", TF1),
        ("tf.reduce_mean(tf.cast(x, tf.float32))", "tf1.reduce_mean(tf1.cast(x, tf1.float32))", TF1),
        ("tf.scatter_nd(i, u, [8])", "tf1.scatter_nd(i, u, [8])", TF1),
        ("tf.compat.v1.tensor_scatter_nd_update(x, i, u)", "tf1.tensor_scatter_nd_update(x, i, u)", TF1),
    ],
)
def test_model_side_names_are_rewritten(before, after, imports):
    source = f"def model_fn(features, labels, mode, params):\n    return {before}\n"
    expected = imports + f"def model_fn(features, labels, mode, params):\n    return {after}\n"
    assert converted(source) == expected


@pytest.mark.parametrize(
    "before, after",
    [
        ("tf.data.TFRecordDataset(files)", "tf.data.TFRecordDataset(files)"),
        ("tf.cast(x, tf.float32)", "tf.cast(x, tf.float32)"),
        ("tf.parse_single_example(r, spec)", "tf.io.parse_single_example(r, spec)"),
        ("tf.FixedLenFeature([], tf.int64)", "tf.io.FixedLenFeature([], tf.int64)"),
        ("tf.to_int32(x)", "tf.compat.v1.to_int32(x)"),
        ("tf.contrib.data.map_and_batch(f, 8)", "tf.data.experimental.map_and_batch(f, 8)"),
        ("tf.py_func(f, [x], tf.int32)", "tf.compat.v1.py_func(f, [x], tf.int32)"),
    ],
)
def test_input_fn_stays_on_tensorflow(before, after):
    source = f"def input_fn(params):\n    return {before}\n"
    assert converted(source) == HEADER + f"def input_fn(params):\n    return {after}\n"


def test_serving_input_receiver_fn_stays_on_tensorflow():
    source = """\
    def serving_input_receiver_fn():
        x = tf.placeholder(tf.float32, [None, 64], name="x")
        return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})
    """
    assert converted(source) == KTE + HEADER + textwrap.dedent(source).replace(
        "tf.placeholder", "tf.compat.v1.placeholder"
    ).replace("tf.estimator.export.", "kte.export.")


def test_functions_used_by_input_fn_and_dataset_map_stay_on_tensorflow():
    source = """\
    def _decode(record):
        return tf.cast(record, tf.int32)

    def _scale(x):
        return tf.cast(x, tf.float32) / 255.0

    def train_input_fn(params):
        ds = tf.data.Dataset.range(10).map(_decode)
        return ds.map(lambda x: _scale(x) + tf.ones([]))

    def model_fn(features, labels, mode, params):
        return tf.cast(features, tf.float32)
    """
    out = converted(source)
    assert "return tf.cast(record, tf.int32)" in out
    assert "return tf.cast(x, tf.float32) / 255.0" in out
    assert "ds.map(lambda x: _scale(x) + tf.ones([]))" in out
    assert "return tf1.cast(features, tf1.float32)" in out


def test_a_helper_shared_with_model_fn_is_model_side():
    source = """\
    def helper(x):
        return tf.reduce_sum(x)

    def input_fn(params):
        return helper(1)

    def model_fn(features, labels, mode, params):
        return helper(features)
    """
    assert "return tf1.reduce_sum(x)" in converted(source)


def test_comments_and_formatting_survive():
    source = """\
    # A header comment.
    def model_fn(features, labels, mode, params):  # trailing comment
        net = tf.layers.dense(
            features["x"],   # odd spacing kept
            units = 10 ,
        )
        \"\"\"A string mentioning tf.layers.dense stays.\"\"\"
        return net
    """
    out = converted(source)
    assert out == TF1 + textwrap.dedent(source).replace(
        "net = tf.layers.dense(", "net = tf1.layers.dense("
    )


def test_names_imported_from_tensorflow_modules_are_resolved():
    source = textwrap.dedent(
        """\
        import tensorflow.compat.v1 as tf
        from tensorflow.contrib import tpu as contrib_tpu

        def model_fn(features, labels, mode, params):
            opt = contrib_tpu.CrossShardOptimizer(tf.train.MomentumOptimizer(0.1, 0.9))
            return contrib_tpu.TPUEstimatorSpec(mode, train_op=opt)
        """
    )
    out = convert.convert_source(source).source
    assert "opt = tf1.tpu.CrossShardOptimizer(tf1.train.MomentumOptimizer(0.1, 0.9))" in out
    assert "return kte.TPUEstimatorSpec(mode, train_op=opt)" in out
    assert "tensorflow.contrib" not in out  # TensorFlow 2 has no tf.contrib


def test_a_contrib_import_still_in_use_is_reported_and_stubbed():
    # The import becomes a placeholder that raises where it is used: the
    # module imports on TensorFlow 2; the use stays, reported.
    source = "from tensorflow.contrib import gan\n\nnet = gan.features.tensor_pool(x)\n"
    result = convert.convert_source(source, filename="prog.py")
    assert result.source == (
        "import keras_tpu_estimator.compat.v1 as tf1\n"
        "gan = tf1.unsupported.Unsupported('contrib.gan', "
        "'TensorFlow 2 has no tf.contrib, and the converter knows no equivalent: rewrite "
        "this call (the conversion report names each use)')\n\n"
        "net = gan.features.tensor_pool(x)\n"
    )
    assert [(c.line, c.level) for c in result.errors] == [(1, "ERROR"), (3, "ERROR")]
    assert "fails on TensorFlow 2 (no tf.contrib)" in result.errors[0].message


def test_imports_are_added_once_where_the_tensorflow_import_was():
    source = '"""Doc."""\nimport os\nimport tensorflow as tf\nimport numpy as np\n\nx = tf.layers.dense\ny = tf.estimator.ModeKeys\n'
    out = convert.convert_source(source).source
    assert out.splitlines()[:5] == [
        '"""Doc."""',
        "import os",
        KTE.strip(),
        TF1.strip(),
        "import numpy as np",
    ]
    assert out.count(KTE) == 1 and out.count(TF1) == 1


def test_nothing_to_convert_adds_no_import():
    source = "import tensorflow as tf\n\ndef input_fn(params):\n    return tf.data.Dataset.range(3)\n"
    result = convert.convert_source(source)
    assert result.source == source
    assert result.changes == []


def test_converting_the_output_again_changes_nothing():
    source = """\
    def input_fn(params):
        return tf.data.Dataset.range(3).map(lambda x: tf.to_float(x))

    def model_fn(features, labels, mode, params):
        tf.logging.info("building")
        y = tf.layers.dense(features, 2)
        tf.Session()
        return tf.contrib.tpu.TPUEstimatorSpec(mode, loss=tf.reduce_mean(y))
    """
    once = converted(source)
    twice = convert.convert_source(once)
    assert twice.source == once
    assert [c.level for c in twice.changes] == ["ERROR"]


@pytest.mark.parametrize(
    "call, advice",
    [
        ("tf.contrib.feature_column.sequence_input_layer(features, columns)",
         "sequence feature columns are not supported"),
        ("tf.Session()", "there are no sessions"),
        ("tf.placeholder(tf.float32, [None, 3])", "no graph placeholders"),
        ("tf.layers.conv4d(x, 3, 3)", "not in keras_tpu_estimator.compat.v1"),
        ("tf.contrib.slim.conv5d(x, 3, 3)", "has no equivalent"),
        ("tf.contrib.tpu.keras_to_tpu_model(m, strategy=s)", "runs on TPU, GPU or CPU as it is"),
        ("tf.contrib.cloud.BigtableClient(p, i)", "google-cloud-bigtable"),
        ("tf.tpu.experimental.AdamParameters(0.1)", "embedding_column"),
        ("tf.contrib.tensorrt.create_inference_graph(g)", "export_saved_model"),
        ("tf.contrib.quantize.create_training_graph()", "train in float"),
    ],
)
def test_unconvertible_calls_are_reported_and_left_alone(call, advice):
    source = HEADER + f"def model_fn(features, labels, mode, params):\n    return {call}\n"
    result = convert.convert_source(source)
    [error] = result.errors
    assert (error.line, error.col) == (3, 12)
    assert advice in error.message
    assert "return " + call.split("(")[0] + "(" in result.source


def test_tensorflow_ops_left_in_model_fn_are_warned_about():
    source = HEADER + "def model_fn(features, labels, mode, params):\n    return tf.signal.rfft(features)\n"
    [warning] = convert.convert_source(source).changes
    assert warning.level == "WARNING"
    assert "'tf.signal.rfft' left on TensorFlow" in warning.message


def test_report_lists_every_change_with_file_line_and_column():
    source = HEADER + "\ndef model_fn(features, labels, mode, params):\n    x = tf.layers.dense(features, 1)\n    return tf.tpu.rewrite(f, [x], tf.float32)\n"
    result = convert.convert_source(source, filename="prog.py")
    report = convert.format_report(result, "prog.py", "out.py")
    assert "prog.py:4:9: INFO: Renamed 'tf.layers.dense' to 'tf1.layers.dense'" in report
    assert "prog.py:5:12: ERROR: 'tf.tpu.rewrite' cannot be converted" in report
    assert "prog.py:5:35: INFO: Renamed 'tf.float32' to 'tf1.float32'" in report
    assert "3 changes, 0 warnings, 1 errors" in report


def test_non_ascii_text_keeps_positions():
    source = HEADER + "def model_fn(features, labels, mode, params):\n    s = 'é'; x = tf.layers.dense(s, 1)  # ü\n"
    result = convert.convert_source(source)
    assert "s = 'é'; x = tf1.layers.dense(s, 1)  # ü" in result.source
    assert (result.changes[-1].line, result.changes[-1].col) == (3, 18)


def test_source_must_be_a_string():
    with pytest.raises(TypeError, match="`source` must be the program text"):
        convert.convert_source(b"import tensorflow")


def test_convert_file_refuses_a_missing_input(tmp_path):
    with pytest.raises(FileNotFoundError, match="`input_path` must be an existing Python file"):
        convert.convert_file(str(tmp_path / "missing.py"), str(tmp_path / "out.py"))


def test_convert_file_leaves_no_partial_output_on_a_syntax_error(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def model_fn(:\n")
    out = tmp_path / "out.py"
    with pytest.raises(SyntaxError):
        convert.convert_file(str(bad), str(out))
    assert sorted(os.listdir(tmp_path)) == ["bad.py"]


def _run_cli(args, cwd):
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_cli_converts_a_file_and_prints_the_report(tmp_path, monkeypatch, capsys):
    from keras_tpu_estimator.convert import cli

    program = tmp_path / "prog.py"
    program.write_text(HEADER + "def model_fn(features, labels, mode, params):\n    return tf.nn.relu(features)\n")
    monkeypatch.chdir(tmp_path)  # In-process: the command as a process is tested in test_convert_cli.
    status = cli(["convert", "prog.py", "-o", "out.py", "--report", "report.txt"])
    done = capsys.readouterr()
    assert status == 0, done.err
    assert "prog.py:3:12: INFO: Renamed 'tf.nn.relu' to 'tf1.nn.relu'" in done.out
    assert (tmp_path / "report.txt").read_text() == done.out
    assert "return tf1.nn.relu(features)" in (tmp_path / "out.py").read_text()


def test_module_cli_names_a_missing_input(tmp_path):
    done = _run_cli(["-m", "keras_tpu_estimator.convert", "nope.py", "-o", "out.py"], tmp_path)
    assert done.returncode == 2
    assert "`input_path` must be an existing Python file. Received: 'nope.py'" in done.stderr
    assert not (tmp_path / "out.py").exists()


def test_the_converter_is_part_of_the_public_api():
    import keras_tpu_estimator as kte

    assert kte.convert is convert
