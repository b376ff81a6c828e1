"""One semantics for compat.v1 ops, on `keras.KerasTensor`s too.

`EstimatorModel` builds a mode by calling `model_fn` on abstract JAX values
(`engine.program`), on which every op runs as in the step. Symbolic Keras
code (`keras.Input`, a functional model) still hands ops `keras.KerasTensor`s
(shapes and dtypes, no values): an op written on `keras.ops` gets its output
shape from Keras's own rules there, and an op written on JAX, numpy or
indexing does not run at all. `symbolic_op` makes both run as they run in
the compiled step: called on KerasTensors, the op's body is traced by
`jax.eval_shape` on shape/dtype structs standing in for them, and the
result's shapes and dtypes come back as KerasTensors. Called on anything
else (arrays, tracers inside the step or an export), the op runs directly.

```python
@symbolic_op
def gather_nd(params, indices):
    return params[tuple(indices[..., i] for i in range(indices.shape[-1]))]
```

The module is private: its names are not part of the TF1 namespace.
"""

import functools
import inspect

import jax
import keras


def _is_symbolic(value):
    return isinstance(value, keras.KerasTensor)


def has_symbolic(*args, **kwargs):
    """Whether any leaf of `args` or `kwargs` (lists, tuples, dicts) is a KerasTensor."""
    return any(_is_symbolic(leaf) for leaf in jax.tree.leaves((args, kwargs)))


def _struct(tensor):
    if any(d is None for d in tensor.shape):
        # The build pass uses the sample batch's shapes: an unknown
        # dimension comes from a Keras op outside this module.
        raise ValueError(
            f"A compat.v1 op received a symbolic tensor of unknown shape {tensor.shape}: "
            "build the model from a sample batch of known shape."
        )
    return jax.ShapeDtypeStruct(tuple(tensor.shape), tensor.dtype)


def _keras_tensor(struct):
    if not hasattr(struct, "shape") or not hasattr(struct, "dtype"):
        return struct
    return keras.KerasTensor(tuple(struct.shape), dtype=keras.backend.standardize_dtype(struct.dtype))


def symbolic_call(fn, *args, **kwargs):
    """`fn(*args, **kwargs)`, traced on stand-ins for the KerasTensors among the arguments.

    Args:
        fn: the op's body (JAX, `keras.ops` or numpy code on arrays).
        *args, **kwargs: its arguments; KerasTensors may be leaves of lists,
            tuples and dicts. Other leaves are passed as they are.

    Returns:
        What `fn` returns, with every array replaced by a KerasTensor of its
        shape and dtype; or `fn`'s own result when no argument is symbolic.
    """
    if not has_symbolic(*args, **kwargs):
        return fn(*args, **kwargs)
    leaves, treedef = jax.tree.flatten((args, kwargs))
    positions = [i for i, leaf in enumerate(leaves) if _is_symbolic(leaf)]

    def traced(*values):
        filled = list(leaves)
        for i, value in zip(positions, values):
            filled[i] = value
        call_args, call_kwargs = jax.tree.unflatten(treedef, filled)
        return fn(*call_args, **call_kwargs)

    out = jax.eval_shape(traced, *[_struct(leaves[i]) for i in positions])
    return jax.tree.map(_keras_tensor, out)


def symbolic_op(fn):
    """Decorates a compat.v1 op so that it also runs on KerasTensors (see `symbolic_call`)."""

    @functools.wraps(fn)
    def op(*args, **kwargs):
        return symbolic_call(fn, *args, **kwargs)

    op.symbolic = True
    return op


def symbolic_ops(namespace, exclude=()):
    """Decorates, in place, every op of a module: the functions its `__all__` names.

    Args:
        namespace: the module's `globals()`. Without `__all__`, its public
            names are read.
        exclude: names left as they are: functions that return static
            values (`shape`, `rank`) or create layers and variables.
    """
    names = namespace.get("__all__") or [n for n in list(namespace) if not n.startswith("_")]
    for name in names:
        fn = namespace[name]
        if name in exclude or not inspect.isfunction(fn) or getattr(fn, "symbolic", False):
            continue
        namespace[name] = symbolic_op(fn)
