"""The converter on what new public TPUEstimator programs are made of.

Each table row is one way real programs (EfficientNet, DCGAN, cifar_keras,
ALBERT, SqueezeNet) spell something: how they import their own modules,
the imports a conversion leaves without a use, hooks under `tf.estimator`,
`tf.contrib.keras`, TF1 spellings in input code, the estimator's private
helpers, and names that need no rewriting.
"""

import textwrap

import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator import convert
from keras_tpu_estimator.convert import names

TF1_IMPORT = "import keras_tpu_estimator.compat.v1 as tf1\n"

UTILS = """\
import tensorflow.compat.v1 as tf


def build(x):
    return tf.layers.dense(x, 2)


def decode(x):
    return tf.cast(x, tf.float32)
"""

MAIN = """\
import tensorflow.compat.v1 as tf
{imports}


def input_fn(params):
    return tf.data.Dataset.range(4).map({decode})


def model_fn(features, labels, mode, params):
    return {build}(features)
"""


@pytest.mark.parametrize(
    "main_key, utils_key, imports, build, decode",
    [
        ("main", "utils", "import utils", "utils.build", "utils.decode"),
        ("main", "utils", "import utils as utils", "utils.build", "utils.decode"),
        ("main", "utils", "import utils as u", "u.build", "u.decode"),
        ("main", "pkg.utils", "import pkg.utils", "pkg.utils.build", "pkg.utils.decode"),
        ("main", "pkg.utils", "import pkg.utils as u", "u.build", "u.decode"),
        ("main", "pkg.utils", "from pkg import utils", "utils.build", "utils.decode"),
        ("pkg.main", "pkg.utils", "from . import utils", "utils.build", "utils.decode"),
        ("main", "utils", "from utils import build, decode", "build", "decode"),
        ("pkg.main", "pkg.utils", "from .utils import build as b, decode", "b", "decode"),
    ],
)
def test_the_model_side_is_found_through_every_form_of_import(
    main_key, utils_key, imports, build, decode
):
    main = MAIN.format(imports=imports, build=build, decode=decode)
    results = convert.convert_sources({main_key: main, utils_key: UTILS})
    utils = results[utils_key].source
    assert "    return tf1.layers.dense(x, 2)\n" in utils  # model side: on JAX
    assert "    return tf.cast(x, tf.float32)\n" in utils  # input side: on TensorFlow
    assert not results[utils_key].changes or not any(
        c.level == "WARNING" for c in results[utils_key].changes)


# tensorflow/tpu's `official/` has three `utils.py`; mnasnet imports efficientnet's.
SHARED_NAME_UTILS = "def build(x):\n    return x\n{extra}"


@pytest.mark.parametrize("importer, expected", [
    # The one defining every name used (`build`, `swish`), as on mnasnet's path.
    ("official.mnasnet.main", "official.efficientnet.utils"),
    ("official.detection.main", "official.detection.utils"),  # the importer's sibling
])
def test_an_import_of_a_name_several_modules_have_follows_python(importer, expected):
    import ast

    from keras_tpu_estimator.convert.sides import MODEL
    from keras_tpu_estimator.convert.sides import Sides

    sources = {
        "official.efficientnet.utils": SHARED_NAME_UTILS.format(extra="\ndef swish(x):\n    return x\n"),
        "official.detection.utils": SHARED_NAME_UTILS.format(extra=""),
        "official.detection.projects.utils": SHARED_NAME_UTILS.format(extra=""),
        importer: "import utils as u\n\n"
                  "def model_fn(features, labels, mode, params):\n"
                  "    return u.swish(u.build(features)) if mode else u.build(features)\n",
    }
    trees = {key: ast.parse(source) for key, source in sources.items()}
    sides = Sides(trees)
    reached = [key for key, tree in trees.items() if key != importer and any(
        sides.of(node, None) == MODEL for node in tree.body if isinstance(node, ast.FunctionDef))]
    assert reached == [expected]


def test_an_import_cycle_that_names_no_def_converts():
    # tensorflow/tpu's models/ has such cycles: every file failed with "nested too deeply".
    sources = {
        "a": "import tensorflow as tf\nfrom b import helper\n\n"
             "def model_fn(features, labels, mode, params):\n    return helper(features)\n",
        "b": "from a import helper as unused\nfrom c import helper\n",
        "c": "from b import helper\n",
    }
    results = convert.convert_sources(sources)
    assert set(results) == set(sources)


@pytest.mark.parametrize(
    "before, after",
    [
        (  # ALBERT, cifar_keras, EfficientNet, SqueezeNet
            "from tensorflow.contrib import cluster_resolver as contrib_cluster_resolver\n\n"
            "def main():\n"
            "    return contrib_cluster_resolver.TPUClusterResolver(FLAGS.tpu, zone=FLAGS.zone)\n",
            TF1_IMPORT + "\ndef main():\n    return tf1.distribute.cluster_resolver."
            "TPUClusterResolver(FLAGS.tpu, zone=FLAGS.zone)\n",
        ),
        (
            "import tensorflow.compat.v1 as tf\n\n"
            "def main():\n"
            "    return tf.distribute.cluster_resolver.TPUClusterResolver(tpu=FLAGS.tpu)\n",
            TF1_IMPORT + "\ndef main():\n    return tf1.distribute.cluster_resolver."
            "TPUClusterResolver(tpu=FLAGS.tpu)\n",
        ),
        (  # DCGAN, EfficientNet
            "from tensorflow.python.estimator import estimator\n\n"
            "def main():\n"
            "    return estimator._load_global_step_from_checkpoint_dir(FLAGS.model_dir)\n",
            "import keras_tpu_estimator as kte\n\ndef main():\n"
            "    return kte.checkpoint.load_global_step_from_checkpoint_dir(FLAGS.model_dir)\n",
        ),
        (  # ALBERT's STS-B metric_fn
            "from tensorflow.contrib import metrics as contrib_metrics\n\n"
            "def metric_fn(logits):\n"
            "    return contrib_metrics.streaming_concat(logits)\n",
            TF1_IMPORT + "\ndef metric_fn(logits):\n"
            "    return tf1.contrib.metrics.streaming_concat(logits)\n",
        ),
        (  # cifar_keras
            "from tensorflow.contrib import keras as contrib_keras\n\n"
            "def model_fn(features):\n"
            "    return contrib_keras.layers.Dense(2)(features)\n",
            "import keras\n\ndef model_fn(features):\n"
            "    return keras.layers.Dense(2)(features)\n",
        ),
    ],
)
def test_an_import_whose_every_use_was_rewritten_goes(before, after):
    result = convert.convert_source(before)
    assert result.source == after
    assert not result.errors


@pytest.mark.parametrize("module", ["train", "estimator"])
@pytest.mark.parametrize(
    "name",
    ["SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues",
     "StopAtStepHook", "LoggingTensorHook", "NanTensorHook", "NanLossDuringTrainingError",
     "CheckpointSaverListener"],
)
def test_hooks_map_to_kte_under_tf_train_and_tf_estimator(module, name):
    source = f"import tensorflow.compat.v1 as tf\n\nhook = tf.{module}.{name}\n"
    result = convert.convert_source(source)
    assert result.source == f"import keras_tpu_estimator as kte\n\nhook = kte.{name}\n"
    assert hasattr(kte, name)


@pytest.mark.parametrize(
    "imports, use",
    [
        ("import tensorflow as tf", "tf.contrib.keras.layers.Conv2D"),
        ("import tensorflow.compat.v1 as tf", "tf.contrib.keras.layers.Conv2D"),
        ("from tensorflow.contrib import keras as contrib_keras", "contrib_keras.layers.Conv2D"),
        ("from tensorflow.contrib import keras", "keras.layers.Conv2D"),
        ("from tensorflow.contrib.keras import layers", "layers.Conv2D"),
        ("from tensorflow.contrib import keras as contrib_keras\nlayers = contrib_keras.layers",
         "layers.Conv2D"),
    ],
)
def test_tf_contrib_keras_becomes_keras(imports, use):
    source = f"{imports}\n\ndef model_fn(features):\n    return {use}(8, 3)(features)\n"
    result = convert.convert_source(source)
    assert result.source == (
        "import keras\n\ndef model_fn(features):\n"
        "    return keras.layers.Conv2D(8, 3)(features)\n"
    )
    assert not result.errors


def test_contrib_keras_takes_a_free_name_when_keras_is_taken():
    source = (
        "from tensorflow.contrib import keras as contrib_keras\n\n"
        "def model_fn(keras):\n    return contrib_keras.layers.Dense(keras)\n"
    )
    assert convert.convert_source(source).source == (
        "import keras as keras_\n\ndef model_fn(keras):\n"
        "    return keras_.layers.Dense(keras)\n"
    )


INPUT_FN = """\
{imports}


def input_fn(params):
    ds = tf.data.Dataset.range(8).batch(2)
    return {before}
"""


@pytest.mark.parametrize(
    "imports, before, after",
    [
        ("import tensorflow as tf", "ds.make_one_shot_iterator().get_next()",
         "tf.compat.v1.data.make_one_shot_iterator(ds).get_next()"),
        ("import tensorflow as tf", "ds.make_initializable_iterator()",
         "tf.compat.v1.data.make_initializable_iterator(ds)"),
        ("import tensorflow.compat.v1 as tf", "ds.make_one_shot_iterator().get_next()",
         "tf.data.make_one_shot_iterator(ds).get_next()"),
        ("import tensorflow as tf", "ds.map(parse).make_one_shot_iterator()",
         "tf.compat.v1.data.make_one_shot_iterator(ds.map(parse))"),
        ("import tensorflow as tf", "tf.random_normal([2, 3])", "tf.random.normal([2, 3])"),
        ("import tensorflow as tf", "tf.random_uniform([2])", "tf.random.uniform([2])"),
        ("import tensorflow as tf", "tf.truncated_normal([2])", "tf.random.truncated_normal([2])"),
        ("import tensorflow as tf", "tf.parse_single_example(r, f)",
         "tf.io.parse_single_example(r, f)"),
        ("import tensorflow as tf", "tf.data.make_one_shot_iterator(ds)",
         "tf.compat.v1.data.make_one_shot_iterator(ds)"),
        ("import tensorflow as tf", "tf.image.resize_bilinear(x, [2, 2])",
         "tf.compat.v1.image.resize_bilinear(x, [2, 2])"),
        ("import tensorflow as tf", "tf.to_float(x)", "tf.compat.v1.to_float(x)"),
    ],
)
def test_tf1_spellings_in_input_code_become_tensorflow_2s_and_are_reported(
    imports, before, after
):
    result = convert.convert_source(INPUT_FN.format(imports=imports, before=before))
    assert result.source == INPUT_FN.format(imports=imports, before=after)
    line = INPUT_FN.format(imports=imports, before=before).splitlines().index(
        f"    return {before}") + 1
    assert [c.level for c in result.changes if c.line == line] == ["INFO"]


def test_iterator_methods_get_a_tensorflow_import_where_the_module_has_none():
    source = "def input_fn(params):\n    return params['ds'].make_one_shot_iterator()\n"
    assert convert.convert_source(source).source == (
        "import tensorflow as tf\n"
        "def input_fn(params):\n"
        "    return tf.compat.v1.data.make_one_shot_iterator(params['ds'])\n"
    )


def test_converted_tf1_input_code_runs_on_tensorflow_2():
    # DCGAN's input_fn as written for TensorFlow 1.
    source = textwrap.dedent("""\
        import tensorflow as tf


        def input_fn(params):
            dataset = tf.data.Dataset.range(12).map(lambda i: tf.cast(i, tf.float32))
            dataset = dataset.batch(params["batch_size"])
            images = dataset.make_one_shot_iterator().get_next()
            noise = tf.random_normal([params["batch_size"], 3])
            return images, noise
    """)
    namespace = {}
    exec(compile(convert.convert_source(source).source, "converted.py", "exec"), namespace)
    images, noise = namespace["input_fn"]({"batch_size": 4})
    assert images.numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert tuple(noise.shape) == (4, 3)


def test_a_contrib_import_still_used_imports_and_raises_where_used():
    source = textwrap.dedent("""\
        import tensorflow.compat.v1 as tf
        from tensorflow.contrib import gan as contrib_gan


        def model_fn(features, labels, mode, params):
            return contrib_gan.features.tensor_pool(features)
    """)
    result = convert.convert_source(source)
    assert [(c.line, c.level) for c in result.errors] == [(2, "ERROR"), (6, "ERROR")]
    assert "raises NotImplementedError where it is used" in result.errors[0].message
    namespace = {}
    exec(compile(result.source, "converted.py", "exec"), namespace)  # imports
    with pytest.raises(NotImplementedError, match="tf.contrib.gan.features"):
        namespace["model_fn"](None, None, "train", {})


@pytest.mark.parametrize(
    "use",
    ["x[:, tf.newaxis]", "x[tf.newaxis, ...]", "tf.newaxis"],
)
def test_no_warning_for_names_that_work_as_they_are(use):
    source = f"import tensorflow.compat.v1 as tf\n\ndef model_fn(x):\n    return {use}\n"
    result = convert.convert_source(source)
    assert [c for c in result.changes if c.level != "INFO"] == []


@pytest.mark.parametrize(
    "imports, use, after",
    [  # ALBERT's LAMB optimizer imports TensorFlow's internal op modules.
        ("from tensorflow.python.ops import linalg_ops", "linalg_ops.norm(x, ord=2)",
         "tf1.norm(x, ord=2)"),
        ("from tensorflow.python.ops import array_ops", "array_ops.where(x, x, x)",
         "tf1.where(x, x, x)"),
        ("from tensorflow.python.ops import math_ops", "math_ops.greater(x, 0)",
         "tf1.greater(x, 0)"),
        ("from tensorflow.python.ops import nn_ops", "nn_ops.relu(x)", "tf1.nn.relu(x)"),
    ],
)
def test_tensorflow_internal_op_modules_map_to_compat_v1(imports, use, after):
    source = f"{imports}\n\ndef model_fn(x):\n    return {use}\n"
    result = convert.convert_source(source)
    assert result.source == f"{TF1_IMPORT}\ndef model_fn(x):\n    return {after}\n"
    assert [c for c in result.changes if c.level != "INFO"] == []


@pytest.mark.parametrize("use", [
    "tf.keras.backend.set_learning_phase(True)",
    "tf.compat.v1.keras.backend.set_learning_phase(True)",
    "tf.keras.backend.learning_phase()",
])
def test_keras_backend_functions_keras_3_dropped_map_to_compat_v1(use):
    # EfficientNet sets the learning phase in model_fn; Keras 3 has no such call.
    source = f"import tensorflow as tf\n\ndef model_fn(x):\n    {use}\n    return x\n"
    result = convert.convert_source(source)
    call = use.split("backend.")[1]
    assert f"tf1.keras_backend.{call}" in result.source
    assert not result.errors


def _unsupported_cases():
    for name in sorted(names.UNSUPPORTED):
        if len(name.split(".")) > 1 and not name.endswith(("feature_column", "cluster_resolver")):
            yield name


@pytest.mark.parametrize("name", list(_unsupported_cases()))
def test_a_name_compat_v1_runs_is_never_reported_unconvertible(name):
    # One source of truth: what keras_tpu_estimator.compat.v1 exports (and
    # is not an `Unsupported` placeholder) converts, whatever the table says.
    source = f"import tensorflow.compat.v1 as tf\n\ndef model_fn(x):\n    return {name}(x)\n"
    result = convert.convert_source(source)
    if names.compat_v1_supports(name):
        assert f"return tf1.{name[3:]}(x)" in result.source and not result.errors
    else:
        assert [c.line for c in result.errors] == [4]


HOST_CODE = """\
{imports}


def vocab_from_hub(module):
    with tf.Graph().as_default():
        with tf.Session() as session:
            return session.run(module)


def model_fn(features, labels, mode, params):
    with tf.Session() as session:
        return session.run(features)
"""


@pytest.mark.parametrize(
    "imports, session",
    [("import tensorflow.compat.v1 as tf", "tf.Session"),
     ("import tensorflow as tf", "tf.compat.v1.Session")],
)
def test_code_no_model_fn_reaches_is_reported_as_possibly_host_code(imports, session):
    # ALBERT's tokenization reads its vocabulary from a Hub module in a TF1 session.
    result = convert.convert_source(HOST_CODE.format(imports=imports))
    assert f"        with {session}() as session:\n            return session.run(module)" in (
        result.source)
    by_line = {(c.line, c.level) for c in result.changes if c.level != "INFO"}
    assert by_line == {(5, "WARNING"), (6, "WARNING"), (11, "ERROR")}
    host = [c.message for c in result.changes if c.line in (5, 6) and c.level == "WARNING"]
    assert all("No model_fn reaches this code" in m or "no model_fn reaches this code" in m
               for m in host)
