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

from keras_tpu_estimator.model_fn.tensor_shape import TensorShape


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
    """Returns a static shape (an int, a list, a tuple, a `TensorShape` or an array) as a tuple
    of dimensions.

    A dimension is an int, or a symbolic dimension under an export with a
    polymorphic batch size (`x.shape[0]`, `shape(x)[0]`, arithmetic on them).
    """
    if isinstance(shape, (list, tuple, TensorShape)):
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
            array = array.astype(inferred_dtype(value), copy=False)  # Python ints: int32.
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


_INT32_RANGE = (-(2**31), 2**31 - 1)


def _is_tensor_like(value):
    """A tensor, tracer, KerasTensor or variable: it carries its own dtype."""
    if isinstance(value, (np.ndarray, np.generic)):
        return False
    return isinstance(value, (jax.Array, keras.KerasTensor)) or (
        hasattr(value, "dtype") and hasattr(value, "shape"))


def _leaves(value):
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _python_dtype(leaves):
    """TF's dtype for a (nested) list of Python or numpy numbers, read by kind."""
    kinds = set()
    for leaf in leaves:
        kind = np.asarray(leaf).dtype.kind if isinstance(leaf, (np.ndarray, np.generic)) else (
            "b" if isinstance(leaf, bool) else "i" if isinstance(leaf, int)
            else "f" if isinstance(leaf, float) else "c" if isinstance(leaf, complex)
            else "O")
        kinds.add("i" if kind == "u" else kind)
    if not kinds or ("f" in kinds and kinds <= {"b", "i", "f"}):
        return "float32"  # An empty list too, as in TF.
    if kinds == {"b"}:
        return "bool"
    if kinds <= {"b", "i"}:
        arrays = [np.asarray(leaf) for leaf in leaves]
        ints = [int(v) for a in arrays if a.size for v in (a.max(), a.min())]
        fits = all(_INT32_RANGE[0] <= v <= _INT32_RANGE[1] for v in ints)
        return "int32" if fits else "int64"
    if kinds <= {"b", "i", "f", "c"}:
        return "complex128"
    return None  # Strings, objects: numpy decides.


def inferred_dtype(value):
    """The dtype TensorFlow gives `value` when it converts it to a tensor.

    TF's rule, not numpy's: a Python int is int32 (int64 past int32's
    range), a Python float float32, a bool bool; a list takes the most
    general kind of its elements (`[1, 2]` int32, `[1, 2.5]` float32, `[]`
    float32), numpy scalars in a list counting by kind; a numpy scalar or
    array keeps its dtype (`np.int64` int64, `np.float64` float64); a
    tensor, variable or shape dimension keeps its own (int32 for shapes).

    Args:
        value: a Python number, list, tuple, numpy value, tensor or variable.

    Returns:
        The dtype name, e.g. `"int32"`; None for values TF would not convert
        to a number (strings), which numpy then reads.
    """
    if is_symbolic_dim(value):
        return "int32"
    if isinstance(value, np.ndarray) and value.dtype == object:
        return "int32"  # `shape()` with symbolic dimensions.
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype.name
    if _is_tensor_like(value):
        return keras.backend.standardize_dtype(value.dtype)
    leaves = _leaves(value)
    tensors = [leaf for leaf in leaves if _is_tensor_like(leaf) or is_symbolic_dim(leaf)]
    if tensors:
        # TF packs the list: Python numbers take the tensors' dtype.
        return keras.backend.result_type(*[inferred_dtype(t) for t in tensors])
    return _python_dtype(leaves)


def computed_dtype(dtype):
    """The dtype JAX computes `dtype` in: 64-bit types are 32-bit without JAX's x64 mode."""
    return jax.dtypes.canonicalize_dtype(np.dtype(dtype)).name


def _check_python_cast(value, dtype):
    """TF's TypeError for Python floats given an integer or bool dtype (`constant(1.5, int32)`)."""
    if np.dtype(dtype).kind not in "biu":
        return
    for leaf in _leaves(value):
        if isinstance(leaf, float) or (isinstance(leaf, int) and not isinstance(leaf, bool)
                                       and np.dtype(dtype).kind == "b"):
            raise TypeError(f"Expected {np.dtype(dtype).name}, but got {leaf!r} of type "
                            f"'{type(leaf).__name__}'.")


def as_tensor(value, dtype=None):
    """`value` as a tensor, its dtype inferred as TensorFlow infers it (see `inferred_dtype`).

    Every compat.v1 op that turns a Python or numpy value into a tensor
    (`constant`, `convert_to_tensor`, `fill`, `zeros_like`, `identity`, ...)
    does it here, so `fill(dims, 4)` is int32 as in TF, not Keras's float32.

    Args:
        value: a Python number or (nested) list, a numpy value, a tensor or
            a variable. Tensors and variables keep their values.
        dtype: None (inferred), or the dtype to give the value (a `tf1`
            dtype or name); a tensor is cast to it.

    Returns:
        A JAX array (a KerasTensor stays one), in the dtype JAX computes
        the inferred dtype in (see `computed_dtype`).

    Raises:
        TypeError: for a Python float given an integer dtype, as in TF.
    """
    if dtype is not None:
        dtype = str(dtype)
    if _is_tensor_like(value):
        tensor = value if isinstance(value, (jax.Array, keras.KerasTensor)) else (
            keras.ops.convert_to_tensor(value))
        return tensor if dtype is None else keras.ops.cast(tensor, dtype)
    if (isinstance(value, np.ndarray) and value.dtype == object) or is_symbolic_dim(value):
        tensor = symbolic_dims_as_tensor(value)
        return tensor if dtype is None else keras.ops.cast(tensor, dtype)
    if dtype is None:
        dtype = inferred_dtype(value)
    else:
        _check_python_cast(value, dtype)
    if dtype is None:
        return keras.ops.convert_to_tensor(value)
    import jax.numpy as jnp

    if any(_is_tensor_like(leaf) for leaf in _leaves(value)):
        return jnp.asarray(value, dtype=computed_dtype(dtype))
    return jnp.asarray(np.asarray(value, dtype=computed_dtype(dtype)))


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
