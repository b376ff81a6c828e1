"""What the TF1 op modules share: reading TF1 arguments, static values.

TF1 functions take shapes as lists, tuples or `shape()` arrays, axes as
`axis` or `reduction_indices`, `keepdims` or `keep_dims`, and initializers
as objects, classes or names. These helpers turn each into what
`keras.ops` and Keras expect, so `ops`, `math_ops`, `array_ops`,
`random_ops`, `check_ops`, `control_flow`, `variables` and `layers` read
them alike. The module is private: its names are not part of the TF1
namespace.
"""

import jax
import keras
import numpy as np


def axis_argument(axis, reduction_indices=None):
    """Returns the axis of a TF1 reduction from `axis` or its alias.

    Args:
        axis: None, an int, a list or tuple of ints, or a numpy array.
        reduction_indices: TF1's older name for `axis` (`dimension` in
            `argmax`/`argmin`).

    Returns:
        None, an int or a tuple of ints.

    Raises:
        ValueError: if both `axis` and `reduction_indices` are given.
    """
    if axis is not None and reduction_indices is not None:
        raise ValueError("Give `axis` or `reduction_indices`, not both.")
    axis = axis if axis is not None else reduction_indices
    if isinstance(axis, list):
        axis = tuple(axis)
    if isinstance(axis, np.ndarray):
        axis = tuple(int(a) for a in axis.reshape(-1))
    return axis


def keepdims_argument(keepdims, keep_dims):
    """Returns TF1's `keepdims` (or its older alias `keep_dims`) as a bool."""
    return bool(keepdims if keepdims is not None else keep_dims)


def is_symbolic_dim(value):
    """Whether `value` is a symbolic dimension (an export's polymorphic batch size)."""
    return jax.export.is_symbolic_dim(value)


def dimension(value):
    """An int, or a symbolic dimension (kept: an export's batch size is one)."""
    return value if is_symbolic_dim(value) else int(value)


def shape_tuple(shape):
    """Returns a static shape (an int, a list, a tuple or an array) as a tuple of dimensions.

    A dimension is an int, or a symbolic dimension under an export with a
    polymorphic batch size (`x.shape[0]`, `shape(x)[0]`, arithmetic on them).
    """
    if isinstance(shape, (list, tuple)):
        return tuple(d for item in shape for d in shape_tuple(item))
    if is_symbolic_dim(shape):
        return (shape,)
    if isinstance(shape, np.ndarray) and shape.dtype == object:
        return tuple(dimension(d) for d in shape.reshape(-1))
    if isinstance(shape, int) or np.ndim(shape) == 0:
        return (int(shape),)
    return tuple(int(d) for d in np.asarray(shape).reshape(-1))


def static_shape(dims):
    """`dims` as TF1's `shape()` value: an int32 array, or an object array with symbolic dims."""
    if any(is_symbolic_dim(d) for d in dims):
        array = np.empty(len(dims), dtype=object)
        array[:] = list(dims)
        return array
    return np.asarray(dims, np.int32)


def unary_op(keras_op, doc):
    """Returns `keras_op` as a TF1 function `fn(x, name=None)` documented by `doc`."""

    def apply(x, name=None):
        return keras_op(x)

    apply.__doc__ = doc
    return apply


def _is_static_leaf(value):
    if isinstance(value, (bool, int, float, np.ndarray, np.generic)):
        return not isinstance(value, np.ndarray) or value.dtype != object or all(
            _is_static_leaf(v) for v in value.reshape(-1))
    return is_symbolic_dim(value)


def static_values(values):
    """`values` (a list) as numpy arrays if every one is a shape known while tracing, else None.

    Known: Python and numpy integers and integer arrays, and shapes from `shape()`,
    whose dimensions may be symbolic (an export's batch size); the arrays
    then hold objects. Shape arithmetic on them (`concat`, `stack`) stays
    static, as TF1 folded it, and can shape a `reshape`.
    """
    arrays = []
    for value in values:
        leaves = value if isinstance(value, (list, tuple)) else [value]
        if not all(_is_static_leaf(v) for v in leaves):
            return None
        symbolic = any(
            is_symbolic_dim(v) or (isinstance(v, np.ndarray) and v.dtype == object)
            for v in leaves
        )
        if symbolic:
            array = np.empty(np.shape(value) if not isinstance(value, list) else len(value),
                             dtype=object)
            array[...] = value if not isinstance(value, list) else list(value)
            arrays.append(array)
        else:
            array = np.asarray(value)
            if array.dtype.kind not in "iu":
                return None  # Values, not shapes: computed as tensors.
            arrays.append(array)
    return arrays


def symbolic_dims_as_tensor(value):
    """An object array of dimensions (some symbolic) as an int32 JAX array; anything else as is."""
    if isinstance(value, np.ndarray) and value.dtype == object:
        import jax.numpy as jnp

        flat = [jnp.asarray(d, "int32") for d in value.reshape(-1)]
        return jnp.stack(flat).reshape(value.shape) if flat else jnp.zeros(value.shape, "int32")
    if is_symbolic_dim(value):
        import jax.numpy as jnp

        return jnp.asarray(value, "int32")
    return value


def static_value(value):
    """Returns `value` as a numpy array, or None when it is only known at run time."""
    if isinstance(value, keras.KerasTensor) or is_symbolic_dim(value):
        return None
    try:
        array = np.asarray(value)
    except Exception:  # A tracer: its value exists only inside the compiled step.
        return None
    if array.dtype == object and any(is_symbolic_dim(v) for v in array.reshape(-1)):
        return None  # Known when the exported program runs.
    return array


def resolve_initializer(initializer):
    """Returns a Keras initializer (or constant) from what TF1 code passes.

    Accepts an initializer object, an initializer class (instantiated with
    its defaults, as TF1 does), a Keras initializer name, a callable
    `(shape, dtype)` or a constant; None stays None.
    """
    if isinstance(initializer, type):
        return initializer()
    if isinstance(initializer, str):
        return keras.initializers.get(initializer)
    return initializer
