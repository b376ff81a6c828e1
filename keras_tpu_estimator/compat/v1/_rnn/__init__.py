"""TF1's recurrent cells and loops (`tf.nn.rnn_cell`, `tf.nn.dynamic_rnn`, `tf.contrib.rnn`).

- `cell_base`: `RNNCell` (naming, variables and reuse as TF1's layer
  cells), `LSTMStateTuple`, zero states.
- `cells`: `BasicRNNCell`, `GRUCell`, `BasicLSTMCell`, `LSTMCell`,
  `LSTMBlockCell`, with TF1's variable names and gate order.
- `wrappers`: `MultiRNNCell`, `DropoutWrapper`, `ResidualWrapper`,
  `DeviceWrapper`, and where dropout inside a loop gets its random keys.
- `loops`: `dynamic_rnn`, `bidirectional_dynamic_rnn` (on `jax.lax.scan`),
  `static_rnn`, `static_bidirectional_rnn` (unrolled).
- `rnn_cell`: the public `tf1.nn.rnn_cell` namespace.

The package is private; `tf1.nn`, `tf1.nn.rnn_cell` and `tf1.contrib.rnn`
export its TF1 names.
"""
