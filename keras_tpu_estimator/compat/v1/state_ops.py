"""TF1's sparse variable updates: `tf.scatter_update`, `tf.scatter_add`, `tf.scatter_nd_update`, ...

Each op writes new values into some rows (or slices) of a variable and
returns the variable's new value; like `tf1.assign`, the write takes effect
in the training step (see `keras_tpu_estimator.train_ops`): later reads in
`model_fn` and the next step see it.

- `scatter_<op>(ref, indices, updates)`: rows `indices` (integers of any
  shape) of `ref` with `updates` of shape `indices.shape + ref.shape[1:]`
  (a scalar is broadcast): set (`update`), `add`, `sub`, `mul`, `div`,
  `min`, `max`.
- `scatter_nd_<op>(ref, indices, updates)`: the slices at the index tuples
  in the last axis of `indices`, as `tf1.tensor_scatter_nd_*`: `update`,
  `add`, `sub`.
- `batch_scatter_update(ref, indices, updates)`: per batch row, as
  `batch_gather` reads.

Duplicate indices: `add`/`sub`/`mul`/`div` apply every update, `min`/`max`
keep the extreme, `update` keeps one of them (which one is unspecified, as
in TF). Out-of-range indices (negative ones included) are ignored, as
TensorFlow does on TPU (TF on CPU raises an error instead). Integer
`scatter_div` truncates toward zero, as TF.

```python
# A queue of the last 100 batch means, in a non-trainable variable.
queue = tf1.get_variable("queue", [100, dim], trainable=False,
                         initializer=tf1.zeros_initializer())
slot = tf1.mod(tf1.train.get_global_step(), 100)
tf1.scatter_update(queue, slot, tf1.reduce_mean(features, 0))
```
"""

import jax
import jax.numpy as jnp
import keras
import numpy as np

from keras_tpu_estimator.compat.v1 import scatter_ops
from keras_tpu_estimator.compat.v1._op_helpers import as_tensor as _as_tensor
from keras_tpu_estimator.compat.v1._variable_views import keras_variable as _keras_variable


def _variable(ref, op):
    variable = _keras_variable(ref)
    if not isinstance(variable, keras.Variable):
        raise TypeError(f"{op}(): ref must be a variable (from tf1.get_variable or a layer). "
                        f"Received: {type(ref).__name__}")
    return variable


def _updates(updates, dtype, op):
    """`updates` in the variable's `dtype`: Python values converted, tensors must match."""
    python = isinstance(updates, (np.ndarray, np.generic)) or not hasattr(updates, "dtype")
    tensor = _as_tensor(updates, dtype if python else None)
    if tensor.dtype != dtype:
        raise TypeError(f"{op}(): updates ({tensor.dtype}) and ref ({dtype}) must have the "
                        "same dtype.")
    return tensor


def _row_indices(indices, rows, op):
    """Integer row `indices` as an index into axis 0; negative ones past the end (dropped)."""
    indices = _as_tensor(indices)
    if not jnp.issubdtype(indices.dtype, jnp.integer):
        raise TypeError(f"{op}(): indices must be int32 or int64. Received dtype: "
                        f"{indices.dtype}")
    return jnp.where(indices < 0, rows, indices)


def _assign(variable, value):
    variable.assign(value)
    return variable.value


def _row_scatter(method, doc):
    op_name = f"scatter_{method}"

    def op(ref, indices, updates, use_locking=method == "update", name=None):
        del use_locking, name
        variable = _variable(ref, op_name)
        value = variable.value
        if not value.shape:
            raise ValueError(f"{op_name}(): ref must have at least one axis. Received a scalar.")
        at = value.at[_row_indices(indices, value.shape[0], op_name)]
        updates = _updates(updates, value.dtype, op_name)
        if method == "update":
            new = at.set(updates, mode="drop")
        elif method == "add":
            new = at.add(updates, mode="drop")
        elif method == "sub":
            new = at.add(-updates, mode="drop")
        elif method == "mul":
            new = at.multiply(updates, mode="drop")
        elif method == "div":
            divisor = jnp.ones_like(value).at[_row_indices(indices, value.shape[0], op_name)]
            divisor = divisor.multiply(updates, mode="drop")
            new = (jax.lax.div(value, divisor) if jnp.issubdtype(value.dtype, jnp.integer)
                   else value / divisor)
        else:
            new = getattr(at, method)(updates, mode="drop")
        return _assign(variable, new)

    op.__name__ = op_name
    op.__doc__ = doc + """

    Args:
        ref: a variable (`tf1.get_variable`, a layer's variable or its view).
        indices: integer row indices of any shape.
        updates: values of shape `indices.shape + ref.shape[1:]` (or a
            scalar) and `ref`'s dtype (Python numbers are converted).
        use_locking: ignored.
        name: ignored.

    Returns:
        The variable's new value.

    Raises:
        TypeError: for a `ref` that is not a variable, non-integer
            `indices`, or `updates` of another dtype.
    """
    return op


scatter_update = _row_scatter("update", "Sets rows `indices` of the variable `ref` to `updates`.")
scatter_add = _row_scatter("add", "Adds `updates` to rows `indices` of the variable `ref`.")
scatter_sub = _row_scatter("sub", "Subtracts `updates` from rows `indices` of the variable `ref`.")
scatter_mul = _row_scatter("mul", "Multiplies rows `indices` of the variable `ref` by `updates`.")
scatter_div = _row_scatter("div", "Divides rows `indices` of the variable `ref` by `updates`.")
scatter_min = _row_scatter(
    "min", "Rows `indices` of the variable `ref` become their minimum with `updates`.")
scatter_max = _row_scatter(
    "max", "Rows `indices` of the variable `ref` become their maximum with `updates`.")


def _nd_scatter(method, tensor_op, doc):
    op_name = f"scatter_nd_{method}"

    def op(ref, indices, updates, use_locking=method == "update", name=None):
        del use_locking, name
        variable = _variable(ref, op_name)
        value = variable.value
        return _assign(variable, tensor_op(value, indices, _updates(updates, value.dtype,
                                                                       op_name)))

    op.__name__ = op_name
    op.__doc__ = doc + """

    Args:
        ref: a variable (`tf1.get_variable`, a layer's variable or its view).
        indices: integer index tuples, shape `[..., k]` (`k <= rank(ref)`).
        updates: values of shape `indices.shape[:-1] + ref.shape[k:]` and
            `ref`'s dtype (Python numbers are converted).
        use_locking: ignored.
        name: ignored.

    Returns:
        The variable's new value.

    Raises:
        TypeError: for a `ref` that is not a variable or `updates` of
            another dtype.
        ValueError: for index tuples longer than `ref`'s rank.
    """
    return op


scatter_nd_update = _nd_scatter(
    "update", scatter_ops.tensor_scatter_nd_update,
    "Sets the slices of the variable `ref` at the index tuples `indices` to `updates`.")
scatter_nd_add = _nd_scatter(
    "add", scatter_ops.tensor_scatter_nd_add,
    "Adds `updates` to the slices of the variable `ref` at the index tuples `indices`.")
scatter_nd_sub = _nd_scatter(
    "sub", scatter_ops.tensor_scatter_nd_sub,
    "Subtracts `updates` from the slices of the variable `ref` at the index tuples `indices`.")


def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    """Sets, per batch row, the elements `indices` of the variable `ref` to `updates`.

    With `indices` of shape `[B..., M]` (`B...` the leading axes of `ref`),
    `ref[b..., indices[b..., m]] = updates[b..., m]`.

    Args:
        ref: a variable `[B..., N, ...]`.
        indices: integer ids `[B..., M]` into the axis after the batch axes.
        updates: values `[B..., M, ...]` of `ref`'s dtype.
        use_locking: ignored.
        name: ignored.

    Returns:
        The variable's new value.

    Raises:
        TypeError: for a `ref` that is not a variable or `updates` of
            another dtype.
        ValueError: for `indices` whose batch axes are not `ref`'s.
    """
    del use_locking, name
    variable = _variable(ref, "batch_scatter_update")
    value = variable.value
    indices = _as_tensor(indices)
    batch = tuple(indices.shape[:-1])
    if len(indices.shape) < 1 or tuple(value.shape[:len(batch)]) != batch:
        raise ValueError("batch_scatter_update(): the batch axes of indices "
                         f"{tuple(indices.shape)} must lead the shape of ref "
                         f"{tuple(value.shape)}.")
    grid = np.meshgrid(*[np.arange(d) for d in indices.shape], indexing="ij")[:-1]
    tuples = jnp.stack([jnp.asarray(g, indices.dtype) for g in grid] + [indices], axis=-1)
    updates = _updates(updates, value.dtype, "batch_scatter_update")
    return _assign(variable, scatter_ops.tensor_scatter_nd_update(value, tuples, updates))


__all__ = [
    "batch_scatter_update", "scatter_add", "scatter_div", "scatter_max", "scatter_min",
    "scatter_mul", "scatter_nd_add", "scatter_nd_sub", "scatter_nd_update", "scatter_sub",
    "scatter_update",
]
