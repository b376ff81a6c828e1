"""The converter on the idioms real TF1 programs are made of.

Every way a program names TensorFlow, resolved by scope; imports that the
conversion leaves unused are removed; TF1 shape idioms; behaviour switches;
TPU cluster resolvers; host-side protocol buffers; the input side by data
flow across the files of a tree; and one source of truth for names.
"""

import textwrap

import pytest

from keras_tpu_estimator import convert
from keras_tpu_estimator.convert import names

KTE = "import keras_tpu_estimator as kte\n"
TF1 = "import keras_tpu_estimator.compat.v1 as tf1\n"


def converted(source, **kwargs):
    return convert.convert_source(textwrap.dedent(source), **kwargs)


@pytest.mark.parametrize(
    "imports, use",
    [
        ("import tensorflow.compat.v1 as tf", "tf.layers.dense"),
        ("import tensorflow as tf", "tf.compat.v1.layers.dense"),
        ("import tensorflow as tf\ntf1 = tf.compat.v1", "tf1.layers.dense"),
        ("import tensorflow as tf\nimport tensorflow.compat.v1 as tf1", "tf1.layers.dense"),
        ("from tensorflow.compat.v1 import layers", "layers.dense"),
        ("from tensorflow.compat.v1 import layers as tf_layers", "tf_layers.dense"),
        ("import tensorflow.compat.v1", "tensorflow.compat.v1.layers.dense"),
    ],
)
def test_every_way_of_naming_tensorflow_resolves(imports, use):
    result = converted(f"{imports}\n\ndef model_fn(features):\n    return {use}(features, 2)\n")
    assert result.source.startswith(TF1)
    assert result.source.endswith("\ndef model_fn(features):\n    return tf1.layers.dense(features, 2)\n")
    assert "compat.v1 as tf1\n" not in result.source[len(TF1):]
    assert not result.changes or not result.errors


@pytest.mark.parametrize(
    "imports, use",
    [
        ("from tensorflow.compat.v1 import estimator as tf_estimator", "tf_estimator.tpu.TPUEstimator"),
        ("from tensorflow.compat.v1 import estimator", "estimator.tpu.TPUEstimator"),
        ("from tensorflow.contrib import tpu as contrib_tpu", "contrib_tpu.TPUEstimator"),
        ("from tensorflow.contrib import tpu", "tpu.TPUEstimator"),
        ("import tensorflow as tf", "tf.estimator.tpu.TPUEstimator"),
    ],
)
def test_estimator_imports_are_removed_once_every_use_is_rewritten(imports, use):
    result = converted(f"{imports}\n\ndef main():\n    return {use}(model_fn)\n")
    assert result.source == KTE + "\ndef main():\n    return kte.TPUEstimator(model_fn)\n"


@pytest.mark.parametrize(
    "imports, use",
    [
        ("from tensorflow.contrib.tpu.python.tpu import tpu_estimator", "tpu_estimator.TPUEstimator"),
        ("from tensorflow.python.tpu import tpu_estimator", "tpu_estimator.TPUEstimator"),
        ("from tensorflow_estimator.python.estimator.tpu import tpu_estimator",
         "tpu_estimator.TPUEstimator"),
        ("import tensorflow_estimator as tfe", "tfe.estimator.tpu.TPUEstimator"),
        ("import tensorflow.compat.v1 as tf\ntpu_lib = tf.estimator.tpu", "tpu_lib.TPUEstimator"),
    ],
)
def test_estimator_modules_imported_from_where_tensorflow_keeps_them(imports, use):
    result = converted(f"{imports}\n\ndef main():\n    return {use}(model_fn)\n")
    assert result.source.endswith("\ndef main():\n    return kte.TPUEstimator(model_fn)\n")
    assert "tensorflow" not in result.source and not result.errors


def test_an_alias_of_a_module_tensorflow_2_moved_is_rewritten_where_it_is_bound():
    result = converted("""\
        import tensorflow as tf
        flags = tf.flags
        FLAGS = flags.FLAGS
        flags.DEFINE_string("data_dir", None, "Where the data is.")
        """)
    assert "flags = tf.compat.v1.flags\nFLAGS = flags.FLAGS\nflags.DEFINE_string(" in result.source


def test_an_import_still_in_use_stays():
    result = converted("""\
        import tensorflow.compat.v1 as tf

        def input_fn(params):
            return tf.data.Dataset.range(3)

        def model_fn(features):
            return tf.nn.relu(features)
        """)
    assert "import tensorflow.compat.v1 as tf\n" in result.source
    assert "return tf1.nn.relu(features)" in result.source


def test_the_added_namespace_is_never_shadowed_by_the_programs_own_tf1():
    result = converted("""\
        import tensorflow as tf
        tf1 = tf.compat.v1

        def model_fn(features):
            config = tf1.ConfigProto()
            return tf1.nn.relu(features)
        """)
    assert "import keras_tpu_estimator.compat.v1 as tf1_\n" in result.source
    assert "tf1 = tf.compat.v1\n" in result.source  # still read: ConfigProto
    assert "return tf1_.nn.relu(features)" in result.source
    assert "config = tf1.ConfigProto()" in result.source


def test_an_alias_bound_in_a_function_is_resolved_there():
    result = converted("""\
        def model_fn(features):
            import tensorflow.compat.v1 as tf
            return tf.nn.relu(features)
        """)
    assert result.source == TF1 + "def model_fn(features):\n    return tf1.nn.relu(features)\n"


def test_a_local_name_hides_a_module_level_tensorflow_alias():
    result = converted("""\
        from tensorflow.compat.v1 import estimator

        def main(estimator):
            return estimator.train(input_fn)

        def model_fn(mode):
            return mode == estimator.ModeKeys.TRAIN
        """)
    assert "return estimator.train(input_fn)" in result.source
    assert "return mode == kte.ModeKeys.TRAIN" in result.source
    assert "from tensorflow" not in result.source


def test_an_alias_of_a_value_is_an_ordinary_variable():
    result = converted("""\
        import tensorflow as tf

        def main():
            per_host = tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2
            return tf.contrib.tpu.TPUConfig(per_host_input_for_training=per_host)
        """)
    assert "per_host = kte.InputPipelineConfig.PER_HOST_V2" in result.source
    assert "kte.TPUConfig(per_host_input_for_training=per_host)" in result.source
    assert not result.errors


@pytest.mark.parametrize(
    "before, after",
    [
        ("x.shape.ndims", "len(x.shape)"),
        ("x.get_shape().ndims", "len(x.shape)"),
        ("x.shape.as_list()", "list(x.shape)"),
        ("x.get_shape().as_list()", "list(x.shape)"),
        ("x.shape[-1].value", "x.shape[-1]"),
        ("x.get_shape()[1].value", "x.shape[1]"),
        ("x.get_shape()", "x.shape"),
        ("tf.dimension_value(x.shape[0])", "x.shape[0]"),
        ("tf.reshape(x, [-1]).shape.ndims", "len(tf1.reshape(x, [-1]).shape)"),
        ("'shape: %s' % x.shape", "'shape: %s' % (x.shape,)"),
        ("'shape: %s' % x.get_shape()", "'shape: %s' % (x.shape,)"),
    ],
)
def test_tf1_shape_idioms_become_tuple_operations(before, after):
    result = converted(f"import tensorflow as tf\n\ndef model_fn(x):\n    return {before}\n")
    assert f"    return {after}\n" in result.source


def test_shape_idioms_in_the_input_pipeline_stay():
    source = "import tensorflow as tf\n\ndef input_fn(params):\n    return x.shape.ndims\n"
    assert converted(source).source == source


@pytest.mark.parametrize(
    "switch",
    ["tf.disable_v2_behavior()", "tf.compat.v1.disable_eager_execution()",
     "tf.enable_eager_execution()", "tf.disable_v2_tensorshape()"],
)
def test_tensorflow_behaviour_switches_are_removed(switch):
    result = converted(f"""\
        import tensorflow.compat.v1 as tf
        import tensorflow as tf2

        if __name__ == '__main__':
            tf.logging.set_verbosity(tf.logging.INFO)
            {switch.replace('tf.compat.v1', 'tf2.compat.v1')}
            main()
        """)
    assert "v2_behavior" not in result.source and "eager" not in result.source
    assert "tensorshape" not in result.source
    assert "    main()\n" in result.source
    assert not result.errors


@pytest.mark.parametrize("setup", [
    "tf.tpu.experimental.initialize_tpu_system(resolver)",
    "tf.contrib.distribute.initialize_tpu_system(resolver)",
    "tf.config.experimental_connect_to_cluster(resolver)",
])
def test_tpu_device_setup_statements_are_removed(setup):
    # Keras TPU programs (tensorflow/tpu's resnet50_keras, mnist_keras).
    result = converted(f"""\
        import tensorflow as tf

        def main():
            resolver = tf.distribute.cluster_resolver.TPUClusterResolver(FLAGS.tpu)
            {setup}
            return resolver
        """)
    assert "initialize_tpu_system" not in result.source
    assert "connect_to_cluster" not in result.source
    assert not result.errors
    [note] = [c for c in result.changes if "initializes this machine's devices" in c.message]
    assert note.level == "INFO"


def test_a_block_left_empty_gets_pass():
    result = converted("import tensorflow as tf\n\nif True:\n    tf.disable_v2_behavior()\n")
    assert result.source == "\nif True:\n    pass\n"


def test_tpu_cluster_resolvers_become_the_local_resolver_and_say_why():
    result = converted("""\
        import tensorflow.compat.v1 as tf

        def main():
            resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
                FLAGS.tpu, zone=FLAGS.tpu_zone, project=FLAGS.gcp_project)
            return tf.estimator.tpu.RunConfig(cluster=resolver)
        """)
    assert "resolver = tf1.distribute.cluster_resolver.TPUClusterResolver(\n" in result.source
    assert not result.errors
    [note] = [c for c in result.changes if "TPUClusterResolver" in c.message]
    assert "needs no TPU name" in note.message


def test_host_side_example_writers_are_left_alone_without_a_report():
    source = textwrap.dedent("""\
        import tensorflow.compat.v1 as tf

        def write(path, values):
            with tf.python_io.TFRecordWriter(path) as writer:
                feature = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
                example = tf.train.Example(features=tf.train.Features(feature={"x": feature}))
                writer.write(example.SerializeToString())
        """)
    result = convert.convert_source(source)
    assert [c.level for c in result.changes] == []
    assert result.source == source


def test_host_call_keeps_tensorflow_summaries():
    result = converted("""\
        import tensorflow.compat.v1 as tf
        import tensorflow.compat.v2 as tf2

        def model_fn(features, labels, mode, params):
            def host_call_fn(gs, loss):
                with tf2.summary.create_file_writer(params['model_dir']).as_default():
                    tf2.summary.scalar('loss', loss[0], step=gs[0])
                    return tf.summary.all_v2_summary_ops()
            return host_call_fn
        """)
    assert not [c for c in result.changes if c.level != "INFO"]
    assert "return tf.summary.all_v2_summary_ops()" in result.source


def test_functions_given_to_dataset_transformations_stay_on_tensorflow():
    result = converted("""\
        import functools
        import tensorflow.compat.v1 as tf

        class Input(object):
            def parse(self, value):
                return tf.reshape(tf.cast(value, tf.int32), [])

            def shapes(self, batch_size, images):
                return tf.reshape(images, [batch_size, -1])

            def input_fn(self, params):
                ds = tf.data.Dataset.range(8)
                ds = ds.apply(tf.data.experimental.map_and_batch(self.parse, 4))
                return ds.map(functools.partial(self.shapes, 4))

        def model_fn(features):
            return tf.reshape(features, [-1])
        """)
    assert "return tf.reshape(tf.cast(value, tf.int32), [])" in result.source
    assert "return tf.reshape(images, [batch_size, -1])" in result.source
    assert "return tf1.reshape(features, [-1])" in result.source


def test_modules_only_input_code_imports_stay_on_tensorflow():
    preprocessing = "import tensorflow.compat.v1 as tf\n\ndef crop(image):\n    return tf.reshape(image, [-1])\n"
    sources = {
        "pkg.preprocessing": preprocessing,
        "pkg.data": textwrap.dedent("""\
            import tensorflow.compat.v1 as tf
            from pkg import preprocessing

            class Input(object):
                def __init__(self):
                    self.fn = preprocessing.crop

                def parse(self, value):
                    return self.fn(value)

                def input_fn(self, params):
                    return tf.data.Dataset.range(3).map(self.parse)
            """),
        "pkg.main": textwrap.dedent("""\
            import tensorflow.compat.v1 as tf
            from pkg import data

            def model_fn(features):
                return tf.reshape(features, [-1])
            """),
    }
    results = convert.convert_sources(sources)
    assert results["pkg.preprocessing"].source == preprocessing
    assert "tf1.reshape(features" in results["pkg.main"].source


def test_model_code_in_another_module_is_found_through_the_import():
    sources = {
        "model_lib": "import tensorflow as tf\n\ndef network(x):\n    return tf.layers.dense(x, 2)\n",
        "main": textwrap.dedent("""\
            import tensorflow as tf
            import model_lib

            def input_fn(params):
                return tf.data.Dataset.range(3).map(lambda x: tf.reshape(x, [1]))

            def model_fn(features):
                return model_lib.network(features)
            """),
    }
    results = convert.convert_sources(sources)
    assert "return tf1.layers.dense(x, 2)" in results["model_lib"].source
    assert "tf.reshape(x, [1])" in results["main"].source


def test_no_compat_v1_name_is_reported_as_missing():
    # Input-side ops (`image.decode_jpeg`) are reported in model code by design.
    exported = [
        n for n in names.compat_v1_names()
        if n.count(".") <= 1 and "tf." + n not in names.UNSUPPORTED
        and not names.compat_v1_input_only("tf." + n)
    ]
    body = "\n".join(f"    y{i} = tf.{n}" for i, n in enumerate(exported))
    result = converted(f"import tensorflow as tf\n\ndef model_fn(x):\n{body}\n")
    assert [c.message for c in result.changes if c.level != "INFO"] == []


@pytest.mark.parametrize("target", sorted(set(names.KTE_NAMES.values())))
def test_every_estimator_table_entry_resolves(target):
    import keras_tpu_estimator as kte

    value = kte
    for part in target.split(".")[1:]:
        value = getattr(value, part)
    assert value is not None


@pytest.mark.parametrize(
    "name, used_in_model, real_program",
    [
        ("pad", "tf.pad(x, [[0, 0], [1, 1]])", "resnet_model.fixed_padding"),
        ("size", "tf.size(x)", "lars_util"),
        ("assign_sub", "tf.assign_sub(v, 1)", "common programs"),
        ("assert_less_equal", "tf.assert_less_equal(3, 4)", "bert modeling"),
        ("get_variable_scope", "tf.get_variable_scope()", "bert modeling"),
        ("layers.Conv2D", "tf.layers.Conv2D(8, 3)", "mnist_tpu"),
        ("nn.max_pool", "tf.nn.max_pool(x, 2, 2, 'SAME')", "resnet"),
    ],
)
def test_names_real_programs_use_are_in_compat_v1(name, used_in_model, real_program):
    assert names.compat_v1_has(name), real_program
    result = converted(f"import tensorflow as tf\n\ndef model_fn(x, v):\n    return {used_in_model}\n")
    assert f"tf1.{name}" in result.source
    assert "import tensorflow" not in result.source
