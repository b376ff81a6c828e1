"""`tf.compat.v1.train`: optimizers, the global step, learning-rate schedules, EMA, warm start.

The optimizers keep TF1's update rules and variable names (`dense/kernel/Adam`,
`dense/kernel/Adam_1`, `beta1_power`, ...), so TF1 checkpoints, `get_slot`
and name filters keep working. They train by assignment: `minimize` and
`apply_gradients` assign new values inside the step (see
`keras_tpu_estimator.train_ops`), and their result is the spec's `train_op`.
A `train.Optimizer` subclass written as BERT, ALBERT or ELECTRA write theirs
(slots from `get_variable`, updates with `assign`) works the same way.

```python
def model_fn(features, labels, mode, params):
    ...
    global_step = tf1.train.get_or_create_global_step()
    learning_rate = tf1.train.exponential_decay(0.1, global_step, 1000, 0.96)
    optimizer = tf1.tpu.CrossShardOptimizer(tf1.train.MomentumOptimizer(learning_rate, 0.9))
    train_op = optimizer.minimize(loss, global_step=global_step)
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)
```

The global step advances by exactly one per training step, whether the
program increments it (`minimize(global_step=...)`,
`global_step.assign(global_step + 1)`) or not.
"""

import logging

import keras
import numpy as np
from keras import ops

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator import checkpoint as checkpoint_lib
from keras_tpu_estimator import initialization
from keras_tpu_estimator import scope
from keras_tpu_estimator import train_ops
from keras_tpu_estimator.compat.v1 import variables as variables_lib
from keras_tpu_estimator.compat.v1._checkpoint_management import checkpoints_iterator  # noqa: F401
from keras_tpu_estimator.compat.v1._checkpoint_management import latest_checkpoint  # noqa: F401
from keras_tpu_estimator.compat.v1._checkpoint_management import wait_for_new_checkpoint  # noqa: F401
from keras_tpu_estimator.compat.v1.training_ops import assign
from keras_tpu_estimator.compat.v1.training_ops import assign_add
from keras_tpu_estimator.compat.v1.training_ops import gradients
from keras_tpu_estimator.compat.v1.variables import VariableView
from keras_tpu_estimator.compat.v1.variables import keras_variable
from keras_tpu_estimator.train_ops import TrainOp

logger = logging.getLogger("keras_tpu_estimator")

_NAMES_TAKEN = "compat.v1.train.names"


# ----------------------------------------------------------------------
# Variables the optimizers and EMA create: by TF1 name, at absolute paths.


def _unique_path(path):
    """`path`, or `path_1`, `path_2`, ...: the first not taken in this `model_fn` call.

    TF1 made names unique in the graph; counting per call replays the same
    names on every trace.
    """
    taken = scope.call_state(_NAMES_TAKEN, set)
    candidate, index = path, 0
    while candidate in taken:
        index += 1
        candidate = f"{path}_{index}"
    taken.add(candidate)
    return candidate


def _store_variable(path, initializer, shape, dtype):
    """The non-trainable store variable at the absolute `path`, created once."""
    parent, _, leaf = path.rpartition("/")
    with _keras_internals.absolute_name_scope(parent):
        return scope.get_variable(
            leaf, shape=tuple(shape), dtype=dtype, initializer=initializer, trainable=False
        )


def _value_of(source):
    """An initializer giving `source`'s value: read only when the variable is created."""

    def initializer(shape, dtype=None):
        # A copy: two variables sharing one buffer break the step's donation.
        return ops.copy(ops.cast(ops.reshape(source, shape), dtype))

    return initializer


def _value(x):
    """A tensor for `x` (a variable, a view, a callable rate, a number)."""
    if callable(x) and not isinstance(x, (keras.Variable, VariableView)):
        x = x()
    return keras_variable(x)


# ----------------------------------------------------------------------
# Optimizers.


class Optimizer:
    """Base class of TF1 optimizers, as `tf.compat.v1.train.Optimizer`.

    Subclasses implement TF1's hooks: `_create_slots(var_list)`,
    `_prepare()`, `_apply_dense(grad, var)` (assigning the new values) and
    `_finish(update_ops, name_scope)`; or override `apply_gradients`
    entirely, as BERT's `AdamWeightDecayOptimizer` does. Slots made with
    `_zeros_slot(var, "m", self._name)` are named `<var>/<name>`, made unique
    per `model_fn` call as TF1 did (`<var>/Adam`, `<var>/Adam_1`).

    Args:
        use_locking: ignored (updates are functional).
        name: the optimizer's name, used in slot names.

    Raises:
        ValueError: for an empty `name`.

    Example:

    ```python
    class SignSGD(tf1.train.Optimizer):
        def __init__(self, learning_rate):
            super().__init__(False, "SignSGD")
            self._lr = learning_rate

        def _apply_dense(self, grad, var):
            return var.assign_sub(self._lr * tf1.sign(grad))
    ```
    """

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError(f"Must specify the optimizer name. Received: name={name!r}")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}  # slot name -> {id(keras.Variable): slot variable}
        self._non_slots = {}  # name -> variable
        self._created = []  # every variable made, in creation order

    def get_name(self):
        return self._name

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        """`compute_gradients` then `apply_gradients`.

        Args:
            loss: the scalar loss (or a callable returning it).
            global_step: incremented by one (the step advances once anyway).
            var_list: the variables to train; defaults to
                `trainable_variables()`.
            name: the returned operation's name.
            gate_gradients, aggregation_method, colocate_gradients_with_ops:
                accepted and ignored.
            grad_loss: must be None.

        Returns:
            A `TrainOp`, the spec's `train_op`.

        Raises:
            ValueError: if there are no variables to train.
        """
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss,
        )
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """Returns `[(gradient, variable), ...]` of `loss` for `var_list`.

        Args:
            loss: the scalar loss (or a callable returning it).
            var_list: the variables; defaults to `trainable_variables()`.
            grad_loss: must be None.

        Returns:
            A list of `(gradient, variable)` pairs.

        Raises:
            ValueError: if there are no variables or `grad_loss` is given.
        """
        del gate_gradients, aggregation_method, colocate_gradients_with_ops
        if callable(loss):
            loss = loss()
        if grad_loss is not None:
            raise ValueError(
                f"compute_gradients(grad_loss=...) is not supported. Received: {grad_loss!r}"
            )
        var_list = variables_lib.trainable_variables() if var_list is None else list(var_list)
        if not var_list:
            raise ValueError(
                "No variables to optimize: model_fn created no trainable variable "
                "before compute_gradients, and `var_list` is empty."
            )
        return list(zip(gradients(loss, var_list), var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Applies `(gradient, variable)` pairs: each variable is assigned its new value.

        Args:
            grads_and_vars: pairs from `compute_gradients` (gradients may be
                clipped in between); a None gradient skips its variable.
            global_step: incremented by one. The model's own global step
                advances by one per step anyway, and reads as the step's
                value (the steps before it) for the rest of `model_fn`, as
                in TensorFlow: `tf.reshape(global_step, [1])` after
                `minimize` gives 0 in the first step.
            name: the returned operation's name.

        Returns:
            A `TrainOp`, the spec's `train_op`.

        Raises:
            ValueError: if no pair has a gradient.
        """
        pairs = [(g, VariableView(keras_variable(v))) for g, v in tuple(grads_and_vars)]
        if not pairs:
            raise ValueError("No variables provided to apply_gradients.")
        with_grads = [v for g, v in pairs if g is not None]
        if not with_grads:
            raise ValueError(
                "No gradients provided for any variable: "
                f"{[v.name for _, v in pairs]}."
            )
        self._create_slots(with_grads)
        self._prepare()
        updates = [self._apply_dense(g, v) for g, v in pairs if g is not None]
        self._finish(updates, name or self._name)
        if global_step is not None and not _is_step_global_step(global_step):
            assign_add(global_step, 1)
        return TrainOp(name or self._name)

    def get_slot(self, var, name):
        """The slot `name` (`"m"`, `"momentum"`, ...) of `var`, or None."""
        slot = self._slots.get(name, {}).get(id(keras_variable(var)))
        return None if slot is None else VariableView(slot)

    def get_slot_names(self):
        """The names of the slots this optimizer creates, sorted."""
        return sorted(self._slots)

    def variables(self):
        """Every variable this optimizer created (slots and `beta1_power`, ...), in order."""
        return [VariableView(v) for v in self._created]

    # TF1's hooks for subclasses.

    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError(
            f"{type(self).__name__} must implement _apply_dense(grad, var) or "
            "override apply_gradients."
        )

    def _resource_apply_dense(self, grad, handle):
        return self._apply_dense(grad, handle)

    def _finish(self, update_ops, name_scope):
        return TrainOp(name_scope)

    def _call_if_callable(self, param):
        return param() if callable(param) else param

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name,
                                           op_name):
        variable = keras_variable(var)
        slots = self._slots.setdefault(slot_name, {})
        if id(variable) not in slots:
            slot = _store_variable(
                _unique_path(f"{variable.path}/{op_name}"), initializer,
                tuple(shape), keras.backend.standardize_dtype(dtype),
            )
            slots[id(variable)] = slot
            self._created.append(slot)
        return VariableView(slots[id(variable)])

    def _zeros_slot(self, var, slot_name, op_name):
        variable = keras_variable(var)
        return self._get_or_make_slot_with_initializer(
            variable, "zeros", variable.shape, variable.dtype, slot_name, op_name
        )

    def _get_or_make_slot(self, var, val, slot_name, op_name):
        variable = keras_variable(var)
        return self._get_or_make_slot_with_initializer(
            variable, _value_of(keras_variable(val)), variable.shape, variable.dtype,
            slot_name, op_name,
        )

    def _create_non_slot_variable(self, initial_value, name, colocate_with=None):
        del colocate_with
        if name not in self._non_slots:
            value = np.asarray(initial_value, dtype=keras.backend.floatx())
            variable = _store_variable(_unique_path(name), value, value.shape, value.dtype.name)
            self._non_slots[name] = variable
            self._created.append(variable)
        return VariableView(self._non_slots[name])

    def _get_non_slot_variable(self, name, graph=None):
        del graph
        variable = self._non_slots.get(name)
        return None if variable is None else VariableView(variable)

    def _rate(self, var):
        return ops.cast(_value(self._learning_rate), var.variable.dtype)


class GradientDescentOptimizer(Optimizer):
    """`var -= learning_rate * grad`, as `tf.compat.v1.train.GradientDescentOptimizer`.

    Args:
        learning_rate: a float, a tensor (e.g. from `exponential_decay`) or a
            callable returning one.
        use_locking: ignored.
        name: defaults to `"GradientDescent"`.
    """

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply_dense(self, grad, var):
        return assign(var, ops.subtract(var.value(), self._rate(var) * grad))


class MomentumOptimizer(Optimizer):
    """Momentum SGD, as `tf.compat.v1.train.MomentumOptimizer`.

    `accum = momentum * accum + grad`; `var -= lr * accum`, or with
    `use_nesterov`, `var -= lr * (grad + momentum * accum)`. The slot is
    `"momentum"`, named `<var>/Momentum`.

    Args:
        learning_rate: a float, tensor or callable.
        momentum: a float, tensor or callable.
        use_locking: ignored.
        name: defaults to `"Momentum"`.
        use_nesterov: Nesterov momentum.
    """

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _apply_dense(self, grad, var):
        accum = self.get_slot(var, "momentum")
        momentum = ops.cast(_value(self._momentum), var.variable.dtype)
        new_accum = accum.value() * momentum + grad
        assign(accum, new_accum)
        step = grad + momentum * new_accum if self._use_nesterov else new_accum
        return assign(var, ops.subtract(var.value(), self._rate(var) * step))


class AdamOptimizer(Optimizer):
    """Adam, as `tf.compat.v1.train.AdamOptimizer` (TF1's update and names).

    `lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)`, `m = beta1 m + (1 - beta1) g`,
    `v = beta2 v + (1 - beta2) g^2`, `var -= lr_t m / (sqrt(v) + epsilon)`.
    Slots `"m"` and `"v"` are `<var>/Adam` and `<var>/Adam_1`; the powers
    are `beta1_power` and `beta2_power`.

    Args:
        learning_rate: a float, tensor or callable.
        beta1: the first-moment decay.
        beta2: the second-moment decay.
        epsilon: added to the denominator (TF1's "epsilon hat").
        use_locking: ignored.
        name: defaults to `"Adam"`.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first)
        self._create_non_slot_variable(self._beta2, "beta2_power", first)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _apply_dense(self, grad, var):
        dtype = var.variable.dtype
        beta1_power = ops.cast(self._get_non_slot_variable("beta1_power").value(), dtype)
        beta2_power = ops.cast(self._get_non_slot_variable("beta2_power").value(), dtype)
        beta1 = ops.cast(_value(self._beta1), dtype)
        beta2 = ops.cast(_value(self._beta2), dtype)
        lr = self._rate(var) * ops.sqrt(1 - beta2_power) / (1 - beta1_power)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = m.value() * beta1 + (1 - beta1) * grad
        v_t = v.value() * beta2 + (1 - beta2) * ops.square(grad)
        assign(m, m_t)
        assign(v, v_t)
        return assign(var, ops.subtract(var.value(), lr * m_t / (ops.sqrt(v_t) + self._epsilon)))

    def _finish(self, update_ops, name_scope):
        for name, beta in (("beta1_power", self._beta1), ("beta2_power", self._beta2)):
            power = self._get_non_slot_variable(name)
            assign(power, power.value() * ops.cast(_value(beta), power.variable.dtype))
        return TrainOp(name_scope)


class RMSPropOptimizer(Optimizer):
    """RMSProp, as `tf.compat.v1.train.RMSPropOptimizer`.

    `ms = ms + (g^2 - ms)(1 - decay)`; with `centered`, also
    `mg = mg + (g - mg)(1 - decay)` and the denominator uses `ms - mg^2`;
    `mom = momentum mom + lr g / sqrt(denominator + epsilon)`; `var -= mom`.
    Slots `"rms"` (initialized to ones), `"mg"` and `"momentum"` are
    `<var>/RMSProp`, `<var>/RMSProp_1`, ....

    Args:
        learning_rate: a float, tensor or callable.
        decay: the discounting factor of the squared gradients.
        momentum: the momentum.
        epsilon: added inside the square root.
        use_locking: ignored.
        centered: normalize by the estimated variance of the gradient.
        name: defaults to `"RMSProp"`.
    """

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay, self._momentum, self._epsilon = decay, momentum, epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        for v in var_list:
            variable = keras_variable(v)
            self._get_or_make_slot_with_initializer(
                variable, "ones", variable.shape, variable.dtype, "rms", self._name
            )
            if self._centered:
                self._zeros_slot(variable, "mg", self._name)
            self._zeros_slot(variable, "momentum", self._name)

    def _apply_dense(self, grad, var):
        dtype = var.variable.dtype
        decay = ops.cast(_value(self._decay), dtype)
        momentum = ops.cast(_value(self._momentum), dtype)
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        ms = rms.value() + (ops.square(grad) - rms.value()) * (1 - decay)
        assign(rms, ms)
        denominator = ms
        if self._centered:
            mg_slot = self.get_slot(var, "mg")
            mg = mg_slot.value() + (grad - mg_slot.value()) * (1 - decay)
            assign(mg_slot, mg)
            denominator = ms - ops.square(mg)
        new_mom = ops.add(
            mom.value() * momentum, self._rate(var) * grad / ops.sqrt(denominator + self._epsilon)
        )
        assign(mom, new_mom)
        return assign(var, var.value() - new_mom)


class AdagradOptimizer(Optimizer):
    """Adagrad, as `tf.compat.v1.train.AdagradOptimizer`.

    `accum += g^2`; `var -= lr g / sqrt(accum)`. The slot `"accumulator"`
    (`<var>/Adagrad`) starts at `initial_accumulator_value`.

    Args:
        learning_rate: a float, tensor or callable.
        initial_accumulator_value: the accumulators' starting value (> 0).
        use_locking: ignored.
        name: defaults to `"Adagrad"`.

    Raises:
        ValueError: if `initial_accumulator_value` is not positive.
    """

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                "initial_accumulator_value must be positive. Received: "
                f"initial_accumulator_value={initial_accumulator_value!r}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial = initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            variable = keras_variable(v)
            self._get_or_make_slot_with_initializer(
                variable, keras.initializers.Constant(self._initial), variable.shape,
                variable.dtype, "accumulator", self._name,
            )

    def _apply_dense(self, grad, var):
        accum = self.get_slot(var, "accumulator")
        new_accum = accum.value() + ops.square(grad)
        assign(accum, new_accum)
        return assign(var, ops.subtract(var.value(), self._rate(var) * grad / ops.sqrt(new_accum)))


# ----------------------------------------------------------------------
# The global step.


def _is_step_global_step(variable):
    """Whether `variable` is the store's `global_step`, which the step itself advances."""
    try:
        context = scope._current("train.Optimizer.apply_gradients")
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

    Args:
        graph: ignored.

    Returns:
        A variable (TF1-style view) or an integer scalar tensor.

    Raises:
        RuntimeError: outside a `model_fn` run by this library.
    """
    del graph
    step = train_ops.current_store_global_step()
    return VariableView(step) if isinstance(step, keras.Variable) else step


def get_global_step(graph=None):
    """The global step (`get_or_create_global_step`: TPUEstimator always has one)."""
    return get_or_create_global_step(graph)


create_global_step = get_or_create_global_step


# ----------------------------------------------------------------------
# Learning-rate schedules of the global step (TF1 names, Keras's schedules).


def _schedule(schedule, global_step, function):
    if global_step is None:
        raise ValueError(f"global_step is required for {function}.")
    return schedule(ops.convert_to_tensor(keras_variable(global_step)))


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """`learning_rate * decay_rate ^ (global_step / decay_steps)`, floored with `staircase`.

    Raises:
        ValueError: if `global_step` is None.

    Example:

    ```python
    lr = tf1.train.exponential_decay(0.1, tf1.train.get_global_step(), 1000, 0.96)
    ```
    """
    del name
    return _schedule(
        keras.optimizers.schedules.ExponentialDecay(
            learning_rate, decay_steps, decay_rate, staircase=staircase
        ),
        global_step, "exponential_decay",
    )


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    """Decays from `learning_rate` to `end_learning_rate` over `decay_steps`, as TF1.

    `(lr - end) * (1 - min(step, decay_steps) / decay_steps) ^ power + end`;
    with `cycle`, `decay_steps` grows to the next multiple past the step.

    Raises:
        ValueError: if `global_step` is None.
    """
    del name
    return _schedule(
        keras.optimizers.schedules.PolynomialDecay(
            learning_rate, decay_steps, end_learning_rate=end_learning_rate, power=power,
            cycle=cycle,
        ),
        global_step, "polynomial_decay",
    )


def piecewise_constant(x, boundaries, values, name=None):
    """`values[i]` for `boundaries[i-1] < x <= boundaries[i]`, as TF1.

    Raises:
        ValueError: if `x` is None or `len(values) != len(boundaries) + 1`.
    """
    del name
    if len(values) != len(boundaries) + 1:
        raise ValueError(
            "The length of `values` must be one more than the length of "
            f"`boundaries`. Received: boundaries={boundaries!r}, values={values!r}"
        )
    return _schedule(
        keras.optimizers.schedules.PiecewiseConstantDecay(list(boundaries), list(values)),
        x, "piecewise_constant",
    )


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """Cosine decay to `alpha * learning_rate` over `decay_steps`, as TF1.

    Raises:
        ValueError: if `global_step` is None.
    """
    del name
    return _schedule(
        keras.optimizers.schedules.CosineDecay(learning_rate, decay_steps, alpha=alpha),
        global_step, "cosine_decay",
    )


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """`learning_rate / (1 + decay_rate * global_step / decay_steps)`, as TF1.

    Raises:
        ValueError: if `global_step` is None.
    """
    del name
    return _schedule(
        keras.optimizers.schedules.InverseTimeDecay(
            learning_rate, decay_steps, decay_rate, staircase=staircase
        ),
        global_step, "inverse_time_decay",
    )


# ----------------------------------------------------------------------
# Moving averages.


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
            var_list = variables_lib.trainable_variables()
        decay = ops.convert_to_tensor(_value(self._decay), "float32")
        if self._num_updates is not None:
            updates = ops.cast(_value(self._num_updates), "float32")
            if _is_step_global_step(self._num_updates):
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
                self._averages[id(variable)] = _store_variable(
                    _unique_path(f"{variable.path}/{self._name}"),
                    _value_of(variable), variable.shape, variable.dtype,
                )
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
        shadow's name; every other variable used so far maps from its own.
        """
        averaged = (
            variables_lib.trainable_variables()
            if moving_avg_variables is None else list(moving_avg_variables)
        )
        averaged_ids = {id(keras_variable(v)) for v in averaged}
        shadows = {id(v) for v in self._averages.values()}
        result = {}
        for view in variables_lib.global_variables():
            variable = view.variable
            if id(variable) in shadows:
                continue
            if id(variable) in averaged_ids:
                result[self.average_name(variable)] = view
            else:
                result[variable.path] = view
        return result


# ----------------------------------------------------------------------
# Checkpoints.


class Scaffold:
    """What a `scaffold_fn` returns, as `tf.compat.v1.train.Scaffold`.

    Only a return value: warm starts go through `init_from_checkpoint`
    inside `scaffold_fn` (run once per build, after `model_fn`), saving
    through `model_dir` checkpoints. The arguments are kept as attributes.
    """

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None,
                 saver=None, copy_from_scaffold=None, local_init_feed_dict=None):
        self.init_op, self.init_fn, self.saver = init_op, init_fn, saver


def list_variables(ckpt_dir_or_file):
    """`[(name, shape), ...]` of a checkpoint (TF1's, TF2's or this library's), sorted."""
    return [(name, list(shape)) for name, shape in checkpoint_lib.list_variables(ckpt_dir_or_file)]


def load_variable(ckpt_dir_or_file, name):
    """The value of `name` in a checkpoint, as a numpy array."""
    return checkpoint_lib.load_variable(ckpt_dir_or_file, name)


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Initializes variables from a checkpoint, as `tf.compat.v1.train.init_from_checkpoint`.

    Call it in `model_fn` or in the spec's `scaffold_fn`. As in TF1 it sets
    *initial* values: it acts when the variables are created (the first
    build of a mode), before a `model_dir` checkpoint is restored over them,
    and never over trained weights. The checkpoint may be written by
    TensorFlow 1.x/2.x (`model.ckpt-1000`, a TF `model_dir`) or by this
    library.

    `assignment_map` maps checkpoint names to model variables, TF1's forms:

    - `{"ckpt/scope/": "model/scope/"}`: every model variable under
      `model/scope/` from the same name under `ckpt/scope/`;
    - `{"/": "model/scope/"}` (checkpoint root) and `{"ckpt/scope/": "/"}`
      (model root);
    - `{"ckpt/var": "model/var"}` or `{"ckpt/var": variable}`: one variable
      (BERT's `get_assignment_map_from_checkpoint` form; `:0` is dropped).

    What was loaded is logged (logger `"keras_tpu_estimator"`) and kept as
    a `kte.checkpoint.WarmStartReport` (matched, unmatched: not in the
    checkpoint, shape_mismatched: left as they were) in the model's
    `init_from_checkpoint_reports`.

    Args:
        ckpt_dir_or_file: a checkpoint prefix or directory.
        assignment_map: a dict as above.

    Raises:
        ValueError: if there is no checkpoint at `ckpt_dir_or_file`,
            `assignment_map` is not a dict, a single-variable entry names
            no model variable, or a scope entry maps to a non-scope.
        RuntimeError: outside `model_fn` and `scaffold_fn`.

    Example:

    ```python
    def scaffold_fn():
        tf1.train.init_from_checkpoint(init_checkpoint, {"bert/": "bert/"})
        return tf1.train.Scaffold()
    ```
    """
    if not isinstance(assignment_map, dict):
        raise ValueError(
            "Argument `assignment_map` of init_from_checkpoint must be a dict of "
            f"checkpoint name to variable or scope. Received: {assignment_map!r}"
        )
    if not initialization.in_build_pass():
        scope._current("compat.v1.train.init_from_checkpoint")  # Raises outside model_fn.
        return None  # A compiled step: the initial values were set at build.
    reader = checkpoint_lib.checkpoint_reader(ckpt_dir_or_file)
    pairs = [(key, _map_target(key, value)) for key, value in assignment_map.items()]
    initialization.defer_to_end_of_build(lambda build: _initialize(reader, pairs, build))
    return None


def _map_target(key, value):
    if not isinstance(key, str) or not key:
        raise ValueError(
            f"The keys of `assignment_map` must be checkpoint names. Received: {key!r}"
        )
    if isinstance(value, str):
        return value.split(":")[0]
    variable = keras_variable(value)
    if not isinstance(variable, keras.Variable):
        raise ValueError(
            "The values of `assignment_map` must be variable or scope names, or "
            f"variables. Received: {key!r}: {value!r}"
        )
    return variable


def _initialize(reader, pairs, build):
    """Loads `pairs` (checkpoint name, target) into the variables `build` created.

    Returns:
        A `kte.checkpoint.WarmStartReport`.
    """
    model = build.store.variables_by_name()
    new_variables = build.new_variables()
    wanted = {}  # model path -> checkpoint name
    for key, target in pairs:
        if isinstance(target, keras.Variable):
            wanted[target.path] = key
            continue
        if target in model and not key.endswith("/"):
            wanted[target] = key
            continue
        if not key.endswith("/"):
            raise ValueError(
                f"init_from_checkpoint: {target!r} is not a variable of the model, so "
                f"the entry {key!r}: {target!r} is taken as a scope, and a scope must "
                "map to a scope: 'scope/': 'other_scope/'."
            )
        prefix = "" if target in ("", "/") else target.rstrip("/") + "/"
        source = "" if key == "/" else key
        for path in model:
            if path.startswith(prefix):
                wanted[path] = source + path[len(prefix):]
    # A variable created by an earlier build is already initialized (or trained).
    wanted = {path: name for path, name in wanted.items() if path in new_variables}
    report = checkpoint_lib._load_from_reader(reader, wanted, new_variables)
    matched, unmatched, mismatched = report
    logger.info("init_from_checkpoint: initialized %d variables from %s: %s",
                len(matched), reader.path, matched)
    if unmatched:
        logger.warning("init_from_checkpoint: %d variables are not in %s and keep their "
                       "initial values: %s", len(unmatched), reader.path, unmatched)
    if mismatched:
        logger.warning("init_from_checkpoint: %d variables have another shape in %s and "
                       "were not loaded (name, model shape, checkpoint shape): %s",
                       len(mismatched), reader.path, mismatched)
    return report

