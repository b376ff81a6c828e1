"""`tf1.Tensor`: the type TF1 code checks tensors against; `tf1.newaxis`.

`isinstance(x, tf.Tensor)` (EfficientNet asserts it on its images) holds for
what `model_fn` receives and computes: JAX arrays (tracers in the build pass,
the compiled step and an export), and the `keras.KerasTensor`s of symbolic
Keras code (`keras.Input`). As in TensorFlow, numpy arrays, Python numbers
and variables are not tensors.
"""

import jax
import keras


class _TensorType(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, (jax.Array, keras.KerasTensor))

    def __subclasscheck__(cls, subclass):
        return issubclass(subclass, (jax.Array, keras.KerasTensor))


class Tensor(metaclass=_TensorType):
    """The TF1 tensor type, for `isinstance` checks only (see the module docstring).

    Example:

    ```python
    assert isinstance(features["image"], tf1.Tensor)
    ```
    """

    def __init__(self, *args, **kwargs):
        raise TypeError(
            "tf1.Tensor cannot be constructed: use tf1.constant or tf1.convert_to_tensor."
        )


#: TF1's `tf.newaxis`: `x[tf1.newaxis]` adds an axis of size 1 (it is None).
newaxis = None
