"""`tf.contrib.layers.layer_norm`, with TF1's variables `LayerNorm/beta` and `LayerNorm/gamma`.

Like the other contrib layer functions it takes its defaults from
`arg_scope`, puts its variables in `variables_collections` and its output
in `outputs_collections`.

```python
def layer_norm(x, name=None):     # as BERT writes it
    return tf1.contrib.layers.layer_norm(
        inputs=x, begin_norm_axis=-1, begin_params_axis=-1, scope=name)
```
"""

from keras import ops

from keras_tpu_estimator.compat.v1 import initializers
from keras_tpu_estimator.compat.v1 import nn
from keras_tpu_estimator.compat.v1.contrib._arg_scope import add_arg_scope
from keras_tpu_estimator.compat.v1.contrib.layers import _common
from keras_tpu_estimator.compat.v1.variables import variable_scope

_HALF = ("float16", "bfloat16")
# TF1's `variance_epsilon`: small enough that only an all-equal row sees it.
_EPSILON = 1e-12


def _axis(value, rank):
    return value % rank if -rank <= value < rank else None


@add_arg_scope
def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """Layer normalization with TF1's variables `<scope>/beta` and `<scope>/gamma`.

    The scope defaults to `LayerNorm` (`LayerNorm_1`, ... when repeated), as
    in TF1, so BERT-style checkpoints and the `LayerNorm` weight-decay
    exclusion see the same names. Normalizes over the axes from
    `begin_norm_axis` on, with epsilon 1e-12, in float32 for half-precision
    inputs; the parameters have the shape of the axes from
    `begin_params_axis` on.

    Args:
        inputs: a tensor of rank >= 2.
        center: add `beta`.
        scale: multiply by `gamma`.
        activation_fn: applied to the result when given.
        reuse: `variable_scope` reuse.
        variables_collections: a list of collections, or a dict
            `{"beta": [...], "gamma": [...]}`, the variables join.
        outputs_collections: collections the output joins.
        trainable: whether `beta`/`gamma` are trained.
        begin_norm_axis: first axis normalized over.
        begin_params_axis: first axis of the parameters' shape.
        scope: the variable scope's name.

    Returns:
        The normalized tensor, with the dtype of `inputs`.

    Raises:
        ValueError: for an axis outside the rank of `inputs`.

    Example:

    ```python
    x = tf1.contrib.layers.layer_norm(x, begin_norm_axis=-1, begin_params_axis=-1)
    ```
    """
    inputs = _common.as_tensor(inputs)
    rank = len(inputs.shape)
    norm_axis, params_axis = _axis(begin_norm_axis, rank), _axis(begin_params_axis, rank)
    if norm_axis is None or params_axis is None:
        raise ValueError(
            f"layer_norm: begin_norm_axis={begin_norm_axis} and begin_params_axis="
            f"{begin_params_axis} must lie in [-{rank}, {rank}) for inputs of rank {rank}.")
    params_shape = tuple(int(d) for d in inputs.shape[params_axis:])
    with variable_scope(scope, default_name="LayerNorm", reuse=reuse):
        parameters = {}
        for name, wanted, initializer in (("beta", center, initializers.zeros_initializer()),
                                          ("gamma", scale, initializers.ones_initializer())):
            parameters[name] = _common.model_variable(
                name, params_shape, "float32", initializer, trainable=trainable,
                collections=_common.variable_collections(variables_collections, name),
            ) if wanted else None
        dtype = _common.dtype_of(inputs)
        x = ops.cast(inputs, "float32") if dtype in _HALF else inputs
        mean, variance = ops.moments(x, axes=tuple(range(norm_axis, rank)), keepdims=True)
        outputs = nn.batch_normalization(x, mean, variance, parameters["beta"],
                                         parameters["gamma"], _EPSILON)
        outputs = ops.cast(outputs, dtype)
        return _common.finish(outputs, None, None, activation_fn, outputs_collections)
