"""`RNNCell`: TF1's recurrent cell object, its naming, variables and reuse.

A TF1 cell is a layer: at its first call it takes a variable scope named
after its class (`basic_lstm_cell`, made unique in the enclosing scope:
`basic_lstm_cell_1`, ...) or after its `name`, creates its variables there
with `tf1.get_variable` (so the enclosing scope's initializer, custom getter
and reuse apply, and names are TF1's: `rnn/basic_lstm_cell/kernel`), and
every later call of the same object re-enters that scope with `reuse=True`.
Loops (`dynamic_rnn`) call the cell inside `jax.lax.scan`; variables are
created by the loop's first, shape-only call of the cell, before the scan.

A subclass overrides `state_size`, `output_size`, `call(inputs, state)` and,
for a layer-style cell, `build(inputs_shape)` with `add_weight`; a TF1-style
cell may call `tf1.get_variable` inside `call` instead.

```python
class MinimalRNNCell(tf1.nn.rnn_cell.RNNCell):
    def __init__(self, units):
        super().__init__()
        self.units = units

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def build(self, inputs_shape):
        self.kernel = self.add_weight("kernel", [inputs_shape[-1] + self.units, self.units])

    def call(self, inputs, state):
        h = tf1.tanh(tf1.matmul(tf1.concat([inputs, state], 1), self.kernel))
        return h, h            # variables: rnn/minimal_rnn_cell/kernel
```
"""

import collections

import jax
import keras

from keras_tpu_estimator.compat.v1 import dtypes
from keras_tpu_estimator.compat.v1._layer_base import _to_snake_case
from keras_tpu_estimator.compat.v1._op_helpers import is_symbolic_dim
from keras_tpu_estimator.compat.v1._op_helpers import static_value
from keras_tpu_estimator.compat.v1._variable_views import TensorShape
from keras_tpu_estimator.compat.v1._variable_views import VariableView
from keras_tpu_estimator.compat.v1.variables import VariableScope
from keras_tpu_estimator.compat.v1.variables import get_variable
from keras_tpu_estimator.compat.v1.variables import variable_scope
from keras_tpu_estimator.model_fn import store as store_lib


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """The state of an LSTM cell with `state_is_tuple=True`: `(c, h)`, in that order.

    `c` is the memory cell, `h` the output (the projected output with
    `num_proj`). As state sizes, the two ints.
    """

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent dtypes for internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def is_symbolic(structure):
    """Whether any leaf of `structure` is a `keras.KerasTensor` (the build pass)."""
    return any(isinstance(leaf, keras.KerasTensor) for leaf in jax.tree.leaves(structure))


def all_symbolic(inputs, state):
    """In the build pass, `(inputs, state)` with every array a shape-only stand-in.

    A zero state made outside the build pass's symbolic tensors (concrete
    zeros) would otherwise meet them in a JAX operator; its values are not
    used there.
    """
    if not is_symbolic((inputs, state)):
        return inputs, state

    def stand_in(x):
        if isinstance(x, keras.KerasTensor) or not hasattr(x, "shape"):
            return x
        return keras.KerasTensor(tuple(x.shape), dtype=keras.backend.standardize_dtype(x.dtype))

    return jax.tree.map(stand_in, (inputs, state))


def batch_dimension(batch_size, function="zero_state"):
    """`batch_size` as an int (or an export's symbolic batch dimension)."""
    value = batch_size  # An int, a TF1 `Dimension` (an int), or symbolic.
    if is_symbolic_dim(value):
        return value
    static = static_value(value)
    if static is None or static.shape != () or static.dtype.kind not in "iu":
        raise ValueError(
            f"Argument `batch_size` of {function} must be an int known while model_fn "
            f"traces (e.g. `x.shape[0]` or `tf1.shape(x)[0]`). Received: batch_size={batch_size!r}"
        )
    return int(static)


def _is_shape_leaf(size):
    return isinstance(size, (int, TensorShape)) or (
        hasattr(size, "__index__") and not isinstance(size, (tuple, list)))


def zero_state_like(state_size, batch_size, dtype):
    """Zeros `[batch_size, *s]` for every size `s` in the nest `state_size`."""
    dtype = keras.backend.standardize_dtype(dtypes.as_dtype(dtype).name)

    def zeros(size):
        dims = (int(size),) if not isinstance(size, tuple) else tuple(size)
        return keras.ops.zeros((batch_size, *dims), dtype=dtype)

    return map_sizes(zeros, state_size)


def map_sizes(fn, sizes):
    """`fn` on every leaf of a nest of state/output sizes (ints or `TensorShape`s)."""
    if _is_shape_leaf(sizes):
        return fn(sizes)
    if isinstance(sizes, tuple) and hasattr(sizes, "_fields"):
        return type(sizes)(*[map_sizes(fn, s) for s in sizes])
    if isinstance(sizes, (tuple, list)):
        return type(sizes)(map_sizes(fn, s) for s in sizes)
    raise TypeError(f"A state or output size must be an int, a TensorShape or a tuple of them. "
                    f"Received: {sizes!r}")


def activation_function(activation, cell):
    """TF1's `activation` argument: None (tanh), a Keras activation name, or a callable."""
    if activation is None:
        return keras.ops.tanh
    if isinstance(activation, str):
        return keras.activations.get(activation)
    if callable(activation):
        return activation
    raise ValueError(f"Argument `activation` of {cell} must be None, a callable or an "
                     f"activation name. Received: activation={activation!r}")


def check_input(inputs, cell, rank=2):
    """TF1's input spec of the built-in cells: a float tensor of rank 2, known depth."""
    shape = tuple(getattr(inputs, "shape", ()))
    if len(shape) != rank:
        raise ValueError(
            f"Input of {cell} must have rank {rank} ([batch, depth]), one time step. "
            f"Received: shape={shape}"
        )
    if shape[-1] is None:
        raise ValueError(f"Expected inputs.shape[-1] of {cell} to be known. Received: shape={shape}")
    check_float(inputs, cell)


def check_float(structure, cell):
    for leaf in jax.tree.leaves(structure):
        dtype = keras.backend.standardize_dtype(leaf.dtype)
        if not dtype.startswith(("float", "bfloat", "complex")):
            raise ValueError(
                f"{cell} only supports floating point inputs and states, but received dtype: {dtype}"
            )


class RNNCell:
    """TF1's `tf.nn.rnn_cell.RNNCell`: `(output, new_state) = cell(inputs, state)`.

    Args:
        trainable: whether the cell's variables are trainable.
        name: the cell's scope name (made unique in the enclosing scope, as
            TF1's layer names); default: the class name in snake case.
        dtype: the variables' dtype; default: the first input's.

    Attributes:
        state_size, output_size: ints, `TensorShape`s or nests of them.
        variables, trainable_variables, weights: `VariableView`s of the
            variables the cell created, once called.
    """

    def __init__(self, trainable=True, name=None, dtype=None, _reuse=None, _scope=None,
                 **kwargs):
        unknown = set(kwargs) - {"_reuse", "reuse"}
        if unknown:
            raise TypeError(f"{type(self).__name__}() got unexpected arguments: {sorted(unknown)}")
        self.trainable = trainable
        self.name = name
        self._dtype = None if dtype is None else keras.backend.standardize_dtype(
            dtypes.as_dtype(dtype).name)
        self._reuse = _reuse if _reuse is not None else kwargs.get("reuse")
        self._scope = _scope
        self._variables = []
        self._call_marker = None
        self.built = False

    # -- what a subclass defines ------------------------------------------------

    @property
    def state_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define `state_size`.")

    @property
    def output_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define `output_size`.")

    def build(self, inputs_shape):
        """Creates the cell's variables with `add_weight` (default: none)."""

    def call(self, inputs, state):
        raise NotImplementedError(f"{type(self).__name__} must define `call(inputs, state)`.")

    # -- TF1's layer behaviour ----------------------------------------------------

    @property
    def dtype(self):
        return self._dtype

    def _base_name(self):
        if self.name is not None:
            return self.name
        cls = type(self)
        return cls.base_name if "base_name" in cls.__dict__ else _to_snake_case(cls.__name__)

    def _capture_scope(self, scope):
        """TF1's `Layer._set_scope`: the cell's variable scope, taken at its first call."""
        if scope is not None:
            with variable_scope(scope) as vs:
                return vs
        if self._reuse:
            with variable_scope(self._base_name(), reuse=self._reuse) as vs:
                return vs
        with variable_scope(None, default_name=self._base_name()) as vs:
            return vs

    def add_weight(self, name, shape, dtype=None, initializer=None, trainable=None,
                   regularizer=None):
        """Gets or creates the variable `<cell scope>/<name>` (TF1's `add_variable`).

        Args:
            name: the name in the cell's scope (may contain `/`, e.g. `gates/kernel`).
            shape: the shape.
            dtype: default: the cell's dtype.
            initializer: default: the enclosing scope's, else Glorot uniform.
            trainable: default: the cell's `trainable`.
            regularizer: as `tf1.get_variable`'s.

        Returns:
            The `keras.Variable`.
        """
        return get_variable(
            name, shape=shape, dtype=dtype or self._dtype or "float32", initializer=initializer,
            regularizer=regularizer, trainable=self.trainable if trainable is None else trainable,
        )

    add_variable = add_weight

    def __call__(self, inputs, state, scope=None):
        """Runs one step: returns `(output, new_state)`.

        Args:
            inputs: `[batch, input_size]` (a nest of them for custom cells).
            state: a tensor or nest of tensors shaped as `state_size`.
            scope: the cell's scope at its first call (a name or a
                `VariableScope`); default: its name made unique.
        """
        inputs, state = all_symbolic(inputs, state)
        call = store_lib.call_state("compat.v1.call", object)
        first_in_call = self._call_marker is not call
        if not isinstance(self._scope, VariableScope):
            self._scope = self._capture_scope(scope if scope is not None else self._scope)
        if self._dtype is None:
            leaves = jax.tree.leaves(inputs)
            if leaves:
                self._dtype = keras.backend.standardize_dtype(leaves[0].dtype)
        reuse = self._reuse if first_in_call else True
        with variable_scope(self._scope, reuse=reuse, custom_getter=self._track_variable):
            if first_in_call:
                self._variables = []
                self.build(jax.tree.map(lambda t: tuple(t.shape), inputs))
                self.built = True
                self._call_marker = call
            return self.call(inputs, state)

    def _track_variable(self, getter, *args, **kwargs):
        """TF1's `_rnn_get_variable`: the cell owns what `get_variable` gives inside it."""
        variable = getter(*args, **kwargs)
        if isinstance(variable, keras.Variable) and all(variable is not v for v in self._variables):
            self._variables.append(variable)
        return variable

    def zero_state(self, batch_size, dtype):
        """Zeros shaped as `state_size`: `[batch_size, s]` for each size `s`.

        Args:
            batch_size: an int (`x.shape[0]`, `tf1.shape(x)[0]`).
            dtype: the state's dtype.

        Returns:
            A tensor, or a nest (e.g. `LSTMStateTuple`) of tensors.

        Example:

        ```python
        state = cell.zero_state(batch_size=features.shape[0], dtype=tf1.float32)
        ```
        """
        return zero_state_like(self.state_size, batch_dimension(batch_size), dtype)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """`zero_state`, with the batch size and dtype of `inputs` when given."""
        if inputs is not None:
            batch_size = inputs.shape[0] if batch_size is None else batch_size
            dtype = inputs.dtype if dtype is None else dtype
        if batch_size is None or dtype is None:
            raise ValueError(
                "batch_size and dtype cannot be None while constructing initial state: "
                f"batch_size={batch_size}, dtype={dtype}"
            )
        return self.zero_state(batch_size, dtype)

    def _sub_cells(self):
        """The cells this one calls (wrappers and `MultiRNNCell` override it)."""
        return []

    def _all_variables(self):
        found = list(self._variables)
        for cell in self._sub_cells():
            found += [v for v in cell._all_variables() if all(v is not f for f in found)]
        return found

    @property
    def variables(self):
        return [VariableView(v) for v in self._all_variables()]

    weights = variables

    @property
    def trainable_variables(self):
        return [v for v in self.variables if v.trainable] if self.trainable else []

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self):
        return [v for v in self.variables if not v.trainable or not self.trainable]

    non_trainable_weights = non_trainable_variables

    def __repr__(self):
        return f"<tf1 {type(self).__name__} name={self._base_name()!r}>"
