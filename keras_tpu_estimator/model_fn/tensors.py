"""What a `model_fn`'s tensors are to its code: TF1 tensors, in every pass.

`model_fn` receives and computes JAX values (tracers in the build pass, the
compiled step and an export). Inside `tf1_tensors(named)` they also answer
as TF1's `tf.Tensor`s do, to the user's code only (JAX and Keras keep their
own view, `_keras_internals.tracer_views`):

- `.shape` and `.get_shape()`: a `TensorShape` (`as_list()`, `ndims`,
  `[i].value`, `'%s' % x.shape`);
- `.dtype`: a `DType` (`is_floating`, `base_dtype`, `== tf.float32`);
- `.name`: the input's name (`features/x`), else `tensor_<n>`;
- `set_shape(shape)`: checks TF1's compatibility (the shape is already static);
- iterating one of unknown length raises TF1's TypeError;
- and Keras layers' `updates` is TF1 Keras's, `[]` (their state updates
  happen in the step).

```python
with tf1_tensors([(features["x"], "x")]):
    spec = model_fn(features, labels, mode)
```
"""

import contextlib

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.model_fn import dtypes
from keras_tpu_estimator.model_fn.tensor_shape import TensorShape
from keras_tpu_estimator.model_fn.tensor_shape import as_shape


def _get_shape(tensor):
    return TensorShape(tensor.shape)


def _set_shape(tensor, shape):
    """TF1's `set_shape`: the shape must be compatible; the static shape stays."""
    current = TensorShape(tensor.shape)
    if not current.is_compatible_with(shape):
        raise ValueError(
            f"Tensor's shape {current} is not compatible with supplied shape {as_shape(shape)}"
        )


def _dtype(dtype):
    try:
        return dtypes.as_dtype(dtype)
    except TypeError:  # A dtype TF1 had no name for (float8, int4): as JAX has it.
        return dtype


@contextlib.contextmanager
def tf1_tensors(named=()):
    """Inside the block, the user's code sees tracers as TF1 tensors (module docstring).

    Args:
        named: `(tracer, name)` pairs: the names of the inputs.
    """
    with _keras_internals.tracer_names(named), _keras_internals.tf1_iteration(), \
            _keras_internals.tracer_views(TensorShape, _dtype, {
                "get_shape": _get_shape, "set_shape": _set_shape}), \
            _keras_internals.tf1_layer_updates():
        yield
