"""TF1's gradient, clipping and assignment ops: `tf.gradients`, `tf.clip_by_global_norm`, `tf.assign`, `tf.group`.

They run inside a training step by assignment (see
`keras_tpu_estimator.train_ops`): `gradients` returns the real gradients of
the step, and an assignment writes the variable's new value for the step.

```python
tvars = tf1.trainable_variables()
grads = tf1.gradients(loss, tvars)
grads, norm = tf1.clip_by_global_norm(grads, clip_norm=1.0)
train_op = optimizer.apply_gradients(zip(grads, tvars), global_step=global_step)
train_op = tf1.group(train_op, [global_step.assign(global_step + 1)])
```
"""

import keras
from keras import ops

from keras_tpu_estimator.compat.v1._variable_views import keras_variable
from keras_tpu_estimator.model_fn import train_ops
from keras_tpu_estimator.model_fn.train_ops import TrainOp


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients=None):
    """The gradients of `ys` with respect to the variables `xs`, as `tf.gradients`.

    `ys` (a scalar, or a list summed) is differentiated with respect to every
    variable of `xs` in the current training step. Unlike TF1, a variable the
    loss does not depend on gets zeros, never None.

    Args:
        ys: the loss: a scalar tensor or a list of tensors.
        xs: a variable or a list of variables (`trainable_variables()`).
        grad_ys: must be None (weighting `ys` is not supported).
        name, colocate_gradients_with_ops, gate_gradients, aggregation_method,
            unconnected_gradients: accepted and ignored.
        stop_gradients: must be None.

    Returns:
        A list of tensors, one per variable of `xs` (one tensor when `xs` is a
        single variable).

    Raises:
        ValueError: for `grad_ys` or `stop_gradients`, or a variable the
            training step does not differentiate.
        TypeError: if `xs` holds tensors instead of variables.

    Example:

    ```python
    grads = tf1.gradients(loss, tf1.trainable_variables())
    ```
    """
    del name, colocate_gradients_with_ops, gate_gradients, aggregation_method
    del unconnected_gradients
    if grad_ys is not None or stop_gradients is not None:
        raise ValueError(
            "gradients(grad_ys=..., stop_gradients=...) is not supported: weight "
            "or stop the loss itself (keras.ops.stop_gradient). Received: "
            f"grad_ys={grad_ys!r}, stop_gradients={stop_gradients!r}"
        )
    return train_ops.gradients(ys, xs)  # Takes variables and their TF1-style views.


def _square_sum(t):
    """TF1's sum of squares of `t`: over its `IndexedSlices` rows for a gathered variable's gradient."""
    rows = train_ops.row_square_sum(t)
    return rows if rows is not None else ops.sum(ops.square(ops.cast(t, "float32")))


def global_norm(t_list, name=None):
    """The square root of the sum of the squared L2 norms of `t_list` (None entries skipped).

    As in TF1, the gradient of a variable read by `gather` /
    `nn.embedding_lookup` counts as TF1's `IndexedSlices`: one row per
    gathered index, duplicates not summed (`sqrt(sum_i |row_i| ** 2)`, not
    the norm of the summed dense gradient). This holds for the arrays
    `gradients` returns and `clip_by_global_norm` rescales; any other
    operation on them gives a plain array, counted densely.

    Args:
        t_list: a list of tensors (or None).
        name: ignored.

    Returns:
        A float32 scalar.

    Raises:
        TypeError: if `t_list` is not a list or tuple.

    Example:

    ```python
    grads = tf1.gradients(loss, tf1.trainable_variables())
    norm = tf1.global_norm(grads)
    ```
    """
    del name
    if not isinstance(t_list, (list, tuple)):
        raise TypeError(f"`t_list` of global_norm must be a list or tuple. Received: {t_list!r}")
    squares = [_square_sum(t) for t in t_list if t is not None]
    if not squares:
        return ops.zeros((), "float32")
    return ops.sqrt(ops.sum(ops.stack(squares)))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales `t_list` so that its global norm is at most `clip_norm`, as TF1.

    Each tensor becomes `t * clip_norm / max(global_norm, clip_norm)`; None
    entries stay None. A non-finite norm makes every entry NaN (as TF1).
    The norm is `global_norm`'s: gathered variables' gradients count by
    their rows, as TF1's `IndexedSlices`.

    Args:
        t_list: a list of tensors (or None), e.g. gradients.
        clip_norm: a positive scalar.
        use_norm: the global norm to use instead of computing it.
        name: ignored.

    Returns:
        `(list_clipped, global_norm)`.

    Raises:
        TypeError: if `t_list` is not a list or tuple.

    Example:

    ```python
    grads, _ = tf1.clip_by_global_norm(grads, clip_norm=1.0)
    ```
    """
    del name
    if not isinstance(t_list, (list, tuple)):
        raise TypeError(
            f"`t_list` of clip_by_global_norm must be a list or tuple. Received: {t_list!r}"
        )
    t_list = list(t_list)
    norm = global_norm(t_list) if use_norm is None else ops.cast(use_norm, "float32")
    clip_norm = ops.cast(clip_norm, "float32")
    scale = clip_norm * ops.minimum(1.0 / norm, 1.0 / clip_norm)
    # TF1 turns every value into NaN when the norm is not finite.
    scale = ops.where(ops.isfinite(norm), scale, float("nan"))
    clipped = []
    for t in t_list:
        if t is None:
            clipped.append(None)
            continue
        rows = train_ops.row_square_sum(t)
        clipped.append(ops.cast(ops.cast(t, "float32") * scale, _dtype(t)))
        if rows is not None:  # Still TF1's IndexedSlices, rescaled.
            train_ops.tag_row_square_sum(clipped[-1], rows * ops.square(scale))
    return clipped, norm


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Scales `t` so that its L2 norm (over `axes`) is at most `clip_norm`, as TF1."""
    del name
    t = ops.convert_to_tensor(t)
    norm = ops.sqrt(ops.sum(ops.square(t), axis=axes, keepdims=True))
    return t * clip_norm / ops.maximum(norm, clip_norm)


def _dtype(t):
    return keras.backend.standardize_dtype(t.dtype)


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Sets the variable `ref` to `value` for the rest of this step; returns the new value."""
    del validate_shape, use_locking, name
    variable = keras_variable(ref)
    variable.assign(value)
    return variable.value


def assign_add(ref, value, use_locking=None, name=None):
    """Adds `value` to the variable `ref`; returns the new value."""
    del use_locking, name
    variable = keras_variable(ref)
    variable.assign(ops.add(variable.value, ops.cast(value, variable.dtype)))
    return variable.value


def assign_sub(ref, value, use_locking=None, name=None):
    """Subtracts `value` from the variable `ref`; returns the new value."""
    del use_locking, name
    variable = keras_variable(ref)
    variable.assign(ops.subtract(variable.value, ops.cast(value, variable.dtype)))
    return variable.value


def group(*inputs, name=None):
    """Groups training operations into one `train_op`, as `tf.group`.

    The operations' assignments have already happened when they were
    created (in program order, which is what TF1's control dependencies
    usually enforced); `group` only gives the spec one handle.
    """
    return TrainOp(name or "group_deps")


def no_op(name=None):
    """A `train_op` that assigns nothing (the global step still advances)."""
    return TrainOp(name or "NoOp")
