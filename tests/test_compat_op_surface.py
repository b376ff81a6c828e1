"""compat.v1 ops against TensorFlow's own: the same call gives the same values and dtypes.

Each case is a function of a TF1 namespace `ns`. With `ns = tf.compat.v1`
it builds a TensorFlow graph that a `Session` runs (the reference); with
`ns = tf1` it runs eagerly and under `jax.jit`, as inside a `model_fn`.
Values and dtypes must agree. Dtypes are compared as JAX computes them:
without JAX's x64 mode, TF's int64/float64 are int32/float32 here.

The dtype cases pin TF's inference from Python values (`fill(dims, 4)` is
int32, `constant(np.float64)` keeps float64), which Keras does not share.
"""

import jax
import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.compat.v1 import scatter_ops
from keras_tpu_estimator.compat.v1._op_helpers import computed_dtype

import tf_reference

V1 = tf.compat.v1
P = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
IDS = np.array([[5, 9, 2, 7], [1, 1, 8, 3]], np.int32)
F64 = np.array([1.5, -2.0])
I64 = np.array([3, 4], np.int64)

# name -> function of the namespace `ns`
CASES = {
    # TF's dtype inference from Python and numpy values.
    "constant/int": lambda ns: ns.constant(4),
    "constant/float": lambda ns: ns.constant(4.0),
    "constant/bool": lambda ns: ns.constant(True),
    "constant/int_list": lambda ns: ns.constant([1, 2]),
    "constant/mixed_list": lambda ns: ns.constant([1, 2.5]),
    "constant/bool_int_list": lambda ns: ns.constant([True, 1]),
    "constant/empty": lambda ns: ns.constant([]),
    "constant/np_int64": lambda ns: ns.constant(I64),
    "constant/np_float64": lambda ns: ns.constant(F64),
    "constant/np_int16_scalar": lambda ns: ns.constant(np.int16(3)),
    "constant/np_scalars_in_list": lambda ns: ns.constant([np.float64(1), 2]),
    "constant/dtype": lambda ns: ns.constant(1, ns.float32),
    "constant/shape": lambda ns: ns.constant(7, shape=[2, 3]),
    "constant/reshape": lambda ns: ns.constant([1, 2, 3, 4], shape=[2, 2]),
    "convert_to_tensor/int": lambda ns: ns.convert_to_tensor(4),
    "convert_to_tensor/np_float64": lambda ns: ns.convert_to_tensor(F64),
    "convert_to_tensor/preferred": lambda ns: ns.convert_to_tensor(4, preferred_dtype=ns.float32),
    "convert_to_tensor/preferred_lossy": lambda ns: ns.convert_to_tensor(
        4.5, preferred_dtype=ns.int32),
    "convert_to_tensor/dtype_hint": lambda ns: ns.convert_to_tensor([1, 2], dtype_hint=ns.float32),
    "fill/int": lambda ns: ns.fill([2, 3], 4),
    "fill/float": lambda ns: ns.fill([2], 4.0),
    "fill/bool": lambda ns: ns.fill([2], True),
    "fill/np_int64": lambda ns: ns.fill([2], np.int64(4)),
    "fill/tensor": lambda ns: ns.fill([3], ns.constant(2.5)),
    "range/int": lambda ns: ns.range(5),
    "range/float": lambda ns: ns.range(5.0),
    "range/mixed": lambda ns: ns.range(0, 5, 0.5),
    "range/np_int64": lambda ns: ns.range(np.int64(5)),
    "range/dtype": lambda ns: ns.range(1, 4, dtype=ns.float32),
    "zeros_like/int_list": lambda ns: ns.zeros_like([1, 2]),
    "ones_like/float_list": lambda ns: ns.ones_like([1.0, 2]),
    "ones_like/np_float64": lambda ns: ns.ones_like(F64),
    "zeros_like/dtype": lambda ns: ns.zeros_like(I64, dtype=ns.float32),
    "identity/int_list": lambda ns: ns.identity([1, 2]),
    "identity/np_float64": lambda ns: ns.identity(F64),
    "zeros": lambda ns: ns.zeros([2]),
    "ones/dtype": lambda ns: ns.ones([2], ns.int32),
    "one_hot/int_values": lambda ns: ns.one_hot([0, 2], 3, on_value=5, off_value=-1),
    "one_hot/on_value": lambda ns: ns.one_hot([0, 2], 3, on_value=1),
    "one_hot/default": lambda ns: ns.one_hot([0, 2], 3),
    "concat/int_lists": lambda ns: ns.concat([[1], [2]], 0),
    "stack/ints": lambda ns: ns.stack([1, 2]),
    "stack/floats": lambda ns: ns.stack([1.0, 2]),
    # Masked token ids stay ids.
    "mask_ids": lambda ns: ns.where(ns.equal(IDS, 1), ns.fill([2, 4], 103), IDS),
    # Gathers.
    "gather_nd": lambda ns: ns.gather_nd(P, [[0, 1], [1, 2]]),
    "gather_nd/elements": lambda ns: ns.gather_nd(P, [[0, 1, 3], [1, 2, 0]]),
    "gather_nd/batch_dims": lambda ns: ns.gather_nd(P, [[[1], [2]], [[0], [0]]], batch_dims=1),
    "gather_nd/batch_dims_elements": lambda ns: ns.gather_nd(
        P, [[[1, 2]], [[0, 3]]], batch_dims=1),
    "gather/batch_dims": lambda ns: ns.gather(P, [[2, 0], [1, 1]], batch_dims=1),
    "gather/batch_dims_axis": lambda ns: ns.gather(P, [[3, 0], [1, 1]], axis=2, batch_dims=1),
    "gather/batch_dims_2": lambda ns: ns.gather(P, [[3, 0, 1], [1, 1, 2]], axis=2, batch_dims=2),
    "batch_gather": lambda ns: ns.batch_gather(P, [[2, 0], [1, 1]]),
    # Scatters: duplicates accumulate.
    "scatter_nd": lambda ns: ns.scatter_nd([[1], [3], [1]], [5, 6, 7], [5]),
    "scatter_nd/elements": lambda ns: ns.scatter_nd(
        np.array([[0, 1], [1, 0]], np.int64), np.array([1.5, 2.5], np.float32), [2, 2]),
    "scatter_nd/slices": lambda ns: ns.scatter_nd([[1], [1]], [[1.0, 2, 3], [4, 5, 6]], [3, 3]),
    "scatter_nd/shape_tensor": lambda ns: ns.scatter_nd([[0]], [2.0], ns.shape(P[0, 0])),
    "tensor_scatter_nd_update": lambda ns: ns.tensor_scatter_nd_update(
        P, [[0, 1], [1, 2]], np.ones((2, 4), np.float32)),
    "tensor_scatter_nd_update/ids": lambda ns: ns.tensor_scatter_nd_update(
        IDS, [[0, 1], [1, 3]], ns.fill([2], 103)),
    "tensor_scatter_nd_add": lambda ns: ns.tensor_scatter_nd_add(P, [[0, 1, 1], [0, 1, 1]],
                                                                 [1.0, 2.0]),
    "tensor_scatter_nd_sub": lambda ns: ns.tensor_scatter_nd_sub(
        P, [[1], [1]], np.ones((2, 3, 4), np.float32)),
    "tensor_scatter_nd_min": lambda ns: ns.tensor_scatter_nd_min(
        P, [[0, 0, 3], [1, 2, 0], [0, 0, 3]], [-1.0, 100.0, -5.0]),
    "tensor_scatter_nd_max": lambda ns: ns.tensor_scatter_nd_max(
        IDS, [[0, 0], [1, 2], [0, 0]], [7, 1, 6]),
    "tensor_scatter_update": lambda ns: ns.tensor_scatter_update(IDS, [[1, 1]], [0]),
    "tensor_scatter_add": lambda ns: ns.tensor_scatter_add(IDS, [[1, 1], [1, 1]], [1, 2]),
    "tensor_scatter_sub": lambda ns: ns.tensor_scatter_sub(IDS, [[0]], [[1, 1, 1, 1]]),
}


TABLE = tf_reference.Table(CASES)


def _check(expected, actual):
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert computed_dtype(actual.dtype) == computed_dtype(expected.dtype)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


@pytest.mark.parametrize("name", list(CASES))
def test_op_matches_tensorflow(name):
    _check(*TABLE.pair(name))


@pytest.mark.parametrize("name", [
    "constant/int", "constant/mixed_list", "constant/np_float64", "fill/int", "fill/bool",
    "range/np_int64", "zeros_like/int_list", "one_hot/int_values", "stack/ints",
])
def test_op_matches_tensorflow_eagerly(name):
    """Outside a compiled step (a model_fn run eagerly, input-side helpers): the same."""
    expected, _ = TABLE.reference
    _check(expected[name], CASES[name](tf1))


def test_every_index_tuple_op_has_a_case():
    covered = {name.split("/")[0] for name in CASES}
    assert sorted(set(scatter_ops.__all__) - covered) == []


@pytest.mark.parametrize("name", ["scatter_nd", "tensor_scatter_nd_add", "gather_nd/batch_dims",
                                  "gather/batch_dims_axis", "fill/int"])
def test_op_runs_in_the_build_pass(name):
    """On KerasTensors (the symbolic build pass), the shapes and dtypes of the step."""
    eager = np.asarray(TABLE.library[0][name])
    arguments = {
        "scatter_nd": lambda x: tf1.scatter_nd([[1], [3], [1]], tf1.cast(x[0, 0, :3], "int32"),
                                               [5]),
        "tensor_scatter_nd_add": lambda x: tf1.tensor_scatter_nd_add(
            x, [[0, 1, 1], [0, 1, 1]], x[0, 0, :2]),
        "gather_nd/batch_dims": lambda x: tf1.gather_nd(x, [[[1], [2]], [[0], [0]]],
                                                       batch_dims=1),
        "gather/batch_dims_axis": lambda x: tf1.gather(x, [[3, 0], [1, 1]], axis=2,
                                                       batch_dims=1),
        "fill/int": lambda x: tf1.fill([2, 3], tf1.cast(x[0, 0, 0], "int32")),
    }
    out = arguments[name](keras.KerasTensor(P.shape, "float32"))
    assert isinstance(out, keras.KerasTensor)
    assert (tuple(out.shape), out.dtype) == (eager.shape, str(eager.dtype))


def test_out_of_range_indices_are_handled_as_on_tpu():
    """As TF on TPU (XLA): a scatter drops the updates at indices out of range (negative
    too); a gather reads the nearest slice in range."""
    @jax.jit
    def run():
        dropped = tf1.tensor_scatter_nd_add(np.zeros(4, np.float32), [[1], [4], [-1], [9]],
                                            [1.0, 2.0, 3.0, 4.0])
        clamped = tf1.gather_nd(np.arange(4.0, dtype=np.float32), [[7], [-2], [2]])
        return dropped, clamped

    dropped, clamped = run()
    np.testing.assert_array_equal(dropped, [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(clamped, [3.0, 0.0, 2.0])


@pytest.mark.parametrize("call", [
    lambda ns: ns.constant(1.5, ns.int32),
    lambda ns: ns.tensor_scatter_nd_update(ns.constant(P), [[0]], ns.constant(np.ones((1, 3, 4), np.int32))),
])
def test_type_errors_as_tensorflow(call):
    with tf.Graph().as_default(), pytest.raises((TypeError, ValueError)):
        call(V1)
    with pytest.raises(TypeError):
        call(tf1)
