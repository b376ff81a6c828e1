"""`tf.compat.v1.train.ExponentialMovingAverage`: shadow copies of variables.

The shadows are store variables named `<var>/ExponentialMovingAverage`, so
TF1 checkpoints and `variables_to_restore` keep working. Exported as
`tf1.train.ExponentialMovingAverage`.
"""

import keras
from keras import ops

from keras_tpu_estimator.compat.v1 import _batch_norm_step as _step
from keras_tpu_estimator.compat.v1 import initializers
from keras_tpu_estimator.compat.v1._global_step import is_step_global_step
from keras_tpu_estimator.compat.v1._train_variables import copy_initializer
from keras_tpu_estimator.compat.v1._train_variables import resolve_value
from keras_tpu_estimator.compat.v1._train_variables import store_variable
from keras_tpu_estimator.compat.v1._train_variables import unique_path
from keras_tpu_estimator.compat.v1._variable_views import VariableView
from keras_tpu_estimator.compat.v1._variable_views import global_variables
from keras_tpu_estimator.compat.v1._variable_views import keras_variable
from keras_tpu_estimator.compat.v1._variable_views import trainable_variables
from keras_tpu_estimator.compat.v1.graph import GraphKeys
from keras_tpu_estimator.compat.v1.graph import add_to_collection
from keras_tpu_estimator.compat.v1.graph import get_collection
from keras_tpu_estimator.compat.v1.training_ops import assign
from keras_tpu_estimator.compat.v1.variables import get_variable
from keras_tpu_estimator.compat.v1.variables import variable_scope
from keras_tpu_estimator.model_fn.train_ops import TrainOp


class ExponentialMovingAverage:
    """Shadow copies of variables, as `tf.compat.v1.train.ExponentialMovingAverage`.

    `apply(var_list)` creates a shadow `<var>/ExponentialMovingAverage` per
    variable (starting at the variable's value) and, each step, moves it:
    `shadow -= (1 - decay) * (shadow - var)`. With `num_updates`, the decay
    is `min(decay, (1 + num_updates) / (10 + num_updates))`; the model's
    global step as `num_updates` counts the current step (TF1 read it after
    the optimizer's increment). Call `apply`
    after the optimizer's op so the shadows follow the updated weights (TF1
    code does so under `control_dependencies([train_op])`).

    Args:
        decay: the decay, e.g. 0.9999.
        num_updates: optional step count (usually the global step).
        zero_debias: accepted; only affects tensors in TF1, and only
            variables are averaged here.
        name: the shadows' suffix.

    Example:

    ```python
    ema = tf1.train.ExponentialMovingAverage(0.999, num_updates=global_step)
    with tf1.control_dependencies([train_op]):
        train_op = ema.apply(tf1.trainable_variables())
    ```
    """

    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        del zero_debias
        self._decay = decay
        self._num_updates = num_updates
        self._name = name
        self._averages = {}  # id(keras.Variable) -> shadow variable

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        """Creates (once) and updates the shadows of `var_list` (default: trainable variables).

        Returns:
            A `TrainOp`.

        Raises:
            TypeError: for an element that is not a floating-point variable.
        """
        if var_list is None:
            var_list = trainable_variables()
        decay = ops.convert_to_tensor(resolve_value(self._decay), "float32")
        if self._num_updates is not None:
            updates = ops.cast(resolve_value(self._num_updates), "float32")
            if is_step_global_step(self._num_updates):
                # TF1 applies under control_dependencies([train_op]): it
                # reads the global step after the step's increment.
                updates = updates + 1.0
            decay = ops.minimum(decay, (1.0 + updates) / (10.0 + updates))
        for item in var_list:
            variable = keras_variable(item)
            if not isinstance(variable, keras.Variable) or "float" not in variable.dtype:
                raise TypeError(
                    "ExponentialMovingAverage.apply averages floating-point variables "
                    f"only. Received: {item!r}"
                )
            if id(variable) not in self._averages:
                self._averages[id(variable)] = store_variable(
                    unique_path(f"{variable.path}/{self._name}"),
                    copy_initializer(variable), variable.shape, variable.dtype,
                )
            view = VariableView(variable)
            if view not in get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES):
                add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, view)  # As TF1's apply.
            shadow = self._averages[id(variable)]
            rate = ops.cast(1.0 - decay, shadow.dtype)
            assign(shadow, ops.subtract(shadow.value, rate * (shadow.value - variable.value)))
        return TrainOp(self._name)

    def average(self, var):
        """The shadow variable of `var`, or None if `apply` did not average it."""
        shadow = self._averages.get(id(keras_variable(var)))
        return None if shadow is None else VariableView(shadow)

    def average_name(self, var):
        """The name of `var`'s shadow: `<var>/ExponentialMovingAverage`."""
        return f"{keras_variable(var).path}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None):
        """`{checkpoint name: variable}` restoring the averages into the variables.

        The averaged variables (default: the trainable ones) map from their
        shadow's name; every other variable used so far maps from its own,
        unless that name is taken (a shadow maps from nothing), as in TF1.
        Returned through a `Saver` in a `Scaffold` from `scaffold_fn`, it
        makes EVAL, PREDICT and export use the averages
        (`compat.v1.train.Saver`).
        """
        averaged = (
            trainable_variables()
            if moving_avg_variables is None else list(moving_avg_variables)
        )
        averaged_ids = {id(keras_variable(v)) for v in averaged}
        shadows = {id(v) for v in self._averages.values()}
        result = {}
        for item in averaged:
            variable = keras_variable(item)
            if id(variable) not in shadows:
                result[self.average_name(variable)] = VariableView(variable)
        for view in global_variables():
            variable = view.variable
            if id(variable) not in shadows and id(variable) not in averaged_ids:
                result.setdefault(variable.path, view)
        return result


def assign_moving_average(variable, value, decay, zero_debias=True, name=None):
    """TF1's `moving_averages.assign_moving_average`: moves `variable` towards `value`.

    `variable -= (variable - value) * (1 - decay)`. With `zero_debias` (TF1's
    default), two new variables in scope `<current scope>/<variable's name>`
    (TF1's path, e.g. `BatchNorm/BatchNorm/moving_mean/biased`): `biased`, an
    average that starts at zero, and `local_step`, the number of updates;
    the variable becomes `biased / (1 - decay ** local_step)`.

    Args:
        variable: a variable of `model_fn`.
        value: the value to average in.
        decay: the decay (a float or a scalar tensor).
        zero_debias: debias the average of a variable that starts at zero.
        name: accepted and ignored.

    Returns:
        The variable's new value.

    Example:

    ```python
    update = assign_moving_average(moving_mean, batch_mean, 0.99, zero_debias=False)
    ```
    """
    del name
    target = keras_variable(variable)
    if not zero_debias:
        target.assign(_step.moving_average(target, value, decay))
        return target.value
    with variable_scope(target.path):
        biased = keras_variable(get_variable(
            "biased", target.shape, dtype=target.dtype,
            initializer=initializers.zeros_initializer(), trainable=False))
        local_step = keras_variable(get_variable(
            "local_step", (), dtype=target.dtype, initializer=initializers.zeros_initializer(),
            trainable=False))
    new_biased = _step.moving_average(biased, value, decay)
    new_step = local_step + 1.0
    biased.assign(new_biased)
    local_step.assign(new_step)
    target.assign(new_biased / (1.0 - ops.power(ops.cast(decay, target.dtype), new_step)))
    return target.value
