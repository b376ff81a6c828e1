"""What an `input_fn` gives, read as TensorFlow reads it.

An `input_fn` is called eagerly, once, and returns a `tf.data.Dataset`,
another iterable of batches, or arrays. One that returns TensorFlow tensors
may be TensorFlow 1 code whose tensors gave a new batch at every step (an
iterator's `get_next()`, random noise): it is called again, in a graph, and
read from there when its tensors change from run to run (`graph_input`).
Code that runs only in a graph (`make_initializable_iterator`,
placeholders) is called in a graph at once.
"""

import logging
import reprlib

import jax

from keras_tpu_estimator import graph_input
from keras_tpu_estimator.model_fn import call_input_fn
from keras_tpu_estimator.model_fn import check_input_fn_result

_log = logging.getLogger(__name__)


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
        `graph_input.GraphInput` whose iteration gives a new batch each run.

    Raises:
        What `input_fn` raises, and the errors of `check_input_fn_result`.
    """

    def call():
        return call_input_fn(input_fn, params=params, mode=mode, config=config)

    seed = getattr(config, "tf_random_seed", None)
    try:
        result = call()
    except RuntimeError as error:
        if not graph_input.runs_only_in_a_graph(error):
            raise
        return graph_input.GraphInput(call, seed)
    result = refuse_batch_lists(check_input_fn_result(result))
    if not graph_input.holds_tensors(result):
        return result
    try:
        graph = graph_input.GraphInput(call, seed)
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
