"""More TF1 optimizers: Adadelta, LARS, and the wrappers that clip or loss-scale.

Exported as `tf1.train.AdadeltaOptimizer`, `tf1.contrib.opt.LARSOptimizer`,
`tf1.contrib.estimator.clip_gradients_by_norm` and
`tf1.train.experimental.enable_mixed_precision_graph_rewrite`. They follow
TF1's update rules and slot names, on the `_optimizers.Optimizer` base.

```python
optimizer = tf1.train.AdadeltaOptimizer(learning_rate)      # w/Adadelta, w/Adadelta_1
optimizer = tf1.contrib.estimator.clip_gradients_by_norm(optimizer, 5.0)
train_op = optimizer.minimize(loss, global_step=tf1.train.get_or_create_global_step())
```
"""

from keras import ops

from keras_tpu_estimator.compat.v1._optimizers import Optimizer
from keras_tpu_estimator.compat.v1._train_variables import resolve_value
from keras_tpu_estimator.compat.v1.training_ops import assign
from keras_tpu_estimator.compat.v1.training_ops import clip_by_global_norm


class AdadeltaOptimizer(Optimizer):
    """Adadelta, as `tf.compat.v1.train.AdadeltaOptimizer`.

    `accum = rho accum + (1 - rho) g^2`;
    `update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * g`;
    `accum_update = rho accum_update + (1 - rho) update^2`;
    `var -= learning_rate * update`. The slots `"accum"` and
    `"accum_update"` are `<var>/Adadelta` and `<var>/Adadelta_1`.

    Args:
        learning_rate: a float, tensor or callable (TF1's default 0.001).
        rho: the decay rate.
        epsilon: keeps the ratio finite.
        use_locking: ignored.
        name: defaults to `"Adadelta"`.

    Example:

    ```python
    train_op = tf1.train.AdadeltaOptimizer(1.0).minimize(loss, global_step)
    ```
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False,
                 name="Adadelta"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._rho, self._epsilon = rho, epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _apply_dense(self, grad, var):
        dtype = var.variable.dtype
        rho = ops.cast(resolve_value(self._rho), dtype)
        epsilon = ops.cast(resolve_value(self._epsilon), dtype)
        accum, accum_update = self.get_slot(var, "accum"), self.get_slot(var, "accum_update")
        new_accum = accum.value() * rho + ops.square(grad) * (1 - rho)
        update = ops.sqrt(accum_update.value() + epsilon) * ops.rsqrt(new_accum + epsilon) * grad
        assign(accum, new_accum)
        assign(accum_update, accum_update.value() * rho + ops.square(update) * (1 - rho))
        return assign(var, ops.subtract(var.value(), self._rate(var) * update))


class LARSOptimizer(Optimizer):
    """Layer-wise Adaptive Rate Scaling, as `tf.contrib.opt.LARSOptimizer`.

    For every variable not matched by `skip_list`:
    `trust = eeta |w| / (|g| + weight_decay |w| + epsilon)` (1 when `|w|` or
    `|g|` is 0), `g += weight_decay w`, and the momentum step is taken with
    `learning_rate * trust`: `accum = momentum accum + lr trust g`,
    `var -= accum` (with `use_nesterov`, `var -= lr trust g + momentum accum`).
    Skipped variables take the plain momentum step with `learning_rate`.
    The slot `"momentum"` is `<var>/LARSOptimizer` (after `name`).

    Args:
        learning_rate: a float, tensor or callable.
        momentum: the momentum (>= 0).
        weight_decay: the weight decay (>= 0).
        eeta: the LARS coefficient.
        epsilon: added to the trust ratio's denominator.
        name: defaults to `"LARSOptimizer"`.
        skip_list: strings; a variable whose name contains one of them is
            neither scaled nor decayed (`['batch_normalization', 'bias']`).
        use_nesterov: Nesterov momentum.

    Raises:
        ValueError: for a negative `momentum` or `weight_decay`.

    Example:

    ```python
    optimizer = tf1.contrib.opt.LARSOptimizer(
        learning_rate, momentum=0.9, weight_decay=1e-4,
        skip_list=["batch_normalization", "bias"])
    ```
    """

    def __init__(self, learning_rate, momentum=0.9, weight_decay=0.0001, eeta=0.001,
                 epsilon=0.0, name="LARSOptimizer", skip_list=None, use_nesterov=False):
        for argument, value in (("momentum", momentum), ("weight_decay", weight_decay)):
            if not callable(value) and value < 0.0:
                raise ValueError(
                    f"Argument `{argument}` of LARSOptimizer must be >= 0. Received: "
                    f"{argument}={value!r}"
                )
        super().__init__(False, name)
        self._learning_rate = learning_rate
        self._momentum, self._weight_decay = momentum, weight_decay
        self._eeta, self._epsilon = eeta, epsilon
        self._skip_list = skip_list
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _scaled(self, grad, var):
        rate = self._rate(var)
        if self._skip_list is not None and any(s in var.name for s in self._skip_list):
            return rate, grad
        w = var.value()
        w_norm, g_norm = ops.norm(ops.reshape(w, (-1,))), ops.norm(ops.reshape(grad, (-1,)))
        trust = self._eeta * w_norm / (g_norm + self._weight_decay * w_norm + self._epsilon)
        trust = ops.where((w_norm > 0) & (g_norm > 0), trust, ops.ones_like(trust))
        return rate * trust, grad + self._weight_decay * w

    def _apply_dense(self, grad, var):
        rate, grad = self._scaled(grad, var)
        step = grad * rate
        momentum = ops.cast(resolve_value(self._momentum), var.variable.dtype)
        accum = self.get_slot(var, "momentum")
        new_accum = accum.value() * momentum + step
        assign(accum, new_accum)
        delta = step + momentum * new_accum if self._use_nesterov else new_accum
        return assign(var, ops.subtract(var.value(), delta))


class _GradientTransform(Optimizer):
    """Wraps an optimizer and rewrites the gradients before it applies them."""

    def __init__(self, opt, name):
        if not isinstance(opt, Optimizer):
            raise TypeError(
                f"{type(self).__name__} wraps a compat.v1.train.Optimizer. Received: "
                f"optimizer={opt!r}"
            )
        super().__init__(False, name)
        self._opt = opt

    def _transform(self, grads_and_vars):
        return grads_and_vars

    def compute_gradients(self, loss, var_list=None, **kwargs):
        return self._opt.compute_gradients(loss, var_list=var_list, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._opt.apply_gradients(self._transform(list(grads_and_vars)),
                                         global_step=global_step, name=name)

    def get_slot(self, var, name):
        return self._opt.get_slot(var, name)

    def get_slot_names(self):
        return self._opt.get_slot_names()

    def variables(self):
        return self._opt.variables()


class _ClipByGlobalNorm(_GradientTransform):
    def __init__(self, opt, clip_norm):
        super().__init__(opt, "ClipByNorm" + getattr(opt, "get_name", lambda: "")())
        self._clip_norm = clip_norm

    def _transform(self, grads_and_vars):
        gradients = [g for g, _ in grads_and_vars]
        clipped, _ = clip_by_global_norm(gradients, resolve_value(self._clip_norm))
        return [(g, v) for g, (_, v) in zip(clipped, grads_and_vars)]


def clip_gradients_by_norm(optimizer, clip_norm):
    """An optimizer that clips the gradients by their global norm, then applies them.

    As `tf.contrib.estimator.clip_gradients_by_norm`: all gradients together
    are scaled by `clip_norm / max(global_norm, clip_norm)`
    (`clip_by_global_norm`), then `optimizer` applies them; its slots and
    variables are those of `optimizer`.

    Args:
        optimizer: a `compat.v1.train.Optimizer`.
        clip_norm: the largest global norm (> 0).

    Returns:
        The wrapping optimizer, named `"ClipByNorm" + optimizer.get_name()`.

    Raises:
        TypeError: if `optimizer` is not a `compat.v1.train.Optimizer`.

    Example:

    ```python
    optimizer = tf1.contrib.estimator.clip_gradients_by_norm(
        tf1.train.GradientDescentOptimizer(2.0), clip_norm=5.0)
    ```
    """
    return _ClipByGlobalNorm(optimizer, clip_norm)


_LOSS_SCALES = ("dynamic",)


def enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic"):
    """Returns `opt`: TF1's float16 graph rewrite has nothing to rewrite here.

    In TF1 this turned on a Grappler pass that recast a GPU graph to float16
    and wrapped `opt` in a loss-scaling optimizer, so that float16 gradients
    did not underflow. A `model_fn` here is not a TensorFlow graph: it
    computes in the dtypes it was written in (float32), where loss scaling
    changes nothing (TF1's rewrite did nothing on CPU or TPU either). For
    reduced precision, compute in bfloat16, which needs no loss scaling:
    `with tf1.tpu.bfloat16_scope():` around the model, or
    `keras.config.set_dtype_policy("mixed_bfloat16")`.

    Args:
        opt: a `compat.v1.train.Optimizer`.
        loss_scale: `"dynamic"`, or a positive number (a fixed scale).

    Returns:
        `opt`, unchanged.

    Raises:
        TypeError: if `opt` is not a `compat.v1.train.Optimizer`.
        ValueError: for another `loss_scale`.
    """
    if not isinstance(opt, Optimizer):
        raise TypeError(
            "enable_mixed_precision_graph_rewrite takes a compat.v1.train.Optimizer. "
            f"Received: opt={opt!r}"
        )
    if loss_scale not in _LOSS_SCALES and not (
        isinstance(loss_scale, (int, float)) and loss_scale > 0
    ):
        raise ValueError(
            "Argument `loss_scale` of enable_mixed_precision_graph_rewrite must be "
            f"'dynamic' or a positive number. Received: loss_scale={loss_scale!r}"
        )
    return opt
