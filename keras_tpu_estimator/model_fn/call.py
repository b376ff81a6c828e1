"""Calling the user's `model_fn` the way TPUEstimator does.

A `model_fn` declares what it wants by its argument names:

```python
def model_fn(features, labels, mode, params, config): ...
def model_fn(features, mode): ...          # takes only what it names
```

`features` is required, `labels`, `mode`, `params` and `config` are optional,
and anything else is an error, reported with TensorFlow's own wording. The
function is passed only the arguments it names, always by keyword
(`spec.arguments.keyword_parameters`). Inside it, every tensor is named after
its key in the input (`input_names`).
"""

import collections.abc
import reprlib

import jax
import keras

from keras_tpu_estimator import spec as spec_lib
from keras_tpu_estimator.model_fn import tensors
from keras_tpu_estimator.spec.arguments import keyword_parameters

_MODEL_FN_ARGS = ("features", "labels", "mode", "params", "config")
_RESERVED_PARAMS_KEYS = ["batch_size", "context"]


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
    parameters, takes_kwargs = keyword_parameters(model_fn, "model_fn")
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
    in the build pass and in the compiled steps (JAX tracers) alike. Iterating
    a tensor of unknown length (an export's batch) raises TF1's TypeError.

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
        with tensors.tf1_tensors([(t, n) for t, n in named if isinstance(t, jax.core.Tracer)]):
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
