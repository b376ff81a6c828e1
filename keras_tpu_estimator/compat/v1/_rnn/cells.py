"""TF1's built-in recurrent cells, with TF1's variables, gate order and defaults.

Every cell multiplies `concat([inputs, h])` by one kernel, as TF1's do, so a
TF1 checkpoint's `kernel` loads as it is:

| cell | variables (in the cell's scope) | gates |
|---|---|---|
| `BasicRNNCell` | `kernel [in+n, n]`, `bias` (zeros) | `h = act(xh W + b)` |
| `GRUCell` | `gates/kernel [in+n, 2n]`, `gates/bias` (ones), `candidate/kernel`, `candidate/bias` (zeros) | `r, u`; `h = u h + (1-u) act(...)` |
| `BasicLSTMCell` | `kernel [in+n, 4n]`, `bias` (zeros) | `i, j, f, o`; `forget_bias` added to `f` |
| `LSTMCell` | as above, `w_f_diag`, `w_i_diag`, `w_o_diag` (peepholes), `projection/kernel` (`num_proj`) | as above |
| `LSTMBlockCell` | named `lstm_cell`: `kernel`, `bias`, `w_i_diag`, `w_f_diag`, `w_o_diag` | as `LSTMCell` |
"""

from keras import ops

from keras_tpu_estimator.compat.v1 import initializers
from keras_tpu_estimator.compat.v1._op_helpers import resolve_initializer
from keras_tpu_estimator.compat.v1._rnn.cell_base import LSTMStateTuple
from keras_tpu_estimator.compat.v1._rnn.cell_base import RNNCell
from keras_tpu_estimator.compat.v1._rnn.cell_base import activation_function
from keras_tpu_estimator.compat.v1._rnn.cell_base import check_float
from keras_tpu_estimator.compat.v1._rnn.cell_base import check_input


def _check_units(num_units, cell):
    if isinstance(num_units, bool) or not isinstance(num_units, int) or num_units <= 0:
        raise ValueError(f"Argument `num_units` of {cell} must be a positive int. "
                         f"Received: num_units={num_units!r}")
    return num_units


def _linear(inputs, h, kernel, bias):
    """`concat([inputs, h], 1) @ kernel + bias`: TF1's one matrix multiply per step."""
    out = ops.matmul(ops.concatenate([inputs, h], axis=1), kernel)
    return out if bias is None else out + bias


class BasicRNNCell(RNNCell):
    """TF1's `BasicRNNCell`: `output = new_state = activation(concat([x, h]) @ kernel + bias)`.

    Args:
        num_units: the state size.
        activation: default `tanh`.
        reuse, name, dtype: as TF1's (see `RNNCell`).
    """

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = _check_units(num_units, "BasicRNNCell")
        self._activation = activation_function(activation, "BasicRNNCell")

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = inputs_shape[-1]
        self._kernel = self.add_weight("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_weight("bias", [self._num_units],
                                     initializer=initializers.zeros_initializer())

    def call(self, inputs, state):
        check_input(inputs, "BasicRNNCell")
        output = self._activation(_linear(inputs, state, self._kernel, self._bias))
        return output, output


class GRUCell(RNNCell):
    """TF1's `GRUCell` (Cho et al., 2014), reset gate applied before the candidate's multiply.

    Args:
        num_units: the state size.
        activation: default `tanh`.
        kernel_initializer: default: the scope's, else Glorot uniform.
        bias_initializer: default: ones for the gates, zeros for the candidate.
        reuse, name, dtype: as TF1's.
    """

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = _check_units(num_units, "GRUCell")
        self._activation = activation_function(activation, "GRUCell")
        self._kernel_initializer = resolve_initializer(kernel_initializer)
        self._bias_initializer = resolve_initializer(bias_initializer)

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth, n = inputs_shape[-1], self._num_units
        bias = self._bias_initializer
        self._gate_kernel = self.add_weight("gates/kernel", [depth + n, 2 * n],
                                            initializer=self._kernel_initializer)
        self._gate_bias = self.add_weight(
            "gates/bias", [2 * n],
            initializer=bias if bias is not None else initializers.constant_initializer(1.0))
        self._candidate_kernel = self.add_weight("candidate/kernel", [depth + n, n],
                                                 initializer=self._kernel_initializer)
        self._candidate_bias = self.add_weight(
            "candidate/bias", [n],
            initializer=bias if bias is not None else initializers.zeros_initializer())

    def call(self, inputs, state):
        check_input(inputs, "GRUCell")
        value = ops.sigmoid(_linear(inputs, state, self._gate_kernel, self._gate_bias))
        r, u = ops.split(value, 2, axis=1)
        candidate = _linear(inputs, r * state, self._candidate_kernel, self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


def _split_state(cell, state, sizes):
    """`(c, h)` from an `LSTMStateTuple` or TF1's concatenated state `[c, h]`."""
    if cell._state_is_tuple:
        if not isinstance(state, (tuple, list)) or len(state) != 2:
            raise ValueError(f"{type(cell).__name__} with state_is_tuple=True needs a state "
                             f"(c, h). Received: {state!r}")
        return state
    check_float(state, type(cell).__name__)
    return state[:, :sizes[0]], state[:, sizes[0]:sizes[0] + sizes[1]]


def _join_state(cell, c, h):
    return LSTMStateTuple(c, h) if cell._state_is_tuple else ops.concatenate([c, h], axis=1)


class BasicLSTMCell(RNNCell):
    """TF1's `BasicLSTMCell`: no peepholes, clipping or projection.

    Gates `i, j, f, o = split(concat([x, h]) @ kernel + bias, 4)`;
    `c = c * sigmoid(f + forget_bias) + sigmoid(i) * act(j)`,
    `h = act(c) * sigmoid(o)`.

    Args:
        num_units: the size of `c` and `h`.
        forget_bias: added to the forget gate (default 1.0; 0.0 for
            checkpoints trained with cuDNN).
        state_is_tuple: states are `LSTMStateTuple(c, h)` (default) or
            `concat([c, h], 1)`.
        activation: default `tanh`.
        reuse, name, dtype: as TF1's.
    """

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = _check_units(num_units, type(self).__name__)
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation_function(activation, type(self).__name__)

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        n = self._num_units
        self._kernel = self.add_weight("kernel", [inputs_shape[-1] + n, 4 * n])
        self._bias = self.add_weight("bias", [4 * n], initializer=initializers.zeros_initializer())

    def call(self, inputs, state):
        check_input(inputs, type(self).__name__)
        c, h = _split_state(self, state, (self._num_units, self._num_units))
        i, j, f, o = ops.split(_linear(inputs, h, self._kernel, self._bias), 4, axis=1)
        new_c = c * ops.sigmoid(f + self._forget_bias) + ops.sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * ops.sigmoid(o)
        return new_h, _join_state(self, new_c, new_h)


class LSTMCell(RNNCell):
    """TF1's `LSTMCell`: optional peepholes, cell clipping and output projection.

    Args:
        num_units: the size of `c`.
        use_peepholes: adds `w_f_diag * c` and `w_i_diag * c` to the forget
            and input gates, `w_o_diag * new_c` to the output gate.
        cell_clip: clips `c` to `[-cell_clip, cell_clip]`.
        initializer: of the kernel, peepholes and projection (default: the
            scope's, else Glorot uniform).
        num_proj: projects `h` to this size (`projection/kernel`).
        proj_clip: clips the projected `h`.
        num_unit_shards, num_proj_shards: not supported (must be None).
        forget_bias: added to the forget gate (default 1.0).
        state_is_tuple: `LSTMStateTuple(c, h)` (default) or `concat([c, h], 1)`.
        activation: default `tanh`.
        reuse, name, dtype: as TF1's.

    Raises:
        NotImplementedError: for `num_unit_shards` or `num_proj_shards`.
    """

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError(
                "LSTMCell(num_unit_shards=..., num_proj_shards=...) is not supported: "
                "variables are sharded by the distribution's layout map instead. Remove them."
            )
        self._num_units = _check_units(num_units, "LSTMCell")
        if num_proj is not None:
            _check_units(num_proj, "LSTMCell (num_proj)")
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = resolve_initializer(initializer)
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation_function(activation, "LSTMCell")

    @property
    def state_size(self):
        m = self._num_proj or self._num_units
        return LSTMStateTuple(self._num_units, m) if self._state_is_tuple else self._num_units + m

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def build(self, inputs_shape):
        n, init = self._num_units, self._initializer
        h_depth = self._num_proj or n
        self._kernel = self.add_weight("kernel", [inputs_shape[-1] + h_depth, 4 * n],
                                       initializer=init)
        self._bias = self.add_weight("bias", [4 * n], initializer=initializers.zeros_initializer())
        if self._use_peepholes:
            self._w_f_diag = self.add_weight("w_f_diag", [n], initializer=init)
            self._w_i_diag = self.add_weight("w_i_diag", [n], initializer=init)
            self._w_o_diag = self.add_weight("w_o_diag", [n], initializer=init)
        if self._num_proj is not None:
            self._proj_kernel = self.add_weight("projection/kernel", [n, self._num_proj],
                                                initializer=init)

    def call(self, inputs, state):
        check_input(inputs, type(self).__name__)
        sizes = (self._num_units, self._num_proj or self._num_units)
        c_prev, m_prev = _split_state(self, state, sizes)
        i, j, f, o = ops.split(_linear(inputs, m_prev, self._kernel, self._bias), 4, axis=1)
        act = self._activation
        if self._use_peepholes:
            c = (ops.sigmoid(f + self._forget_bias + c_prev * self._w_f_diag) * c_prev
                 + ops.sigmoid(i + c_prev * self._w_i_diag) * act(j))
        else:
            c = ops.sigmoid(f + self._forget_bias) * c_prev + ops.sigmoid(i) * act(j)
        if self._cell_clip is not None:
            c = ops.clip(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = ops.sigmoid(o + c * self._w_o_diag) * act(c)
        else:
            m = ops.sigmoid(o) * act(c)
        if self._num_proj is not None:
            m = ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = ops.clip(m, -self._proj_clip, self._proj_clip)
        return m, _join_state(self, c, m)


class LSTMBlockCell(LSTMCell):
    """contrib's `LSTMBlockCell`: `LSTMCell`'s math, named `lstm_cell` by default.

    TF1 ran it as one fused kernel; here it is `LSTMCell`'s computation, and
    its variables (`lstm_cell/kernel`, `lstm_cell/bias`, with `use_peephole`
    `w_i_diag`, `w_f_diag`, `w_o_diag`) load from an `LSTMBlockCell` or an
    `LSTMCell` checkpoint alike.

    Args:
        num_units: the size of `c` and `h`.
        forget_bias: added to the forget gate (default 1.0).
        cell_clip: clips `c` (None: no clipping).
        use_peephole: peephole connections.
        dtype, reuse: as TF1's.
        name: default `"lstm_cell"`.
    """

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 dtype=None, reuse=None, name="lstm_cell"):
        super().__init__(num_units, use_peepholes=use_peephole, cell_clip=cell_clip,
                         forget_bias=forget_bias, reuse=reuse, name=name, dtype=dtype)

    def build(self, inputs_shape):
        n = self._num_units
        self._kernel = self.add_weight("kernel", [inputs_shape[-1] + n, 4 * n])
        self._bias = self.add_weight("bias", [4 * n], initializer=initializers.zeros_initializer())
        if self._use_peepholes:  # the block cell's order: i, f, o
            self._w_i_diag = self.add_weight("w_i_diag", [n])
            self._w_f_diag = self.add_weight("w_f_diag", [n])
            self._w_o_diag = self.add_weight("w_o_diag", [n])

