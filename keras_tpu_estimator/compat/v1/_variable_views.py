"""Store variables as TF1 code sees them, and TF1's variable collections.

A `VariableView` gives a `keras.Variable` of the store TF1's face: `.name`
is `scope/var:0`, `.op.name` is `scope/var`, and it reads as its value in any
operation. `trainable_variables()` / `global_variables()` list the variables
`model_fn` has used so far in this call, in creation order, as TF1's graph
collections did. Both `variables` (which creates variables) and `graph`
(whose `get_collection` lists them) build on this module, which needs
neither.

```python
decay_vars = [v for v in tf1.trainable_variables()
              if not re.search("LayerNorm|bias", v.name)]
```
"""

import re

import keras

from keras_tpu_estimator.compat.v1 import dtypes
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.model_fn.tensor_shape import TensorShape


class VariableView:
    """A store variable as TF1 code sees it.

    `.name` is TF1's `scope/var:0` and `.op.name` is `scope/var`; the view
    reads as the variable's value in any `tf1`, `keras.ops` or `jax.numpy`
    operation, and `assign` / `assign_add` / `assign_sub` reach the variable.
    Two views of one variable are equal and hash alike.

    Attributes:
        variable: the `keras.Variable` behind the view.
    """

    def __init__(self, variable):
        self.variable = variable

    @property
    def name(self):
        return f"{self.variable.path}:0"

    @property
    def op(self):
        return _Op(self.variable.path)

    @property
    def shape(self):
        return TensorShape(self.variable.shape)

    def get_shape(self):
        return self.shape

    @property
    def dtype(self):
        return dtypes.as_dtype(self.variable.dtype)

    @property
    def trainable(self):
        return self.variable.trainable

    def value(self):
        return self.variable.value

    read_value = value

    def assign(self, value, use_locking=None, name=None, read_value=True):
        self.variable.assign(value)
        return self.variable.value

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        self.variable.assign_add(delta)
        return self.variable.value

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        self.variable.assign_sub(delta)
        return self.variable.value

    def __jax_array__(self):
        return self.variable.value

    def __array__(self, dtype=None, copy=None):
        return self.variable.__array__(dtype)

    def __eq__(self, other):
        return isinstance(other, VariableView) and other.variable is self.variable

    def __hash__(self):
        return id(self.variable)

    def __repr__(self):
        return f"<tf1 Variable '{self.name}' shape={self.shape} dtype={self.dtype}>"


class _Op:
    def __init__(self, name):
        self.name = name


def _delegate(method):
    def call(self, *args):
        return getattr(self.variable, method)(*args)

    call.__name__ = method
    return call


for _method in (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
    "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
    "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__",
    "__pos__", "__abs__", "__lt__", "__le__", "__gt__", "__ge__", "__getitem__",
):
    setattr(VariableView, _method, _delegate(_method))


def keras_variable(variable):
    """Returns the `keras.Variable` behind a `VariableView` (or the variable itself)."""
    return variable.variable if isinstance(variable, VariableView) else variable


def _used_variables(trainable_only):
    found, seen = [], set()
    for owner in store_lib.used_in_call().values():
        if isinstance(owner, keras.Variable):
            candidates = [owner]
        else:
            candidates = owner.trainable_weights if trainable_only else owner.weights
        for variable in candidates:
            if id(variable) not in seen and (variable.trainable or not trainable_only):
                seen.add(id(variable))
                found.append(VariableView(variable))
    return found


def _filter(views, scope_regex):
    if scope_regex is None:
        return views
    return [v for v in views if re.match(scope_regex, v.name)]


def trainable_variables(scope=None):
    """Returns the trainable variables `model_fn` has used so far in this call.

    In creation order, as TF1's graph collection: variables of the
    `tf1.layers`, of `get_variable` and of `kte.get_or_create_layer` layers.

    Args:
        scope: keep only variables whose TF1 name matches this regular
            expression at its start.

    Returns:
        A list of `VariableView` (`.name` like `dense/kernel:0`).

    Example:

    ```python
    l2 = tf1.add_n([tf1.nn.l2_loss(v) for v in tf1.trainable_variables()
                    if "batch_normalization" not in v.name])
    ```
    """
    return _filter(_used_variables(True), scope)


def global_variables(scope=None):
    """Like `trainable_variables`, with the non-trainable ones (moving statistics)."""
    return _filter(_used_variables(False), scope)


all_variables = global_variables
model_variables = global_variables
