"""Converts TensorFlow 1 TPUEstimator programs to this library, source to source.

The converter reads a program (one file, or a whole source tree), finds every
name it reaches through TensorFlow, however the program named TensorFlow
(`import tensorflow.compat.v1 as tf`, `tf1 = tf.compat.v1`,
`from tensorflow.compat.v1 import estimator as tf_estimator`,
`from tensorflow.contrib import tpu as contrib_tpu`, imports in functions),
and rewrites it in place:

- estimator names (`TPUEstimator`, `TPUEstimatorSpec`, `RunConfig`,
  `TPUConfig`, `InputPipelineConfig`, `ModeKeys`, export outputs, hooks)
  become `kte.*` (`import keras_tpu_estimator as kte`);
- model-side TensorFlow 1 names that `keras_tpu_estimator.compat.v1` has
  become `tf1.*` (`import keras_tpu_estimator.compat.v1 as tf1`), the TF1
  API that runs inside a JAX-traced `model_fn`; TF1 shape idioms
  (`x.shape.ndims`, `x.shape[i].value`, `x.get_shape().as_list()`) become
  plain tuple operations;
- the input pipeline stays on TensorFlow, decided by data flow across the
  tree (see `sides`): `input_fn`s, serving receivers, functions handed to
  `Dataset.map/apply/interleave/filter` and `map_and_batch`, what they
  call, and modules only input code imports. TF1 names that TensorFlow 2
  moved (`tf.parse_single_example`, `tf.logging`) get their TF 2 spelling;
- TF1 spellings in input code that TensorFlow 2 lacks become its spelling
  (`tf.random_normal` -> `tf.random.normal`, `ds.make_one_shot_iterator()`
  -> `tf.compat.v1.data.make_one_shot_iterator(ds)`, other names
  -> `tf.compat.v1.*`); `tf.contrib.keras` becomes `keras`;
- `tf.disable_v2_behavior()` and the like are removed, TPU cluster resolvers
  become the library's local one (JAX finds the devices), slim's
  `get_data_files` its stand-in (see `stand_ins`), and imports that nothing
  uses after the conversion are removed; a `tf.contrib` import still in use
  becomes a placeholder that raises where it is used, so the module still
  imports;
- a copy of TensorFlow's `tpu_estimator.py` in the tree is superseded: left
  as it is and reported, its importers use `kte.*` (see `vendored`).

The program's own modules are followed through every form of import
(`import utils`, `import pkg.mod`, `from . import mod`, `from mod import f`)
and through re-exports (`from mod import *`, `f = mod.f`).

Calls with no equivalent here (feature columns, `py_func` in `model_fn`,
sessions, placeholders, ...) are left as they are and reported as errors
with the alternative to use, like `tf_upgrade_v2` does. Converting the
output again changes nothing.

```shell
keras-tpu-estimator convert bert/ -o bert_kte/ --report report.txt
keras-tpu-estimator convert train.py -o train_kte.py
```

```python
from keras_tpu_estimator import convert

result = convert.convert_source(source, filename="train.py")
result.source      # the converted program
result.changes     # [Change(line=12, col=4, level='INFO', message=...), ...]
```

Layering: imports no other module of the library at import time (`compat.v1`
only inside the functions that need its names); nothing imports it but
`kte.convert`.
"""

import collections

from keras_tpu_estimator.convert.files import convert_file
from keras_tpu_estimator.convert.files import convert_tree
from keras_tpu_estimator.convert.files import format_report
from keras_tpu_estimator.convert.names import KTE_NAMES  # noqa: F401
from keras_tpu_estimator.convert.names import compat_v1_names  # noqa: F401
from keras_tpu_estimator.convert import parsing
from keras_tpu_estimator.convert.rewriter import Change
from keras_tpu_estimator.convert.rewriter import ModuleRewriter
from keras_tpu_estimator.convert.sides import Sides
from keras_tpu_estimator.convert.cli import cli  # noqa: F401
from keras_tpu_estimator.convert.cli import main  # noqa: F401

__all__ = [
    "Change", "ConversionResult", "cli", "convert_file", "convert_source",
    "convert_sources", "convert_tree", "format_report", "main",
]


class ConversionResult(collections.namedtuple("ConversionResult", ["source", "changes"])):
    """The converted source and the report of what was changed or not."""

    @property
    def errors(self):
        """The changes of level ERROR: calls left for a person to convert."""
        return [c for c in self.changes if c.level == "ERROR"]


def _check_source(source):
    if not isinstance(source, str):
        raise TypeError(
            f"`source` must be the program text, a str. Received: source={source!r:.80}"
        )


def _convert(sources, trees, keys, filenames):
    """Converts the modules `keys` of one program, read with all of `trees`."""
    try:
        sides = Sides(trees)
    except RecursionError:  # `parsing.MAX_DEPTH` should prevent it.
        raise parsing.too_deep_error([filenames.get(k, k) for k in trees]) from None
    results = {}
    for key in keys:
        try:
            rewriter = ModuleRewriter(sources[key], trees[key], sides, key).run()
            source = rewriter.apply()
        except RecursionError:
            raise parsing.too_deep_error([filenames.get(key, key)]) from None
        changes = sorted(rewriter.changes, key=lambda c: (c.line, c.col))
        results[key] = ConversionResult(source, changes)
    return results


def convert_sources(sources, filenames=None):
    """Converts the modules of one program together.

    The side of each function (model, input pipeline, host) is found by
    data flow across all of them: a module that only input code imports
    stays on TensorFlow.

    Args:
        sources: `{module key: source text}`, keys being dotted module names
            relative to the program's root (`"official.resnet.imagenet_input"`).
        filenames: optional `{module key: file path}`, to name the files in
            errors (default: the keys).

    Returns:
        `{module key: ConversionResult}`.

    Raises:
        TypeError: if a source is not a string.
        SyntaxError: if a source is not valid Python.
        ValueError: if a source holds NUL bytes or nests too deeply to
            convert (see `parsing`); the message names the file.
    """
    filenames = dict(filenames or {})
    trees = {}
    for key, source in sources.items():
        _check_source(source)
        trees[key] = parsing.parse(source, filenames.get(key, key))
    return _convert(sources, trees, list(sources), filenames)


def convert_source(source, filename="<string>", context=None):
    """Converts the text of one TF1 TPUEstimator program.

    Args:
        source: the program's Python source, a `str`.
        filename: the name used in error messages.
        context: optional `{module key: source}` of the other modules of
            the program (read to decide which code is input pipeline, not
            converted; one that does not parse is left out).

    Returns:
        A `ConversionResult`: `source`, the converted text, and `changes`,
        the report entries (`Change(line, col, level, message)`, lines and
        1-based columns of the input), sorted by position.

    Raises:
        TypeError: if `source` is not a string.
        SyntaxError: if `source` is not valid Python.
        ValueError: if `source` holds NUL bytes or nests too deeply to
            convert (see `parsing`); the message names `filename`.

    Example:

    >>> convert_source("import tensorflow as tf\\nx = tf.layers.dense(y, 2)\\n").source
    'import keras_tpu_estimator.compat.v1 as tf1\\nx = tf1.layers.dense(y, 2)\\n'
    """
    _check_source(source)
    key = "<converted>"
    sources, trees = {key: source}, {key: parsing.parse(source, filename)}
    for other, text in (context or {}).items():
        try:
            trees[other] = parsing.parse(text, other)
        except (SyntaxError, ValueError):
            continue  # a broken neighbour only informs less
        sources[other] = text
    return _convert(sources, trees, [key], {key: filename})[key]
