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
    result = check_input_fn_result(result)
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
