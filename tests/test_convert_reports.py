"""The converter leaves nothing unreported that cannot run.

Each case: a small TF1 source, what the converter makes of it, and the
report line. TF1 helpers with a local stand-in (slim's `get_data_files`,
TPU cluster resolvers) become it; a vendored copy of TensorFlow's
`tpu_estimator.py` is superseded; model-side code reached through another
module's re-exports is converted; every TensorFlow name left in code
`model_fn` reaches is a WARNING or an ERROR with its line.
"""

import textwrap

import pytest

from keras_tpu_estimator import convert
from keras_tpu_estimator.convert import names

KTE = "import keras_tpu_estimator as kte\n"
TF1 = "import keras_tpu_estimator.compat.v1 as tf1\n"


def converted(source):
    return convert.convert_source(textwrap.dedent(source))


def reported(result, level):
    return [(c.line, c.message) for c in result.changes if c.level == level]


@pytest.mark.parametrize("imports, use", [
    ("from tensorflow.contrib import slim", "slim.parallel_reader.get_data_files"),
    ("import tensorflow.compat.v1 as tf", "tf.contrib.slim.parallel_reader.get_data_files"),
    ("from tensorflow.contrib.slim.python.slim.data import parallel_reader",
     "parallel_reader.get_data_files"),
])
def test_slim_get_data_files_becomes_the_compat_helper_on_the_input_side(imports, use):
    result = converted(f"""\
        {imports}

        def input_fn(params):
            return {use}(params["pattern"])
        """)
    assert result.source == (
        TF1 + "\ndef input_fn(params):\n"
        "    return tf1.contrib.slim.parallel_reader.get_data_files(params[\"pattern\"])\n")
    assert not result.errors


def test_the_get_data_files_helper_globs_as_slim_did(tmp_path):
    import keras_tpu_estimator.compat.v1 as tf1

    for name in ("a-0", "a-1", "b"):
        (tmp_path / name).write_text("")
    get_data_files = tf1.contrib.slim.parallel_reader.get_data_files
    assert sorted(get_data_files(str(tmp_path / "a-*"))) == [
        str(tmp_path / "a-0"), str(tmp_path / "a-1")]
    assert get_data_files([str(tmp_path / "b"), "plain"]) == [str(tmp_path / "b"), "plain"]
    with pytest.raises(ValueError, match="No data files found"):
        get_data_files(str(tmp_path / "c-*"))


@pytest.mark.parametrize("imports, make", [
    ("from tensorflow.contrib import cluster_resolver as contrib_cluster_resolver",
     "contrib_cluster_resolver.TPUClusterResolver"),
    ("import tensorflow.compat.v1 as tf", "tf.contrib.cluster_resolver.TPUClusterResolver"),
    ("import tensorflow as tf", "tf.distribute.cluster_resolver.TPUClusterResolver"),
])
def test_a_tpu_cluster_resolver_becomes_the_local_one_that_answers(imports, make):
    result = converted(f"""\
        {imports}

        def main():
            resolver = {make}(FLAGS.tpu, zone=FLAGS.zone)
            return resolver.get_master(), resolver.cluster_spec()
        """)
    assert "    resolver = tf1.distribute.cluster_resolver.TPUClusterResolver(" \
        "FLAGS.tpu, zone=FLAGS.zone)\n" in result.source
    assert "tensorflow" not in result.source and not result.errors
    namespace = {"FLAGS": type("F", (), {"tpu": "t", "zone": "z"})}
    exec(compile(result.source, "<converted>", "exec"), namespace)
    master, spec = namespace["main"]()
    assert master == "" and spec.as_dict() == {} and not spec


VENDORED = textwrap.dedent("""\
    from tensorflow.contrib.tpu.python.tpu import tpu_config
    from tensorflow.python.tpu import tpu_function

    class TPUEstimatorSpec(object):
        pass

    class TPUEstimator(object):
        def __init__(self, model_fn=None, config=None):
            self._model_fn = model_fn
    """)


@pytest.mark.parametrize("imports, prefix", [
    ("from common import tpu_estimator", "tpu_estimator."),
    ("from common import tpu_estimator as tpu_lib", "tpu_lib."),
    ("import common.tpu_estimator as tpu_lib", "tpu_lib."),
    ("from common.tpu_estimator import TPUEstimator, TPUEstimatorSpec, RunConfig, TPUConfig",
     ""),
])
def test_a_vendored_tpu_estimator_module_is_superseded_by_the_library(imports, prefix):
    main = textwrap.dedent(f"""\
        import tensorflow.compat.v1 as tf
        {imports}

        def model_fn(features, labels, mode, params):
            return {prefix}TPUEstimatorSpec(mode, loss=tf.reduce_mean(features))

        def main():
            config = {prefix}RunConfig(tpu_config={prefix}TPUConfig(iterations_per_loop=10))
            return {prefix}TPUEstimator(model_fn=model_fn, config=config)
        """)
    results = convert.convert_sources({"main": main, "common.tpu_estimator": VENDORED})
    source = results["main"].source
    assert source == KTE + TF1 + textwrap.dedent("""\

        def model_fn(features, labels, mode, params):
            return kte.TPUEstimatorSpec(mode, loss=tf1.reduce_mean(features))

        def main():
            config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=10))
            return kte.TPUEstimator(model_fn=model_fn, config=config)
        """)
    assert not results["main"].errors
    vendored = results["common.tpu_estimator"]
    assert vendored.source == VENDORED
    [(line, message)] = reported(vendored, "WARNING")
    assert line == 1 and "copy of TensorFlow's tpu_estimator.py" in message


def test_a_module_of_the_same_name_that_is_no_copy_is_converted_as_code():
    own = "import tensorflow.compat.v1 as tf\n\nclass TPUEstimator(object):\n    pass\n"
    results = convert.convert_sources(
        {"main": "from lib import tpu_estimator\n", "lib.tpu_estimator": own})
    assert results["main"].source == "from lib import tpu_estimator\n"
    assert not reported(results["lib.tpu_estimator"], "WARNING")


UTILS = textwrap.dedent("""\
    import tensorflow.compat.v1 as tf

    class TpuBatchNormalization(tf.layers.BatchNormalization):
        pass

    def drop_connect(x, rate):
        return tf.nn.dropout(x, rate=rate)
    """)


@pytest.mark.parametrize("reexport, use", [
    ("from efficientnet.utils import *", "mnas_utils.drop_connect"),
    ("from efficientnet.utils import drop_connect", "mnas_utils.drop_connect"),
    ("import efficientnet.utils as eff\ndrop_connect = eff.drop_connect",
     "mnas_utils.drop_connect"),
    ("from efficientnet import utils as eff\nBatchNorm = eff.TpuBatchNormalization",
     "mnas_utils.BatchNorm"),
])
def test_model_code_reached_through_another_modules_names_is_model_side(reexport, use):
    # MnasNet's mnas_utils re-exports EfficientNet's utils; only input code imports utils.
    sources = {
        "efficientnet.utils": UTILS,
        "efficientnet.preprocessing": "from efficientnet import utils\n\n"
                                      "def input_fn(params):\n    return utils\n",
        "mnasnet.mnas_utils": reexport + "\n",
        "mnasnet.model": f"from mnasnet import mnas_utils\n\n"
                         f"def model_fn(features):\n    return {use}(features, 0.5)\n",
    }
    utils = convert.convert_sources(sources)["efficientnet.utils"].source
    assert "class TpuBatchNormalization(tf1.layers.BatchNormalization):" in utils
    assert "    return tf1.nn.dropout(x, rate=rate)\n" in utils


@pytest.mark.parametrize("use, level, line_text", [
    # TensorFlow 2's summaries: converted where compat.v1 has them, else an error.
    ("tf2.summary.scalar('loss', features, step=params['step'])", None, None),
    ("tf.summary.all_v2_summary_ops()", None, None),
    # Host-side TensorFlow that cannot run in a traced model_fn is reported.
    ("tf.io.decode_raw(features, tf.uint8)", "WARNING", "'tf.io.decode_raw' left on"),
    ("tf.data.Dataset.from_tensors(features)", "WARNING", "'tf.data.Dataset.from_tensors'"),
    ("tf2.nn.relu(features)", "WARNING", "'tf.compat.v2.nn.relu' left on"),
    # ... and what runs anywhere is not.
    ("tf.logging.info('%s', features)", "", None),
    ("tf.gfile.Exists('x')", "", None),
    ("tf.keras.layers.Dense(2)(features)", "", None),  # Keras 3 from TF 2.16 on
])
def test_every_tensorflow_name_left_in_model_fn_is_reported_with_its_line(use, level, line_text):
    result = converted(f"""\
        import tensorflow.compat.v1 as tf
        import tensorflow.compat.v2 as tf2

        def model_fn(features, labels, mode, params):
            return {use}
        """)
    left = [c for c in result.changes if c.level != "INFO"]
    if level is None:  # converted when compat.v1 has it, an error with its line if not
        rewritten = f"tf1.{'compat.v2.' if use.startswith('tf2') else ''}summary."
        assert rewritten in result.source or [(c.line, c.level) for c in left] == [(5, "ERROR")]
        assert all("TensorFlow 2's summaries" in c.message for c in left)
    elif level:
        [change] = left
        assert (change.line, change.level) == (5, level) and line_text in change.message
    else:
        assert left == []


def test_tf2_summaries_compat_v1_lacks_are_errors_in_model_fn(monkeypatch):
    # Whatever compat.v1 exports decides; without a stand-in each use is an ERROR.
    real = names.compat_v1_has.__wrapped__
    monkeypatch.setattr(names, "compat_v1_has", lambda path: not path.startswith(
        ("compat.v2", "summary.all_v2")) and real(path))
    result = converted("""\
        import tensorflow.compat.v1 as tf
        import tensorflow.compat.v2 as tf2

        def model_fn(features, labels, mode, params):
            writer = tf2.summary.create_file_writer(params['model_dir'])
            with writer.as_default(), tf2.summary.record_if(True):
                tf2.summary.scalar('loss', features, step=params['step'])
            return tf.summary.all_v2_summary_ops()

        def host_call_fn(gs, loss):
            tf2.summary.scalar('loss', loss[0], step=gs[0])
        """)
    assert [(c.line, c.level) for c in result.changes if c.level != "INFO"] == [
        (5, "ERROR"), (6, "ERROR"), (7, "ERROR"), (8, "ERROR")]
    assert all("TensorFlow 2's summaries" in m for _, m in reported(result, "ERROR"))


def test_a_host_call_function_model_fn_returns_stays_on_the_host():
    result = converted("""\
        import tensorflow.compat.v2 as tf2

        def model_fn(features, labels, mode, params):
            def host_call_fn(gs, loss):
                tf2.summary.scalar('loss', loss[0], step=gs[0])
            return host_call_fn
        """)
    assert "        tf2.summary.scalar('loss', loss[0], step=gs[0])\n" in result.source
    assert [c for c in result.changes if c.level != "INFO"] == []


# Preprocessing shared by input_fn and model_fn, as MnasNet's and EfficientNet's.
SHARED_PREPROCESSING = textwrap.dedent("""\
    import tensorflow.compat.v1 as tf

    def preprocess(image_bytes, size):
        shape = tf.image.extract_jpeg_shape(image_bytes)
        begin, crop, _ = tf.image.sample_distorted_bounding_box(
            shape, [[[0.0, 0.0, 1.0, 1.0]]], min_object_covered=0.1, area_range=(0.5, 1.0))
        y, x, _ = tf.unstack(begin)
        h, w, _ = tf.unstack(crop)
        image = tf.image.decode_and_crop_jpeg(image_bytes, tf.stack([y, x, h, w]), channels=3)
        image = tf.image.resize_bicubic([image], [size, size])[0]
        return tf.image.random_hue(image / 255.0, 0.1)
    """)
SHARED_MAIN = textwrap.dedent("""\
    import tensorflow.compat.v1 as tf
    import preprocessing

    def input_fn(params):
        return tf.data.TFRecordDataset(params["files"]).map(
            lambda b: preprocessing.preprocess(b, 8))

    def model_fn(features, labels, mode, params):
        images = preprocessing.preprocess(features, 8)
        return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=tf.reduce_mean(images))
    """)


def _shared_preprocessing():
    return convert.convert_sources(
        {"main": SHARED_MAIN, "preprocessing": SHARED_PREPROCESSING})["preprocessing"]


def test_input_side_image_ops_in_shared_preprocessing_are_warnings_not_errors():
    result = _shared_preprocessing()
    assert not result.errors
    warnings = reported(result, "WARNING")
    assert [line for line, _ in warnings] == [4, 9]
    for (_, message), name in zip(warnings, ["extract_jpeg_shape", "decode_and_crop_jpeg"]):
        assert message.startswith(f"'tf.image.{name}' reads encoded image bytes")
        assert "runs TensorFlow's op where the input pipeline calls it" in message
        assert "raises TypeError where model_fn calls it" in message
    for name in ("extract_jpeg_shape", "sample_distorted_bounding_box", "decode_and_crop_jpeg",
                 "resize_bicubic", "random_hue"):
        assert f"tf1.image.{name}(" in result.source


def _graph_op_types(source):
    import numpy as np
    import tensorflow as tf

    namespace = {}
    exec(compile(source, "<preprocessing>", "exec"), namespace)
    jpeg = tf.io.encode_jpeg(np.full((12, 10, 3), 100, np.uint8)).numpy()
    with tf.Graph().as_default() as graph:
        image = namespace["preprocess"](tf.constant(jpeg), 8)
    assert image.shape == (8, 8, 3)
    return [op.type for op in graph.get_operations()]


def test_converted_shared_preprocessing_builds_tensorflows_graph_in_the_input_pipeline():
    assert _graph_op_types(_shared_preprocessing().source) == _graph_op_types(
        SHARED_PREPROCESSING)


def test_converted_shared_preprocessing_in_model_fn_says_to_decode_in_input_fn():
    import jax.numpy as jnp

    import keras_tpu_estimator as kte
    from keras_tpu_estimator.model_fn import store as store_lib

    namespace = {}
    exec(compile(_shared_preprocessing().source, "<preprocessing>", "exec"), namespace)
    with store_lib.model_fn_call(store_lib.VariableStore(), kte.ModeKeys.TRAIN, True, 0, True):
        with pytest.raises(TypeError, match="extract_jpeg_shape reads encoded image bytes"):
            namespace["preprocess"](jnp.zeros((2,), "uint8"), 8)
