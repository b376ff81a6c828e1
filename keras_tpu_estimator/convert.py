"""Converts TensorFlow 1 TPUEstimator programs to this library, source to source.

The converter reads a Python file, finds every name it reaches through
TensorFlow (`tf.layers.dense`, `tf.contrib.tpu.TPUEstimator`,
`tf.compat.v1.train.AdamOptimizer`, names imported with
`from tensorflow.contrib import tpu`, ...) and rewrites it in place:

- estimator names (`TPUEstimator`, `TPUEstimatorSpec`, `RunConfig`,
  `TPUConfig`, `InputPipelineConfig`, `ModeKeys`, export outputs, hooks)
  become `kte.*` (`import keras_tpu_estimator as kte`);
- model-side TensorFlow 1 names (layers, `nn`, `losses`, `metrics`, `train`,
  `tpu`, variable scopes, tensor ops) become `tf1.*`
  (`import keras_tpu_estimator.compat.v1 as tf1`), the TF1-shaped API that
  runs inside a JAX-traced `model_fn`;
- the input pipeline stays on TensorFlow: `tf.data`, and every `tf.` name in
  an `input_fn` or a serving receiver function (a function whose name
  contains `input_fn` or `serving_input`), in a function it uses, or in a
  function given to a dataset transformation (`map`, `filter`, `flat_map`,
  `interleave`, `apply`). TF1 names that TensorFlow 2 moved
  (`tf.parse_single_example`, `tf.logging`, ...) get their TF 2 spelling, and
  `tensorflow.contrib` imports that nothing uses any more are dropped.

Edits are computed from the syntax tree's node positions and applied to the
original text, so comments and formatting survive. The needed imports are
added once, just before the first TensorFlow import (importing TensorFlow
first would make Keras pick its TensorFlow backend). Converting the output
again changes nothing.

Calls with no equivalent here (feature columns, `py_func`,
`outside_compilation`, sessions, placeholders, ...) are left as they are and
reported as errors with the alternative to use, like `tf_upgrade_v2` does.

```shell
keras-tpu-estimator convert train.py -o train_kte.py
python -m keras_tpu_estimator.convert train.py -o train_kte.py --report report.txt
```

```python
from keras_tpu_estimator import convert

result = convert.convert_source(source, filename="train.py")
result.source      # the converted program
result.changes     # [Change(line=12, col=4, level='INFO', message=...), ...]
```
"""

import argparse
import ast
import collections
import os
import sys
import tempfile

KTE_IMPORT = "import keras_tpu_estimator as kte"
TF1_IMPORT = "import keras_tpu_estimator.compat.v1 as tf1"

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
    "tf.estimator.SessionRunHook": "kte.SessionRunHook",
    "tf.train.SessionRunHook": "kte.SessionRunHook",
    "tf.train.SessionRunArgs": "kte.SessionRunArgs",
    "tf.train.StopAtStepHook": "kte.StopAtStepHook",
    "tf.train.LoggingTensorHook": "kte.LoggingTensorHook",
    "tf.train.NanTensorHook": "kte.NanTensorHook",
    "tf.train.NanLossDuringTrainingError": "kte.NanLossDuringTrainingError",
    "tf.train.CheckpointSaverListener": "kte.CheckpointSaverListener",
    "tf.train.latest_checkpoint": "kte.checkpoint.latest_checkpoint",
    "tf.train.list_variables": "kte.checkpoint.list_variables",
    "tf.train.load_variable": "kte.checkpoint.load_variable",
    "tf.contrib.distribute.TPUStrategy": "kte.TPUStrategy",
    "tf.distribute.experimental.TPUStrategy": "kte.TPUStrategy",
}

# What `keras_tpu_estimator.compat.v1` provides, by TF1 module ("" is `tf.`).
# Model-side names found here become `tf1.<module>.<name>`.
TF1_NAMES = {
    "": """
        AUTO_REUSE GraphKeys variable_scope name_scope get_variable
        get_collection add_to_collection control_dependencies
        trainable_variables global_variables gradients clip_by_global_norm
        global_norm assign assign_add identity group no_op stop_gradient
        float16 bfloat16 float32 float64 int32 int64 bool
        constant zeros ones zeros_like ones_like range shape reshape cast
        to_float to_int32 one_hot argmax reduce_mean reduce_sum reduce_max
        reduce_min matmul einsum concat stack squeeze expand_dims transpose
        where gather sqrt rsqrt exp log pow square abs maximum minimum tanh
        sigmoid equal greater less logical_and add_n multiply subtract
        divide
        truncated_normal_initializer zeros_initializer ones_initializer
        constant_initializer random_normal_initializer
        glorot_uniform_initializer variance_scaling_initializer slice""",
    "layers": """
        dense conv2d max_pooling2d average_pooling2d batch_normalization
        dropout flatten""",
    "nn": """
        relu relu6 gelu tanh sigmoid softmax log_softmax bias_add dropout
        l2_loss embedding_lookup moments in_top_k
        sparse_softmax_cross_entropy_with_logits
        softmax_cross_entropy_with_logits
        softmax_cross_entropy_with_logits_v2
        sigmoid_cross_entropy_with_logits""",
    "losses": """
        sparse_softmax_cross_entropy softmax_cross_entropy mean_squared_error
        get_regularization_loss""",
    "metrics": """
        accuracy mean auc precision recall mean_squared_error
        root_mean_squared_error mean_absolute_error""",
    "estimator": "ModeKeys",
    "summary": "scalar histogram",
    "contrib.layers": "layer_norm",
    "contrib.summary": """
        create_file_writer always_record_summaries
        record_summaries_every_n_global_steps scalar histogram
        all_summary_ops""",
    "train": """
        Optimizer GradientDescentOptimizer MomentumOptimizer AdamOptimizer
        RMSPropOptimizer get_or_create_global_step get_global_step
        exponential_decay polynomial_decay piecewise_constant
        ExponentialMovingAverage init_from_checkpoint Scaffold""",
    "tpu": "CrossShardOptimizer cross_replica_sum bfloat16_scope",
}

# TensorFlow names that keep working where they are (input pipelines, files).
TF_KEPT = (
    "tf.data", "tf.io", "tf.errors", "tf.saved_model",
    "tf.TensorShape", "tf.TensorSpec", "tf.compat.v2",
)

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
    "tf.contrib.data": "tf.data.experimental",
    "tf.placeholder": "tf.compat.v1.placeholder",
    "tf.py_func": "tf.compat.v1.py_func",
}

# Calls with no equivalent here: what to do instead. Names in
# `_INPUT_SIDE_OK` are fine inside an input pipeline.
UNSUPPORTED = {
    "tf.feature_column": (
        "feature columns are not supported; transform features in input_fn "
        "with tf.data (or Keras preprocessing layers) and feed dense tensors"
    ),
    "tf.contrib.feature_column": (
        "feature columns are not supported; transform features in input_fn "
        "with tf.data and feed dense tensors"
    ),
    "tf.py_func": (
        "model_fn is traced by JAX: move host Python work into input_fn or "
        "host_call, or use jax.pure_callback"
    ),
    "tf.py_function": (
        "model_fn is traced by JAX: move host Python work into input_fn or "
        "host_call, or use jax.pure_callback"
    ),
    "tf.numpy_function": (
        "model_fn is traced by JAX: move host Python work into input_fn or "
        "host_call, or use jax.pure_callback"
    ),
    "tf.tpu.outside_compilation": (
        "move the host computation into host_call (run on the host after "
        "each on-device loop) or use jax.experimental.io_callback"
    ),
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
        "kte.checkpoint"
    ),
    "tf.placeholder": (
        "no graph placeholders in model_fn: feed data through input_fn; for "
        "serving, create them in serving_input_receiver_fn (it runs on TensorFlow)"
    ),
    "tf.estimator.Estimator": (
        "use kte.TPUEstimator(model_fn, ..., use_tpu=False) with "
        "train/eval/predict batch sizes; model_fn gets params['batch_size']"
    ),
    "tf.estimator.train_and_evaluate": (
        "alternate estimator.train(input_fn, max_steps=...) and "
        "estimator.evaluate(input_fn)"
    ),
    "tf.estimator.TrainSpec": "alternate estimator.train and estimator.evaluate",
    "tf.estimator.EvalSpec": "alternate estimator.train and estimator.evaluate",
    "tf.contrib.cluster_resolver": (
        "JAX finds the devices itself: drop the resolver and RunConfig's "
        "cluster argument"
    ),
    "tf.distribute.cluster_resolver": (
        "JAX finds the devices itself: drop the resolver and RunConfig's "
        "cluster argument"
    ),
    "tf.disable_v2_behavior": "remove it: input pipelines run on TensorFlow 2",
    "tf.enable_eager_execution": "remove it: TensorFlow 2 is eager already",
    "tf.estimator.tpu.experimental.EmbeddingConfigSpec": (
        "TPU embeddings are not supported; use keras.layers.Embedding"
    ),
}
_INPUT_SIDE_OK = ("tf.py_func", "tf.py_function", "tf.numpy_function", "tf.placeholder")

# TF1 spellings folded onto one canonical name before lookup.
_CONTRIB_TPU_ESTIMATOR_NAMES = (
    "TPUEstimator", "TPUEstimatorSpec", "RunConfig", "TPUConfig", "InputPipelineConfig",
)

# Dataset transformations whose function arguments belong to the input pipeline.
_DATASET_FUNCTION_METHODS = frozenset(
    ["map", "filter", "flat_map", "interleave", "apply", "map_and_batch",
     "parallel_interleave", "from_generator"]
)


def _tf1_table():
    table = {}
    for module, names in TF1_NAMES.items():
        for name in names.split():
            path = f"{module}.{name}" if module else name
            table[f"tf.{path}"] = f"tf1.{path}"
    return table


TF1_TABLE = _tf1_table()
_TF1_MODULES = tuple(f"tf.{module}" for module in TF1_NAMES if module)

Change = collections.namedtuple("Change", ["line", "col", "level", "message"])
Change.__doc__ = """One entry of the report: `level` is INFO, WARNING or ERROR."""


class ConversionResult(collections.namedtuple("ConversionResult", ["source", "changes"])):
    """The converted source and the report of what was changed or not."""

    @property
    def errors(self):
        """The changes of level ERROR: calls left for a person to convert."""
        return [c for c in self.changes if c.level == "ERROR"]


def _normalize(name):
    """Folds the spellings of one TF1 name onto one: `tf.compat.v1.x` -> `tf.x`."""
    if name == "tensorflow" or name.startswith("tensorflow."):
        name = "tf" + name[len("tensorflow"):]
    if name == "tf.compat.v1" or name.startswith("tf.compat.v1."):
        name = "tf" + name[len("tf.compat.v1"):]
    if name.startswith("tf.contrib.tpu."):
        member = name[len("tf.contrib.tpu."):].split(".")[0]
        package = "estimator.tpu" if member in _CONTRIB_TPU_ESTIMATOR_NAMES else "tpu"
        name = f"tf.{package}." + name[len("tf.contrib.tpu."):]
    elif name == "tf.contrib.tpu":
        name = "tf.tpu"
    return name


def _in(name, prefix):
    return name == prefix or name.startswith(prefix + ".")


def _dotted(node):
    """`['tf', 'layers', 'dense']` and the chain's nodes for `tf.layers.dense`."""
    nodes = []
    while isinstance(node, ast.Attribute):
        nodes.append(node)
        node = node.value
    if not isinstance(node, ast.Name):
        return None, None
    nodes.append(node)
    nodes.reverse()
    return [nodes[0].id] + [n.attr for n in nodes[1:]], nodes


class _Aliases:
    """Local names bound to TensorFlow by the module's imports."""

    def __init__(self, tree):
        self.names = {}  # local name -> canonical dotted name ("tf.contrib.tpu")
        self.v1_root = set()  # local names bound to tensorflow.compat.v1
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if _in(alias.name, "tensorflow"):
                        local = alias.asname or alias.name.split(".")[0]
                        target = alias.name if alias.asname else "tensorflow"
                        self.names[local] = "tf" + target[len("tensorflow"):]
                        if _normalize(target) == "tf" and target != "tensorflow":
                            self.v1_root.add(local)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if _in(node.module, "tensorflow"):
                    for alias in node.names:
                        local = alias.asname or alias.name
                        full = f"{node.module}.{alias.name}"
                        self.names[local] = "tf" + full[len("tensorflow"):]
                        if _normalize("tf" + full[len("tensorflow"):]) == "tf":
                            self.v1_root.add(local)

    def resolve(self, parts):
        """The canonical TF name of a dotted chain, or None if not TensorFlow."""
        root = self.names.get(parts[0])
        if root is None:
            return None
        return ".".join([root] + parts[1:])


def _function_sides(tree):
    """The functions and lambdas that belong to the input pipeline.

    Seeds: functions whose name contains `input_fn` or `serving_input` and
    functions passed to dataset transformations; then every function they refer to by name,
    unless a `model_fn`/`metric_fn`/`host_call` function refers to it too.
    """
    functions = collections.defaultdict(list)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[node.name].append(node)

    input_seeds, model_seeds = set(), set()
    for name in functions:
        lowered = name.lower()
        if "input_fn" in lowered or "serving_input" in lowered:
            input_seeds.add(name)
        elif any(word in lowered for word in ("model_fn", "metric_fn", "host_call")):
            model_seeds.add(name)
    for node in ast.walk(tree):
        if _is_dataset_call(node):
            for arg in list(node.args) + [k.value for k in node.keywords]:
                for sub in ast.walk(arg):
                    if isinstance(sub, ast.Name) and sub.id in functions:
                        input_seeds.add(sub.id)

    def reach(seeds):
        seen, todo = set(), list(seeds)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for function in functions[name]:
                for sub in ast.walk(function):
                    if isinstance(sub, ast.Name) and sub.id in functions:
                        todo.append(sub.id)
        return seen

    model = reach(model_seeds)
    inputs = reach(input_seeds) - model
    return {id(f) for name in inputs for f in functions[name]}, {
        id(f) for name in model for f in functions[name]
    }


def _is_dataset_call(node):
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _DATASET_FUNCTION_METHODS
    )


class _Converter:
    """Collects the text edits and report entries of one module."""

    def __init__(self, source_bytes, tree):
        self.source = source_bytes
        self.line_starts = [0]
        for line in source_bytes.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))
        self.aliases = _Aliases(tree)
        self.input_functions, self.model_functions = _function_sides(tree)
        self.edits = []  # (start, end, text)
        self.changes = []
        self.uses = set()  # "kte", "tf1"
        self.still_used = set()  # import aliases that names still go through

    def offset(self, line, col):
        return self.line_starts[line - 1] + col

    def report(self, node, level, message):
        # col_offset counts UTF-8 bytes; report the character column, 1-based.
        line_text = self.source[self.line_starts[node.lineno - 1]:]
        col = len(line_text[: node.col_offset].decode("utf-8", "replace")) + 1
        self.changes.append(Change(node.lineno, col, level, message))

    def replace(self, node, text, original):
        start = self.offset(node.lineno, node.col_offset)
        end = self.offset(node.end_lineno, node.end_col_offset)
        if self.source[start:end].decode("utf-8") == text:
            return
        self.edits.append((start, end, text))
        self.report(node, "INFO", f"Renamed '{original}' to '{text}'")

    def visit(self, node, side):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if id(node) in self.input_functions:
                side = "input"
            elif id(node) in self.model_functions:
                side = "model"
        if isinstance(node, (ast.Attribute, ast.Name)) and self.visit_name(node, side):
            return
        if side == "model" and self.visit_as_list(node, side):
            return
        if _is_dataset_call(node):
            self.visit(node.func, side)
            for child in list(node.args) + list(node.keywords):
                self.visit(child, "input")
            return
        for child in ast.iter_child_nodes(node):
            self.visit(child, side)

    def visit_as_list(self, node, side):
        """`x.shape.as_list()` -> `list(x.shape)`: JAX shapes are tuples."""
        if not (
            isinstance(node, ast.Call)
            and not node.args
            and not node.keywords
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "as_list"
        ):
            return False
        shape = node.func.value
        if isinstance(shape, ast.Attribute) and shape.attr == "shape":
            tensor = shape.value
        elif (
            isinstance(shape, ast.Call)
            and not shape.args
            and not shape.keywords
            and isinstance(shape.func, ast.Attribute)
            and shape.func.attr == "get_shape"
        ):
            tensor = shape.func.value
        else:
            return False
        start = self.offset(node.lineno, node.col_offset)
        tensor_end = self.offset(tensor.end_lineno, tensor.end_col_offset)
        end = self.offset(node.end_lineno, node.end_col_offset)
        original = self.source[start:end].decode("utf-8")
        self.edits.append((start, start, "list("))
        self.edits.append((tensor_end, end, ".shape)"))
        tensor_text = self.source[start:tensor_end].decode("utf-8")
        self.report(node, "INFO", f"Rewrote '{original}' to 'list({tensor_text}.shape)'")
        self.visit(tensor, side)
        return True

    def visit_name(self, node, side):
        """Rewrites or reports a TensorFlow name; False if `node` is not one."""
        parts, chain = _dotted(node)
        if parts is None or self.aliases.resolve(parts) is None:
            return False
        if not self.rewrite_name(node, parts, chain, side):
            self.still_used.add(parts[0])
        return True

    def rewrite_name(self, node, parts, chain, side):
        """Rewrites or reports one name; True if it no longer uses its import."""
        full = _normalize(self.aliases.resolve(parts))
        root = parts[0]
        # The longest prefix of the chain that a table knows decides.
        for length in range(len(parts), 0, -1):
            raw = self.aliases.resolve(parts[:length])
            name = _normalize(raw)
            prefix_node = chain[length - 1]
            original = ".".join(parts[:length])
            if name in KTE_NAMES:
                self.uses.add("kte")
                self.replace(prefix_node, KTE_NAMES[name], original)
                return True
            if name in UNSUPPORTED and not (side == "input" and name in _INPUT_SIDE_OK):
                self.report(node, "ERROR", f"'{full}' cannot be converted: {UNSUPPORTED[name]}")
                return False
            if side == "model" and name in TF1_TABLE:
                self.uses.add("tf1")
                self.replace(prefix_node, TF1_TABLE[name], original)
                return True
            if name in TF2_MOVES:
                if root not in self.aliases.v1_root and self.aliases.names[root] == "tf":
                    target = root + TF2_MOVES[name][len("tf"):]
                    self.replace(prefix_node, target, original)
                return False
            if any(_in(name, kept) for kept in TF_KEPT):
                return False
        if _in(full, "tf.contrib"):
            self.report(node, "ERROR", f"'{full}' has no equivalent in keras_tpu_estimator")
        elif side == "model" and full != "tf":
            if any(_in(full, module) for module in _TF1_MODULES):
                module = next(m for m in _TF1_MODULES if _in(full, m))
                self.report(
                    node, "ERROR",
                    f"'{full}' is not in keras_tpu_estimator.compat.v1 "
                    f"('{'tf1' + module[2:]}' has: {TF1_NAMES[module[3:]].split()!r}); "
                    "rewrite it with keras.ops / keras.layers",
                )
            elif _in(full, "tf.estimator"):
                self.report(node, "ERROR", f"'{full}' has no equivalent in keras_tpu_estimator")
            else:
                self.report(
                    node, "WARNING",
                    f"'{full}' left on TensorFlow: model_fn is traced by JAX, "
                    "so TensorFlow ops cannot run there; rewrite it with keras.ops",
                )
        return False

    def remove_gone_imports(self, tree):
        """Drops top-level imports of `tensorflow.contrib` once nothing uses them.

        TensorFlow 2 has no `tf.contrib`: such an import would fail. One whose
        names are still used after conversion is reported instead.
        """
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                module = node.module
                locals_ = [a.asname or a.name for a in node.names]
            elif isinstance(node, ast.Import):
                module = node.names[0].name
                locals_ = [a.asname or a.name.split(".")[0] for a in node.names]
            else:
                continue
            if not (_in(module, "tensorflow.contrib") and all(
                _in(self.aliases.names.get(local, ""), "tf.contrib") for local in locals_
            )):
                continue
            statement = ast.get_source_segment(self.source.decode("utf-8"), node)
            if any(local in self.still_used for local in locals_):
                self.report(
                    node, "ERROR",
                    f"'{statement}' fails on TensorFlow 2 (no tf.contrib): "
                    "convert the remaining uses of its names, then remove it",
                )
                continue
            start = self.line_starts[node.lineno - 1]
            end = self.line_starts[node.end_lineno]
            self.edits.append((start, end, ""))
            self.report(node, "INFO", f"Removed '{statement}': nothing uses it after conversion")

    def add_imports(self, tree):
        present = set()
        first_tf_import, last_import = None, None
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                last_import = node
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name == "keras_tpu_estimator" and alias.asname == "kte":
                            present.add("kte")
                        if alias.name == "keras_tpu_estimator.compat.v1" and alias.asname == "tf1":
                            present.add("tf1")
                        if _in(alias.name, "tensorflow"):
                            first_tf_import = first_tf_import or node
                elif node.module and _in(node.module, "tensorflow"):
                    first_tf_import = first_tf_import or node
        lines = [
            statement
            for key, statement in (("kte", KTE_IMPORT), ("tf1", TF1_IMPORT))
            if key in self.uses and key not in present
        ]
        if not lines:
            return
        if first_tf_import is not None:
            position = self.line_starts[first_tf_import.lineno - 1]
            line = first_tf_import.lineno
        elif last_import is not None:
            position = self.line_starts[last_import.end_lineno]
            line = last_import.end_lineno + 1
        else:
            position, line = self._after_docstring(tree)
        newline = b"\r\n" if b"\r\n" in self.source else b"\n"
        if position == len(self.source) and not self.source.endswith(newline):
            text = newline.decode() + "".join(s + newline.decode() for s in lines)
        else:
            text = "".join(s + newline.decode() for s in lines)
        self.edits.append((position, position, text))
        for statement in lines:
            self.changes.append(Change(line, 1, "INFO", f"Added '{statement}'"))

    def _after_docstring(self, tree):
        body = tree.body
        index = 0
        if body and isinstance(body[0], ast.Expr) and isinstance(
            getattr(body[0], "value", None), ast.Constant
        ) and isinstance(body[0].value.value, str):
            index = 1
        while index < len(body) and isinstance(body[index], ast.ImportFrom) and (
            body[index].module == "__future__"
        ):
            index += 1
        if index == 0:
            return 0, 1
        end = body[index - 1].end_lineno
        return self.line_starts[end], end + 1

    def apply(self):
        result = self.source
        for start, end, text in sorted(self.edits, reverse=True):
            result = result[:start] + text.encode("utf-8") + result[end:]
        return result.decode("utf-8")


def convert_source(source, filename="<string>"):
    """Converts the text of one TF1 TPUEstimator program.

    Args:
        source: the program's Python source, a `str`.
        filename: the name used in error messages.

    Returns:
        A `ConversionResult`: `source`, the converted text, and `changes`,
        the report entries (`Change(line, col, level, message)`, lines and
        1-based columns of the input), sorted by position.

    Raises:
        TypeError: if `source` is not a string.
        SyntaxError: if `source` is not valid Python.

    Example:

    >>> convert_source("import tensorflow as tf\\nx = tf.layers.dense(y, 2)\\n").source
    'import keras_tpu_estimator.compat.v1 as tf1\\nimport tensorflow as tf\\nx = tf1.layers.dense(y, 2)\\n'
    """
    if not isinstance(source, str):
        raise TypeError(
            f"`source` must be the program text, a str. Received: source={source!r:.80}"
        )
    tree = ast.parse(source, filename=filename)
    converter = _Converter(source.encode("utf-8"), tree)
    converter.visit(tree, "model")
    converter.remove_gone_imports(tree)
    converter.add_imports(tree)
    changes = sorted(converter.changes, key=lambda c: (c.line, c.col))
    return ConversionResult(converter.apply(), changes)


def _read(path):
    if not os.path.isfile(path):
        raise FileNotFoundError(f"`input_path` must be an existing Python file. Received: {path!r}")
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"`input_path` {path!r} is not UTF-8 text: {e}") from None


def convert_file(input_path, output_path):
    """Converts one file; the output is written whole or not at all.

    Args:
        input_path: the TF1 program.
        output_path: where the converted program goes (may equal
            `input_path`). Written to a temporary name in the same directory,
            then renamed.

    Returns:
        The `ConversionResult`.

    Raises:
        FileNotFoundError: if `input_path` is not a file or the directory of
            `output_path` does not exist.
        SyntaxError: if the input is not valid Python.
    """
    source = _read(input_path)
    directory = os.path.dirname(os.path.abspath(output_path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            f"The directory of `output_path` must exist. Received: output_path={output_path!r}"
        )
    result = convert_source(source, filename=input_path)
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".convert-", suffix=".py")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(result.source)
        if os.path.exists(input_path):
            os.chmod(temporary, os.stat(input_path).st_mode & 0o777)
        os.replace(temporary, output_path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
    return result


def format_report(result, input_path, output_path):
    """The report of one conversion, in the style of `tf_upgrade_v2`.

    Every line names `input_path:line:col`, its level and what happened.
    """
    counts = collections.Counter(c.level for c in result.changes)
    lines = [
        f"Converted {input_path!r} to {output_path!r}",
        f"{counts['INFO']} changes, {counts['WARNING']} warnings, "
        f"{counts['ERROR']} errors (calls left for you to convert)",
        "-" * 79,
    ]
    for change in result.changes:
        lines.append(f"{input_path}:{change.line}:{change.col}: {change.level}: {change.message}")
    return "\n".join(lines) + "\n"


_DESCRIPTION = "Convert a TensorFlow 1 TPUEstimator program to keras_tpu_estimator."


def _add_arguments(parser):
    parser.add_argument("input", help="the TF1 program (a .py file)")
    parser.add_argument("-o", "--output", required=True, help="where to write the converted program")
    parser.add_argument("--report", help="also write the report to this file")
    return parser


def _run(args):
    try:
        result = convert_file(args.input, args.output)
    except (OSError, ValueError, SyntaxError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    report = format_report(result, args.input, args.output)
    sys.stdout.write(report)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            f.write(report)
    return 0


def main(argv=None):
    """`python -m keras_tpu_estimator.convert IN.py -o OUT.py [--report R]`."""
    parser = argparse.ArgumentParser(
        prog="python -m keras_tpu_estimator.convert", description=_DESCRIPTION
    )
    return _run(_add_arguments(parser).parse_args(argv))


def cli(argv=None):
    """`keras-tpu-estimator convert IN.py -o OUT.py [--report R]`."""
    parser = argparse.ArgumentParser(prog="keras-tpu-estimator")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_arguments(commands.add_parser("convert", help=_DESCRIPTION, description=_DESCRIPTION))
    return _run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
