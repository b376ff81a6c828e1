"""The TF1 global step: `tf.compat.v1.train.get_or_create_global_step`.

The global step advances by exactly one per training step, whether the
program increments it (`minimize(global_step=...)`,
`global_step.assign(global_step + 1)`) or not. Outside `model_fn` (a hook's
`begin()`), the global step is the handle hooks fetch it with. Exported as
`tf1.train.*`.
"""

import keras

from keras_tpu_estimator.compat.v1._variable_views import VariableView
from keras_tpu_estimator.compat.v1._variable_views import keras_variable
from keras_tpu_estimator.hooks.fetches import GLOBAL_STEP
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.model_fn import train_ops


def is_step_global_step(variable):
    """Whether `variable` is the store's `global_step`, which the step itself advances."""
    try:
        context = store_lib.current_call("train.Optimizer.apply_gradients")
    except RuntimeError:  # Outside model_fn: a plain variable.
        return False
    own = train_ops.global_step_variable(context.store)
    return own is not None and keras_variable(variable) is own


def get_or_create_global_step(graph=None):
    """The global step, as `tf.compat.v1.train.get_or_create_global_step`.

    In TRAIN mode, the variable `global_step` (int64 with JAX's 64-bit mode,
    else int32), created by the first call; its value is the number of steps
    taken before the current one, and it advances by exactly one per step.
    In EVAL and PREDICT, the step of the weights being used.

    Outside `model_fn` (in a hook's `begin()`, as TF1 hooks take it), the
    handle `kte.hooks.fetches.GLOBAL_STEP`: a hook that fetches it through
    `SessionRunArgs` or `run_context.session.run` gets the global step.

    Args:
        graph: ignored.

    Returns:
        A variable (TF1-style view), an integer scalar tensor, or, outside
        `model_fn`, the global step handle.
    """
    del graph
    if store_lib.in_built_graph():  # A hook's begin(), on the graph model_fn built.
        return GLOBAL_STEP
    try:
        store_lib.current_call("train.get_or_create_global_step")
    except RuntimeError:
        return GLOBAL_STEP
    step = train_ops.current_store_global_step()
    return VariableView(step) if isinstance(step, keras.Variable) else step


def get_global_step(graph=None):
    """The global step (`get_or_create_global_step`: TPUEstimator always has one)."""
    return get_or_create_global_step(graph)


create_global_step = get_or_create_global_step
