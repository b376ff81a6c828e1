"""TF1 control flow: `tf.cond`, `tf.case`, `tf.while_loop`, `tf.map_fn`.

A predicate known while `model_fn` traces (a Python bool, a constant, a
comparison of static shapes) picks its branch in Python, as TF1's
`smart_cond` did; a predicate computed inside the compiled step becomes
`keras.ops.cond` (both branches are traced and must return the same
structure, shapes and dtypes).

```python
lr = tf1.cond(global_step < warmup_steps, lambda: warmup_lr, lambda: decayed_lr)
```
"""

import jax
import keras
from keras import ops

from keras_tpu_estimator.compat.v1._op_helpers import static_value as _static


def _static_bool(pred):
    value = _static(pred)
    if value is None or value.shape != ():
        return None
    return bool(value)


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """`true_fn()` if `pred` else `false_fn()`.

    Args:
        pred: a scalar boolean: a Python bool or constant (the branch is
            chosen while tracing) or a tensor (`keras.ops.cond`).
        true_fn, false_fn: callables without arguments (`fn1`/`fn2`: TF1's
            older names).
        strict: accepted and ignored.
        name: ignored.

    Returns:
        The chosen branch's result.

    Raises:
        TypeError: if a branch is missing or not callable.
    """
    true_fn = fn1 if true_fn is None else true_fn
    false_fn = fn2 if false_fn is None else false_fn
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError(
            f"cond() needs callable `true_fn` and `false_fn`. Received: "
            f"true_fn={true_fn!r}, false_fn={false_fn!r}"
        )
    static = _static_bool(pred)
    if static is not None:
        return true_fn() if static else false_fn()
    if isinstance(pred, keras.KerasTensor):
        return _symbolic_cond(true_fn, false_fn)
    return ops.cond(ops.reshape(ops.cast(pred, "bool"), ()), true_fn, false_fn)


def _symbolic_cond(true_fn, false_fn):
    """The build pass's `cond`: both branches built, as TF1 built them into its graph.

    Their layers and variables are created, as the compiled step's
    `keras.ops.cond` traces both; the result has the branches' shapes.

    Raises:
        ValueError: if the branches' results differ in structure, shape or dtype.
    """
    results = true_fn(), false_fn()
    specs = [jax.tree.map(lambda t: (tuple(t.shape), keras.backend.standardize_dtype(t.dtype)),
                          r) for r in results]
    if specs[0] != specs[1]:
        raise ValueError(
            "cond() branches must return the same structure, shapes and dtypes. "
            f"Received: true_fn -> {specs[0]}, false_fn -> {specs[1]}"
        )
    return results[0]


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The function of the first true predicate of `pred_fn_pairs`, else `default`.

    Args:
        pred_fn_pairs: a list of `(pred, fn)` pairs (or a dict).
        default: the callable used when no predicate holds (required when
            the predicates are not all known while tracing).
        exclusive, strict, name: accepted and ignored.

    Raises:
        ValueError: without `default` when no predicate is known to hold.
    """
    pairs = list(pred_fn_pairs.items() if isinstance(pred_fn_pairs, dict) else pred_fn_pairs)
    if default is None:
        if not pairs:
            raise ValueError("case() needs `pred_fn_pairs` or `default`.")
        *pairs, (_, default) = pairs  # TF1: the last function is the fallback.
    result = default
    for pred, fn in reversed(pairs):
        result = (lambda p, f, otherwise: lambda: cond(p, f, otherwise))(pred, fn, result)
    return result()


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,  # noqa: A002
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` holds.

    The loop variables keep their shapes and dtypes (`shape_invariants` is
    not supported). `parallel_iterations`, `back_prop`, `swap_memory` and
    `name` are accepted and ignored.

    Returns:
        The final loop variables: a list, or the single variable of a
        one-element list (as TF1) unless `return_same_structure`.

    Raises:
        NotImplementedError: for `shape_invariants`.
    """
    if shape_invariants is not None:
        raise NotImplementedError(
            "while_loop(shape_invariants=...) is not supported: loop variables "
            "keep their shapes under JAX."
        )
    single = not isinstance(loop_vars, (list, tuple))
    values = [loop_vars] if single else list(loop_vars)

    def wrapped_body(*args):
        out = body(*args)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    out = ops.while_loop(lambda *args: cond(*args), wrapped_body, values,
                         maximum_iterations=maximum_iterations)
    out = list(out)
    if single or (len(out) == 1 and not return_same_structure):
        return out[0]
    return out


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None, fn_output_signature=None):
    """`fn` applied to each slice of `elems` along its first axis, the results stacked.

    `elems` may be a tensor or a (nested) list of tensors sliced together.
    The other arguments are accepted and ignored.
    """
    return ops.map(fn, elems)


__all__ = ["case", "cond", "map_fn", "while_loop"]
