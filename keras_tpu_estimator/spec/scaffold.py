"""What a `scaffold_fn`'s `Scaffold` changes: the weights EVAL and PREDICT read.

TPUEstimator restored an EVAL or PREDICT graph through the scaffold's
`Saver`; a `var_list` such as `ema.variables_to_restore()` maps checkpoint
names to variables, so evaluation, prediction and export used the
exponential moving averages. Here the steps bind each such variable to the
value of its source variable (`restored`), leaving the variable itself as
trained.

```python
pairs = restore_pairs(scaffold)        # [(variable, source)], in the build pass
with bound_values(variables, values):  # the step's state
    with restored(pairs):
        spec = model_fn(...)           # reads the sources' values
```
"""

import contextlib

from keras_tpu_estimator import _keras_internals


def restore_pairs(scaffold):
    """`[(variable, source)]` of a `scaffold_fn`'s result: each variable reading another's value.

    Args:
        scaffold: what `scaffold_fn` returned (a `Scaffold`, or None).

    Returns:
        The pairs its `saver` maps (`compat.v1.train.Saver.restore_pairs`):
        empty without a saver or without renamed variables.
    """
    saver = getattr(scaffold, "saver", None)
    pairs = getattr(saver, "restore_pairs", None)
    return list(pairs()) if callable(pairs) else []


@contextlib.contextmanager
def restored(pairs):
    """Inside the block, each variable of `pairs` holds its source's current value.

    Args:
        pairs: `[(variable, source)]` of `keras.Variable`s (`restore_pairs`).
    """
    if not pairs:
        yield
        return
    variables = [variable for variable, _ in pairs]
    values = _keras_internals.current_values([source for _, source in pairs])
    with _keras_internals.bound_values(variables, values):
        yield
