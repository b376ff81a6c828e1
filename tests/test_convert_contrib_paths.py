"""`tf.contrib`'s implementation modules fold onto the public names they re-export."""

import pytest

from keras_tpu_estimator import convert
from keras_tpu_estimator.convert import names


@pytest.mark.parametrize("imported, public", [
    ("tensorflow.contrib.framework.python.ops.arg_scope", "tf.contrib.framework.arg_scope"),
    ("tensorflow.contrib.framework.python.ops.add_arg_scope",
     "tf.contrib.framework.add_arg_scope"),
    ("tensorflow.contrib.framework.python.ops.arg_scope.add_arg_scope",
     "tf.contrib.framework.add_arg_scope"),
    ("tensorflow.contrib.layers.python.layers.layers.avg_pool2d", "tf.contrib.layers.avg_pool2d"),
    ("tensorflow.contrib.layers.python.layers.layers", "tf.contrib.layers"),
    ("tensorflow.contrib.layers.python.layers.initializers.variance_scaling_initializer",
     "tf.contrib.layers.variance_scaling_initializer"),
    ("tensorflow.contrib.layers.python.layers.regularizers.l2_regularizer",
     "tf.contrib.layers.l2_regularizer"),
    ("tensorflow.contrib.training.python.training.evaluation.checkpoints_iterator",
     "tf.contrib.training.checkpoints_iterator"),
    ("tensorflow.contrib.slim.python.slim.nets.inception_v3.inception_v3_base",
     "tf.contrib.slim.nets.inception.inception_v3_base"),
    ("tensorflow.contrib.tpu.python.ops.tpu_ops.cross_replica_sum", "tf.tpu.cross_replica_sum"),
    ("tensorflow.contrib.tpu.python.tpu.bfloat16.bfloat16_scope", "tf.tpu.bfloat16_scope"),
    ("tensorflow.contrib.layers.conv2d", "tf.contrib.layers.conv2d"),
    ("tensorflow.contrib.tpu.tpu.TPUEstimatorSpec", "tf.estimator.tpu.TPUEstimatorSpec"),
])
def test_internal_module_name_is_its_public_name(imported, public):
    assert names.normalize(imported) == public


def test_slims_example_decoder_in_input_fn_becomes_compat_v1s():
    source = ("import tensorflow as tf\nslim = tf.contrib.slim\n\n"
              "def input_fn(params):\n"
              "    return slim.tfexample_decoder.TFExampleDecoder({}, {})\n")
    result = convert.convert_source(source)
    assert not result.errors
    assert "tf1.contrib.slim.tfexample_decoder.TFExampleDecoder(" in result.source


def test_slims_queue_runner_readers_are_reported_with_tf_data_advice():
    source = ("import tensorflow as tf\nslim = tf.contrib.slim\n\n"
              "def input_fn(params):\n"
              "    return slim.dataset_data_provider.DatasetDataProvider(d)\n")
    [error] = convert.convert_source(source).errors
    assert "tf.data" in error.message


def test_new_checkpoint_reader_stays_on_the_host():
    # ALBERT's SQuAD reads the global step of each checkpoint it evaluates.
    source = ("import tensorflow.compat.v1 as tf\n\n"
              "def get_result(estimator, checkpoint):\n"
              "    reader = tf.train.NewCheckpointReader(checkpoint)\n"
              "    return reader.get_tensor(tf.GraphKeys.GLOBAL_STEP)\n")
    result = convert.convert_source(source)
    assert not result.errors
    assert "tf.train.NewCheckpointReader(checkpoint)" in result.source


@pytest.mark.parametrize("imports, use", [
    ("from tensorflow.contrib import data as contrib_data", "contrib_data.map_and_batch(f, 8)"),
    ("import tensorflow as tf", "tf.contrib.data.map_and_batch(f, 8)"),
])
def test_contrib_data_becomes_tf_data_experimental_in_every_import_form(imports, use):
    # DenseNet's input pipeline imports tf.contrib.data under an alias.
    source = f"{imports}\n\ndef input_fn(params):\n    return ds.apply({use})\n"
    result = convert.convert_source(source)
    assert not result.errors
    assert ".data.experimental.map_and_batch(f, 8)" in result.source
    namespace = {}
    exec(compile(result.source.replace("ds.apply", "str"), "converted.py", "exec"), namespace)


def test_contrib_image_in_an_input_pipeline_becomes_compat_v1s():
    # EfficientNet's AutoAugment rotates and translates inside Dataset.map.
    source = ("import tensorflow.compat.v1 as tf\nfrom tensorflow.contrib import image as ci\n\n"
              "def rotate(image, degrees):\n    return ci.rotate(image, degrees)\n\n"
              "def input_fn(params):\n"
              "    return tf.data.Dataset.range(3).map(lambda x: rotate(x, 30.0))\n")
    result = convert.convert_source(source)
    assert not result.errors
    assert "tf1.contrib.image.rotate(image, degrees)" in result.source


def test_tpu_ops_of_tensorflow_python_fold_onto_tf1_tpu():
    assert names.normalize("tensorflow.python.tpu.ops.tpu_ops.cross_replica_sum") == (
        "tf.tpu.cross_replica_sum")


def test_a_contrib_import_nothing_reads_is_removed():
    # DenseNet imports tf.contrib.data and never uses it: TensorFlow 2 cannot import it.
    source = "import tensorflow as tf\nfrom tensorflow.contrib import data as contrib_data\n\nx = 1\n"
    result = convert.convert_source(source)
    assert not result.errors
    assert "contrib" not in result.source
