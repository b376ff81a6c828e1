"""What the input side asks of a `tf.data.Dataset`, in tf.data's own terms.

A dataset's steps come from its `cardinality()` (as Keras counts them), and
its batches are stacked for the on-device loops by tf.data itself
(`padded_batch`, then `prefetch(tf.data.AUTOTUNE)`), so that its threads
read, stack and prefetch while the devices run. TensorFlow is imported only
when a dataset is used.

Example:

```python
dataset = tf.data.Dataset.range(10).batch(4)  # Batches of 4, 4 and 2.
tf_data.num_steps(dataset, batch_size=4, drop_short=False)  # 3
tf_data.num_steps(dataset, batch_size=4, drop_short=True)  # None: which are short?
```
"""

import threading

import jax
import numpy as np


def num_steps(dataset, batch_size, drop_short):
    """The batches of one pass that run, from the dataset's cardinality.

    Args:
        dataset: a `tf.data.Dataset` of batches.
        batch_size: the rows of a full batch, or None (the first batch's).
        drop_short: whether batches of fewer rows are skipped (training).
            The count is then known when every batch is full: a static
            batch dimension (`batch(..., drop_remainder=True)`) says so, or
            a full last batch, read by tf.data's random access
            (`tf.data.experimental.at`) where the dataset offers it.

    Returns:
        The number of steps, or None when unknown: an unknown or infinite
        cardinality, or, with `drop_short`, short batches not counted.
    """
    import tensorflow as tf

    count = int(dataset.cardinality())
    if count < 0:
        return None  # tf.data.UNKNOWN_CARDINALITY or INFINITE_CARDINALITY.
    if not drop_short or count == 0:
        return count
    # The batch dimension is the smallest leading one (`checks.batch_rows`).
    rows = static_rows(dataset)
    if rows is not None:
        # Every batch has this size: all run, or none is full.
        return count if batch_size in (None, min(rows)) else 0

    def rows_at(index):
        element = tf.nest.flatten(tf.data.experimental.at(dataset, index))
        return min(int(tf.shape(t)[0]) for t in element)

    try:  # Random access reads one batch, where the dataset offers it.
        full = rows_at(count - 1) == (batch_size or rows_at(0))
    except (tf.errors.OpError, TypeError, ValueError, NotImplementedError):
        return None
    # A short last batch may be one of several (a dataset batched, then
    # repeated): their number is unknown.
    return count if full else None


def static_rows(dataset):
    """Each tensor's leading dimension (in `tf.nest.flatten` order) when all
    are static, as `batch(..., drop_remainder=True)` makes them; else None."""
    import tensorflow as tf

    rows = [s.shape[:1].as_list() for s in tf.nest.flatten(dataset.element_spec)]
    if all(r and r[0] is not None for r in rows):
        return [r[0] for r in rows]
    return None


def stackable(dataset):
    """Whether tf.data can stack the batches: dense, static but for the batch."""
    import tensorflow as tf

    specs = tf.nest.flatten(dataset.element_spec)
    return all(
        isinstance(s, tf.TensorSpec) and s.shape.rank and None not in s.shape[1:].as_list()
        for s in specs
    )


def sample_spec(dataset, rows=None):
    """The shapes and dtypes of a batch, from the dataset's `element_spec`.

    Reads nothing. Known when the dataset is `stackable`, of numbers or
    booleans, and its batch dimension is static or `rows` gives it.

    Args:
        dataset: a `tf.data.Dataset` of batches.
        rows: the rows of a batch whose batch dimension is not static.

    Returns:
        The element's structure with a `jax.ShapeDtypeStruct` for each
        tensor, or None when the spec does not tell.
    """
    import tensorflow as tf

    specs = tf.nest.flatten(dataset.element_spec)
    if not stackable(dataset) or not all(s.dtype.is_numeric or s.dtype.is_bool for s in specs):
        return None
    if rows is None and any(s.shape[0] is None for s in specs):
        return None

    def struct(spec):
        batch = spec.shape[0] if spec.shape[0] is not None else rows
        return jax.ShapeDtypeStruct((batch, *spec.shape[1:].as_list()), spec.dtype.as_numpy_dtype)

    return tf.nest.map_structure(struct, dataset.element_spec)


def leading_dims_unknown(dataset):
    """Whether the dataset holds several tensors whose batch dimensions are
    not static: each may have its own, which only a batch tells."""
    import tensorflow as tf

    specs = tf.nest.flatten(dataset.element_spec)
    return len(specs) > 1 and any(s.shape.rank and s.shape[0] is None for s in specs)


def batch_bytes(dataset, rows=None):
    """The bytes of one batch of `rows` rows (default: the static batch size)."""
    import tensorflow as tf

    specs = tf.nest.flatten(dataset.element_spec)
    rows = rows or specs[0].shape[0] or 1
    return sum(rows * s.shape[1:].num_elements() * s.dtype.size for s in specs)


def stacked_runs(dataset, stack):
    """Yields runs `(element, rows)`: batches of the same rows stacked on axis 0.

    tf.data stacks `stack` batches at a time and prefetches on its threads.
    `rows` holds the row count of each of the element's leaves (in
    `tf.nest.flatten` order: each leaf has its own leading dimension). When
    every leaf's batch dimension is static, every batch has those rows and
    tf.data stacks them as they are (`batch`). Otherwise each batch carries
    its row counts, `padded_batch` pads a short batch to the others' size,
    the stacks are cut here (views) where the row counts change, and each
    leaf's padding is cut off.

    Args:
        dataset: a `stackable` dataset of batches.
        stack: batches per stack.
    """
    import tensorflow as tf

    static = static_rows(dataset)
    if static is not None:
        # No per-batch row counts to read: no map (a traced function) and no
        # padding, which would cost more to set up than a short input runs.
        rows = np.array(static)
        for element in elements(dataset.batch(stack).prefetch(tf.data.AUTOTUNE)):
            yield element, rows
        return

    @tf.autograph.experimental.do_not_convert
    def with_rows(*element):  # A tuple arrives unpacked; kept a tuple.
        return element, tf.stack([tf.shape(t)[0] for t in tf.nest.flatten(element)])

    stacks = dataset.map(with_rows).padded_batch(stack).prefetch(tf.data.AUTOTUNE)
    for element, rows in elements(stacks):
        start = 0
        while start < len(rows):
            end = start + 1
            while end < len(rows) and (rows[end] == rows[start]).all():
                end += 1
            flat = [a[start:end, :count] for a, count in zip(tf.nest.flatten(element),
                                                               rows[start].tolist())]
            yield tf.nest.pack_sequence_as(element, flat), rows[start]
            start = end


def elements(dataset):
    """Yields the dataset's elements as numpy; an iterator closed early is
    deleted on a daemon thread.

    Deleting a tf.data iterator that has not reached its end cancels its
    threads and waits for them: 0.75-0.9 s in one close out of three (TF
    2.21, a parallel `map` under `cache().repeat()`, 2-core CPU; 3.5-4.7 s
    seen at the end of a training), most of it idle. Training stops
    mid-stream at every `max_steps`, and the caller has nothing to wait
    for.
    """
    iterator = dataset.as_numpy_iterator()
    ended = False
    try:
        yield from iterator
        ended = True
    finally:
        if not ended:
            holder = [iterator]
            del iterator  # The thread drops the last reference.
            threading.Thread(target=holder.clear, daemon=True).start()
