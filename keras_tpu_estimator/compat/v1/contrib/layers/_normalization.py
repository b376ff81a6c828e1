"""`tf.contrib.layers.layer_norm` (and `batch_norm`): normalization layers with TF1's variable names.

```python
def layer_norm(x, name=None):     # as BERT writes it
    return tf1.contrib.layers.layer_norm(
        inputs=x, begin_norm_axis=-1, begin_params_axis=-1, scope=name)
```
"""

from keras import ops

from keras_tpu_estimator.compat.v1 import initializers
from keras_tpu_estimator.compat.v1 import nn
from keras_tpu_estimator.compat.v1.variables import get_variable
from keras_tpu_estimator.compat.v1.variables import variable_scope


def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """Layer normalization with TF1's variables `<scope>/beta` and `<scope>/gamma`.

    The scope defaults to `LayerNorm` (`LayerNorm_1`, ... when repeated), as
    in TF1, so BERT-style checkpoints and the `LayerNorm` weight-decay
    exclusion see the same names. Normalizes over the axes from
    `begin_norm_axis` on, with epsilon 1e-12, in float32 for bfloat16 inputs.

    Args:
        inputs: a tensor of rank >= 2.
        center: add `beta`.
        scale: multiply by `gamma`.
        activation_fn: applied to the result when given.
        reuse: `variable_scope` reuse.
        trainable: whether `beta`/`gamma` are trained.
        begin_norm_axis: first axis normalized over.
        begin_params_axis: first axis of the parameters' shape.
        scope: the variable scope's name.

    Returns:
        The normalized tensor, with the dtype of `inputs`.

    Raises:
        ValueError: for an axis outside the rank of `inputs`.
    """
    rank = len(inputs.shape)
    norm_axis = begin_norm_axis % rank if -rank <= begin_norm_axis < rank else None
    params_axis = begin_params_axis % rank if -rank <= begin_params_axis < rank else None
    if norm_axis is None or params_axis is None:
        raise ValueError(
            f"layer_norm: begin_norm_axis={begin_norm_axis} and begin_params_axis="
            f"{begin_params_axis} must lie in [-{rank}, {rank}) for inputs of rank {rank}."
        )
    params_shape = tuple(inputs.shape[params_axis:])
    with variable_scope(scope, default_name="LayerNorm", reuse=reuse):
        beta = get_variable("beta", params_shape, initializer=initializers.zeros_initializer(),
                            trainable=trainable) if center else None
        gamma = get_variable("gamma", params_shape, initializer=initializers.ones_initializer(),
                             trainable=trainable) if scale else None
    dtype = inputs.dtype
    x = ops.cast(inputs, "float32") if dtype in ("bfloat16", "float16") else inputs
    mean, variance = ops.moments(x, axes=tuple(range(norm_axis, rank)), keepdims=True)
    outputs = nn.batch_normalization(x, mean, variance, beta, gamma, 1e-12)
    outputs = ops.cast(outputs, dtype)
    return activation_fn(outputs) if activation_fn is not None else outputs
