"""Copies of TensorFlow's `tpu_estimator.py` that a program carries in its own tree.

Some programs vendor a fork of TensorFlow's TPUEstimator module (it defines
`class TPUEstimator(` and imports TensorFlow's TPU internals,
`tensorflow.contrib.tpu.python.*` or `tensorflow.python.tpu.*`) and import
it instead of TensorFlow's (`from models.common import tpu_estimator`).
Converted as plain code it does not import on TensorFlow 2; this library
supersedes it. Such a module is left as it is and reported, and its
importers' names are read as TensorFlow's own module: `tpu_estimator.
TPUEstimator`, `TPUEstimatorSpec`, `RunConfig`, `TPUConfig` become
`kte.TPUEstimator`, ....
"""

import ast

# What an importer's name for a vendored module stands for.
ESTIMATOR_MODULE = "tf.estimator.tpu"
# TensorFlow's TPU internals, which only TensorFlow's own tpu_estimator.py
# (and a copy of it) imports.
_TPU_INTERNALS = (
    "tensorflow.contrib.tpu.python", "tensorflow.python.tpu",
    "tensorflow_estimator.python.estimator.tpu",
)
MESSAGE = (
    "this module is a copy of TensorFlow's tpu_estimator.py (it defines TPUEstimator "
    "on TensorFlow's TPU internals), superseded by keras_tpu_estimator: the modules that "
    "import it now use kte.TPUEstimator, kte.TPUEstimatorSpec, kte.RunConfig and "
    "kte.TPUConfig. It was left as it is (it does not import on TensorFlow 2): delete it"
)


def _imports_tpu_internals(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            modules = [node.module]
        else:
            continue
        if any(m == p or m.startswith(p + ".") for m in modules for p in _TPU_INTERNALS):
            return True
    return False


def is_vendored_estimator(tree):
    """Whether module `tree` is a copy of TensorFlow's `tpu_estimator.py`."""
    defines = any(isinstance(node, ast.ClassDef) and node.name == "TPUEstimator"
                  for node in tree.body)
    return defines and _imports_tpu_internals(tree)
