"""host_gather: shuffled rows of host arrays, gathered where the devices can take them in place."""

import jax
import numpy as np
import pytest

from keras_tpu_estimator.inputs import host_gather
from keras_tpu_estimator.inputs import sources as inputs


def _data_address(array):
    return array.__array_interface__["data"][0]


@pytest.mark.parametrize("shape, dtype", [((3, 5), "float32"), ((7,), "int8"), ((2, 3, 4), "int64"),
                                          ((1,), "bool")])
def test_aligned_empty_has_the_shape_and_dtype_and_starts_on_64_bytes(shape, dtype):
    out = host_gather.aligned_empty(shape, dtype)
    assert (out.shape, out.dtype) == (shape, np.dtype(dtype))
    assert out.flags.c_contiguous and out.flags.writeable
    assert _data_address(out) % host_gather.ALIGNMENT == 0


@pytest.mark.parametrize(
    "array",
    [
        np.arange(60, dtype="float32").reshape(10, 6),
        np.arange(10, dtype="int32"),
        np.arange(40, dtype="float64").reshape(10, 2, 2)[:, :, 1],  # not contiguous
        np.array(list("abcdefghij")),
        np.array([{"a": i} for i in range(10)], dtype=object),
    ],
    ids=["float32 rows", "int32 labels", "strided view", "strings", "objects"],
)
def test_take_rows_gathers_what_np_take_gathers(array):
    index = np.array([[9, 0, 4], [4, 7, 1]])
    rows = host_gather.take_rows(array, index)
    expected = np.take(array, index, axis=0)
    assert rows.dtype == expected.dtype
    np.testing.assert_array_equal(rows, expected)


def test_take_rows_data_starts_on_64_bytes():
    array = np.arange(1000 * 3, dtype="float32").reshape(1000, 3)
    for start in range(4):  # Whatever malloc returns, the data is aligned.
        rows = host_gather.take_rows(array, np.arange(start, start + 5 * (start + 1)))
        assert _data_address(rows) % host_gather.ALIGNMENT == 0


def test_shuffled_array_chunks_are_placed_on_cpu_without_a_copy():
    features = np.arange(64 * 3, dtype="float32").reshape(64, 3)
    source = inputs.ArraySource(features, np.arange(64, dtype="int32"))
    chunk = next(source.chunks(8, 4, remainder=inputs.DROP, shuffle=True,
                               rng=np.random.default_rng(0)))
    gathered = chunk.data[0]
    placed = jax.device_put(gathered, jax.devices("cpu")[0])
    assert placed.unsafe_buffer_pointer() == _data_address(gathered)
    np.testing.assert_array_equal(np.asarray(placed), gathered)
