"""inputs: from arrays, datasets and input_fns to stacked loop chunks."""

import threading
import time

import jax
import numpy as np
import pytest
import tensorflow as tf

from keras_tpu_estimator.inputs import sources as inputs
from keras_tpu_estimator.inputs import tf_data


def arrays(n):
    return {"x": np.arange(n * 2, dtype="float32").reshape(n, 2)}, np.arange(n)


def chunk_list(source, **kwargs):
    kwargs.setdefault("remainder", inputs.DROP)
    return list(source.chunks(4, 3, **kwargs))


def test_arrays_are_stacked_steps_by_batch():
    chunks = chunk_list(inputs.ArraySource(*arrays(32)))
    assert [c.steps for c in chunks] == [3, 3, 2]
    assert chunks[0].data[0]["x"].shape == (3, 4, 2)
    np.testing.assert_array_equal(chunks[1].data[1][0], [12, 13, 14, 15])


@pytest.mark.parametrize(
    "remainder, expected",
    [(inputs.DROP, []), (inputs.EXACT, [(2, 1, False)]), (inputs.PAD, [(2, 1, True)])],
)
def test_a_short_last_batch_is_dropped_kept_exact_or_padded(remainder, expected):
    chunks = chunk_list(inputs.ArraySource(*arrays(14)), remainder=remainder)
    short = [(c.size, c.steps, c.stacked) for c in chunks if c.size % 4]
    assert short == expected


def test_padding_repeats_the_last_row_and_counts_only_real_rows():
    chunks = chunk_list(inputs.ArraySource(*arrays(14)), remainder=inputs.PAD)
    last = chunks[-1]
    np.testing.assert_array_equal(last.data[1][0], [12, 13, 13, 13])
    assert last.size == 2


def test_shuffle_visits_every_example_once_per_epoch():
    chunks = chunk_list(
        inputs.ArraySource(*arrays(24)), shuffle=True, rng=np.random.default_rng(1)
    )
    labels = np.concatenate([c.data[1].ravel() for c in chunks])
    assert sorted(labels) == list(range(24)) and list(labels) != list(range(24))


def test_indices_instead_of_data():
    chunks = chunk_list(inputs.ArraySource(*arrays(24)), indices=True)
    assert chunks[0].data.dtype == np.int32
    np.testing.assert_array_equal(chunks[0].data[1], [4, 5, 6, 7])


def test_memory_budget_shortens_chunks():
    batch_bytes = 4 * (2 * 4 + 8)
    chunks = chunk_list(inputs.ArraySource(*arrays(32)), max_bytes=2 * batch_bytes)
    assert [c.steps for c in chunks] == [2, 2, 2, 2]


def test_max_steps_stops_early():
    assert sum(c.steps for c in chunk_list(inputs.ArraySource(*arrays(32)), max_steps=4)) == 4


def test_arrays_of_different_lengths_are_rejected():
    with pytest.raises(ValueError, match="same number of examples"):
        inputs.ArraySource({"x": np.zeros((4, 1))}, np.zeros(5))


def test_dataset_batches_are_stacked_and_short_batch_kept_exact():
    dataset = tf.data.Dataset.from_tensor_slices(arrays(14)).batch(4)
    chunks = list(inputs.as_source(dataset).chunks(4, 3, remainder=inputs.EXACT))
    assert [(c.steps, c.size, c.stacked) for c in chunks] == [(3, 12, True), (1, 2, False)]


def test_dataset_batch_larger_than_batch_size_is_an_error():
    dataset = tf.data.Dataset.from_tensor_slices(arrays(16)).batch(8)
    with pytest.raises(ValueError, match="batches of 8 examples, more than the batch size 4"):
        list(inputs.as_source(dataset).chunks(4, 3, remainder=inputs.DROP))


def test_resumed_reading_continues_then_starts_over():
    source = inputs.as_source(tf.data.Dataset.from_tensor_slices(arrays(16)).batch(4))
    read = lambda: [c.data[1][0][0] for c in source.chunks(4, 1, remainder=inputs.DROP, max_steps=3, resume=True)]
    assert read() == [0, 4, 8]
    assert read() == [12]
    assert read() == [0, 4, 8]


def test_input_fn_is_called_with_the_arguments_it_takes():
    calls = []

    def input_fn(params, mode):
        calls.append((params, mode))
        return arrays(8)

    source = inputs.as_source(input_fn, params={"batch_size": 4}, mode="train", config=None)
    assert isinstance(source, inputs.ArraySource)
    assert calls == [({"batch_size": 4}, "train")]


@pytest.mark.parametrize(
    "element, expected",
    [((1, 2), (1, 2)), ((1,), (1, None)), ({"x": 1}, ({"x": 1}, None))],
)
def test_split_features_labels(element, expected):
    assert inputs.split_features_labels(element) == expected


def labelled(n):
    return tf.data.Dataset.from_tensor_slices(arrays(n))


# Datasets whose batches tf.data stacks, with short batches at the end or inside.
STACKED_DATASETS = {
    "full batches": lambda: labelled(24).batch(4),
    "a short last batch": lambda: labelled(22).batch(4),
    "short batches inside": lambda: labelled(10).batch(4).repeat(3),
    "drop_remainder": lambda: labelled(22).batch(4, drop_remainder=True),
    "features alone": lambda: tf.data.Dataset.from_tensor_slices(arrays(22)[0]).batch(4),
}


def one_by_one(dataset):
    """The same batches as an iterable that is not a dataset (read batch by batch)."""
    return inputs.BatchSource(iter(list(dataset.as_numpy_iterator())))


def summary(chunks):
    return [(c.steps, c.size, c.stacked, [a.tolist() for a in jax.tree.leaves(c.data)])
            for c in chunks]


@pytest.mark.parametrize("name", list(STACKED_DATASETS))
@pytest.mark.parametrize("remainder", [inputs.DROP, inputs.EXACT, inputs.PAD])
@pytest.mark.parametrize("steps, max_steps, max_bytes", [
    (1, None, None), (3, None, None), (4, 5, None), (lambda p: 1 + p % 2, None, None),
    (4, None, 2 * 64),  # Two batches of 4 rows: float32 (4, 2) and int64 (4,).
])
def test_tf_data_stacks_the_chunks_that_reading_batch_by_batch_gives(name, remainder, steps,
                                                                      max_steps, max_bytes):
    dataset = STACKED_DATASETS[name]()
    source = inputs.as_source(dataset)
    assert source.runs_ahead
    kwargs = dict(remainder=remainder, max_steps=max_steps, max_bytes=max_bytes)
    if remainder == inputs.DROP and name == "short batches inside":  # Training refuses it.
        for reader in (source, one_by_one(dataset)):
            with pytest.raises(ValueError, match="batch 2 .* 2 examples"):
                summary(reader.chunks(4, steps, **kwargs))
        return
    assert summary(source.chunks(4, steps, **kwargs)) == summary(
        one_by_one(dataset).chunks(4, steps, **kwargs)
    )


def test_a_dataset_tf_data_cannot_stack_is_read_batch_by_batch():
    unknown = tf.data.Dataset.range(1, 9).map(lambda n: tf.ones(4 + 0 * n)).batch(4)
    source = inputs.as_source(unknown)  # Shapes unknown to tf.data (None), equal in fact.
    assert not source.runs_ahead
    assert [c.data[0].shape for c in source.chunks(4, 1, remainder=inputs.EXACT)] == [
        (1, 4, 4), (1, 4, 4)
    ]


def test_resumed_reading_continues_inside_a_stack():
    source = inputs.as_source(labelled(24).batch(4))
    read = lambda: [c.data[1][:, 0].tolist() for c in source.chunks(
        4, 3, remainder=inputs.DROP, max_steps=4, resume=True)]
    assert read() == [[0, 4, 8], [12]]
    assert read() == [[16, 20]]
    assert read() == [[0, 4, 8], [12]]


class _Recorded:
    """A numpy iterator over `values` that records the thread deleting it."""

    def __init__(self, values, deleted_on):
        self._values, self._deleted_on = iter(values), deleted_on

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._values)

    def __del__(self):
        self._deleted_on.append(threading.current_thread())


class _Dataset:
    def __init__(self, values, deleted_on):
        self._values, self._deleted_on = values, deleted_on

    def as_numpy_iterator(self):
        return _Recorded(self._values, self._deleted_on)


def test_a_dataset_iterator_closed_early_is_deleted_on_another_thread():
    deleted_on = []
    elements = tf_data.elements(_Dataset([1, 2, 3], deleted_on))
    assert next(elements) == 1
    elements.close()
    for _ in range(100):
        if deleted_on:
            break
        time.sleep(0.01)
    assert deleted_on and deleted_on[0] is not threading.current_thread()


def test_a_dataset_iterator_read_to_its_end_is_deleted_by_the_reader():
    deleted_on = []
    assert list(tf_data.elements(_Dataset([1, 2], deleted_on))) == [1, 2]
    assert deleted_on == [threading.current_thread()]


def test_stacked_runs_of_an_endless_dataset_stop_when_closed():
    dataset = tf.data.Dataset.range(10**6).map(lambda i: tf.fill([4], i)).batch(
        2, drop_remainder=True).repeat()
    runs = tf_data.stacked_runs(dataset, 3)
    element, rows = next(runs)
    assert element.shape == (3, 2, 4) and list(rows) == [2]
    runs.close()
