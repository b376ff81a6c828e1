"""TF1's `TensorShape` and `Dimension`: the static shape `x.shape` is to TF1 code.

A TF1 tensor's `.shape` (and `.get_shape()`) is a `TensorShape`: indexing it
gives a `Dimension` (`x.shape[-1].value`), slicing a `TensorShape`, and it
answers `as_list()`, `ndims`, `rank`, `dims`, `num_elements()`,
`is_fully_defined()`, `concatenate`, `merge_with`, `with_rank` and
`is_compatible_with`; it equals a list or tuple of the same dimensions and
prints as TF1 did, `(?, 3, 5)`.

A known `Dimension` is an `int` (Keras, JAX and numpy take it as one) with
TF1's `.value` and TF1's arithmetic, which keeps it a `Dimension`. An
export's symbolic batch dimension is TF1's unknown one where TF1 code asks
whether a dimension is known (`as_list()` gives None, `num_elements()` None,
`is_fully_defined()` False, it prints `?`) and stays JAX's symbolic
dimension where it is used as a value (`x.shape[0]`, iteration), so
`reshape(x, [x.shape[0], -1])` still works in an export.

```python
hidden = x.shape[-1].value            # 768
batch, seq = x.shape.as_list()[:2]    # None under an export's symbolic batch
"shape %s" % x.shape                  # 'shape (8, 128, 768)'
```
"""

import math

import jax
import numpy as np


def _is_symbolic(value):
    return jax.export.is_symbolic_dim(value)


def dimension_value(dimension):
    """TF1's static value of a dimension (an int, None or a `Dimension`): an int or None.

    An export's symbolic batch dimension is TF1's unknown one: None.
    """
    if dimension is None or isinstance(dimension, _UnknownDimension) or _is_symbolic(dimension):
        return None
    return int(dimension)


def _dimension(value):
    """An int, None or a symbolic dimension (kept) from any dimension."""
    if value is None or isinstance(value, _UnknownDimension):
        return None
    return value if _is_symbolic(value) else int(value)


class Dimension(int):
    """TF1's `tf.Dimension`: a known dimension is an int with `.value`.

    `Dimension(None)` is TF1's unknown dimension: `.value` is None, it
    compares as None and prints as `?`.

    Args:
        value: an int, None or a `Dimension`.

    Example:

    ```python
    units = tf1.Dimension(x.shape[-1]).value
    ```
    """

    def __new__(cls, value):
        value = _dimension(value)
        if value is None:
            return UNKNOWN
        if _is_symbolic(value):
            return value
        if value < 0:
            raise ValueError(f"Dimension {value} must be >= 0")
        return super().__new__(cls, value)

    @property
    def value(self):
        return int(self)

    def __repr__(self):
        return f"Dimension({int(self)})"

    def __str__(self):
        return str(int(self))

    def _apply(self, other, fn):
        other = _dimension(other)
        if other is None:
            return UNKNOWN
        if _is_symbolic(other):
            return fn(int(self), other)
        # No check of the sign: JAX's symbolic dimensions may take this
        # Dimension as a coefficient and compute with it.
        return int.__new__(Dimension, fn(int(self), other))

    def __add__(self, other):
        return self._apply(other, lambda a, b: a + b)

    def __radd__(self, other):
        return self._apply(other, lambda a, b: b + a)

    def __sub__(self, other):
        return self._apply(other, lambda a, b: a - b)

    def __rsub__(self, other):
        return self._apply(other, lambda a, b: b - a)

    def __mul__(self, other):
        return self._apply(other, lambda a, b: a * b)

    def __rmul__(self, other):
        return self._apply(other, lambda a, b: b * a)

    def __floordiv__(self, other):
        return self._apply(other, lambda a, b: a // b)

    def __rfloordiv__(self, other):
        return self._apply(other, lambda a, b: b // a)

    def __mod__(self, other):
        return self._apply(other, lambda a, b: a % b)

    def __rmod__(self, other):
        return self._apply(other, lambda a, b: b % a)

    def __hash__(self):
        return int.__hash__(self)

    def __eq__(self, other):
        other = _dimension(other) if _is_dimension_like(other) else other
        if other is None:
            return None
        return int.__eq__(self, other) if isinstance(other, int) else NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is None or equal is NotImplemented else not equal


def _is_dimension_like(value):
    return value is None or isinstance(value, (int, np.integer, _UnknownDimension))


class _UnknownDimension:
    """TF1's `Dimension(None)`: unknown; comparisons and arithmetic give unknown."""

    value = None

    def __repr__(self):
        return "Dimension(None)"

    def __str__(self):
        return "?"

    def __eq__(self, other):
        return None

    def __ne__(self, other):
        return None

    def __hash__(self):
        return hash(None)

    def _unknown(self, other):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unknown
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _unknown

    def __int__(self):
        raise ValueError("Dimension(None) has no int value.")

    __index__ = __int__


UNKNOWN = _UnknownDimension()


class TensorShape:
    """TF1's static shape of a tensor (see the module docstring).

    Args:
        dims: a list or tuple of dimensions (ints, None, `Dimension`s), an
            int (a vector's length), another `TensorShape`, or None (an
            unknown rank).

    Example:

    ```python
    shape = tf1.TensorShape([None, 3])
    shape.as_list()              # [None, 3]
    shape.merge_with([8, None])  # TensorShape([Dimension(8), Dimension(3)])
    ```
    """

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif dims is None:
            self._dims = None
        elif isinstance(dims, (int, np.integer)) or _is_symbolic(dims):
            self._dims = (_dimension(dims),)
        else:
            self._dims = tuple(_dimension(Dimension(d)) for d in dims)

    @property
    def dims(self):
        return None if self._dims is None else [self[i] for i in range(len(self._dims))]

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [dimension_value(d) for d in self._dims]

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        return math.prod(self.as_list())

    def is_fully_defined(self):
        return self._dims is not None and all(dimension_value(d) is not None for d in self._dims)

    def concatenate(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def is_compatible_with(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b
                   for a, b in zip(self.as_list(), other.as_list()))

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other):
        """The most specific shape compatible with both (a symbolic dimension kept)."""
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([
            b if dimension_value(a) is None and b is not None and not _is_symbolic(a) else a
            for a, b in zip(self._dims, other._dims)
        ])

    def with_rank(self, rank):
        if self.ndims is not None and self.ndims != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self if self._dims is not None else TensorShape([None] * rank)

    def with_rank_at_least(self, rank):
        if self.ndims is not None and self.ndims < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank):
        if self.ndims is not None and self.ndims > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def assert_has_rank(self, rank):
        self.with_rank(rank)

    def assert_same_rank(self, other):
        other = as_shape(other)
        if self.ndims is not None and other.ndims is not None and self.ndims != other.ndims:
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return (self[i] for i in range(len(self._dims)))

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else UNKNOWN
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return Dimension(self._dims[key])

    def __add__(self, other):
        return self.concatenate(other)

    def __radd__(self, other):
        return as_shape(other).concatenate(self)

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._static() == other._static()

    def _static(self):
        return None if self._dims is None else tuple(self.as_list())

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self):
        return hash(self._static())

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        shown = ["?" if d is None else str(d) for d in self.as_list()]
        return f"({shown[0]},)" if len(shown) == 1 else f"({', '.join(shown)})"

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({[Dimension(d) if not _is_symbolic(d) else UNKNOWN for d in self._dims]})"

    def __reduce__(self):
        return TensorShape, (self.as_list() if self._dims is not None else None,)


def as_shape(shape):
    """`shape` (a `TensorShape`, a list or tuple of dimensions, None) as a `TensorShape`."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)
