"""TF1's recurrent loops: `dynamic_rnn` and `bidirectional_dynamic_rnn` on `jax.lax.scan`,
`static_rnn` and `static_bidirectional_rnn` unrolled.

As in TF1, the loop opens a variable scope (`rnn`, or `scope`; the
bidirectional ones `bidirectional_rnn/fw` and `.../bw`) in which the cell
creates its variables, and with `sequence_length` an example's outputs past
its length are zeros and its state stays the one at its last step (the
final state of an example of length 0 is its initial state).

`dynamic_rnn` first calls the cell once on shape-only stand-ins of a step:
that creates the cell's variables (TF1 built the loop body once, too) and
gives the shapes of the outputs; in the build pass of `model_fn` that is
all it does. In the compiled step the steps run in one `jax.lax.scan`, so
the program's size does not grow with the sequence length, and gradients
flow through it as through any JAX loop.

```python
cell = tf1.nn.rnn_cell.LSTMCell(256)
outputs, state = tf1.nn.dynamic_rnn(cell, embedded, sequence_length=lengths,
                                    dtype=tf1.float32)   # rnn/lstm_cell/kernel
last_h = state.h
```
"""

import jax
import jax.numpy as jnp
import keras
from keras import ops

from keras_tpu_estimator.compat.v1._rnn.cell_base import is_symbolic
from keras_tpu_estimator.compat.v1._rnn.cell_base import map_sizes
from keras_tpu_estimator.compat.v1._rnn.wrappers import LoopKeys
from keras_tpu_estimator.compat.v1._rnn.wrappers import draw_loop_keys
from keras_tpu_estimator.compat.v1._rnn.wrappers import existing_seed_generator
from keras_tpu_estimator.compat.v1._rnn.wrappers import loop_keys
from keras_tpu_estimator.compat.v1._rnn.wrappers import seed_generator_at
from keras_tpu_estimator.compat.v1.variables import variable_scope
from keras_tpu_estimator.model_fn import store as store_lib


def _check_cell(cell, function):
    if not callable(cell) or not all(hasattr(cell, a) for a in ("state_size", "output_size")):
        raise TypeError(f"Argument `cell` of {function} must be an RNN cell (tf1.nn.rnn_cell.*: "
                        f"callable, with state_size and output_size). Received: cell={cell!r}")


def _stand_in(tensor, drop_leading=0):
    shape = tuple(tensor.shape)[drop_leading:]
    return keras.KerasTensor(shape, dtype=keras.backend.standardize_dtype(tensor.dtype))


def _initial_state(cell, initial_state, dtype, batch_size, function):
    if initial_state is not None:
        _check_state_shapes(cell, initial_state, batch_size, function)
        return initial_state
    if dtype is None:
        raise ValueError(f"{function}: if there is no initial_state, you must give a dtype.")
    return cell.zero_state(batch_size, dtype)


def _check_state_shapes(cell, state, batch_size, function):
    """The initial state's leaves must be `[batch, *s]` for the sizes `s` of `cell.state_size`."""
    expected = []
    try:
        map_sizes(lambda s: expected.append(
            (batch_size, *((int(s),) if not isinstance(s, tuple) else tuple(s)))),
            cell.state_size)
    except (TypeError, NotImplementedError):
        return  # a custom cell's sizes: the cell's own call checks its state
    shapes = [tuple(x.shape) for x in jax.tree.leaves(state)]
    if shapes != expected:
        raise ValueError(
            f"{function}: the initial state's shapes {shapes} do not match the cell's state "
            f"{expected} (cell.state_size with the batch size first)."
        )


def _lengths(sequence_length, batch_size, function):
    if sequence_length is None:
        return None
    lengths = ops.cast(ops.convert_to_tensor(sequence_length), "int32") if not isinstance(
        sequence_length, keras.KerasTensor) else ops.cast(sequence_length, "int32")
    if tuple(lengths.shape) != (batch_size,):
        raise ValueError(
            f"{function}: sequence_length must be a vector of length batch_size "
            f"({batch_size}), but saw shape: {tuple(lengths.shape)}"
        )
    return lengths


def _alive_select(alive, new, old):
    """`new` where the example is inside its sequence, else `old` (per batch row)."""
    def select(n, o):
        mask = ops.reshape(alive, (-1,) + (1,) * (len(n.shape) - 1))
        return ops.where(mask, n, o)

    return jax.tree.map(select, new, old)


def _match_state(template, state, function):
    """`state` in the structure and dtypes the cell returns (a carry of `jax.lax.scan`)."""
    leaves, expected = jax.tree.leaves(state), jax.tree.leaves(template)
    shapes = [tuple(x.shape) for x in leaves]

    def fits(shape, template_shape):  # None: an export's symbolic batch in a stand-in
        return len(shape) == len(template_shape) and all(
            t is None or d == t for d, t in zip(shape, template_shape))

    if len(leaves) != len(expected) or not all(
            fits(s, tuple(x.shape)) for s, x in zip(shapes, expected)):
        raise ValueError(
            f"{function}: the initial state's shapes {shapes} do not match the cell's state "
            f"{[tuple(x.shape) for x in expected]} (cell.state_size with the batch size first)."
        )
    leaves = [ops.cast(x, e.dtype) for x, e in zip(leaves, expected)]
    return jax.tree.unflatten(jax.tree.structure(template), leaves)


def _time_major_loop(cell, inputs, state, lengths, function):
    """Runs `cell` over time-major `inputs`: `(outputs [T, B, ...], final state)`."""
    time_steps = jax.tree.leaves(inputs)[0].shape[0]
    keys = LoopKeys()
    with loop_keys(keys):
        step_outputs, step_state = cell(jax.tree.map(lambda x: _stand_in(x, 1), inputs),
                                        jax.tree.map(_stand_in, state))
    state = _match_state(step_state, state, function)
    if is_symbolic((inputs, state, lengths)):
        if keys.needed:
            store_lib.get_seed_generator()
        outputs = jax.tree.map(lambda o: keras.KerasTensor((time_steps, *o.shape), o.dtype),
                               step_outputs)
        return outputs, step_state
    generator = existing_seed_generator()
    random = keys.needed or generator is not None
    step_keys, variational_keys = draw_loop_keys() if random else (None, None)

    def step(carry, xs):
        x, t = xs
        step_key = None if step_keys is None else jax.random.fold_in(step_keys, t)
        with loop_keys(LoopKeys(step_key, variational_keys)), \
                seed_generator_at(generator, step_key):
            output, new_state = cell(x, carry)
        new_state = _match_state(step_state, new_state, function)
        if lengths is not None:
            alive = t < lengths
            output = _alive_select(alive, output, jax.tree.map(jnp.zeros_like, output))
            new_state = _alive_select(alive, new_state, carry)
        return new_state, output

    final, outputs = jax.lax.scan(step, state, (inputs, jnp.arange(time_steps)))
    return outputs, final


def _swap_time_batch(structure):
    return jax.tree.map(lambda x: ops.swapaxes(x, 0, 1), structure)


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Runs `cell` over the time axis of `inputs` (TF1's `tf.nn.dynamic_rnn`).

    Args:
        cell: an `RNNCell`.
        inputs: `[batch, time, ...]` (`[time, batch, ...]` with
            `time_major`), or a nest of such tensors (the cell gets the nest
            of one step).
        sequence_length: optional int vector `[batch]`: outputs past an
            example's length are zeros, its state is frozen there.
        initial_state: the state at time 0 (default: `cell.zero_state`).
        dtype: the zero state's dtype; required without `initial_state`.
        time_major: whether the time axis comes first (inputs and outputs).
        scope: the variable scope (name or `VariableScope`); default `"rnn"`.
        parallel_iterations, swap_memory: accepted and ignored.

    Returns:
        `(outputs, state)`: the outputs of every step, `[batch, time,
        output_size]` (time first with `time_major`), and the final state.

    Raises:
        ValueError: without `initial_state` or `dtype`, for inputs of rank
            below 3, a `sequence_length` that is not `[batch]`, or an
            initial state that does not match `cell.state_size`.
        TypeError: if `cell` is not an RNN cell.
    """
    del parallel_iterations, swap_memory
    _check_cell(cell, "dynamic_rnn")
    leaves = jax.tree.leaves(inputs)
    if not leaves or any(len(x.shape) < 3 for x in leaves):
        raise ValueError(
            "dynamic_rnn: `inputs` must have rank at least 3 ([batch, time, depth], or "
            f"[time, batch, depth] with time_major). Received shapes: {[x.shape for x in leaves]}"
        )
    with variable_scope(scope or "rnn"):
        if not time_major:
            inputs = _swap_time_batch(inputs)
        batch_size = jax.tree.leaves(inputs)[0].shape[1]
        state = _initial_state(cell, initial_state, dtype, batch_size, "dynamic_rnn")
        lengths = _lengths(sequence_length, batch_size, "dynamic_rnn")
        outputs, state = _time_major_loop(cell, inputs, state, lengths, "dynamic_rnn")
        if not time_major:
            outputs = _swap_time_batch(outputs)
    return outputs, state


def _reverse_sequence(x, lengths, time_axis):
    """Each example's first `length` steps reversed (all steps without `lengths`)."""
    if lengths is None:
        return ops.flip(x, axis=time_axis)
    steps = x.shape[time_axis]
    t = ops.expand_dims(ops.arange(steps, dtype="int32"), 0)
    length = ops.expand_dims(lengths, 1)
    index = ops.where(ops.less(t, length), ops.subtract(ops.subtract(length, 1), t), t)
    if time_axis == 0:
        index = ops.transpose(index)
    index = ops.reshape(index, tuple(index.shape) + (1,) * (len(x.shape) - 2))
    return ops.take_along_axis(x, ops.broadcast_to(index, x.shape), axis=time_axis)


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """A forward and a backward `dynamic_rnn` over `inputs` (TF1's `bidirectional_dynamic_rnn`).

    The backward cell reads each example's first `sequence_length` steps
    reversed; its outputs are reversed back. Variables live in
    `bidirectional_rnn/fw/...` and `bidirectional_rnn/bw/...` (or under `scope`).

    Returns:
        `((output_fw, output_bw), (state_fw, state_bw))`.

    Example:

    ```python
    (fw, bw), _ = tf1.nn.bidirectional_dynamic_rnn(
        tf1.nn.rnn_cell.LSTMCell(128), tf1.nn.rnn_cell.LSTMCell(128), x,
        sequence_length=lengths, dtype=tf1.float32)
    encoded = tf1.concat([fw, bw], axis=2)
    ```
    """
    del parallel_iterations, swap_memory
    _check_cell(cell_fw, "bidirectional_dynamic_rnn")
    _check_cell(cell_bw, "bidirectional_dynamic_rnn")
    time_axis = 0 if time_major else 1
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(cell_fw, inputs, sequence_length, initial_state_fw,
                                              dtype, time_major=time_major, scope=fw_scope)
        batch_size = jax.tree.leaves(inputs)[0].shape[1 - time_axis]
        lengths = _lengths(sequence_length, batch_size, "bidirectional_dynamic_rnn")
        with variable_scope("bw") as bw_scope:
            reversed_inputs = jax.tree.map(lambda x: _reverse_sequence(x, lengths, time_axis),
                                           inputs)
            reversed_bw, state_bw = dynamic_rnn(cell_bw, reversed_inputs, sequence_length,
                                                initial_state_bw, dtype, time_major=time_major,
                                                scope=bw_scope)
    output_bw = jax.tree.map(lambda x: _reverse_sequence(x, lengths, time_axis), reversed_bw)
    return (output_fw, output_bw), (state_fw, state_bw)


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """`cell` unrolled over a Python list of steps (TF1's `tf.nn.static_rnn`).

    Args:
        cell: an `RNNCell`.
        inputs: a list of `[batch, depth]` tensors (or nests), one per step.
        initial_state, dtype, sequence_length, scope: as `dynamic_rnn`'s.

    Returns:
        `(outputs, state)`: the list of the steps' outputs and the final state.

    Raises:
        TypeError: if `inputs` is not a non-empty list or tuple.
    """
    _check_cell(cell, "static_rnn")
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError(f"static_rnn: `inputs` must be a non-empty list of tensors, one per "
                        f"step. Received: {type(inputs).__name__}")
    with variable_scope(scope or "rnn"):
        batch_size = jax.tree.leaves(inputs[0])[0].shape[0]
        state = _initial_state(cell, initial_state, dtype, batch_size, "static_rnn")
        lengths = _lengths(sequence_length, batch_size, "static_rnn")
        outputs = []
        for time, step_inputs in enumerate(inputs):
            output, new_state = cell(step_inputs, state)
            if lengths is not None:
                alive = ops.less(time, lengths)
                output = _alive_select(alive, output, jax.tree.map(ops.zeros_like, output))
                new_state = _alive_select(alive, new_state, state)
            outputs.append(output)
            state = new_state
    return outputs, state


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """A forward and a backward `static_rnn` (TF1's `tf.nn.static_bidirectional_rnn`).

    Returns:
        `(outputs, state_fw, state_bw)`: `outputs` is the list of
        `concat([fw, bw], 1)` per step.
    """
    _check_cell(cell_fw, "static_bidirectional_rnn")
    _check_cell(cell_bw, "static_bidirectional_rnn")
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("static_bidirectional_rnn: `inputs` must be a non-empty list of "
                        f"tensors, one per step. Received: {type(inputs).__name__}")
    batch_size = jax.tree.leaves(inputs[0])[0].shape[0]
    lengths = _lengths(sequence_length, batch_size, "static_bidirectional_rnn")

    def reverse(steps):
        stacked = jax.tree.map(lambda *xs: ops.stack(xs, axis=1), *steps)
        flipped = jax.tree.map(lambda x: _reverse_sequence(x, lengths, 1), stacked)
        return [jax.tree.map(lambda x, t=t: x[:, t], flipped) for t in range(len(steps))]

    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            reversed_bw, state_bw = static_rnn(cell_bw, reverse(inputs), initial_state_bw,
                                               dtype, sequence_length, scope=bw_scope)
    output_bw = reverse(reversed_bw)
    outputs = [jax.tree.map(lambda f, b: ops.concatenate([f, b], axis=1), fw, bw)
               for fw, bw in zip(output_fw, output_bw)]
    return outputs, state_fw, state_bw


def stack_bidirectional_dynamic_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None,
                                    initial_states_bw=None, dtype=None, sequence_length=None,
                                    parallel_iterations=None, time_major=False, scope=None,
                                    swap_memory=False):
    """Layers of `bidirectional_dynamic_rnn`, each reading the last's concatenated outputs.

    contrib's `stack_bidirectional_dynamic_rnn`: layer `i` runs in
    `stack_bidirectional_rnn/cell_<i>/bidirectional_rnn/{fw,bw}/...`.

    Returns:
        `(outputs, states_fw, states_bw)`: the last layer's `concat([fw, bw], 2)`
        and tuples of every layer's final states.

    Raises:
        ValueError: for no cells, or lists of different lengths.
    """
    del parallel_iterations, swap_memory
    if not cells_fw or not cells_bw or len(cells_fw) != len(cells_bw):
        raise ValueError(
            "stack_bidirectional_dynamic_rnn needs as many forward as backward cells, at "
            f"least one. Received: {len(cells_fw or [])} and {len(cells_bw or [])}"
        )
    states_fw, states_bw, layer = [], [], inputs
    with variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope(f"cell_{i}"):
                outputs, (state_fw, state_bw) = bidirectional_dynamic_rnn(
                    cell_fw, cell_bw, layer,
                    initial_state_fw=initial_states_fw[i] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[i] if initial_states_bw else None,
                    sequence_length=sequence_length, dtype=dtype, time_major=time_major)
                layer = ops.concatenate(list(outputs), axis=2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer, tuple(states_fw), tuple(states_bw)
