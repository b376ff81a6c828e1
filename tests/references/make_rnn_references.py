"""Writes `rnn_cells.npz`: TF1's recurrent cells and loops run by TensorFlow 2.15.

TensorFlow 2.21 with Keras 3 no longer has `tf.compat.v1.nn.rnn_cell`, so the
reference numbers come from TensorFlow 2.15 (the last release with it),
once, into a committed fixture that `tests/test_rnn_cells.py` reads:

    /tmp/venv215/bin/python tests/references/make_rnn_references.py

Each case of `CASES` is one program written against a TF1 module `tf`; the
same function runs here on `tensorflow.compat.v1` and in the test on
`keras_tpu_estimator.compat.v1`. Here it is built in a `tf.Graph`, every
variable it creates is set to seeded normal values, and the fixture records,
per case, the inputs, the variables by TF1 name (in creation order), and the
leaves of what the program returns (`tf.nest.flatten` order). The gradient
case also records TF's gradient of `sum(outputs)` with respect to each
variable. `lstm_block_cell` (contrib's `LSTMBlockCell`, gone from TF 2) is
computed with the kernel it ran on, `tf.raw_ops.LSTMBlockCell`, and
`stack_bidirectional` composes TF's `bidirectional_dynamic_rnn` as contrib's
`stack_bidirectional_dynamic_rnn` did (the library runs its own).

This module imports TensorFlow only in `main`, so the test can import
`CASES` and the inputs without it.
"""

import os

import numpy as np

BATCH, TIME, DEPTH = 3, 5, 4
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rnn_cells.npz")


def inputs():
    """The arrays every case reads, seeded."""
    rng = np.random.default_rng(21)
    return {
        "x": rng.normal(size=(BATCH, TIME, DEPTH)).astype("float32"),
        "lengths": np.array([5, 2, 0], "int32"),
        "h0": rng.normal(size=(BATCH, 3)).astype("float32"),
        "c0": rng.normal(size=(BATCH, 6)).astype("float32"),
    }


def basic_rnn(tf, a):
    cell = tf.nn.rnn_cell.BasicRNNCell(3)
    return tf.nn.dynamic_rnn(cell, a["x"], dtype=tf.float32)


def basic_rnn_relu_initial_state(tf, a):
    cell = tf.nn.rnn_cell.BasicRNNCell(3, activation=tf.nn.relu)
    return tf.nn.dynamic_rnn(cell, a["x"], initial_state=a["h0"])


def basic_lstm_lengths(tf, a):
    cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    return tf.nn.dynamic_rnn(cell, a["x"], sequence_length=a["lengths"], dtype=tf.float32)


def basic_lstm_concat_state(tf, a):
    cell = tf.nn.rnn_cell.BasicLSTMCell(4, forget_bias=0.5, state_is_tuple=False)
    return tf.nn.dynamic_rnn(cell, a["x"], dtype=tf.float32)


def lstm_peepholes_projection(tf, a):
    cell = tf.nn.rnn_cell.LSTMCell(6, use_peepholes=True, cell_clip=0.6, num_proj=3,
                                   proj_clip=0.5, forget_bias=0.8)
    state = tf.nn.rnn_cell.LSTMStateTuple(a["c0"], a["h0"])
    time_major = tf.transpose(a["x"], [1, 0, 2])
    return tf.nn.dynamic_rnn(cell, time_major, initial_state=state, time_major=True,
                             sequence_length=a["lengths"])


def lstm_plain(tf, a):
    cell = tf.nn.rnn_cell.LSTMCell(5, name="my_lstm")
    return tf.nn.dynamic_rnn(cell, a["x"], dtype=tf.float32, scope="encoder")


def gru_lengths(tf, a):
    cell = tf.nn.rnn_cell.GRUCell(3)
    return tf.nn.dynamic_rnn(cell, a["x"], sequence_length=a["lengths"], initial_state=a["h0"])


def multi_cell(tf, a):
    cells = [tf.nn.rnn_cell.BasicLSTMCell(4), tf.nn.rnn_cell.GRUCell(3)]
    return tf.nn.dynamic_rnn(tf.nn.rnn_cell.MultiRNNCell(cells), a["x"],
                             sequence_length=a["lengths"], dtype=tf.float32)


def wrappers(tf, a):
    residual = tf.nn.rnn_cell.ResidualWrapper(tf.nn.rnn_cell.BasicRNNCell(DEPTH))
    dropout = tf.nn.rnn_cell.DropoutWrapper(
        tf.nn.rnn_cell.LSTMCell(4), input_keep_prob=1.0, output_keep_prob=1.0)
    cell = tf.nn.rnn_cell.MultiRNNCell([residual, dropout])
    return tf.nn.dynamic_rnn(cell, a["x"], dtype=tf.float32)


def static_lstm(tf, a):
    cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    steps = tf.unstack(a["x"], axis=1)
    return tf.nn.static_rnn(cell, steps, sequence_length=a["lengths"], dtype=tf.float32)


def bidirectional(tf, a):
    forward, backward = tf.nn.rnn_cell.LSTMCell(4), tf.nn.rnn_cell.GRUCell(3)
    return tf.nn.bidirectional_dynamic_rnn(forward, backward, a["x"],
                                           sequence_length=a["lengths"], dtype=tf.float32)


def bidirectional_no_lengths(tf, a):
    forward, backward = tf.nn.rnn_cell.BasicRNNCell(2), tf.nn.rnn_cell.BasicRNNCell(2)
    return tf.nn.bidirectional_dynamic_rnn(forward, backward, a["x"], dtype=tf.float32,
                                           scope="birnn")


def static_bidirectional(tf, a):
    forward, backward = tf.nn.rnn_cell.BasicLSTMCell(3), tf.nn.rnn_cell.GRUCell(2)
    steps = tf.unstack(a["x"], axis=1)
    return tf.nn.static_bidirectional_rnn(forward, backward, steps, dtype=tf.float32,
                                          sequence_length=a["lengths"])


def cell_then_loop(tf, a):
    """Show-and-tell's pattern: one step from the zero state, then the loop reusing it."""
    cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    with tf.variable_scope("lstm") as scope:
        zero = cell.zero_state(batch_size=BATCH, dtype=tf.float32)
        _, initial = cell(a["x"][:, 0], zero)
        scope.reuse_variables()
        outputs, _ = tf.nn.dynamic_rnn(cell, a["x"], sequence_length=a["lengths"],
                                       initial_state=initial, dtype=tf.float32, scope=scope)
    return initial, outputs


def two_loops_two_scopes(tf, a):
    with tf.variable_scope("encoder"):
        encoded, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), a["x"], dtype=tf.float32)
    with tf.variable_scope("decoder"):
        decoded, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), encoded, initial_state=state)
    return decoded


def _stack_bidirectional(tf, cells_fw, cells_bw, inputs, sequence_length, dtype):
    """contrib's `stack_bidirectional_dynamic_rnn` (gone from TF 2), as TF 1.15 wrote it."""
    if hasattr(tf, "contrib"):
        return tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
            cells_fw, cells_bw, inputs, sequence_length=sequence_length, dtype=dtype)
    states_fw, states_bw, layer = [], [], inputs
    with tf.variable_scope("stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with tf.variable_scope("cell_%d" % i):
                outputs, (state_fw, state_bw) = tf.nn.bidirectional_dynamic_rnn(
                    cell_fw, cell_bw, layer, sequence_length=sequence_length, dtype=dtype)
                layer = tf.concat(outputs, 2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer, tuple(states_fw), tuple(states_bw)


def stack_bidirectional(tf, a):
    cells_fw = [tf.nn.rnn_cell.LSTMCell(3), tf.nn.rnn_cell.GRUCell(2)]
    cells_bw = [tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.BasicRNNCell(3)]
    return _stack_bidirectional(tf, cells_fw, cells_bw, a["x"], a["lengths"], tf.float32)


CASES = {
    f.__name__: f
    for f in (basic_rnn, basic_rnn_relu_initial_state, basic_lstm_lengths,
              basic_lstm_concat_state, lstm_peepholes_projection, lstm_plain, gru_lengths,
              multi_cell, wrappers, static_lstm, bidirectional, bidirectional_no_lengths,
              static_bidirectional, cell_then_loop, two_loops_two_scopes, stack_bidirectional)
}
GRADIENT_CASE = "basic_lstm_lengths"
BLOCK_CELL = dict(units=4, forget_bias=0.7, cell_clip=0.8)


def _values(rng, variables):
    return {v.op.name: (rng.normal(size=v.shape.as_list()) * 0.5).astype("float32")
            for v in variables}


def _run_case(tf, name, arrays, rng, record):
    graph = tf.Graph()
    with graph.as_default():
        constants = {k: tf.constant(v) for k, v in arrays.items()}
        result = CASES[name](tf, constants)
        variables = tf.global_variables()
        values = _values(rng, variables)
        leaves = tf.nest.flatten(result)
        fetches = {"out": leaves}
        if name == GRADIENT_CASE:
            total = tf.add_n([tf.reduce_sum(t) for t in tf.nest.flatten(result[0])])
            fetches["grad"] = tf.gradients(total, variables)
        with tf.Session(graph=graph) as session:
            for v in variables:
                v.load(values[v.op.name], session)
            got = session.run(fetches)
    record[f"{name}:names"] = np.array([v.op.name for v in variables])
    for var_name, value in values.items():
        record[f"{name}:var:{var_name}"] = value
    for i, leaf in enumerate(got["out"]):
        record[f"{name}:out:{i}"] = leaf
    for v, g in zip(variables, got.get("grad", [])):
        record[f"{name}:grad:{v.op.name}"] = g


def _block_cell(tf, arrays, rng, record):
    """contrib's LSTMBlockCell with peepholes, on its kernel, over the sequence."""
    units, x = BLOCK_CELL["units"], arrays["x"]
    shapes = {"kernel": (DEPTH + units, 4 * units), "bias": (4 * units,), "w_i_diag": (units,),
              "w_f_diag": (units,), "w_o_diag": (units,)}
    values = {f"rnn/lstm_cell/{k}": (rng.normal(size=s) * 0.5).astype("float32")
              for k, s in shapes.items()}
    c = h = tf.zeros((BATCH, units))
    outputs = []
    for t in range(TIME):
        v = {k.rpartition("/")[2]: tf.constant(a) for k, a in values.items()}
        _, c, _, _, _, _, h = tf.raw_ops.LSTMBlockCell(
            x=tf.constant(x[:, t]), cs_prev=c, h_prev=h, w=v["kernel"], wci=v["w_i_diag"],
            wcf=v["w_f_diag"], wco=v["w_o_diag"], b=v["bias"],
            forget_bias=BLOCK_CELL["forget_bias"], cell_clip=BLOCK_CELL["cell_clip"],
            use_peephole=True)
        outputs.append(h)
    record["lstm_block_cell:names"] = np.array(list(values))
    for var_name, value in values.items():
        record[f"lstm_block_cell:var:{var_name}"] = value
    for i, leaf in enumerate([tf.stack(outputs, 1), c, h]):
        record[f"lstm_block_cell:out:{i}"] = leaf.numpy()


def main():
    import tensorflow as tf2
    import tensorflow.compat.v1 as tf

    arrays = inputs()
    rng = np.random.default_rng(7)
    record = {f"input:{k}": v for k, v in arrays.items()}
    for name in CASES:
        _run_case(tf, name, arrays, rng, record)
    _block_cell(tf2, arrays, rng, record)
    record["tensorflow_version"] = np.array(tf2.__version__)
    np.savez_compressed(FIXTURE, **record)
    print(f"wrote {FIXTURE}: {len(CASES) + 1} cases, {len(record)} arrays")


if __name__ == "__main__":
    main()
