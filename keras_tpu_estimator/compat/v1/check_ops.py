"""TF1 assertions (`tf.assert_equal`, `tf.assert_rank`, ...) and `tf.check_numerics`.

Under JAX there is no graph to hold an assertion op: each check runs while
`model_fn` traces, on what is known then (shapes, dtypes, constants), and
raises `ValueError` (`TypeError` for dtypes) as TF1 did at graph
construction. Values known only inside the compiled step are not checked.
Every assertion returns None, which `control_dependencies` accepts.

```python
tf1.assert_rank(input_ids, 2)
with tf1.control_dependencies([tf1.assert_equal(tf1.shape(a)[0], tf1.shape(b)[0])]):
    c = a + b
```
"""

import keras
import numpy as np
from keras import ops

from keras_tpu_estimator.compat.v1 import dtypes
# A private alias: `check_ops` is star-imported into `compat.v1`.
from keras_tpu_estimator.compat.v1._op_helpers import static_value as _static


def _fail(message, text):
    raise ValueError(f"{message + ': ' if message else ''}{text}")


def _assertion(name, check, relation):
    def assertion(x, y, data=None, summarize=None, message=None, name=None):
        x_value, y_value = _static(x), _static(y)
        if x_value is not None and y_value is not None and not np.all(check(x_value, y_value)):
            _fail(message, f"{name or assertion.__name__} failed: expected x {relation} y. "
                           f"Received: x={x_value!r}, y={y_value!r}")
        return None

    assertion.__name__ = name
    assertion.__doc__ = (
        f"Checks `x {relation} y` when both are known while tracing (shapes, "
        "constants) and raises ValueError otherwise. Values known only inside "
        "the compiled step are not checked. Returns None, for "
        "`control_dependencies`."
    )
    return assertion


assert_equal = _assertion("assert_equal", np.equal, "==")
assert_none_equal = _assertion("assert_none_equal", np.not_equal, "!=")
assert_less = _assertion("assert_less", np.less, "<")
assert_less_equal = _assertion("assert_less_equal", np.less_equal, "<=")
assert_greater = _assertion("assert_greater", np.greater, ">")
assert_greater_equal = _assertion("assert_greater_equal", np.greater_equal, ">=")


def _sign_assertion(name, check, relation):
    def assertion(x, data=None, summarize=None, message=None, name=None):
        value = _static(x)
        if value is not None and not np.all(check(value)):
            _fail(message, f"{name or assertion.__name__} failed: expected x {relation}. "
                           f"Received: x={value!r}")
        return None

    assertion.__name__ = name
    assertion.__doc__ = (
        f"Checks `x {relation}` elementwise when `x` is known while tracing; "
        "raises ValueError otherwise. Returns None."
    )
    return assertion


assert_positive = _sign_assertion("assert_positive", lambda v: v > 0, "> 0")
assert_negative = _sign_assertion("assert_negative", lambda v: v < 0, "< 0")
assert_non_negative = _sign_assertion("assert_non_negative", lambda v: v >= 0, ">= 0")
assert_non_positive = _sign_assertion("assert_non_positive", lambda v: v <= 0, "<= 0")


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None, name=None):
    """Checks `|x - y| <= atol + rtol * |y|` when both are known (TF1's defaults: 10 eps).

    Returns None.
    """
    x_value, y_value = _static(x), _static(y)
    if x_value is None or y_value is None:
        return None
    eps = np.finfo(np.result_type(x_value.dtype, np.float32)).eps
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    if not np.all(np.abs(x_value - y_value) <= atol + rtol * np.abs(y_value)):
        _fail(message, f"assert_near failed. Received: x={x_value!r}, y={y_value!r}")
    return None


def assert_rank(x, rank, message=None, name=None):
    """Checks that `x` has `rank` dimensions (shapes are static: always checked)."""
    if len(x.shape) != int(rank):
        _fail(message, f"expected a tensor of rank {rank}. Received shape {tuple(x.shape)}")


def assert_rank_at_least(x, rank, message=None, name=None):
    """Checks that `x` has at least `rank` dimensions (always checked)."""
    if len(x.shape) < int(rank):
        _fail(message, f"expected a tensor of rank at least {rank}. Received shape {tuple(x.shape)}")


def assert_rank_in(x, ranks, message=None, name=None):
    """Checks that the rank of `x` is one of `ranks` (always checked)."""
    if len(x.shape) not in [int(r) for r in ranks]:
        _fail(message, f"expected a tensor of rank in {list(ranks)}. Received shape {tuple(x.shape)}")


def assert_scalar(tensor, name=None, message=None):
    """Checks that `tensor` is a scalar; returns it."""
    if len(tensor.shape) != 0:
        _fail(message, f"expected a scalar. Received shape {tuple(tensor.shape)}")
    return tensor


def _dtype_of(tensor):
    return dtypes.as_dtype(keras.backend.standardize_dtype(tensor.dtype))


def assert_type(tensor, tf_type, message=None, name=None):
    """Checks the dtype of `tensor` (always checked; raises TypeError)."""
    if _dtype_of(tensor) != dtypes.as_dtype(tf_type):
        raise TypeError(f"{message + ': ' if message else ''}expected dtype {tf_type}. "
                        f"Received {_dtype_of(tensor)}")


def assert_integer(x, message=None, name=None):
    """Checks that `x` has an integer dtype (always checked; raises TypeError)."""
    if not _dtype_of(x).is_integer:
        raise TypeError(f"{message + ': ' if message else ''}expected an integer tensor. "
                        f"Received dtype {_dtype_of(x)}")


def check_numerics(tensor, message, name=None):
    """`tensor`, checked for NaN and infinity when known while tracing.

    Inside the compiled step the values are not checked (use
    `jax.config.update("jax_debug_nans", True)` to find NaNs there).

    Raises:
        ValueError: for a tensor known while tracing that holds NaN or inf.
    """
    value = _static(tensor)
    if value is not None and value.dtype.kind == "f" and not np.all(np.isfinite(value)):
        raise ValueError(f"check_numerics: {message}: Tensor had NaN or Inf values")
    return ops.convert_to_tensor(tensor)


def verify_tensor_all_finite(t, msg, name=None, x=None, message=None):
    """`check_numerics(t, msg)` (TF1's older name)."""
    return check_numerics(t if x is None else x, msg if message is None else message)


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("keras", "np", "ops", "dtypes")]
