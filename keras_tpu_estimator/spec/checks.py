"""Checks of the fields of a spec, shared by `TPUEstimatorSpec` and `EstimatorSpec`.

Each check returns the value it accepts (normalized where it says so) and
raises a `ValueError` naming the field and the value it received:

```python
check_loss(keras.ops.ones(()))  # the loss
check_mode("predict")           # ValueError: `mode` must be one of [...]
```
"""

import collections.abc
import inspect
import math
import numbers

from keras_tpu_estimator.spec.mode_keys import MODES


def describe(value):
    """`repr(value)`, shortened to 200 characters for error messages.

    Args:
        value: any object.

    Returns:
        A string.

    Example:

    >>> describe("x" * 300)[-5:]
    'xx...'
    """
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def is_tensor(value):
    """Whether `value` is array-like: it has a shape and a dtype, or is a number.

    NumPy and JAX arrays, tracers, `keras.KerasTensor`s and `tf.Tensor`s all
    qualify; no TensorFlow type is required.
    """
    if isinstance(value, numbers.Number):
        return True
    return hasattr(value, "shape") and hasattr(value, "dtype")


def check_mode(mode):
    """Returns `mode` if it is a `ModeKeys` value.

    Raises:
        ValueError: otherwise.
    """
    if not (isinstance(mode, str) and mode in MODES):
        raise ValueError(
            f"Argument `mode` must be one of {list(MODES)} (see `ModeKeys`). "
            f"Received: mode={describe(mode)}"
        )
    return mode


def check_predictions(predictions):
    """Returns `predictions` (a dict copied) if `None`, a tensor or a dict of tensors.

    Raises:
        ValueError: otherwise, or for a dict key that is not a string.
    """
    if predictions is None or is_tensor(predictions):
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError(
            "Argument `predictions` must be None, a tensor or a dict of "
            f"tensors. Received: predictions={describe(predictions)}"
        )
    for key, value in predictions.items():
        if not isinstance(key, str):
            raise ValueError(
                "Argument `predictions` must be a dict with string keys (the "
                "names `predict` yields and `predict_keys` selects). Received "
                f"the key {key!r} of type {type(key).__name__}: "
                f"predictions={describe(predictions)}"
            )
        if not is_tensor(value):
            raise ValueError(
                "Argument `predictions` must be None, a tensor or a dict of "
                f"tensors. Received: predictions[{key!r}]={describe(value)}"
            )
    return dict(predictions)


def check_loss(loss):
    """Returns `loss` if it is `None` or a scalar tensor (one element).

    Raises:
        ValueError: otherwise.
    """
    if loss is None:
        return None
    if not is_tensor(loss):
        raise ValueError(
            f"Argument `loss` must be a scalar tensor. Received: "
            f"loss={describe(loss)}"
        )
    shape = tuple(getattr(loss, "shape", ()))
    if all(isinstance(d, int) for d in shape) and math.prod(shape) != 1:
        raise ValueError(
            f"Argument `loss` must be a scalar tensor. Received a tensor of "
            f"shape {shape}: loss={describe(loss)}"
        )
    return loss


def check_call_pair(pair, name):
    """Checks a `(function, tensors)` pair: `eval_metrics` or `host_call`.

    The function will be called as `function(*tensors)` for a list or tuple,
    `function(**tensors)` for a dict; a call its signature cannot take is
    reported now rather than inside a compiled step.

    Args:
        pair: `None` or `(function, tensors)`, `tensors` a list, tuple or
            dict.
        name: the field's name, for error messages.

    Returns:
        `None`, or the pair as a tuple.

    Raises:
        ValueError: if `pair` is not such a pair, or `function` cannot be
            called with `tensors`.

    Example:

    ```python
    check_call_pair((metric_fn, [labels, logits]), "eval_metrics")
    ```
    """
    if pair is None:
        return None
    if not (
        isinstance(pair, (tuple, list))
        and len(pair) == 2
        and callable(pair[0])
        and isinstance(pair[1], (tuple, list, dict))
    ):
        raise ValueError(
            f"Argument `{name}` must be None or a pair (function, tensors), "
            "where tensors is a list, tuple or dict of tensors passed to the "
            f"function. Received: {name}={describe(pair)}"
        )
    function, tensors = pair
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # Some builtins have no signature.
        return tuple(pair)
    try:
        if isinstance(tensors, dict):
            signature.bind(**tensors)
        else:
            signature.bind(*tensors)
    except TypeError as error:
        given = (
            f"the tensors {sorted(tensors)}"
            if isinstance(tensors, dict)
            else f"{len(tensors)} tensors"
        )
        raise ValueError(
            f"In `{name}`, the function {getattr(function, '__name__', function)}"
            f"{signature} cannot be called with {given}: {error}"
        ) from None
    return tuple(pair)


def check_hooks(hooks, name):
    """Returns field `name`'s `hooks` as a tuple (`()` for `None`).

    Raises:
        ValueError: if `hooks` is not an iterable of hooks (a string, bytes or
            a dict is not).
        TypeError: if an element is not a hook (naming it: `training_hooks[0]`).
    """
    from keras_tpu_estimator.hooks import _common as hook_checks  # hooks import spec.

    if hooks is None:
        return ()
    if isinstance(hooks, (str, bytes, dict)) or not isinstance(
        hooks, collections.abc.Iterable
    ):
        raise ValueError(
            f"Argument `{name}` must be None or an iterable of hooks. "
            f"Received: {name}={describe(hooks)}"
        )
    hooks = tuple(hooks)
    for index, hook in enumerate(hooks):
        hook_checks.check_hook(hook, f"{name}[{index}]")
    return hooks


def check_callable(value, name):
    """Returns field `name`'s `value` if it is `None` or callable.

    Raises:
        ValueError: otherwise.
    """
    if value is not None and not callable(value):
        raise ValueError(
            f"Argument `{name}` must be None or a callable. "
            f"Received: {name}={describe(value)}"
        )
    return value

