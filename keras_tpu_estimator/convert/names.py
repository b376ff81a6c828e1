"""What each TensorFlow name becomes: the converter's tables.

Every name a program reaches through TensorFlow is first folded onto one
canonical spelling (`tf.compat.v1.layers.dense` and
`tf.contrib.tpu.TPUEstimator` become `tf.layers.dense` and
`tf.estimator.tpu.TPUEstimator`), then looked up here:

- `KTE_NAMES`: estimator-level names, rewritten to `kte.*` everywhere;
- `compat_v1_has(path)`: model-side names that
  `keras_tpu_estimator.compat.v1` exports. This is derived from the package
  itself, so the converter and the runtime cannot disagree;
- `TF2_MOVES`: TF1 names that TensorFlow 2 spells differently, rewritten
  where the program uses the TensorFlow 2 namespace;
- `UNSUPPORTED`: calls with no equivalent, reported with what to do instead;
- `HOST_SAFE`: TensorFlow names that run on the host and keep working as
  they are (protocol buffers, files, logging, `tf.data`), never reported.
"""

import functools
import importlib
import types

from keras_tpu_estimator.convert import stand_ins
KTE = "kte"
TF1 = "tf1"
KTE_MODULE = "keras_tpu_estimator"
TF1_MODULE = "keras_tpu_estimator.compat.v1"

# Estimator-level names, rewritten wherever they appear.
KTE_NAMES = {
    "tf.estimator.tpu.TPUEstimator": "kte.TPUEstimator",
    "tf.estimator.tpu.TPUEstimatorSpec": "kte.TPUEstimatorSpec",
    "tf.estimator.tpu.RunConfig": "kte.RunConfig",
    "tf.estimator.tpu.TPUConfig": "kte.TPUConfig",
    "tf.estimator.tpu.InputPipelineConfig": "kte.InputPipelineConfig",
    "tf.estimator.RunConfig": "kte.RunConfig",
    "tf.estimator.ModeKeys": "kte.ModeKeys",
    "tf.estimator.EstimatorSpec": "kte.EstimatorSpec",
    "tf.estimator.Estimator": "kte.Estimator",
    "tf.estimator.train_and_evaluate": "kte.train_and_evaluate",
    "tf.estimator.TrainSpec": "kte.TrainSpec",
    "tf.estimator.EvalSpec": "kte.EvalSpec",
    "tf.estimator.Exporter": "kte.Exporter",
    "tf.estimator.WarmStartSettings": "kte.WarmStartSettings",
    "tf.estimator.export.PredictOutput": "kte.PredictOutput",
    "tf.estimator.export.ClassificationOutput": "kte.ClassificationOutput",
    "tf.estimator.export.RegressionOutput": "kte.RegressionOutput",
    "tf.estimator.export.ServingInputReceiver": "kte.export.ServingInputReceiver",
    "tf.estimator.export.TensorServingInputReceiver": "kte.export.TensorServingInputReceiver",
    "tf.estimator.export.build_raw_serving_input_receiver_fn": (
        "kte.export.build_raw_serving_input_receiver_fn"
    ),
    "tf.estimator.export.build_parsing_serving_input_receiver_fn": (
        "kte.export.build_parsing_serving_input_receiver_fn"
    ),
    # TPUEstimator's private helper that real programs call (DCGAN,
    # EfficientNet: `estimator._load_global_step_from_checkpoint_dir`).
    "tf.estimator._load_global_step_from_checkpoint_dir": (
        "kte.checkpoint.load_global_step_from_checkpoint_dir"
    ),
    "tf.train.list_variables": "kte.checkpoint.list_variables",
    "tf.train.load_variable": "kte.checkpoint.load_variable",
    "tf.contrib.distribute.TPUStrategy": "kte.TPUStrategy",
    "tf.distribute.experimental.TPUStrategy": "kte.TPUStrategy",
}
# Hooks: TensorFlow 1 exports each under both `tf.train` and `tf.estimator`.
KTE_NAMES.update({
    f"tf.{module}.{name}": f"kte.{name}"
    for module in ("train", "estimator")
    for name in ("SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues",
                 "StopAtStepHook", "LoggingTensorHook", "NanTensorHook",
                 "NanLossDuringTrainingError", "CheckpointSaverListener", "CheckpointSaverHook")
})
# TPU's asynchronous saver: the estimator's writer saves on its schedule.
KTE_NAMES["tf.contrib.tpu.python.tpu.async_checkpoint.AsyncCheckpointSaverHook"] = (
    "kte.CheckpointSaverHook")

# TensorFlow modules that another module replaces whole, on every side: the
# prefix is rewritten and the rest of the name kept (`tf.contrib.keras.layers.
# Conv2D` -> `keras.layers.Conv2D`). The values are modules imported as they
# are spelled (`import keras`).
MODULE_MOVES = {
    "tf.contrib.keras": "keras",
    # Feature columns are plain descriptions used on both sides (built in
    # main, parsed in input_fn, computed in model_fn): one kind everywhere.
    "tf.feature_column": "tf1.feature_column",
    "tf.keras.layers.DenseFeatures": "tf1.feature_column.DenseFeatures",
    # Plain host Python (HParams, checkpoint iterators), used by the driver
    # code of main modules and by input pipelines (AutoAugment's HParams).
    "tf.contrib.training": "tf1.contrib.training",
    # tf.data's contrib functions (map_and_batch, parallel_interleave) moved.
    "tf.contrib.data": "tf.data.experimental",
    # contrib.image's transforms take TensorFlow tensors too (AutoAugment's
    # input pipeline) and run TensorFlow's own kernel on them.
    "tf.contrib.image": "tf1.contrib.image",
    # slim's example decoding runs on TensorFlow ops in input_fn.
    "tf.contrib.slim.tfexample_decoder": "tf1.contrib.slim.tfexample_decoder",
    "tf.contrib.slim.dataset": "tf1.contrib.slim.dataset",
    **stand_ins.EVERY_SIDE,
}

# Names that are plain Python values, fine on every side (`x[:, tf.newaxis]`).
PLAIN_VALUES = ("tf.newaxis",)

# TF1 names that TensorFlow 2 moved: rewritten on both sides.
TF2_MOVES = {
    "tf.logging": "tf.compat.v1.logging",
    "tf.app": "tf.compat.v1.app",
    "tf.flags": "tf.compat.v1.flags",
    "tf.gfile": "tf.compat.v1.gfile",
    "tf.set_random_seed": "tf.compat.v1.set_random_seed",
    "tf.parse_single_example": "tf.io.parse_single_example",
    "tf.parse_example": "tf.io.parse_example",
    "tf.FixedLenFeature": "tf.io.FixedLenFeature",
    "tf.VarLenFeature": "tf.io.VarLenFeature",
    "tf.decode_raw": "tf.io.decode_raw",
    "tf.python_io": "tf.io",
    "tf.to_float": "tf.compat.v1.to_float",
    "tf.to_int32": "tf.compat.v1.to_int32",
    "tf.to_int64": "tf.compat.v1.to_int64",
    "tf.random_uniform": "tf.random.uniform",
    "tf.random_normal": "tf.random.normal",
    "tf.truncated_normal": "tf.random.truncated_normal",
    "tf.random_shuffle": "tf.random.shuffle",
    "tf.read_file": "tf.io.read_file",
    "tf.parse_single_sequence_example": "tf.io.parse_single_sequence_example",
    "tf.TFRecordReader": "tf.compat.v1.TFRecordReader",
    "tf.contrib.data": "tf.data.experimental",
    "tf.placeholder": "tf.compat.v1.placeholder",
    "tf.py_func": "tf.compat.v1.py_func",
}

_HOST_WORK = (
    "model_fn is traced by JAX: move host Python work into input_fn or "
    "host_call, or use jax.pure_callback"
)
_NO_RESOLVER = (
    "JAX finds the devices itself: drop the resolver and RunConfig's "
    "cluster argument"
)

_SEQUENCE_COLUMNS = (
    "sequence feature columns are not supported; pad sequences in input_fn "
    "with tf.data and embed the ids with tf1.feature_column.embedding_column"
)

_TPU_EMBEDDING = (
    "TPU embedding tables with their own optimizer are not supported: build the "
    "embedding columns in model_fn (tf1.tpu.experimental.embedding_column works as "
    "under use_tpu=False) and train them with the model's optimizer"
)
_KERAS_ON_TPU = (
    "a Keras 3 model runs on TPU, GPU or CPU as it is: drop keras_to_tpu_model and "
    "the strategy (keras.distribution.set_distribution(keras.distribution."
    "DataParallel()) for data parallelism)"
)

UNSUPPORTED = {
    "tf.contrib.feature_column": _SEQUENCE_COLUMNS,
    "tf.py_func": _HOST_WORK,
    "tf.py_function": _HOST_WORK,
    "tf.numpy_function": _HOST_WORK,
    "tf.tpu.rewrite": "model_fn is compiled for the devices already; call it directly",
    "tf.Session": (
        "there are no sessions; run with kte.TPUEstimator train/evaluate/"
        "predict or kte.EstimatorModel fit/evaluate/predict"
    ),
    "tf.InteractiveSession": "there are no sessions; see kte.TPUEstimator",
    "tf.train.MonitoredTrainingSession": (
        "there are no sessions; use kte.TPUEstimator.train with hooks"
    ),
    "tf.train.Saver": (
        "kte.TPUEstimator writes checkpoints into model_dir; read them with "
        "kte.checkpoint, start from one with warm_start_from"
    ),
    "tf.placeholder": (
        "no graph placeholders in model_fn: feed data through input_fn; for "
        "serving, create them in serving_input_receiver_fn (it runs on TensorFlow)"
    ),
    "tf.contrib.cluster_resolver": _NO_RESOLVER,
    "tf.distribute.cluster_resolver": _NO_RESOLVER,
    **{f"tf.contrib.slim.{name}": (
        "slim's queue-runner readers have no TensorFlow 2 equivalent: read the files with "
        "tf.data (list_files -> TFRecordDataset -> map(decoder.decode)) in input_fn"
    ) for name in ("dataset_data_provider", "parallel_reader", "prefetch_queue", "queues")},
    "tf.estimator.tpu.experimental.EmbeddingConfigSpec": _TPU_EMBEDDING,
    "tf.tpu.experimental.AdagradParameters": _TPU_EMBEDDING,
    "tf.tpu.experimental.AdamParameters": _TPU_EMBEDDING,
    "tf.tpu.experimental.StochasticGradientDescentParameters": _TPU_EMBEDDING,
    # Keras on TPU before TF 2 (tf.contrib.tpu): Keras 3 models run on TPUs as they are.
    "tf.tpu.keras_to_tpu_model": _KERAS_ON_TPU,
    "tf.tpu.TPUDistributionStrategy": _KERAS_ON_TPU,
    "tf.contrib.distribute.AllReduceCrossDeviceOps": (
        "XLA reduces the gradients over the devices of the mesh itself: drop "
        "cross_device_ops and the MirroredStrategy (RunConfig(train_distribute=...) has "
        "no effect here)"
    ),
    "tf.contrib.cloud": (
        "Cloud Bigtable clients have no TensorFlow 2 equivalent: read the rows in input_fn "
        "with the google-cloud-bigtable client (tf.data.Dataset.from_generator) or export "
        "them to TFRecord files"
    ),
    "tf.contrib.tensorrt": (
        "TensorRT rewrites a TensorFlow graph, and model_fn builds none: export with "
        "estimator.export_saved_model and convert the SavedModel with TF-TRT "
        "(tf.experimental.tensorrt.Converter)"
    ),
    # Graph rewrites and graph files: model_fn is traced by JAX, not a TensorFlow graph.
    "tf.contrib.quantize": (
        "quantization-aware training rewrites a TensorFlow graph, and model_fn builds none: "
        "remove create_training_graph/create_eval_graph and train in float; quantize "
        "after training (Keras 3's model.quantize('int8'), or TFLite post-training "
        "quantization of the exported SavedModel)"
    ),
    "tf.train.write_graph": (
        "model_fn builds no TensorFlow graph to write: export the model with "
        "estimator.export_saved_model; to inspect the compiled step, print "
        "jax.jit(fn).lower(...).as_text()"
    ),
    "tf.train.batch": (
        "TF1 input queues need sessions and queue runners: in input_fn, batch a "
        "tf.data.Dataset instead (dataset.batch(params['batch_size'], drop_remainder=True))"
    ),
}

UNSUPPORTED.update({
    f"tf.feature_column.sequence_{name}": _SEQUENCE_COLUMNS for name in (
        "numeric_column", "categorical_column_with_identity",
        "categorical_column_with_hash_bucket", "categorical_column_with_vocabulary_list",
        "categorical_column_with_vocabulary_file")
})

# Fine where they are in an input pipeline or on the host.
INPUT_SIDE_OK = ("tf.py_func", "tf.py_function", "tf.numpy_function", "tf.placeholder")

# Unsupported in model_fn, but TensorFlow 2 runs them on the host (through
# `tf.compat.v1`): in code no model_fn reaches, a warning, not an error.
HOST_RUNS = INPUT_SIDE_OK + (
    "tf.Session", "tf.InteractiveSession", "tf.train.Saver", "tf.train.MonitoredTrainingSession",
)

# Calls that switch TensorFlow's own behaviour: statements of them are removed.
BEHAVIOUR_SWITCHES = frozenset(
    "tf." + name
    for name in """
        disable_v2_behavior enable_v2_behavior disable_eager_execution
        enable_eager_execution disable_v2_tensorshape enable_v2_tensorshape
        enable_resource_variables disable_resource_variables
        enable_control_flow_v2 disable_control_flow_v2""".split()
)

# Calls that connect to and initialize TPU devices for TensorFlow: statements
# of them are removed too (JAX initializes the devices on first use; the
# resolver they take answers as a local run).
DEVICE_SETUP = frozenset((
    "tf.tpu.experimental.initialize_tpu_system",
    "tf.contrib.distribute.initialize_tpu_system",
    "tf.config.experimental_connect_to_cluster",
    "tf.config.experimental_connect_to_host",
))

# TensorFlow names that run on the host and keep working where they are.
HOST_SAFE = tuple(
    "tf." + name
    for name in """
        data io errors saved_model TensorShape TensorSpec compat keras
        gfile logging flags app test version sysconfig python_io core
        train.Example train.Features train.Feature train.FeatureList
        train.FeatureLists train.SequenceExample train.BytesList
        train.FloatList train.Int64List train.ClusterSpec train.Server
        train.SecondOrStepTimer train.load_checkpoint train.summary_iterator
        train.NewCheckpointReader
        train.checkpoint_exists train.get_checkpoint_state
        train.generate_checkpoint_state_proto train.CheckpointState
        ConfigProto GraphOptions RunOptions RunMetadata OptimizerOptions
        GPUOptions make_tensor_proto make_ndarray summary.FileWriter
        summary.all_v2_summary_ops
        VERSION GIT_VERSION""".split()
)


# Where estimator programs import TPUEstimator from TensorFlow's own modules.
_INTERNAL_ESTIMATOR_MODULES = (
    ("tensorflow_estimator.python.estimator.tpu.tpu_estimator", "tf.estimator.tpu"),
    ("tensorflow_estimator.python.estimator.tpu.tpu_config", "tf.estimator.tpu"),
    ("tensorflow_estimator.python.estimator.tpu", "tf.estimator.tpu"),
    ("tensorflow_estimator.python.estimator.model_fn", "tf.estimator"),
    ("tensorflow_estimator.python.estimator.run_config", "tf.estimator"),
    ("tensorflow_estimator.python.estimator.estimator", "tf.estimator"),
    ("tensorflow_estimator.python.estimator", "tf.estimator"),
    ("tensorflow_estimator.compat.v1.estimator", "tf.estimator"),
    ("tensorflow_estimator.estimator", "tf.estimator"),
    ("tensorflow.python.estimator.estimator", "tf.estimator"),
    ("tensorflow.python.estimator", "tf.estimator"),
    ("tensorflow.contrib.tpu.python.tpu.tpu_estimator", "tf.estimator.tpu"),
    ("tensorflow.contrib.tpu.python.tpu.tpu_config", "tf.estimator.tpu"),
    ("tensorflow.python.tpu.tpu_estimator", "tf.estimator.tpu"),
    ("tensorflow.python.tpu.tpu_config", "tf.estimator.tpu"),
    ("tensorflow.python.tpu.tpu_optimizer", "tf.tpu"),
    ("tensorflow.contrib.tpu.python.tpu.tpu_optimizer", "tf.tpu"),
    # tf.contrib.training's own modules (DenseNet: `evaluation.checkpoints_iterator`).
    ("tensorflow.contrib.training.python.training.evaluation", "tf.contrib.training"),
    ("tensorflow.contrib.training.python.training.hparam", "tf.contrib.training"),
)

# TensorFlow's internal op modules, which export the TF1 functions
# (`from tensorflow.python.ops import math_ops`: ALBERT's LAMB): a name of
# theirs that compat.v1 has is that name.
_INTERNAL_OPS_MODULES = tuple(
    (f"tf.python.ops.{module}", "tf") for module in (
        "array_ops", "math_ops", "linalg_ops", "random_ops", "check_ops", "clip_ops",
        "control_flow_ops", "init_ops", "state_ops", "variable_scope", "variables")
) + tuple((f"tf.python.ops.{module}", "tf.nn") for module in ("nn", "nn_ops", "nn_impl")) + (
    # `from tensorflow.python.training import moving_averages` (AmoebaNet's batch norm).
    ("tf.python.training.moving_averages", "tf.train"),
)
# `tf.contrib`'s implementation modules, which programs import from directly
# (`from tensorflow.contrib.framework.python.ops import arg_scope`,
# `from tensorflow.contrib.layers.python.layers import layers as layers_lib`):
# each re-exports its names from the public module, so they are those names.
# Longest first.
_CONTRIB_INTERNAL_MODULES = (
    ("tf.contrib.layers.python.layers.layers", "tf.contrib.layers"),
    ("tf.contrib.layers.python.layers.initializers", "tf.contrib.layers"),
    ("tf.contrib.layers.python.layers.regularizers", "tf.contrib.layers"),
    ("tf.contrib.layers.python.layers", "tf.contrib.layers"),
    # The module `arg_scope` and its function `arg_scope` share a name: only
    # a name inside the module (`...ops.arg_scope.add_arg_scope`) is folded here.
    ("tf.contrib.framework.python.ops.arg_scope.", "tf.contrib.framework."),
    ("tf.contrib.framework.python.ops.variables.", "tf.contrib.framework."),
    ("tf.contrib.framework.python.ops", "tf.contrib.framework"),
    ("tf.contrib.training.python.training.evaluation", "tf.contrib.training"),
    ("tf.contrib.training.python.training.hparam", "tf.contrib.training"),
    ("tf.contrib.training.python.training", "tf.contrib.training"),
    # tf_slim's layout (`from tf_slim.layers import layers as layers_lib`).
    ("tf.contrib.slim.layers.layers", "tf.contrib.layers"),
    ("tf.contrib.slim.layers.initializers", "tf.contrib.layers"),
    ("tf.contrib.slim.layers.regularizers", "tf.contrib.layers"),
    ("tf.contrib.slim.layers.utils", "tf.contrib.layers"),
    ("tf.contrib.slim.layers", "tf.contrib.layers"),
    ("tf.contrib.slim.ops.arg_scope.", "tf.contrib.framework."),
    ("tf.contrib.slim.ops.variables.", "tf.contrib.framework."),
    ("tf.contrib.slim.ops", "tf.contrib.framework"),
    ("tf.contrib.slim.data.tfexample_decoder", "tf.contrib.slim.tfexample_decoder"),
    ("tf.contrib.slim.python.slim.nets.inception_v3", "tf.contrib.slim.nets.inception"),
    ("tf.contrib.slim.python.slim.nets", "tf.contrib.slim.nets"),
    ("tf.contrib.slim.python.slim.data", "tf.contrib.slim"),
    ("tf.contrib.slim.python.slim", "tf.contrib.slim"),
    ("tf.contrib.tpu.python.ops.tpu_ops", "tf.tpu"),
    ("tf.python.tpu.ops.tpu_ops", "tf.tpu"),
    ("tf.contrib.tpu.tpu", "tf.contrib.tpu"),  # AmoebaNet's contrib_tpu.tpu.TPUEstimatorSpec
    ("tf.contrib.tpu.python.tpu.bfloat16", "tf.tpu"),
    ("tf.contrib.rnn.python.ops.rnn_cell", "tf.contrib.rnn"),
    ("tf.contrib.image.python.ops.image_ops", "tf.contrib.image"),
)
_INTERNAL_OPS_MODULES += (("tf.python.framework.ops", "tf"),)
# TF1 Keras backend functions that Keras 3 dropped (`set_learning_phase`): a
# name compat.v1's `keras_backend` has is that name.
_INTERNAL_OPS_MODULES += (("tf.keras.backend", "tf.keras_backend"),)


def is_tensorflow(module):
    """Whether an imported module name is TensorFlow (or its estimator package, or
    `tf_slim`, the PyPI home of `tf.contrib.slim`)."""
    return any(is_under(module, package)
               for package in ("tensorflow", "tensorflow_estimator", "tf_slim"))


def canonical(module):
    """The name of an imported TensorFlow module, spelled `tf.*` (`tf_slim` is
    `tf.contrib.slim`)."""
    if is_under(module, "tensorflow"):
        return "tf" + module[len("tensorflow"):]
    if is_under(module, "tf_slim"):
        return "tf.contrib.slim" + module[len("tf_slim"):]
    return module


def normalize(name):
    """Folds the spellings of one TF1 name onto one: `tf.compat.v1.x` -> `tf.x`."""
    for internal, public in _INTERNAL_ESTIMATOR_MODULES:
        for spelling in (internal, "tf" + internal[len("tensorflow"):]):
            if is_under(name, spelling):
                return public + name[len(spelling):]
    if name == "tensorflow" or name.startswith("tensorflow."):
        name = "tf" + name[len("tensorflow"):]
    if is_under(name, "tf.compat.v1"):
        name = "tf" + name[len("tf.compat.v1"):]
    for internal, public in _INTERNAL_OPS_MODULES:
        if name.startswith(internal + "."):
            candidate = public + name[len(internal):]
            if compat_v1_has(candidate[3:]):
                return candidate
    for internal, public in _CONTRIB_INTERNAL_MODULES:
        if name.startswith(internal) if internal.endswith(".") else is_under(name, internal):
            name = public + name[len(internal):]
            break
    if name.startswith("tf.contrib.tpu.") and not name.startswith("tf.contrib.tpu.python"):
        member = name[len("tf.contrib.tpu."):].split(".")[0]
        estimator_names = ("TPUEstimator", "TPUEstimatorSpec", "RunConfig", "TPUConfig",
                           "InputPipelineConfig")
        package = "estimator.tpu" if member in estimator_names else "tpu"
        name = f"tf.{package}." + name[len("tf.contrib.tpu."):]
    elif name == "tf.contrib.tpu":
        name = "tf.tpu"
    return name


def is_under(name, prefix):
    """Whether dotted `name` is `prefix` or inside it."""
    return name == prefix or name.startswith(prefix + ".")


def _public(value):
    return not isinstance(value, types.ModuleType) or value.__name__.startswith(TF1_MODULE)


@functools.lru_cache(maxsize=None)
def compat_v1_has(path):
    """Whether `keras_tpu_estimator.compat.v1` exports dotted `path`.

    Only public names count, and only modules of the package itself: a
    module that `compat.v1` merely imports (`keras`, `numpy`) is not part
    of the TF1 namespace.
    """
    value = importlib.import_module(TF1_MODULE)
    for part in path.split("."):
        if not isinstance(value, types.ModuleType):
            return False  # an attribute of a class or object: its owner decides
        if part.startswith("_") or not hasattr(value, part):
            return False
        value = getattr(value, part)
        if not _public(value):
            return False
    return True


@functools.lru_cache(maxsize=None)
def compat_v1_supports(name):
    """Whether canonical `name` (`"tf.train.Saver"`) runs in `compat.v1`:
    exported, and not one of its `Unsupported` placeholders."""
    if not name.startswith("tf.") or not compat_v1_has(name[3:]):
        return False
    from keras_tpu_estimator.compat.v1 import unsupported

    value = importlib.import_module(TF1_MODULE)
    for part in name[3:].split("."):
        value = getattr(value, part)
    return not isinstance(value, unsupported.Unsupported)


@functools.lru_cache(maxsize=None)
def compat_v1_input_only(name):
    """What canonical `name` (`"tf.image.decode_jpeg"`) does with bytes strings when it is
    a `compat.v1` function of the input pipeline only (`"reads encoded image bytes"`),
    else None: model_fn cannot hold bytes, and given TensorFlow tensors the function
    runs TensorFlow's."""
    if not compat_v1_supports(name):
        return None
    value = importlib.import_module(TF1_MODULE)
    for part in name[3:].split("."):
        value = getattr(value, part)
    return getattr(value, "input_only", None)


@functools.lru_cache(maxsize=None)
def compat_v1_is_module(path):
    """Whether `keras_tpu_estimator.compat.v1`'s `path` is a module."""
    value = importlib.import_module(TF1_MODULE)
    for part in path.split("."):
        value = getattr(value, part)
    return isinstance(value, types.ModuleType)


@functools.lru_cache(maxsize=None)
def compat_v1_modules():
    """The submodules of `keras_tpu_estimator.compat.v1`, longest path first."""
    modules = [n for n in compat_v1_names() if compat_v1_is_module(n)]
    return tuple(sorted(modules, key=lambda n: (-n.count("."), n)))


def compat_v1_names():
    """Every public dotted name `keras_tpu_estimator.compat.v1` exports.

    Returns:
        A sorted list of paths relative to the package (`"layers.dense"`),
        modules and the names inside them alike.
    """
    names, seen = [], set()

    def walk(module, prefix):
        if module.__name__ in seen:
            return
        seen.add(module.__name__)
        for attribute in sorted(dir(module)):
            if attribute.startswith("_"):
                continue
            value = getattr(module, attribute)
            if not _public(value):
                continue
            path = prefix + attribute
            names.append(path)
            if isinstance(value, types.ModuleType):
                walk(value, path + ".")

    walk(importlib.import_module(TF1_MODULE), "")
    return sorted(names)


@functools.lru_cache(maxsize=None)
def is_module(name):
    """Whether canonical TensorFlow name `name` (`"tf.compat.v1"`) is a module.

    `x = tf.compat.v1` makes `x` another name for TensorFlow;
    `x = tf.estimator.ModeKeys.TRAIN` makes it a value, read like any other.
    """
    short = normalize(name)
    if short.startswith("tf.") and compat_v1_has(short[3:]):
        return compat_v1_is_module(short[3:])
    if not is_under(name, "tf"):  # tensorflow_estimator: gone from TensorFlow 2
        return all(part.islower() for part in name.split("."))
    import tensorflow  # the real one: only to tell modules from values

    value = tensorflow
    for part in name.split(".")[1:]:
        value = getattr(value, part, None)
        if value is None:
            # Gone from TensorFlow 2 (tf.contrib, tf.estimator): by its spelling.
            return all(part.islower() for part in name.split("."))
    return isinstance(value, types.ModuleType)


def module_move(name):
    """What `name` becomes when a `MODULE_MOVES` module holds it, else None.

    A name `UNSUPPORTED` lists stays where it is, to be reported.
    """
    for module, target in MODULE_MOVES.items():
        if is_under(name, module) and name not in UNSUPPORTED:
            return target + name[len(module):]
    return None


_MISSING = object()


@functools.lru_cache(maxsize=None)
def _tensorflow_has(path, v1=False):
    """Whether the installed TensorFlow has `tf.<path>` (`tf.compat.v1.<path>`)."""
    import tensorflow  # the real one: only to tell what TensorFlow 2 lacks

    value = tensorflow.compat.v1 if v1 else tensorflow
    for part in path.split("."):
        try:
            value = getattr(value, part, _MISSING)
        except Exception:  # a lazily loaded module that fails to load
            return False
        if value is _MISSING:
            return False
    return True


@functools.lru_cache(maxsize=None)
def tf2_spelling(name, compat_v1=True):
    """The TensorFlow 2 spelling of TF1 name `name` written in TF 2's namespace.

    `TF2_MOVES` decides first; otherwise, with `compat_v1`, the first prefix
    TensorFlow 2 lacks but `tf.compat.v1` has is spelled there, the very
    TF1 function (`tf.data.make_one_shot_iterator` ->
    `tf.compat.v1.data.make_one_shot_iterator`).

    Args:
        name: a canonical `tf.*` name (`"tf.random_normal"`).
        compat_v1: whether to fall back on `tf.compat.v1`.

    Returns:
        `(number of parts of the prefix rewritten, its new spelling)`, or None
        when TensorFlow 2 has the name (or nothing has it).
    """
    parts = name.split(".")
    for length in range(len(parts), 1, -1):
        prefix = ".".join(parts[:length])
        if prefix in TF2_MOVES:
            return length, TF2_MOVES[prefix]
    if not compat_v1 or is_under(name, "tf.contrib") or is_under(name, "tf.estimator"):
        return None
    for length in range(2, len(parts) + 1):
        path = ".".join(parts[1:length])
        if not _tensorflow_has(path):
            if _tensorflow_has(path, v1=True):
                return length, "tf.compat.v1." + path
            return None
    return None
