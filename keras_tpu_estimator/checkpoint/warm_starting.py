"""Warm start: initialize a model's variables from another run's checkpoint.

As Estimator's `warm_start_from`: from a checkpoint of this library or a
TensorFlow one (a TF1 `model_dir` works as a source), selecting variables by
regex or list and renaming them, never the optimizer's or `global_step`.

```python
report = kte.checkpoint.warm_start(model, kte.checkpoint.WarmStartSettings(
    "tf1_run/model.ckpt-5000", vars_to_warm_start="encoder/.*"))
```
"""

import collections
import os
import re

import keras
import numpy as np

from keras_tpu_estimator.checkpoint.common import few
from keras_tpu_estimator.checkpoint.common import logger
from keras_tpu_estimator.checkpoint.common import short_repr
from keras_tpu_estimator.checkpoint.model_state import GLOBAL_STEP
from keras_tpu_estimator.checkpoint.readers import checkpoint_reader


class WarmStartSettings(
    collections.namedtuple(
        "WarmStartSettings",
        [
            "ckpt_to_initialize_from",
            "vars_to_warm_start",
            "var_name_to_vocab_info",
            "var_name_to_prev_var_name",
        ],
    )
):
    """Which variables to initialize from which checkpoint, as `tf.estimator.WarmStartSettings`.

    Args:
        ckpt_to_initialize_from: a checkpoint of this library, a `model_dir`
            of them (its latest), a TensorFlow checkpoint prefix, or a
            TensorFlow `model_dir` (its latest).
        vars_to_warm_start: as in TensorFlow:
            - a regex string: the trainable model variables whose name it
              matches (`re.match`, from the start) are warm-started.
              Defaults to `'.*'`, every trainable variable;
            - a list of regex strings: the model variables (trainable or
              not, e.g. BatchNormalization statistics) matching any of them;
            - a list of `keras.Variable`s of the model;
            - None: none (TensorFlow then warm-starts only the variables of
              `var_name_to_vocab_info`, which is not supported here).
            Optimizer variables and `global_step` are never warm-started.
        var_name_to_vocab_info: vocabulary remapping is not supported; must
            be None or empty.
        var_name_to_prev_var_name: a dict `model name -> name in the
            checkpoint`, for variables that were renamed.

    Raises:
        ValueError: for a non-empty `var_name_to_vocab_info`.

    Example:

    ```python
    WarmStartSettings("gs://bucket/tf1_run",
                      vars_to_warm_start=["encoder/.*", "embeddings/.*"],
                      var_name_to_prev_var_name={"head/kernel": "logits/kernel"})
    ```
    """

    def __new__(
        cls,
        ckpt_to_initialize_from,
        vars_to_warm_start=".*",
        var_name_to_vocab_info=None,
        var_name_to_prev_var_name=None,
    ):
        if var_name_to_vocab_info:
            raise ValueError(
                "Vocabulary remapping (`var_name_to_vocab_info`) is not "
                "supported by keras_tpu_estimator: remap the embedding rows "
                "yourself (load_variable, then assign). Received: "
                f"var_name_to_vocab_info={short_repr(var_name_to_vocab_info)}"
            )
        if var_name_to_prev_var_name is not None and not isinstance(
            var_name_to_prev_var_name, dict
        ):
            raise ValueError(
                "Argument `var_name_to_prev_var_name` must be None or a dict of "
                "model name to checkpoint name. Received: "
                f"var_name_to_prev_var_name={short_repr(var_name_to_prev_var_name)}"
            )
        return super().__new__(
            cls,
            ckpt_to_initialize_from,
            vars_to_warm_start,
            var_name_to_vocab_info or {},
            dict(var_name_to_prev_var_name or {}),
        )


class WarmStartReport(
    collections.namedtuple("WarmStartReport", ["matched", "unmatched", "shape_mismatched"])
):
    """What `warm_start` did.

    Attributes:
        matched: names of the model variables loaded from the checkpoint.
        unmatched: names of selected model variables whose checkpoint name
            is not in the checkpoint (left as they were).
        shape_mismatched: `(name, model_shape, checkpoint_shape)` for
            selected variables found with another shape (left as they were).
    """


def as_settings(value, argument="settings"):
    """`value` as a `WarmStartSettings`: a path means `WarmStartSettings(path)`.

    Args:
        value: a `WarmStartSettings`, or a checkpoint path (a str or
            `os.PathLike`: a checkpoint prefix or a `model_dir`).
        argument: the argument name used in error messages
            (`TPUEstimator`'s is `warm_start_from`).

    Returns:
        A `WarmStartSettings`.

    Raises:
        ValueError: for anything else, naming `argument` and the value.

    Example:

    ```python
    as_settings("tf1_run")   # WarmStartSettings("tf1_run", vars_to_warm_start=".*", ...)
    as_settings(123, "warm_start_from")   # ValueError naming warm_start_from=123
    ```
    """
    if isinstance(value, (str, os.PathLike)):
        return WarmStartSettings(os.fspath(value))
    if isinstance(value, WarmStartSettings):
        return value
    raise ValueError(
        f"Argument `{argument}` must be a checkpoint path (a str or os.PathLike: a "
        "checkpoint prefix or a model_dir) or a WarmStartSettings. Received: "
        f"{argument}={short_repr(value)} of type {type(value).__name__}"
    )


def warm_start(model, settings):
    """Initializes a model's variables from a checkpoint, as Estimator's `warm_start_from`.

    Only the variables `model_fn` created (`model.store`) are warm-started:
    never the optimizer's variables or `global_step`, so training starts at
    step 0 with fresh optimizer state. The model must be built (its
    `model_fn` run), as for `restore_model`. The report is also logged
    (logger `"keras_tpu_estimator"`).

    Args:
        model: an `EstimatorModel`.
        settings: a `WarmStartSettings`, or a path (a checkpoint of this
            library, a `model_dir`, or a TensorFlow checkpoint prefix or
            model_dir), meaning `WarmStartSettings(path)`: every trainable
            variable, same names.

    Returns:
        A `WarmStartReport`.

    Raises:
        ValueError: if there is no checkpoint at the path, `vars_to_warm_start`
            has the wrong type, or `var_name_to_prev_var_name` names a
            variable that was not selected (as TensorFlow: "Perhaps you
            misspelled them?").

    Example:

    ```python
    report = warm_start(model, WarmStartSettings(
        "tf1_run/model.ckpt-5000", vars_to_warm_start="encoder/.*"))
    report.matched    # ["encoder/dense/kernel", ...]
    ```
    """
    settings = as_settings(settings)
    reader = checkpoint_reader(settings.ckpt_to_initialize_from)
    # A TF1 train_op's `global_step` is a store variable; it is never warm-started.
    variables = {
        name: v for name, v in model.store.variables_by_name().items() if name != GLOBAL_STEP
    }
    selected = _select(variables, settings.vars_to_warm_start)
    renames = settings.var_name_to_prev_var_name
    unused = sorted(set(renames) - set(selected))
    if unused:
        raise ValueError(
            "You provided the following variables in var_name_to_prev_var_name "
            f"that were not used: {unused}. Perhaps you misspelled them? Here is "
            f"the list of viable variable names: {sorted(selected)}"
        )
    report = load_from_reader(
        reader, {name: renames.get(name, name) for name in selected}, variables
    )
    matched, unmatched, mismatched = report
    logger.info(
        "Warm-started %d variables from %s: %s", len(matched), reader.path, matched
    )
    if unmatched:
        logger.warning(
            "Warm start from %s: %d selected variables are not in the checkpoint "
            "and keep their initial values: %s", reader.path, len(unmatched), unmatched
        )
    if mismatched:
        logger.warning(
            "Warm start from %s: %d variables have another shape in the checkpoint "
            "and were not loaded (name, model shape, checkpoint shape): %s",
            reader.path, len(mismatched), mismatched,
        )
    return report


def load_from_reader(reader, wanted, variables):
    """Assigns checkpoint values to model variables, skipping absent names and other shapes.

    The loading step of `warm_start` (and of `compat.v1.train.init_from_checkpoint`),
    once the variables are chosen: values are read in one go and cast to
    each variable's dtype; nothing is logged.

    Args:
        reader: a `CheckpointReader` (see `checkpoint_reader`).
        wanted: a dict `model name -> checkpoint name`, in report order.
        variables: a dict `model name -> keras.Variable` holding every name
            of `wanted`.

    Returns:
        A `WarmStartReport` (names in `wanted`'s order).

    Example:

    ```python
    report = load_from_reader(checkpoint_reader("tf1_run"),
                              {"head/kernel": "logits/kernel"}, variables)
    ```
    """
    saved = reader.names()
    matched, unmatched, mismatched, to_read = [], [], [], {}
    for name, previous in wanted.items():
        if previous not in saved:
            unmatched.append(name)
            continue
        model_shape, saved_shape = tuple(variables[name].shape), tuple(saved[previous])
        if model_shape != saved_shape:
            mismatched.append((name, model_shape, saved_shape))
            continue
        to_read[name] = previous
    values = reader.read_many(sorted(set(to_read.values())))
    for name, previous in to_read.items():
        variable = variables[name]
        variable.assign(np.asarray(values[previous]).astype(variable.dtype))
        matched.append(name)
    return WarmStartReport(matched, unmatched, mismatched)


def _select(variables, vars_to_warm_start):
    """The names of `variables` selected by `vars_to_warm_start` (TF's rules), in order."""
    if vars_to_warm_start is None:
        logger.warning(
            "vars_to_warm_start=None selects no variable (TensorFlow then warm-"
            "starts only var_name_to_vocab_info, which is not supported)."
        )
        return []
    if isinstance(vars_to_warm_start, str):
        pattern = _compile(vars_to_warm_start)
        return [n for n, v in variables.items() if v.trainable and pattern.match(n)]
    if isinstance(vars_to_warm_start, (list, tuple)):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            patterns = [_compile(p) for p in vars_to_warm_start]
            return [n for n in variables if any(p.match(n) for p in patterns)]
        if all(isinstance(v, keras.Variable) for v in vars_to_warm_start):
            ids = {id(v) for v in vars_to_warm_start}
            by_id = {id(v): n for n, v in variables.items()}
            strangers = [v.path for v in vars_to_warm_start if id(v) not in by_id]
            if strangers:
                raise ValueError(
                    "Argument `vars_to_warm_start` holds variables that are not "
                    f"the model's: {few(strangers)}"
                )
            return [n for n, v in variables.items() if id(v) in ids]
        raise ValueError(
            "If `vars_to_warm_start` is a list, it must be all `keras.Variable` "
            "or all `str`. Given types are "
            f"{[type(v).__name__ for v in vars_to_warm_start]}"
        )
    raise ValueError(
        "`vars_to_warm_start` must be a `list` or `str` (or None). Received: "
        f"vars_to_warm_start={short_repr(vars_to_warm_start)}"
    )


def _compile(pattern):
    try:
        return re.compile(pattern)
    except re.error as e:
        raise ValueError(
            f"Invalid regex in `vars_to_warm_start`: {pattern!r} ({e})."
        ) from None
