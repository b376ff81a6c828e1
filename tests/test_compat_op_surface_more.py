"""More compat.v1 ops against TensorFlow's own: block rearrangements, segment reductions,
diagonals, `searchsorted`, `scalar_mul` and the variable scatters.

As in `test_compat_op_surface`: each case is a function of a TF1 namespace
`ns`; with `ns = tf.compat.v1` a TensorFlow graph that a `Session` runs is
the reference, with `ns = tf1` the case runs under `jax.jit`, as in a model_fn.
Values and dtypes must agree (dtypes as JAX computes them: without x64,
TF's int64/float64 are int32/float32 here).

The variable scatters run inside a `model_fn` trained two steps: the
variable holds what TensorFlow's variable holds after the op ran twice.
"""

import jax
import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.compat.v1 import linalg_ops
from keras_tpu_estimator.compat.v1 import segment_ops
from keras_tpu_estimator.compat.v1 import space_ops
from keras_tpu_estimator.compat.v1 import state_ops
from keras_tpu_estimator.compat.v1._op_helpers import computed_dtype

import tf_reference

V1 = tf.compat.v1
IMAGE = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3)
NCHW = np.ascontiguousarray(IMAGE.transpose(0, 3, 1, 2))
DEEP = np.arange(2 * 2 * 3 * 8, dtype=np.int32).reshape(2, 2, 3, 8)
ROWS = np.array([[1.0, -2.0], [3.0, 4.0], [-5.0, 6.0], [7.0, 0.5], [2.0, 2.0]], np.float32)
INT_ROWS = np.array([[1, -2], [3, 4], [-5, 6], [7, 9], [2, 2]], np.int32)
SORTED = np.array([0, 0, 2, 2, 3])
UNSORTED = np.array([3, 0, 3, -1, 1])  # -1 is dropped (as TF); segments 2 and 4 are empty.
MATRICES = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
WIDE = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
BAND = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
SEQUENCE = np.array([[1.0, 3.0, 3.0, 7.0], [0.0, 2.0, 4.0, 6.0]], np.float32)
PROBES = np.array([[3.0, 0.0, 8.0], [4.0, 5.0, -1.0]], np.float32)

# name -> function of the namespace `ns`
CASES = {
    # Block rearrangements.
    "space_to_depth": lambda ns: ns.space_to_depth(IMAGE, 2),
    "space_to_depth/nn": lambda ns: ns.nn.space_to_depth(IMAGE[:, :, :4], block_size=4),
    "space_to_depth/int": lambda ns: ns.space_to_depth(DEEP[:, :2, :2], 2),
    "depth_to_space": lambda ns: ns.depth_to_space(DEEP, 2),
    "depth_to_space/nn": lambda ns: ns.nn.depth_to_space(IMAGE[..., :1].repeat(4, -1), 2),
    "depth_to_space/roundtrip": lambda ns: ns.depth_to_space(ns.space_to_depth(IMAGE, 2), 2),
    "space_to_batch_nd": lambda ns: ns.space_to_batch_nd(IMAGE, [2, 3], [[0, 2], [1, 2]]),
    "space_to_batch_nd/1d": lambda ns: ns.space_to_batch_nd(IMAGE[:, 0], [2], [[1, 1]]),
    "space_to_batch": lambda ns: ns.space_to_batch(IMAGE, [[1, 1], [0, 2]], block_size=2),
    "space_to_batch/nn": lambda ns: ns.nn.space_to_batch(IMAGE, [[0, 0], [1, 1]], 2),
    "space_to_batch/block_shape": lambda ns: ns.space_to_batch(
        IMAGE, [[0, 0], [0, 0]], block_shape=2),
    "batch_to_space_nd": lambda ns: ns.batch_to_space_nd(
        np.arange(12 * 2 * 2, dtype=np.float32).reshape(12, 2, 2, 1), [2, 3], [[0, 1], [2, 1]]),
    "batch_to_space_nd/roundtrip": lambda ns: ns.batch_to_space_nd(
        ns.space_to_batch_nd(IMAGE, [2, 3], [[0, 2], [1, 2]]), [2, 3], [[0, 2], [1, 2]]),
    "batch_to_space": lambda ns: ns.batch_to_space(DEEP.repeat(2, 0), [[0, 1], [1, 1]], 2),
    # Sorted segment reductions (an empty segment: TF's value).
    "segment_sum": lambda ns: ns.segment_sum(ROWS, SORTED),
    "segment_mean": lambda ns: ns.segment_mean(ROWS, SORTED),
    "segment_mean/int": lambda ns: ns.segment_mean(INT_ROWS, SORTED),
    "segment_max": lambda ns: ns.segment_max(ROWS, SORTED),
    "segment_min": lambda ns: ns.segment_min(INT_ROWS, SORTED),
    "segment_prod": lambda ns: ns.segment_prod(ROWS, SORTED),
    "segment_mean/math": lambda ns: ns.math.segment_mean(ROWS[:, 0], [0, 1, 1, 1, 4]),
    # Unsorted ones: ids out of range dropped.
    "unsorted_segment_sum": lambda ns: ns.unsorted_segment_sum(ROWS, UNSORTED, 5),
    "unsorted_segment_max": lambda ns: ns.unsorted_segment_max(ROWS, UNSORTED, 5),
    "unsorted_segment_max/int": lambda ns: ns.unsorted_segment_max(INT_ROWS, UNSORTED, 5),
    "unsorted_segment_min": lambda ns: ns.unsorted_segment_min(ROWS, UNSORTED, 5),
    "unsorted_segment_min/int": lambda ns: ns.unsorted_segment_min(INT_ROWS, UNSORTED, 5),
    "unsorted_segment_prod": lambda ns: ns.unsorted_segment_prod(ROWS, UNSORTED, 5),
    "unsorted_segment_mean": lambda ns: ns.unsorted_segment_mean(ROWS, UNSORTED, 5),
    "unsorted_segment_mean/int": lambda ns: ns.unsorted_segment_mean(
        ns.constant(INT_ROWS), UNSORTED, 5),
    "unsorted_segment_sqrt_n": lambda ns: ns.unsorted_segment_sqrt_n(ROWS, UNSORTED, 5),
    "unsorted_segment_sum/2d_ids": lambda ns: ns.unsorted_segment_sum(
        MATRICES, [[0, 1, 0], [2, 2, 0]], 3),
    "unsorted_segment_mean/math": lambda ns: ns.math.unsorted_segment_mean(ROWS, SORTED, 4),
    # Diagonals of batched matrices.
    "matrix_diag": lambda ns: ns.matrix_diag(ROWS),
    "matrix_diag/int": lambda ns: ns.matrix_diag(INT_ROWS),
    "matrix_diag/k": lambda ns: ns.matrix_diag(ROWS, k=1),
    "matrix_diag/k_num_rows": lambda ns: ns.matrix_diag(ROWS[0], k=-1, num_rows=4),
    "matrix_diag/k_num_cols": lambda ns: ns.matrix_diag(ROWS[0], k=-1, num_cols=5),
    "matrix_diag/band": lambda ns: ns.matrix_diag(MATRICES[:, :2], k=(-1, 0), padding_value=9),
    "matrix_diag/band_left_right": lambda ns: ns.matrix_diag(
        MATRICES[0], k=(-1, 1), align="LEFT_RIGHT"),
    "matrix_diag_part": lambda ns: ns.matrix_diag_part(MATRICES),
    "matrix_diag_part/k": lambda ns: ns.matrix_diag_part(MATRICES, k=2),
    "matrix_diag_part/band": lambda ns: ns.matrix_diag_part(WIDE, k=(-1, 2), padding_value=9),
    "matrix_diag_part/band_left_right": lambda ns: ns.matrix_diag_part(
        WIDE, k=(-1, 2), align="LEFT_RIGHT"),
    "matrix_diag_part/band_left_left": lambda ns: ns.matrix_diag_part(
        WIDE.T, k=(-2, 1), align="LEFT_LEFT"),
    "matrix_diag_part/band_right_right": lambda ns: ns.matrix_diag_part(
        WIDE.T, k=(-2, -1), align="RIGHT_RIGHT"),
    "matrix_set_diag": lambda ns: ns.matrix_set_diag(MATRICES, -np.ones((2, 3), np.float32)),
    "matrix_set_diag/k": lambda ns: ns.matrix_set_diag(WIDE, [-1.0, -2.0], k=2),
    "matrix_set_diag/band": lambda ns: ns.matrix_set_diag(
        WIDE, -np.arange(12, dtype=np.float32).reshape(4, 3), k=(-1, 2)),
    "linalg.diag": lambda ns: ns.linalg.diag(ROWS.T, k=(0, 1)),
    "linalg.diag_part": lambda ns: ns.linalg.diag_part(BAND, k=(-1, 1)),
    "linalg.set_diag": lambda ns: ns.linalg.set_diag(BAND, [0.0, 0.0, 0.0]),
    "linalg.tensor_diag": lambda ns: ns.linalg.tensor_diag(INT_ROWS[:2]),
    "linalg.tensor_diag_part": lambda ns: ns.linalg.tensor_diag_part(ns.diag(ROWS[:3])),
    "linalg.band_part": lambda ns: ns.linalg.band_part(WIDE, 1, 0),
    "diag": lambda ns: ns.diag(ROWS[0]),
    "diag/rank2": lambda ns: ns.diag(INT_ROWS[:3]),
    "diag_part": lambda ns: ns.diag_part(BAND),
    "diag_part/rank4": lambda ns: ns.diag_part(
        np.arange(36, dtype=np.float32).reshape(2, 3, 2, 3)),
    # Sorted search, along the last axis, per leading row.
    "searchsorted": lambda ns: ns.searchsorted(SEQUENCE, PROBES),
    "searchsorted/right": lambda ns: ns.searchsorted(SEQUENCE, PROBES, side="right"),
    "searchsorted/1d": lambda ns: ns.searchsorted([1, 3, 5], [0, 3, 6]),
    "searchsorted/int64": lambda ns: ns.searchsorted(SEQUENCE, PROBES, out_type=ns.int64),
    # scalar_mul: the scalar takes x's dtype (the balanced sampler's -1 * int ones).
    "scalar_mul": lambda ns: ns.scalar_mul(-1, ns.ones([3], ns.int32)),
    "scalar_mul/float": lambda ns: ns.scalar_mul(2.5, ROWS),
    "scalar_mul/math": lambda ns: ns.math.scalar_mul(ns.constant(3.0), ROWS),
}


TABLE = tf_reference.Table(CASES)


def _check(expected, actual):
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert computed_dtype(actual.dtype) == computed_dtype(expected.dtype)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


@pytest.mark.parametrize("name", list(CASES))
def test_op_matches_tensorflow_compiled(name):
    _check(*TABLE.pair(name))


@pytest.mark.parametrize("module", [space_ops, segment_ops, linalg_ops])
def test_every_op_of_the_new_modules_has_a_case(module):
    covered = {name.split("/")[0] for name in CASES}
    assert sorted(set(module.__all__) - covered) == []


@pytest.mark.parametrize("name, call", [
    ("space_to_depth", lambda x: tf1.space_to_depth(x, 2)),
    ("unsorted_segment_mean", lambda x: tf1.unsorted_segment_mean(x[0, 0], [1, 0, 1, 2, 0, 2],
                                                                  3)),
    ("matrix_set_diag", lambda x: tf1.matrix_set_diag(x[:, 0, :3], x[:, 0, 0, :3])),
    ("searchsorted", lambda x: tf1.searchsorted(x[:, 0, 0], x[:, 1, 1])),
])
def test_op_runs_in_the_build_pass(name, call):
    """On KerasTensors (the symbolic build pass): the shapes and dtypes of the step."""
    eager = np.asarray(call(IMAGE))
    out = call(keras.KerasTensor(IMAGE.shape, "float32"))
    assert isinstance(out, keras.KerasTensor)
    assert (tuple(out.shape), out.dtype) == (eager.shape, str(eager.dtype))


def test_nchw_space_to_depth_is_the_nhwc_one_transposed():
    """TF on CPU has no NCHW kernel: the NCHW layout is checked against the NHWC reference."""
    expected, _ = TABLE.reference
    nchw = tf1.space_to_depth(NCHW, 2, data_format="NCHW")
    np.testing.assert_array_equal(np.asarray(nchw).transpose(0, 2, 3, 1),
                                  expected["space_to_depth"])
    back = tf1.depth_to_space(nchw, 2, data_format="NCHW")
    np.testing.assert_array_equal(back, NCHW)


@pytest.mark.parametrize("call, error, match", [
    (lambda: tf1.space_to_depth(IMAGE, 1), ValueError, "block_size"),
    (lambda: tf1.space_to_depth(IMAGE, 4), ValueError, "multiples of block_size"),
    (lambda: tf1.depth_to_space(IMAGE, 2), ValueError, "multiple of block_size"),
    (lambda: tf1.space_to_depth(IMAGE, 2, data_format="NCHW_VECT_C"), ValueError, "data_format"),
    (lambda: tf1.space_to_batch_nd(IMAGE, [3, 3], [[0, 0], [0, 0]]), ValueError, "divisible"),
    (lambda: tf1.space_to_batch_nd(IMAGE, [2, 2], [[0, 0]]), ValueError, "paddings"),
    (lambda: tf1.batch_to_space_nd(IMAGE, [4], [[0, 0]]), ValueError, "batch 2"),
    (lambda: tf1.segment_sum(ROWS, [1, 0, 0, 2, 2]), ValueError, "sorted"),
    (lambda: tf1.segment_sum(ROWS, [0, 1]), ValueError, "prefix"),
    (lambda: tf1.unsorted_segment_sum(ROWS, [0.0, 1, 1, 1, 1], 2), TypeError, "segment_ids"),
    (lambda: tf1.unsorted_segment_sqrt_n(INT_ROWS, SORTED, 4), TypeError, "floating-point"),
    (lambda: tf1.matrix_diag(ROWS, k=(1, 0)), ValueError, "must not exceed"),
    (lambda: tf1.matrix_diag(ROWS, k=(0, 2)), ValueError, r"\[..., 3, max_diag_len\]"),
    (lambda: tf1.matrix_diag(ROWS, align="CENTER"), ValueError, "align"),
    (lambda: tf1.matrix_set_diag(WIDE, [1.0, 2.0]), ValueError, "3 long"),
    (lambda: tf1.diag_part(WIDE), ValueError, "S \\+ S"),
    (lambda: tf1.searchsorted(SEQUENCE, PROBES[0]), ValueError, "leading axes"),
    (lambda: tf1.searchsorted(SEQUENCE, PROBES, side="middle"), ValueError, "side"),
    (lambda: tf1.scalar_mul([1.0, 2.0], ROWS), ValueError, "0-D"),
    (lambda: tf1.scalar_mul(1.5, INT_ROWS), TypeError, "int32"),
])
def test_bad_arguments_raise_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_sorted_segments_need_ids_known_when_the_step_compiles():
    with pytest.raises(ValueError, match="use unsorted_segment_mean with num_segments"):
        jax.jit(lambda ids: tf1.segment_mean(ROWS, ids))(SORTED)


# ----------------------------------------------------------------------
# Variable scatters: TF1 updates a variable and returns its new value.

VAR = np.arange(12, dtype=np.float32).reshape(4, 3) - 4.0
INT_VAR = (np.arange(12, dtype=np.int32).reshape(4, 3) - 4) * 3
GRID = np.arange(24, dtype=np.float32).reshape(2, 4, 3)

# name -> (initial value, function of the namespace and the variable)
SCATTERS = {
    "scatter_update": (VAR, lambda ns, v: ns.scatter_update(v, [2, 0], [[1.0, 2, 3], [4, 5, 6]])),
    "scatter_update/scalar_index": (VAR, lambda ns, v: ns.scatter_update(v, 1, [7.0, 8, 9])),
    "scatter_add": (VAR, lambda ns, v: ns.scatter_add(v, [1, 3, 1], np.ones((3, 3), np.float32))),
    "scatter_add/int": (INT_VAR, lambda ns, v: ns.scatter_add(v, [[0, 2]], [[[1, 2, 3]] * 2])),
    "scatter_sub": (VAR, lambda ns, v: ns.scatter_sub(v, [0, 0], np.full((2, 3), 0.5, np.float32))),
    "scatter_mul": (VAR, lambda ns, v: ns.scatter_mul(v, [3, 3], np.full((2, 3), -2, np.float32))),
    "scatter_div": (VAR, lambda ns, v: ns.scatter_div(v, [2, 1, 2],
                                                      np.full((3, 3), 2, np.float32))),
    "scatter_div/int": (INT_VAR, lambda ns, v: ns.scatter_div(v, [0, 1],
                                                              np.full((2, 3), 2, np.int32))),
    "scatter_min": (VAR, lambda ns, v: ns.scatter_min(v, [1, 2, 1], np.zeros((3, 3), np.float32))),
    "scatter_max": (INT_VAR, lambda ns, v: ns.scatter_max(v, [0, 3], np.zeros((2, 3), np.int32))),
    "scatter_nd_update": (VAR, lambda ns, v: ns.scatter_nd_update(v, [[0, 1], [3, 2]], [-9.0, 9])),
    "scatter_nd_update/rows": (VAR, lambda ns, v: ns.scatter_nd_update(v, [[1]], [[0.0, 0, 0]])),
    "scatter_nd_add": (GRID, lambda ns, v: ns.scatter_nd_add(v, [[1, 2], [1, 2]],
                                                               np.ones((2, 3), np.float32))),
    "scatter_nd_sub": (INT_VAR, lambda ns, v: ns.scatter_nd_sub(v, [[2, 2], [0, 0]], [5, 6])),
    "batch_scatter_update": (GRID, lambda ns, v: ns.batch_scatter_update(
        v, [[3, 0], [1, 1]], np.full((2, 2, 3), -1, np.float32))),
}


def test_every_variable_scatter_has_a_case():
    covered = {name.split("/")[0] for name in SCATTERS}
    assert sorted(set(state_ops.__all__) - covered) == []


def _tensorflow_scatter(name, runs):
    """TensorFlow's returned value after the first run and the variable after `runs` runs."""
    init, call = SCATTERS[name]
    with tf.Graph().as_default():
        variable = V1.get_variable("v", initializer=init)
        out = call(V1, variable)
        with V1.Session() as session:
            session.run(V1.global_variables_initializer())
            returned = session.run(out)
            for _ in range(runs - 1):
                session.run(out)
            return returned, session.run(variable)


@pytest.mark.parametrize("name", list(SCATTERS))
def test_variable_scatter_returns_and_holds_tensorflows_value(name):
    """Eagerly, on a Keras variable: the new value, returned and held."""
    init, call = SCATTERS[name]
    expected_returned, expected_value = _tensorflow_scatter(name, runs=1)
    variable = keras.Variable(init, trainable=False)
    _check(expected_returned, call(tf1, variable))
    _check(expected_value, variable.value)


@pytest.mark.parametrize("name", list(SCATTERS))
def test_variable_scatter_in_a_model_fn_takes_effect_each_step(name):
    """Two training steps of a model_fn whose train_op is the scatter: TF's value after
    the op ran twice."""
    init, call = SCATTERS[name]
    _, expected = _tensorflow_scatter(name, runs=2)

    def model_fn(features, labels, mode, params):
        w = tf1.get_variable("w", shape=(3, 1), initializer=tf1.zeros_initializer())
        loss = tf1.reduce_mean(tf1.square(tf1.matmul(features["x"], w) - labels))
        table = tf1.get_variable("table", initializer=init, trainable=False)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=tf1.group(call(tf1, table)))

    x = np.ones((8, 3), np.float32)
    model = kte.EstimatorModel(model_fn, train_batch_size=8)
    model.compile()
    model.fit(({"x": x}, x[:, :1]), epochs=2, shuffle=False, verbose=0)
    _check(expected, model.store.variables_by_name()["table"].value)


def test_a_scatter_in_model_fn_is_read_by_later_ops_of_the_step():
    """As after TF1's control dependency: ops after the scatter read the updated rows."""
    def model_fn(features, labels, mode, params):
        w = tf1.get_variable("w", shape=(3, 1), initializer=tf1.zeros_initializer())
        loss = tf1.reduce_mean(tf1.square(tf1.matmul(features["x"], w) - labels))
        table = tf1.get_variable("table", initializer=VAR, trainable=False)
        count = tf1.get_variable("count", initializer=np.zeros((), np.float32), trainable=False)
        tf1.scatter_add(table, [0], np.ones((1, 3), np.float32))
        train_op = tf1.group(tf1.assign(count, tf1.reduce_sum(table)))
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    x = np.ones((8, 3), np.float32)
    model = kte.EstimatorModel(model_fn, train_batch_size=8)
    model.compile()
    model.fit(({"x": x}, x[:, :1]), epochs=1, shuffle=False, verbose=0)
    assert float(model.store.variables_by_name()["count"].value) == VAR.sum() + 3.0


@pytest.mark.parametrize("call, error, match", [
    (lambda v: tf1.scatter_update(np.zeros((2, 2)), [0], [[1.0, 1.0]]), TypeError, "variable"),
    (lambda v: tf1.scatter_add(v, [0.5], [[1.0, 1, 1]]), TypeError, "indices"),
    (lambda v: tf1.scatter_add(v, [0], tf1.ones([1, 3], tf1.int32)), TypeError, "same dtype"),
    (lambda v: tf1.scatter_nd_update(v, [[0, 0, 0]], [1.0]), ValueError, "longer than the rank"),
    (lambda v: tf1.batch_scatter_update(v, [[0], [1]], np.ones((2, 1), np.float32)), ValueError,
     "batch axes"),
])
def test_bad_scatter_arguments_raise_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call(keras.Variable(VAR, trainable=False))


def test_segment_ids_past_num_segments_are_dropped_as_on_tpu():
    """TF on CPU raises an error for them; on TPU (XLA) they are dropped."""
    out = jax.jit(lambda: tf1.unsorted_segment_max(ROWS[:, 0], [0, 5, 1, 9, 0], 3))()
    np.testing.assert_array_equal(out, [2.0, -5.0, np.finfo(np.float32).min])


def test_out_of_range_scatter_rows_are_ignored_as_on_tpu():
    variable = keras.Variable(VAR, trainable=False)
    tf1.scatter_add(variable, [-1, 4, 1], np.ones((3, 3), np.float32))
    expected = VAR.copy()
    expected[1] += 1
    np.testing.assert_array_equal(variable.value, expected)
