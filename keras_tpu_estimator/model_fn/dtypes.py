"""TF1 dtypes (`tf.float32`, `tf.as_dtype`, ...) as Keras dtype names.

A `DType` is a `str` (`tf1.float32 == "float32"`), so Keras and JAX accept it
wherever a dtype goes. As TF1's, it equals its name, its numpy dtype and its
numpy type (`tf1.float32 == np.float32`), and answers `is_floating`,
`is_integer`, `is_bool`, `is_complex`, `is_unsigned`, `as_numpy_dtype`,
`base_dtype`, `real_dtype`, `size`, `min` and `max`. The `.dtype` a `model_fn`
reads on its tensors is one (`model_fn.tensors`).

JAX keeps 64-bit types off by default: `int64`/`float64` values are computed
in 32 bits (as `keras.ops` does), which matters only for overflow.
"""

import builtins

import ml_dtypes
import numpy as np


class DType(str):
    """A dtype name with TF1's `DType` attributes.

    Example:

    ```python
    tf1.cast(mask, tf1.float32)
    if logits.dtype == tf1.bfloat16: ...
    ```
    """

    @property
    def name(self):
        return str(self)

    @property
    def as_numpy_dtype(self):
        return np.dtype(ml_dtypes.bfloat16) if self == "bfloat16" else np.dtype(str(self)).type

    @property
    def base_dtype(self):
        return self

    @property
    def is_floating(self):
        return self in ("float16", "bfloat16", "float32", "float64")

    @property
    def is_integer(self):
        return self in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

    @property
    def is_bool(self):
        return self == "bool"

    @property
    def is_complex(self):
        return self in ("complex64", "complex128")

    @property
    def is_unsigned(self):
        return self in ("uint8", "uint16", "uint32", "uint64", "bool")

    @property
    def real_dtype(self):
        return {"complex64": float32, "complex128": float64}.get(str(self), self)

    def is_compatible_with(self, other):
        return self == other

    @property
    def size(self):
        return np.dtype(self.as_numpy_dtype).itemsize

    @property
    def min(self):
        return self._info().min

    @property
    def max(self):
        return self._info().max

    def _info(self):
        if self.is_floating:
            return ml_dtypes.finfo(self.as_numpy_dtype)
        return np.iinfo(self.as_numpy_dtype)

    def __repr__(self):
        return f"tf1.{self}"

    def __eq__(self, other):
        if isinstance(other, str) or other is None:
            return str.__eq__(self, other)
        try:
            return str(self) == _name_of(other)
        except TypeError:
            return NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self):
        return str.__hash__(self)


def _name_of(type_value):
    """The dtype name of a numpy/JAX dtype or scalar type, a `DType` or a name."""
    if isinstance(type_value, str):
        return type_value
    if type_value is None or any(type_value is t for t in (int, float, complex, builtins.bool)):
        raise TypeError(f"{type_value!r} names no one dtype.")
    return np.dtype(type_value).name


float16 = half = DType("float16")
bfloat16 = DType("bfloat16")
float32 = DType("float32")
float64 = double = DType("float64")
int8 = DType("int8")
int16 = DType("int16")
int32 = DType("int32")
int64 = DType("int64")
uint8 = DType("uint8")
uint16 = DType("uint16")
uint32 = DType("uint32")
uint64 = DType("uint64")
complex64 = DType("complex64")
complex128 = DType("complex128")
bool = DType("bool")  # noqa: A001 - TF1's name.
string = DType("string")

_ALL = {str(d): d for d in (float16, bfloat16, float32, float64, int8, int16, int32, int64,
                            uint8, uint16, uint32, uint64, complex64, complex128, bool, string)}


def as_dtype(type_value):
    """Returns the `DType` of a name, numpy/JAX dtype, Python type or `DType`.

    Raises:
        TypeError: if `type_value` names no dtype supported here.
    """
    if type_value is None:
        raise TypeError(f"Cannot convert None to a dtype. Allowed: {sorted(_ALL)}.")
    name = getattr(type_value, "name", None) if not isinstance(type_value, str) else type_value
    if name is None or name not in _ALL:
        try:
            name = np.dtype(type_value).name
        except TypeError:
            name = None
    if name not in _ALL:
        raise TypeError(
            f"Cannot convert {type_value!r} to a dtype. Allowed: "
            f"{sorted(_ALL)}, or a numpy/JAX dtype of one of them."
        )
    return _ALL[name]
