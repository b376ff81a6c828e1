"""TF1 optimizers (`tf.compat.v1.train.AdamOptimizer`, ...), training by assignment.

They keep TF1's update rules and variable names (`dense/kernel/Adam`,
`dense/kernel/Adam_1`, `beta1_power`, ...), so TF1 checkpoints, `get_slot`
and name filters keep working. `minimize` and `apply_gradients` assign new
values inside the step (see `keras_tpu_estimator.train_ops`), and their
result is the spec's `train_op`. A `train.Optimizer` subclass written as
BERT, ALBERT or ELECTRA write theirs (slots from `get_variable`, updates
with `assign`) works the same way. Exported as `tf1.train.*`.
"""

import keras
import numpy as np
from keras import ops

from keras_tpu_estimator.compat.v1._global_step import is_step_global_step
from keras_tpu_estimator.compat.v1._train_variables import copy_initializer
from keras_tpu_estimator.compat.v1._train_variables import resolve_value
from keras_tpu_estimator.compat.v1._train_variables import store_variable
from keras_tpu_estimator.compat.v1._train_variables import unique_path
from keras_tpu_estimator.compat.v1._variable_views import VariableView
from keras_tpu_estimator.compat.v1._variable_views import keras_variable
from keras_tpu_estimator.compat.v1._variable_views import trainable_variables
from keras_tpu_estimator.compat.v1.training_ops import assign
from keras_tpu_estimator.compat.v1.training_ops import assign_add
from keras_tpu_estimator.compat.v1.training_ops import gradients
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.model_fn.train_ops import TrainOp
from keras_tpu_estimator.spec import ModeKeys


def _training():
    """Whether the `model_fn` call in progress (if any) is a TRAIN call."""
    try:
        return store_lib.current_mode() == ModeKeys.TRAIN
    except RuntimeError:  # Outside model_fn: as in TRAIN.
        return True


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

        As in TF1, a variable of `var_list` that is not trainable (a batch
        normalization moving mean in `get_collection(GLOBAL_VARIABLES,
        scope=...)`) gets no gradient: its pair is `(None, variable)`, and
        `apply_gradients` skips it.

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
        var_list = trainable_variables() if var_list is None else list(var_list)
        if not var_list:
            raise ValueError(
                "No variables to optimize: model_fn created no trainable variable "
                "before compute_gradients, and `var_list` is empty."
            )
        trained = [v for v in var_list if keras_variable(v).trainable]
        if not trained:
            return [(None, v) for v in var_list]
        found = dict(zip(map(id, trained), gradients(loss, trained)))
        return [(found.get(id(v)), v) for v in var_list]

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

        In EVAL and PREDICT (a `model_fn` that builds its train op in every
        mode, as TF1 allowed), nothing is created or assigned.

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
        if not _training():
            # A TF1 graph built the update in every mode and ran it in TRAIN only.
            return TrainOp(name or self._name)
        self._create_slots(with_grads)
        self._prepare()
        updates = [self._apply_dense(g, v) for g, v in pairs if g is not None]
        self._finish(updates, name or self._name)
        if global_step is not None and not is_step_global_step(global_step):
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
            slot = store_variable(
                unique_path(f"{variable.path}/{op_name}"), initializer,
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
            variable, copy_initializer(keras_variable(val)), variable.shape, variable.dtype,
            slot_name, op_name,
        )

    def _create_non_slot_variable(self, initial_value, name, colocate_with=None):
        del colocate_with
        if name not in self._non_slots:
            value = np.asarray(initial_value, dtype=keras.backend.floatx())
            variable = store_variable(unique_path(name), value, value.shape, value.dtype.name)
            self._non_slots[name] = variable
            self._created.append(variable)
        return VariableView(self._non_slots[name])

    def _get_non_slot_variable(self, name, graph=None):
        del graph
        variable = self._non_slots.get(name)
        return None if variable is None else VariableView(variable)

    def _rate(self, var):
        return ops.cast(resolve_value(self._learning_rate), var.variable.dtype)


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
        momentum = ops.cast(resolve_value(self._momentum), var.variable.dtype)
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
        beta1 = ops.cast(resolve_value(self._beta1), dtype)
        beta2 = ops.cast(resolve_value(self._beta2), dtype)
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
            assign(power, power.value() * ops.cast(resolve_value(beta), power.variable.dtype))
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
        decay = ops.cast(resolve_value(self._decay), dtype)
        momentum = ops.cast(resolve_value(self._momentum), dtype)
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
