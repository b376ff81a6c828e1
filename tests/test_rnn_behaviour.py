"""TF1 recurrent cells as TF1 programs use them: reuse, sizes, dropout, errors, training.

Numbers and names against TensorFlow are in `test_rnn_cells.py`; this file
pins what TF1 code relies on besides: a cell object shares its variables
across calls, wrappers add no scope, `DropoutWrapper` drops and rescales as
TF1's (fresh masks per step, one mask with `variational_recurrent`, never
the LSTM memory), bad arguments name themselves, and a model_fn with an
LSTM trains compiled through `TPUEstimator`.
"""

import jax
import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.convert import names as convert_names

from model_fns import estimator_config

rnn_cell = tf1.nn.rnn_cell
X = np.random.default_rng(0).normal(size=(4, 6, 3)).astype("float32")
SX = keras.KerasTensor(X.shape)


def run(program, store=None, building=True, seed=None):
    store = store_lib.VariableStore() if store is None else store
    if seed is not None:
        keras.utils.set_random_seed(seed)
    with store_lib.model_fn_call(store, kte.ModeKeys.TRAIN, building, 0, True):
        return program()


def variable_names(program):
    def listed():
        program()
        return [v.name for v in tf1.global_variables()]

    return run(listed)


# -- Naming and reuse. --------------------------------------------------------


def same_cell_twice():
    cell = rnn_cell.BasicLSTMCell(2)
    state = cell.zero_state(4, tf1.float32)
    _, state = cell(SX[:, 0], state)
    cell(SX[:, 1], state)


def two_cells_one_scope():
    for _ in range(2):
        cell = rnn_cell.GRUCell(2)
        cell(SX[:, 0], cell.zero_state(4, tf1.float32))


def wrapped_cell():
    cell = rnn_cell.DropoutWrapper(rnn_cell.ResidualWrapper(rnn_cell.BasicRNNCell(3)))
    tf1.nn.dynamic_rnn(rnn_cell.DeviceWrapper(cell, "/gpu:0"), SX, dtype=tf1.float32)


def contrib_cells():
    cells = [tf1.contrib.rnn.LSTMBlockCell(2), tf1.contrib.rnn.LSTMBlockCell(2, use_peephole=True)]
    tf1.nn.dynamic_rnn(tf1.contrib.rnn.MultiRNNCell(cells), SX, dtype=tf1.float32, scope="dec")


class MinimalCell(rnn_cell.RNNCell):
    """A TF1-style cell: `get_variable` inside `call`."""

    state_size = output_size = 2

    def call(self, inputs, state):
        w = tf1.get_variable("w", [inputs.shape[-1] + 2, 2])
        h = tf1.tanh(tf1.matmul(tf1.concat([inputs, state], 1), w))
        return h, h


def custom_cell_in_loop():
    tf1.nn.dynamic_rnn(MinimalCell(), SX, dtype=tf1.float32)
    tf1.nn.static_rnn(MinimalCell(name="again"), tf1.unstack(SX, axis=1), dtype=tf1.float32)


@pytest.mark.parametrize("program, expected", [
    (same_cell_twice, ["basic_lstm_cell/kernel:0", "basic_lstm_cell/bias:0"]),
    (two_cells_one_scope, ["gru_cell/gates/kernel:0", "gru_cell/gates/bias:0",
                           "gru_cell/candidate/kernel:0", "gru_cell/candidate/bias:0",
                           "gru_cell_1/gates/kernel:0", "gru_cell_1/gates/bias:0",
                           "gru_cell_1/candidate/kernel:0", "gru_cell_1/candidate/bias:0"]),
    (wrapped_cell, ["rnn/basic_rnn_cell/kernel:0", "rnn/basic_rnn_cell/bias:0"]),
    (contrib_cells, ["dec/multi_rnn_cell/cell_0/lstm_cell/kernel:0",
                     "dec/multi_rnn_cell/cell_0/lstm_cell/bias:0",
                     "dec/multi_rnn_cell/cell_1/lstm_cell/kernel:0",
                     "dec/multi_rnn_cell/cell_1/lstm_cell/bias:0",
                     "dec/multi_rnn_cell/cell_1/lstm_cell/w_i_diag:0",
                     "dec/multi_rnn_cell/cell_1/lstm_cell/w_f_diag:0",
                     "dec/multi_rnn_cell/cell_1/lstm_cell/w_o_diag:0"]),
    (custom_cell_in_loop, ["rnn/minimal_cell/w:0", "rnn/again/w:0"]),
])
def test_variable_names_and_sharing(program, expected):
    assert variable_names(program) == expected


def test_a_second_loop_in_the_same_scope_with_a_new_cell_is_tf1s_already_exists_error():
    def program():
        tf1.nn.dynamic_rnn(rnn_cell.GRUCell(2), SX, dtype=tf1.float32)
        tf1.nn.dynamic_rnn(rnn_cell.GRUCell(2), SX, dtype=tf1.float32)

    with pytest.raises(ValueError, match="rnn/gru_cell/gates/kernel already exists"):
        run(program)


def test_cell_variables_are_found_again_in_a_compiled_call():
    store = store_lib.VariableStore()

    def program(x):
        cell = rnn_cell.LSTMCell(2)
        outputs, _ = tf1.nn.dynamic_rnn(cell, x, dtype=tf1.float32)
        return outputs, [v.name for v in cell.trainable_variables]

    _, built_names = run(lambda: program(SX), store)
    outputs = jax.jit(lambda x: run(lambda: program(x), store, building=False)[0])(X)
    _, names = run(lambda: program(X), store, building=False)
    assert names == built_names == ["rnn/lstm_cell/kernel:0", "rnn/lstm_cell/bias:0"]
    assert outputs.shape == (4, 6, 2)


# -- Sizes and zero states. ---------------------------------------------------


@pytest.mark.parametrize("make, state_size, output_size", [
    (lambda: rnn_cell.BasicRNNCell(3), 3, 3),
    (lambda: rnn_cell.GRUCell(3), 3, 3),
    (lambda: rnn_cell.BasicLSTMCell(3), rnn_cell.LSTMStateTuple(3, 3), 3),
    (lambda: rnn_cell.BasicLSTMCell(3, state_is_tuple=False), 6, 3),
    (lambda: rnn_cell.LSTMCell(5, num_proj=2), rnn_cell.LSTMStateTuple(5, 2), 2),
    (lambda: rnn_cell.MultiRNNCell([rnn_cell.GRUCell(2), rnn_cell.LSTMCell(4)]),
     (2, rnn_cell.LSTMStateTuple(4, 4)), 4),
    (lambda: rnn_cell.MultiRNNCell([rnn_cell.GRUCell(2), rnn_cell.GRUCell(3)],
                                   state_is_tuple=False), 5, 3),
])
def test_state_size_output_size_and_zero_state(make, state_size, output_size):
    cell = make()
    assert cell.state_size == state_size and cell.output_size == output_size
    assert type(cell.state_size) is type(state_size)
    zero = run(lambda: cell.zero_state(tf1.shape(X)[0], tf1.float32))
    assert jax.tree.structure(zero) == jax.tree.structure(
        jax.tree.map(lambda n: np.zeros((4, n)), state_size))
    assert [z.shape for z in jax.tree.leaves(zero)] == [(4, n) for n in jax.tree.leaves(state_size)]
    assert all(not np.asarray(z).any() for z in jax.tree.leaves(zero))


# -- Dropout. -----------------------------------------------------------------


def dropout_outputs(seed=0, **kwargs):
    """The outputs of one BasicRNNCell's loop, plain and in a DropoutWrapper."""
    def program():
        cell = rnn_cell.BasicRNNCell(64)
        plain, _ = tf1.nn.dynamic_rnn(cell, X, dtype=tf1.float32)
        dropped, _ = tf1.nn.dynamic_rnn(rnn_cell.DropoutWrapper(cell, **kwargs), X,
                                        dtype=tf1.float32)
        return np.asarray(plain), np.asarray(dropped)

    return run(program, seed=seed)


def test_output_dropout_zeroes_about_one_minus_keep_prob_and_rescales_the_rest():
    plain, dropped = dropout_outputs(output_keep_prob=0.6)
    kept = dropped != 0
    assert (plain != 0).all() and 0.5 < kept.mean() < 0.7
    np.testing.assert_allclose(dropped[kept], plain[kept] / 0.6, rtol=1e-5)


def test_masks_differ_between_steps_and_examples():
    _, dropped = dropout_outputs(output_keep_prob=0.5, state_keep_prob=1.0)
    masks = dropped != 0
    assert (masks[:, 0] != masks[:, 1]).any() and (masks[0] != masks[1]).any()


def test_variational_dropout_keeps_one_mask_for_every_step_and_example():
    _, dropped = dropout_outputs(output_keep_prob=0.5, variational_recurrent=True,
                                 dtype=tf1.float32)
    dropped_units = (dropped == 0).all(axis=(0, 1))
    assert 16 < dropped_units.sum() < 48
    np.testing.assert_array_equal(dropped == 0, np.broadcast_to(dropped_units, dropped.shape))


def test_state_dropout_spares_the_lstm_memory():
    def program():
        cell = rnn_cell.DropoutWrapper(rnn_cell.BasicLSTMCell(32), state_keep_prob=0.5)
        return cell(X[:, 0], cell.zero_state(4, tf1.float32))

    keras.utils.set_random_seed(1)
    output, state = run(program)
    assert (np.asarray(state.c) != 0).all()
    assert 0.3 < (np.asarray(state.h) == 0).mean() < 0.7
    assert (np.asarray(output) != 0).all()


class DropoutInsideCell(rnn_cell.BasicRNNCell):
    """A custom cell drawing its own dropout (`tf1.nn.dropout`) inside the loop."""

    def call(self, inputs, state):
        output, _ = super().call(inputs, state)
        output = tf1.nn.dropout(output, keep_prob=0.5)
        return output, output


def test_a_cells_own_dropout_draws_fresh_masks_per_step_and_leaves_the_generator_outside():
    store = store_lib.VariableStore()

    def program(x):
        outputs, _ = tf1.nn.dynamic_rnn(DropoutInsideCell(64), x, dtype=tf1.float32)
        return outputs

    keras.utils.set_random_seed(2)
    run(lambda: program(SX), store)  # the build pass
    before = np.asarray(store.seed_generator.state.value)
    masks = np.asarray(run(lambda: program(X), store, building=False)) == 0
    assert 0.35 < masks.mean() < 0.65 and (masks[:, 0] != masks[:, 1]).any()
    after = np.asarray(store.seed_generator.state.value)  # a value, not a leaked tracer
    np.testing.assert_array_equal(after, before + np.array([0, 1]))


def test_keep_prob_one_changes_nothing():
    plain, dropped = dropout_outputs(input_keep_prob=1.0, output_keep_prob=1.0)
    np.testing.assert_array_equal(plain, dropped)


# -- Bad arguments. -----------------------------------------------------------


@pytest.mark.parametrize("make, error, match", [
    (lambda: rnn_cell.DropoutWrapper(rnn_cell.GRUCell(2), output_keep_prob=1.5), ValueError,
     "output_keep_prob must be between 0 and 1. Received 1.5"),
    (lambda: rnn_cell.DropoutWrapper("cell"), TypeError, "must be a tf1 RNNCell"),
    (lambda: rnn_cell.MultiRNNCell([]), ValueError, "at least one cell"),
    (lambda: rnn_cell.MultiRNNCell([rnn_cell.LSTMCell(2)], state_is_tuple=False), ValueError,
     "state_is_tuple is not set"),
    (lambda: rnn_cell.LSTMCell(4, num_unit_shards=2), NotImplementedError, "num_unit_shards"),
    (lambda: rnn_cell.GRUCell(0), ValueError, "`num_units` of GRUCell must be a positive int"),
    (lambda: rnn_cell.BasicRNNCell(2, activation=3), ValueError, "activation=3"),
])
def test_bad_cell_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize("call, error, match", [
    (lambda: tf1.nn.dynamic_rnn(rnn_cell.GRUCell(2), SX), ValueError,
     "no initial_state, you must give a dtype"),
    (lambda: tf1.nn.dynamic_rnn(rnn_cell.GRUCell(2), SX[:, 0], dtype=tf1.float32), ValueError,
     "rank at least 3"),
    (lambda: tf1.nn.dynamic_rnn(rnn_cell.GRUCell(2), SX, sequence_length=[1, 2],
                                dtype=tf1.float32), ValueError,
     r"vector of length batch_size \(4\), but saw shape: \(2,\)"),
    (lambda: tf1.nn.dynamic_rnn(rnn_cell.GRUCell(2), SX, initial_state=np.zeros((4, 3))),
     ValueError, r"initial state's shapes \[\(4, 3\)\] do not match"),
    (lambda: tf1.nn.dynamic_rnn("cell", SX, dtype=tf1.float32), TypeError, "must be an RNN cell"),
    (lambda: tf1.nn.static_rnn(rnn_cell.GRUCell(2), SX, dtype=tf1.float32), TypeError,
     "non-empty list"),
    (lambda: rnn_cell.GRUCell(2)(SX, np.zeros((4, 2))), ValueError, "must have rank 2"),
    (lambda: rnn_cell.GRUCell(2)(np.zeros((4, 3), "int32"), np.zeros((4, 2), "int32")),
     ValueError, "only supports floating point"),
    (lambda: rnn_cell.GRUCell(2).zero_state(None, tf1.float32), ValueError,
     "`batch_size` of zero_state must be an int"),
])
def test_bad_loop_and_call_arguments(call, error, match):
    with pytest.raises(error, match=match):
        run(call)


# -- The converter and a compiled training run. --------------------------------


@pytest.mark.parametrize("name", [
    "tf.nn.rnn_cell.BasicLSTMCell", "tf.nn.rnn_cell.LSTMStateTuple", "tf.nn.dynamic_rnn",
    "tf.nn.bidirectional_dynamic_rnn", "tf.nn.static_rnn", "tf.contrib.rnn.DropoutWrapper",
    "tf.contrib.rnn.LSTMBlockCell", "tf.compat.v1.nn.rnn_cell.MultiRNNCell",
    "tf.contrib.rnn.stack_bidirectional_dynamic_rnn", "tf.nn.static_bidirectional_rnn",
])
def test_the_converter_maps_the_names_to_tf1(name):
    assert convert_names.compat_v1_supports(convert_names.normalize(name))


VOCAB, LENGTH, BATCH = 5, 7, 16
TOKENS = np.random.default_rng(3).integers(0, VOCAB, size=(64, LENGTH)).astype("int32")
LENGTHS = np.random.default_rng(4).integers(2, LENGTH + 1, size=64).astype("int32")
# The label: whether token 0 occurs within the sequence's length (needs memory of the past).
LABELS = np.array([(t[:n] == 0).any() for t, n in zip(TOKENS, LENGTHS)], "int32")


def lstm_model_fn(features, labels, mode, params):
    training = mode == tf1.estimator.ModeKeys.TRAIN
    embeddings = tf1.get_variable("embeddings", [VOCAB, 8])
    x = tf1.nn.embedding_lookup(embeddings, features["tokens"])
    cell = tf1.contrib.rnn.BasicLSTMCell(16)
    if training:
        cell = tf1.contrib.rnn.DropoutWrapper(cell, output_keep_prob=0.9)
    with tf1.variable_scope("lstm"):
        _, state = tf1.nn.dynamic_rnn(cell, x, sequence_length=features["length"],
                                      dtype=tf1.float32)
    logits = tf1.layers.dense(state.h, 2, name="logits")
    loss = tf1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = tf1.train.AdamOptimizer(0.05).minimize(
        loss, global_step=tf1.train.get_or_create_global_step())
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def lstm_input_fn(params):
    import tensorflow as tf

    features = {"tokens": TOKENS, "length": LENGTHS}
    dataset = tf.data.Dataset.from_tensor_slices((features, LABELS))
    return dataset.repeat().batch(params["batch_size"], drop_remainder=True)


def test_an_lstm_model_fn_trains_compiled_through_tpu_estimator(tmp_path):
    estimator = kte.TPUEstimator(
        model_fn=lstm_model_fn, config=estimator_config(tmp_path / "model", 100, loop=10),
        train_batch_size=BATCH, eval_batch_size=BATCH)
    estimator.train(lstm_input_fn, max_steps=20)
    first = str(tmp_path / "model" / "model.ckpt-0")  # written as training started
    before = estimator.evaluate(lstm_input_fn, steps=4, checkpoint_path=first)["loss"]
    after = estimator.evaluate(lstm_input_fn, steps=4)["loss"]
    assert after < 0.5 * before
    names = estimator.get_variable_names()
    assert {"lstm/rnn/basic_lstm_cell/kernel", "lstm/rnn/basic_lstm_cell/bias"} <= set(names)
