"""The argument checks `TPUEstimator` makes before any work.

Each `*_args` function checks one method's arguments and returns them
normalized, so a bad value is refused before `input_fn` or `model_fn` runs,
with an error naming the argument, the value and what is allowed (in
TensorFlow's words where TensorFlow had them):

```python
hooks, steps, max_steps, listeners = train_args(None, 100, None, None)
train_args(None, "10", None, None)  # TypeError: `steps` must be None or an int > 0 ...
evaluate_args(0, None)              # ValueError: Must specify steps > 0, given: 0
```
"""

import numbers

import numpy as np

from keras_tpu_estimator.checkpoint import warm_starting
from keras_tpu_estimator.estimator import predictions as predictions_lib
from keras_tpu_estimator.estimator import train_plan
from keras_tpu_estimator.hooks import _common as hook_checks


def check_bool(name, value):
    """Returns `value` as a Python bool if it is one (a NumPy bool too).

    TensorFlow took any truthy value, so `use_tpu='no'` meant True; here
    only a bool is accepted.

    Raises:
        TypeError: otherwise, naming `name` and `value`.

    Example:

    >>> check_bool("use_tpu", False)
    False
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(
        f"`{name}` must be a bool (True or False). Received: {name}={value!r:.200} "
        f"of type {type(value).__name__}"
    )


def check_step_count(name, value):
    """Returns a step count (`steps`, `max_steps`) as an int, or None.

    An integral float (`1e4`, `100.0`) is accepted as TensorFlow accepted
    it; `2.5`, a string or a bool is not.

    Args:
        name: the argument's name, for the error message.
        value: None, or a positive whole number.

    Returns:
        None, or `int(value)`.

    Raises:
        TypeError: if `value` is not None nor a whole number.
        ValueError: if it is <= 0 (TensorFlow's message).

    Example:

    >>> check_step_count("steps", 100.0)
    100
    """
    if value is None:
        return None
    whole = isinstance(value, numbers.Integral) or (
        isinstance(value, numbers.Real) and float(value).is_integer()
    )
    if isinstance(value, (bool, np.bool_)) or not whole:
        raise TypeError(
            f"`{name}` must be None or an int > 0 (a number of steps). "
            f"Received: {name}={value!r:.200} of type {type(value).__name__}"
        )
    if value <= 0:
        raise ValueError(f"Must specify {name} > 0, given: {value}")
    return int(value)


def check_input_fn(input_fn):
    """Returns `input_fn` if it is callable, as `train`/`evaluate`/`predict` call it.

    Raises:
        TypeError: otherwise (a number, a dataset, arrays), naming the value
            and what an `input_fn` is.

    Example:

    ```python
    check_input_fn(lambda params: dataset.batch(params["batch_size"]))   # the function
    check_input_fn(5)   # TypeError: Argument `input_fn` must be a callable ...
    ```
    """
    if callable(input_fn):
        return input_fn
    raise TypeError(
        "Argument `input_fn` must be a callable: input_fn(params), which may also take "
        "`mode` and `config` by name, returning a tf.data.Dataset, features, or "
        "(features, labels) (to use a dataset, return it: input_fn=lambda params: "
        f"dataset). Received: input_fn={input_fn!r:.200} of type {type(input_fn).__name__}"
    )


def check_warm_start_from(warm_start_from):
    """Returns `TPUEstimator`'s `warm_start_from` if it is None, a path or `WarmStartSettings`.

    Checked when the estimator is made, as TensorFlow did; the checkpoint
    itself is read when training starts.

    Raises:
        ValueError: otherwise, naming `warm_start_from` and the value.
    """
    if warm_start_from is not None:
        warm_starting.as_settings(warm_start_from, "warm_start_from")
    return warm_start_from


def train_args(hooks, steps, max_steps, saving_listeners):
    """`TPUEstimator.train`'s arguments, checked.

    Returns:
        `(hooks, steps, max_steps, saving_listeners)`: lists and ints (or
        None).

    Raises:
        TypeError: for hooks, listeners or step counts of the wrong type.
        ValueError: for both `steps` and `max_steps`, or either <= 0.
    """
    steps = check_step_count("steps", steps)
    max_steps = check_step_count("max_steps", max_steps)
    train_plan.check_step_limits(steps, max_steps)
    return (
        hook_checks.check_hooks(hooks),
        steps,
        max_steps,
        hook_checks.check_saving_listeners(saving_listeners),
    )


def evaluate_args(steps, hooks):
    """`TPUEstimator.evaluate`'s arguments, checked: `(steps, hooks)`.

    Raises:
        TypeError: for hooks or `steps` of the wrong type.
        ValueError: for `steps` <= 0.
    """
    return check_step_count("steps", steps), hook_checks.check_hooks(hooks)


def predict_args(predict_keys, hooks):
    """`TPUEstimator.predict`'s arguments, checked: `(predict_keys, hooks)`.

    Raises:
        TypeError: for `predict_keys` that is not None, a str or a list of
            str, or hooks of the wrong type.
    """
    return predictions_lib.check_predict_keys(predict_keys), hook_checks.check_hooks(hooks)

