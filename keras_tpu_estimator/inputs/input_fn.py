"""Calling an `input_fn` and reading what it gives, as TensorFlow did.

An `input_fn` takes any of `params`, `mode` and `config`, by name
(`call_input_fn`):

```python
def input_fn(params): ...                  # params["batch_size"] is set
```

It is called eagerly, once, and returns a `tf.data.Dataset`, another
iterable of batches, or arrays (`check_input_fn_result`). One that returns
TensorFlow tensors may be TensorFlow 1 code whose tensors gave a new batch at
every step (an iterator's `get_next()`, random noise): it is called again, in
a graph, and read from there when its tensors change from run to run
(`graph`). Code that runs only in a graph (`make_initializable_iterator`,
placeholders) is called in a graph at once, and so is code that makes a
one-shot iterator, which eagerly would read its first batch before the
graph reads it again: every input is read once.
"""

import collections.abc
import inspect
import logging
import reprlib

import jax

from keras_tpu_estimator.inputs import checks
from keras_tpu_estimator.inputs import graph as graph_lib
from keras_tpu_estimator.spec.arguments import keyword_parameters

_INPUT_FN_ARGS = ("params", "mode", "config")

_log = logging.getLogger(__name__)


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
    parameters, takes_kwargs = keyword_parameters(input_fn, "input_fn")
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
    checked batch by batch as it is read (`checks`); features and
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
    for where, leaf in checks.leaves(batch):
        if not hasattr(leaf, "shape") or not hasattr(leaf, "dtype"):
            raise TypeError(
                f"input_fn returned {shown}, whose {where} is a {type(leaf).__name__} "
                f"({reprlib.repr(leaf)}): {_INPUTS}."
            )
    return result


def read(input_fn, params, mode, config):
    """Calls `input_fn`; returns its result, or its graph's batches.

    Args:
        input_fn: the user's `input_fn`.
        params: the `params` it receives.
        mode: the `ModeKeys` value it receives.
        config: the `RunConfig` it receives (its `tf_random_seed` seeds the
            graph).

    Returns:
        What `input_fn` returned (checked by `check_input_fn_result`), or a
        `graph_lib.GraphInput` whose iteration gives a new batch each run.

    Raises:
        What `input_fn` raises, and the errors of `check_input_fn_result`.
    """

    def call():
        return call_input_fn(input_fn, params=params, mode=mode, config=config)

    seed = getattr(config, "tf_random_seed", None)
    try:
        with graph_lib.eager_iterators_refused():  # Read once: in the graph.
            result = call()
    except graph_lib.EagerIteratorRefused:
        try:
            return graph_lib.GraphInput(call, seed)
        except Exception as error:  # noqa: BLE001 - eager-only code reads eagerly.
            _log.warning(
                "input_fn makes a one-shot iterator but fails in a graph (%s: %s): it is "
                "called eagerly, and its tensors are taken as arrays.",
                type(error).__name__, error)
        return refuse_batch_lists(check_input_fn_result(call()))
    except RuntimeError as error:
        if not graph_lib.runs_only_in_a_graph(error):
            raise
        return graph_lib.GraphInput(call, seed)
    result = refuse_batch_lists(check_input_fn_result(result))
    if not graph_lib.holds_tensors(result):
        return result
    try:
        graph = graph_lib.GraphInput(call, seed)
    except Exception as error:  # noqa: BLE001 - eager-only code keeps its values.
        _log.warning(
            "input_fn returned tensors but fails in a graph (%s: %s): its tensors are "
            "taken as arrays, the whole input, read once.", type(error).__name__, error)
        return result
    if graph.changing:
        return graph
    graph.close()
    return result


def refuse_batch_lists(result):
    """Refuses an `input_fn` result that is a list (or tuple) of `(features, labels)` batches.

    TensorFlow's `parse_input_fn_result` reads a pair as `(features,
    labels)`: two batches `[(features, labels), (features, labels)]` would
    make the first batch the features and the second the labels, and
    `model_fn` fail on them (`features['x']` of a tuple). Features are an
    array or a dict of arrays, never such a pair.

    Args:
        result: what `input_fn` returned (checked by `check_input_fn_result`).

    Returns:
        `result`.

    Raises:
        ValueError: for a pair of two `(dict, ...)` pairs of one structure,
            naming input_fn and what it may return.

    Example:

    ```python
    refuse_batch_lists([({"x": x1}, y1), ({"x": x2}, y2)])   # ValueError
    ```
    """
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return result
    first, second = result
    pairs = all(isinstance(item, (tuple, list)) and len(item) == 2 for item in result)
    if not pairs or not isinstance(first[0], dict) or not isinstance(second[0], dict):
        return result
    if jax.tree.structure(first) != jax.tree.structure(second):
        return result
    raise ValueError(
        f"input_fn returned a {type(result).__name__} of 2 (features, labels) batches: "
        f"{reprlib.repr(result)}. input_fn should return one batch, (features, labels) as "
        "a len 2 tuple (or features alone), or a tf.data.Dataset of batches: for several "
        "batches, make a dataset of them (e.g. tf.data.Dataset.from_tensor_slices of "
        "the examples, then .batch(params['batch_size']))."
    )
