"""Row gathers of variables with TF1's `IndexedSlices` gradient norm.

In TF1, `tf.gather(table, ids)` / `tf.nn.embedding_lookup(table, ids)` of a
variable give `IndexedSlices` gradients: one row per id, duplicates not
summed, and `tf.global_norm` / `tf.clip_by_global_norm` take the norm over
those rows. `take_rows` gathers like `keras.ops.take(..., axis=0)`; in the
differentiated pass of a training step by assignment (`train_ops`), its
gradient goes to the variable's probes: the rows' scatter-added gradient
(what the variable would have received) and the sum of squares of the rows
one by one. `tf1.gradients` still returns dense arrays; `global_norm` asks
`train_ops.row_square_sum` for TF1's sum of squares.
"""

import jax
import jax.numpy as jnp
import keras
from keras import ops

from keras_tpu_estimator.compat.v1._variable_views import keras_variable
from keras_tpu_estimator.model_fn import train_ops


def _take(params, indices):
    return jnp.take(params, indices, axis=0)


@jax.custom_vjp
def _probed_take(params, rows_probe, squares_probe, indices):
    del rows_probe, squares_probe
    return _take(params, indices)


def _probed_take_fwd(params, rows_probe, squares_probe, indices):
    return _take(params, indices), (params, indices)


def _probed_take_bwd(residuals, cotangent):
    params, indices = residuals
    # The gradient take's own VJP gives (scatter-add, duplicates summed), to the rows probe.
    _, pullback = jax.vjp(lambda p: _take(p, indices), params)
    (rows,) = pullback(cotangent)
    squares = jnp.sum(jnp.square(cotangent.astype("float32")))
    return jnp.zeros_like(params), rows, squares, None


_probed_take.defvjp(_probed_take_fwd, _probed_take_bwd)


def take_rows(params, indices):
    """`keras.ops.take(params, indices, axis=0)`, with TF1's row-gradient norm for variables.

    Args:
        params: a variable (`keras.Variable` or `VariableView`) or a tensor.
        indices: integer ids, any shape.

    Returns:
        The rows, shape `indices.shape + params.shape[1:]`.
    """
    variable = keras_variable(params)
    probes = train_ops.gather_probes(variable) if isinstance(variable, keras.Variable) else None
    if probes is None:
        return ops.take(params, indices, axis=0)
    value = variable.value
    rows_probe, squares_probe = probes
    return _probed_take(value, rows_probe, squares_probe, ops.convert_to_tensor(indices))
