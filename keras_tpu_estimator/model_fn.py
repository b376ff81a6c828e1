"""Calling the user's `model_fn` and `input_fn` the way TPUEstimator does.

A `model_fn` declares what it wants by its argument names:

```python
def model_fn(features, labels, mode, params, config): ...
def model_fn(features, mode): ...          # takes only what it names
def input_fn(params): ...                  # params["batch_size"] is set
```

`features` is required, `labels`, `mode`, `params` and `config` are optional,
and anything else is an error, reported with TensorFlow's own wording. The
functions are passed only the arguments they name, always by keyword.
Signatures are read with `inspect.signature`, so plain functions,
`functools.partial`s, bound methods and callable objects all work.
"""

import collections.abc
import functools
import inspect
import reprlib

import jax
import keras

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator import input_checks
from keras_tpu_estimator import spec as spec_lib

_MODEL_FN_ARGS = ("features", "labels", "mode", "params", "config")
_INPUT_FN_ARGS = ("params", "mode", "config")
_RESERVED_PARAMS_KEYS = ["batch_size", "context"]


def _parameters(fn, name):
    """Returns the parameters of `fn` a caller passes by keyword.

    Returns:
        A pair `(parameters, takes_kwargs)`: the `inspect.Parameter`s that can
        be passed by keyword, less those a `functools.partial` already binds,
        and whether `fn` has a `**kwargs` parameter.
    """
    if not callable(fn):
        raise ValueError(f"Argument `{name}` must be callable. Received: {name}={fn!r}")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"Cannot read the arguments of {name} ({fn}): {error}"
        ) from None
    bound = fn.keywords if isinstance(fn, functools.partial) else {}
    parameters = []
    positional_only = []
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            if parameter.default is inspect.Parameter.empty:
                positional_only.append(parameter.name)
        elif (
            parameter.kind
            in (
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                inspect.Parameter.KEYWORD_ONLY,
            )
            and parameter.name not in bound
        ):
            parameters.append(parameter)
    if positional_only:
        raise ValueError(
            f"{name} ({fn}) has positional-only arguments {positional_only}: "
            f"the arguments of {name} are passed by keyword."
        )
    takes_kwargs = any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()
    )
    return parameters, takes_kwargs


def check_model_fn(model_fn):
    """Checks the arguments of `model_fn`, as `tf.estimator.Estimator` does.

    Args:
        model_fn: a callable taking `features` and any of `labels`, `mode`,
            `params` and `config` by name, or `**kwargs`. Arguments bound by
            a `functools.partial` do not count.

    Returns:
        The frozenset of argument names `model_fn` accepts; all five when it
        takes `**kwargs`.

    Raises:
        ValueError: if `model_fn` is not callable, does not take `features`,
            or takes an argument not among the five.

    Example:

    ```python
    def model_fn(features, labels, mode): ...
    check_model_fn(model_fn)  # frozenset({"features", "labels", "mode"})
    ```
    """
    parameters, takes_kwargs = _parameters(model_fn, "model_fn")
    names = [p.name for p in parameters]
    if takes_kwargs:
        accepted = frozenset(_MODEL_FN_ARGS)
    else:
        accepted = frozenset(n for n in names if n in _MODEL_FN_ARGS)
    if "features" not in accepted:
        raise ValueError(f"model_fn ({model_fn}) must include features argument.")
    unexpected = [n for n in names if n not in _MODEL_FN_ARGS]
    if unexpected:
        raise ValueError(
            f"model_fn ({model_fn}) has following not expected args: {unexpected}"
        )
    return accepted


def call_model_fn(model_fn, features, labels, mode, params, config):
    """Calls `model_fn` with the arguments it takes and checks what it returns.

    Args:
        model_fn: the user's `model_fn` (see `check_model_fn`).
        features: the features of the batch.
        labels: the labels of the batch, or None.
        mode: the `ModeKeys` value of this call.
        params: the dict passed as `params`.
        config: the `RunConfig` passed as `config`.

    Inside `model_fn`, every tensor has a `.name`, as in TensorFlow (see
    `input_names`): the features and labels are named after their keys,
    in the symbolic build pass (`keras.KerasTensor`s) and in the compiled
    steps (JAX tracers) alike.

    Returns:
        The `TPUEstimatorSpec` `model_fn` returned, or the `EstimatorSpec` it
        returned converted by `as_tpu_spec`, checked by `check_spec`.

    Raises:
        ValueError: if `model_fn` has unexpected arguments, does not take the
            `labels` it is given, does not return a spec, or returns one that
            is incomplete for `mode`.

    Example:

    ```python
    spec = call_model_fn(model_fn, features, labels, ModeKeys.TRAIN,
                         params={"batch_size": 64}, config=RunConfig())
    spec.loss
    ```
    """
    accepted = check_model_fn(model_fn)
    if labels is not None and "labels" not in accepted:
        raise ValueError("model_fn does not take labels, but input_fn returns labels.")
    arguments = {
        "features": features,
        "labels": labels,
        "mode": mode,
        "params": params,
        "config": config,
    }
    named = input_names(features, labels)
    for tensor, name in named:
        if isinstance(tensor, keras.KerasTensor):
            tensor.name = name
    try:
        with _keras_internals.tracer_names(
            [(t, n) for t, n in named if isinstance(t, jax.core.Tracer)]
        ):
            result = model_fn(**{k: v for k, v in arguments.items() if k in accepted})
    except (TypeError, ValueError, AttributeError) as error:
        if (labels is None and mode == spec_lib.ModeKeys.TRAIN and "labels" in accepted
                and _caused_by_none(error)):
            raise ValueError(
                f"model_fn raised {type(error).__name__}({error}) in TRAIN, where its labels "
                "are None: the input gave features only. To train on labels, an input_fn "
                "must return (features, labels), or a dataset of (features, labels) pairs."
            ) from error
        raise
    if not isinstance(result, (spec_lib.EstimatorSpec, spec_lib.TPUEstimatorSpec)):
        raise ValueError(
            "model_fn should return an EstimatorSpec or a TPUEstimatorSpec. "
            f"model_fn ({model_fn}) returned: {reprlib.repr(result)}"
        )
    return spec_lib.check_spec(spec_lib.as_tpu_spec(result), mode)


# How Python and the array libraries word an operation on `None`: only such an
# error can come from labels a TRAIN input did not give (ALBERT and ELECTRA
# carry their labels in `features` and never read `labels`).
_NONE_ERRORS = ("NoneType", "None is not", "None of type", "value None", "(None)", "convert None")


def _caused_by_none(error):
    """Whether `error` (or an error it was raised from) is an operation on `None`."""
    while error is not None:
        if any(words in str(error) for words in _NONE_ERRORS):
            return True
        error = error.__cause__ or error.__context__
    return False


def input_names(features, labels):
    """The names of the tensors `model_fn` receives, as `[(tensor, name), ...]`.

    A feature is named by its key (`"input_ids"`; nested keys and list
    positions joined by `/`: `"image/0"`), a lone features tensor
    `"features"`; labels likewise under `"labels"` (`"labels"`,
    `"labels/class"`). Leaves that are not tensors are left out.

    Example:

    ```python
    input_names({"ids": ids, "mask": mask}, y)
    # [(ids, "ids"), (mask, "mask"), (y, "labels")]
    ```
    """
    named = []
    for root, tree in (("", features), ("labels", labels)):
        for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
            if not hasattr(leaf, "shape"):
                continue
            parts = [root] if root else []
            parts += [str(_key_name(key)) for key in path]
            named.append((leaf, "/".join(parts) or "features"))
    return named


def _key_name(key):
    for attribute in ("key", "idx", "name"):
        if hasattr(key, attribute):
            return getattr(key, attribute)
    return key


def check_params(params):
    """Checks user `params` and returns a copy the estimator may extend.

    Args:
        params: None or a dict of hyper-parameters. `"batch_size"` and
            `"context"` are reserved: the estimator sets them.

    Returns:
        A new dict (`{}` for None).

    Raises:
        ValueError: if `params` is not a dict or holds a reserved key.

    Example:

    ```python
    params = check_params({"learning_rate": 0.1})
    params["batch_size"] = 64   # the caller's copy
    ```
    """
    if params is None:
        return {}
    if not isinstance(params, collections.abc.Mapping):
        raise ValueError(
            f"Argument `params` must be None or a dict. Received: params={params!r}"
        )
    if any(key in params for key in _RESERVED_PARAMS_KEYS):
        raise ValueError(
            f"{_RESERVED_PARAMS_KEYS} are reserved keys but existed in params "
            f"{params}."
        )
    return dict(params)


def call_input_fn(input_fn, params, mode, config):
    """Calls `input_fn` with those of `params`, `mode` and `config` it takes.

    Args:
        input_fn: a callable taking any of `params`, `mode` and `config` by
            name (or none of them, or `**kwargs`). Other arguments must have
            defaults; they are not passed.
        params: the dict passed as `params` (with `"batch_size"` set by the
            estimator).
        mode: the `ModeKeys` value passed as `mode`.
        config: the `RunConfig` passed as `config`.

    Returns:
        Whatever `input_fn` returns (`check_input_fn_result` checks it).

    Raises:
        ValueError: if `input_fn` is not callable or has a required argument
            other than `params`, `mode` and `config`.

    Example:

    ```python
    def input_fn(params):
        return tf.data.Dataset.range(100).batch(params["batch_size"])

    dataset = call_input_fn(input_fn, {"batch_size": 8}, ModeKeys.TRAIN, config)
    ```
    """
    parameters, takes_kwargs = _parameters(input_fn, "input_fn")
    arguments = {"params": params, "mode": mode, "config": config}
    unexpected = [
        p.name
        for p in parameters
        if p.name not in arguments and p.default is inspect.Parameter.empty
    ]
    if unexpected:
        raise ValueError(
            f"input_fn ({input_fn}) has following not expected args: "
            f"{unexpected}. input_fn may take any of {list(_INPUT_FN_ARGS)}; "
            "other arguments need a default value."
        )
    if not takes_kwargs:
        names = {p.name for p in parameters}
        arguments = {k: v for k, v in arguments.items() if k in names}
    return input_fn(**arguments)


_INPUTS = (
    "an input_fn must return a tf.data.Dataset (of features or of (features, "
    "labels) batches), features, or (features, labels), where features and "
    "labels are arrays (numpy, JAX or TensorFlow) or dicts of arrays with a "
    "leading batch dimension"
)


def check_input_fn_result(result):
    """Checks what an `input_fn` returned, as TensorFlow's estimator reads it.

    A tuple or list must be `(features, labels)` (TensorFlow's
    `parse_input_fn_result`); a dataset or another iterable of batches is
    checked batch by batch as it is read (`input_checks`); features and
    labels given directly must be arrays, or dicts of them.

    Args:
        result: the value `input_fn` returned.

    Returns:
        `result`.

    Raises:
        ValueError: for a tuple or list of other than two items.
        TypeError: for None, a number or a string, or features or labels
            holding something other than arrays.

    Example:

    ```python
    check_input_fn_result((features, labels, weights))
    # ValueError: input_fn should return (features, labels) as a len 2 tuple. ...
    ```
    """
    shown = reprlib.repr(result)
    if result is None or isinstance(result, (bool, int, float, complex, str, bytes)):
        raise TypeError(f"input_fn returned {shown}: {_INPUTS}.")
    if isinstance(result, (tuple, list)):
        if len(result) != 2:
            raise ValueError(
                "input_fn should return (features, labels) as a len 2 tuple. Received: a "
                f"{type(result).__name__} of {len(result)}: {shown}. Sample weights go in "
                "the features (a feature the model_fn weighs its loss by)."
            )
        batch = tuple(result)
    elif hasattr(result, "__iter__") and not isinstance(result, (dict, collections.abc.Mapping)) \
            and not hasattr(result, "shape"):
        return result  # A dataset or iterable of batches: checked as read.
    else:
        batch = (result, None)
    for where, leaf in input_checks.leaves(batch):
        if not hasattr(leaf, "shape") or not hasattr(leaf, "dtype"):
            raise TypeError(
                f"input_fn returned {shown}, whose {where} is a {type(leaf).__name__} "
                f"({reprlib.repr(leaf)}): {_INPUTS}."
            )
    return result
