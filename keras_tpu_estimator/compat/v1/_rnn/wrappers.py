"""TF1's cells made of cells: `MultiRNNCell` and the wrappers, and dropout's random keys.

A wrapper (`DropoutWrapper`, `ResidualWrapper`, `DeviceWrapper`) calls its
cell in the cell's own scope, adding no scope of its own, as TF1's did:
`DropoutWrapper(BasicLSTMCell(n))` owns `rnn/basic_lstm_cell/kernel`.
`MultiRNNCell` is a cell scope (`multi_rnn_cell`) calling cell `i` inside
`cell_<i>`: `rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel`.

Dropout draws from the model's seed generator (`keras.utils.set_random_seed`),
not from TF1's graph seed; `seed` is accepted and ignored. Inside a loop
(`dynamic_rnn`), the loop draws one key before its `jax.lax.scan` and each
step folds in the step number, so every step drops other units (a cell's
own `tf1.nn.dropout` too: the seed generator starts each step from that
step's key); with
`variational_recurrent=True` one mask per wrapper is used for every step of
the loop (and, as in TF1, for every example of the batch). Outside loops a
variational wrapper keeps one mask per `model_fn` call.
"""

import contextlib
import threading

import jax
from keras import ops

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.compat.v1._rnn.cell_base import LSTMStateTuple
from keras_tpu_estimator.compat.v1._rnn.cell_base import RNNCell
from keras_tpu_estimator.compat.v1._rnn.cell_base import all_symbolic
from keras_tpu_estimator.compat.v1._rnn.cell_base import is_symbolic
from keras_tpu_estimator.compat.v1.variables import variable_scope
from keras_tpu_estimator.model_fn import store as store_lib

_state = threading.local()


class LoopKeys:
    """The random keys of the cells one loop step calls.

    Attributes:
        step_key: this step's key (None in the loop's shape-only first call).
        variational_key: the loop's key for variational masks.
        needed: set when a cell asked for randomness.
    """

    def __init__(self, step_key=None, variational_key=None):
        self.step_key = step_key
        self.variational_key = variational_key
        self.needed = False
        self._count = 0
        self._variational_count = 0

    def next_step_key(self):
        self._count += 1
        return jax.random.fold_in(self.step_key, self._count)

    def next_variational_key(self):
        self._variational_count += 1
        return jax.random.fold_in(self.variational_key, self._variational_count)


@contextlib.contextmanager
def loop_keys(keys):
    """Makes `keys` the source of the cells' randomness inside the block."""
    stack = _state.__dict__.setdefault("stack", [])
    stack.append(keys)
    try:
        yield keys
    finally:
        stack.pop()


def _current_keys():
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


def draw_loop_keys():
    """A loop's two base keys `(steps, variational)`, drawn from the model's seed generator."""
    base = store_lib.get_seed_generator().next()
    steps, variational = jax.random.split(base)
    return steps, variational


def existing_seed_generator():
    """The model's seed generator if `model_fn` has made one (else None)."""
    return getattr(store_lib.current_call("dynamic_rnn").store, "seed_generator", None)


@contextlib.contextmanager
def seed_generator_at(generator, key):
    """Inside a loop step: the seed generator starts from `key`, and is put back after.

    Random ops of a cell's own (`tf1.nn.dropout`, `tf1.layers.dropout`)
    advance the generator; inside `jax.lax.scan` that state must not leave
    the step, so each step starts it from its own key and the loop restores
    the generator's state before the scan ends its trace.
    """
    if generator is None or key is None:
        yield
        return
    # Bound, not assigned: the state the step leaves behind is dropped, and
    # the outer value comes back as it was (an assignment inside the step's
    # trace would make it a value of that trace).
    with _keras_internals.bound_values([generator.state], [ops.cast(key, generator.state.dtype)]):
        yield


def _note_randomness():
    """In the build pass: the seed generator exists, and a loop knows it needs keys."""
    keys = _current_keys()
    if keys is not None:
        keys.needed = True
    else:
        store_lib.get_seed_generator()


def _step_key():
    keys = _current_keys()
    if keys is not None:
        return keys.next_step_key()
    return store_lib.get_seed_generator().next()


def _variational_key(owner):
    keys = _current_keys()
    if keys is not None:
        return keys.next_variational_key()
    return store_lib.call_state(f"compat.v1.rnn.variational.{id(owner)}",
                                lambda: store_lib.get_seed_generator().next())


class _Wrapper(RNNCell):
    """A cell around `cell`, called in the cell's scope."""

    def __init__(self, cell, **kwargs):
        if not isinstance(cell, RNNCell):
            raise TypeError(f"Argument `cell` of {type(self).__name__} must be a tf1 RNNCell "
                            f"(tf1.nn.rnn_cell.*). Received: cell={cell!r}")
        super().__init__(**kwargs)
        self.cell = cell

    @property
    def wrapped_cell(self):
        return self.cell

    @property
    def state_size(self):
        return self.cell.state_size

    @property
    def output_size(self):
        return self.cell.output_size

    def zero_state(self, batch_size, dtype):
        return self.cell.zero_state(batch_size, dtype)

    def _sub_cells(self):
        return [self.cell]

    def __call__(self, inputs, state, scope=None):
        inputs, state = all_symbolic(inputs, state)
        return self._call_wrapped_cell(inputs, state, lambda x, s: self.cell(x, s, scope=scope))


def _check_probability(value, argument):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not 0 <= value <= 1:
            raise ValueError(f"Parameter {argument} must be between 0 and 1. Received {value}")
        return float(value)
    return value  # a tensor: used as it is


def _default_state_filter(substate):
    """TF1's default: dropout on every state but the memory `c` of an `LSTMStateTuple`."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


def _filtered(visitor, state, drop):
    """`drop` on the parts of `state` that `visitor` marks (TF1's shallow-structure walk)."""
    marks = visitor(state)
    if marks is False:
        return state
    if marks is True:
        if isinstance(state, (tuple, list)):
            parts = [_filtered(visitor, s, drop) for s in state]
            return type(state)(*parts) if hasattr(state, "_fields") else type(state)(parts)
        return drop(state)
    parts = [jax.tree.map(drop, s) if m else s for m, s in zip(marks, state)]
    return type(state)(*parts) if hasattr(state, "_fields") else type(state)(parts)


class DropoutWrapper(_Wrapper):
    """TF1's `DropoutWrapper`: dropout on the cell's inputs, outputs and states.

    Kept values are scaled by `1 / keep_prob`. A keep probability of exactly
    1 adds nothing. Dropout is always on: choose the probabilities (or
    whether to wrap) from the mode, as TF1 programs do.

    Args:
        cell: the `RNNCell` to wrap.
        input_keep_prob, output_keep_prob, state_keep_prob: floats in
            `[0, 1]` (or scalar tensors).
        variational_recurrent: one mask per wrapper for every time step of
            a loop (and every example), as Gal & Ghahramani (2016).
        input_size, dtype: accepted (TF1 needed them for variational masks;
            here masks take the shapes of what they drop).
        seed: ignored: dropout draws from the model's seed generator.
        dropout_state_filter_visitor: `fn(substate)` returning True, False
            or a structure of bools: which states are dropped (default: all
            but the `c` of `LSTMStateTuple`s).

    Raises:
        ValueError: for a keep probability outside `[0, 1]`.
        TypeError: for a non-callable `dropout_state_filter_visitor`.

    Example:

    ```python
    cell = tf1.nn.rnn_cell.BasicLSTMCell(512)
    if mode == tf1.estimator.ModeKeys.TRAIN:
        cell = tf1.nn.rnn_cell.DropoutWrapper(cell, input_keep_prob=0.7, output_keep_prob=0.7)
    ```
    """

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None, **kwargs):
        super().__init__(cell, dtype=dtype, **kwargs)
        if dropout_state_filter_visitor is not None and not callable(dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable. "
                            f"Received: {dropout_state_filter_visitor!r}")
        self._state_filter = dropout_state_filter_visitor or _default_state_filter
        self._input_keep_prob = _check_probability(input_keep_prob, "input_keep_prob")
        self._output_keep_prob = _check_probability(output_keep_prob, "output_keep_prob")
        self._state_keep_prob = _check_probability(state_keep_prob, "state_keep_prob")
        self._variational_recurrent = bool(variational_recurrent)

    def _drop(self, value, keep_prob):
        if is_symbolic(value):
            _note_randomness()
            return value
        if self._variational_recurrent:
            noise = jax.random.uniform(_variational_key(self), (1, *value.shape[1:]), value.dtype)
            return value / keep_prob * ops.floor(keep_prob + noise)
        uniform = jax.random.uniform(_step_key(), value.shape, value.dtype)
        return ops.where(uniform >= 1 - keep_prob, value / keep_prob, ops.zeros_like(value))

    def _call_wrapped_cell(self, inputs, state, call_cell):
        def active(p):
            return not isinstance(p, float) or p < 1

        if active(self._input_keep_prob):
            inputs = jax.tree.map(lambda v: self._drop(v, self._input_keep_prob), inputs)
        output, new_state = call_cell(inputs, state)
        if active(self._state_keep_prob):
            new_state = _filtered(self._state_filter, new_state,
                                  lambda v: self._drop(v, self._state_keep_prob))
        if active(self._output_keep_prob):
            output = jax.tree.map(lambda v: self._drop(v, self._output_keep_prob), output)
        return output, new_state


class ResidualWrapper(_Wrapper):
    """TF1's `ResidualWrapper`: `output = inputs + cell_output` (or `residual_fn(inputs, output)`).

    Raises:
        ValueError: at the call, when the inputs' and outputs' shapes differ
            (without `residual_fn`).
    """

    def __init__(self, cell, residual_fn=None, **kwargs):
        super().__init__(cell, **kwargs)
        self._residual_fn = residual_fn

    def _call_wrapped_cell(self, inputs, state, call_cell):
        outputs, new_state = call_cell(inputs, state)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, outputs), new_state

        def add(x, y):
            if tuple(x.shape) != tuple(y.shape):
                raise ValueError(
                    "ResidualWrapper adds the cell's inputs to its outputs: their shapes "
                    f"must match. Received: inputs {tuple(x.shape)}, outputs {tuple(y.shape)}"
                )
            return x + y

        return jax.tree.map(add, inputs, outputs), new_state


class DeviceWrapper(_Wrapper):
    """TF1's `DeviceWrapper`: the cell as it is (placement is the distribution's)."""

    def __init__(self, cell, device, **kwargs):
        super().__init__(cell, **kwargs)
        self._device = device

    def _call_wrapped_cell(self, inputs, state, call_cell):
        return call_cell(inputs, state)


class MultiRNNCell(RNNCell):
    """TF1's `MultiRNNCell`: cells stacked, cell `i` in scope `multi_rnn_cell/cell_<i>`.

    Args:
        cells: a list of `RNNCell`s, called in order.
        state_is_tuple: states are a tuple with one state per cell (default)
            or concatenated (only for cells whose states are single tensors).

    Raises:
        ValueError: for no cells, or tuple states with `state_is_tuple=False`.
        TypeError: if `cells` is not a list or tuple.

    Example:

    ```python
    cell = tf1.nn.rnn_cell.MultiRNNCell([tf1.nn.rnn_cell.LSTMCell(n) for n in (256, 256)])
    outputs, states = tf1.nn.dynamic_rnn(cell, x, dtype=tf1.float32)
    ```
    """

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not isinstance(cells, (list, tuple)):
            raise TypeError(f"cells must be a list or tuple, but received: {cells!r}.")
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(isinstance(c.state_size, tuple) for c in self._cells):
            raise ValueError(
                "Some cells return tuples of states, but the flag state_is_tuple is not set. "
                f"State sizes are: {[c.state_size for c in self._cells]}"
            )

    @property
    def state_size(self):
        sizes = tuple(cell.state_size for cell in self._cells)
        return sizes if self._state_is_tuple else sum(sizes)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        if self._state_is_tuple:
            return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
        return super().zero_state(batch_size, dtype)

    def _sub_cells(self):
        return list(self._cells)

    def call(self, inputs, state):
        if self._state_is_tuple and (not isinstance(state, (tuple, list))
                                     or len(state) != len(self._cells)):
            raise ValueError(f"Expected state to be a tuple of length {len(self._cells)}, "
                             f"but received: {state!r}")
        position, new_states = 0, []
        for i, cell in enumerate(self._cells):
            with variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    current = state[i]
                else:
                    current = state[:, position:position + cell.state_size]
                    position += cell.state_size
                inputs, new_state = cell(inputs, current)
                new_states.append(new_state)
        if self._state_is_tuple:
            return inputs, tuple(new_states)
        return inputs, ops.concatenate(new_states, axis=1)
