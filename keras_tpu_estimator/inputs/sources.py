"""From what the user feeds to the stacked batches an on-device loop consumes.

`fit`, `evaluate` and `predict` accept an `input_fn` (called with `params`,
`mode` and `config` as it asks), a `tf.data.Dataset`, an iterable of batches,
or arrays: `(features, labels)` or features alone, each an array or a dict of
arrays. `as_source` turns any of them into a `Source`, whose `chunks` yields
`Chunk`s: up to `steps` batches stacked on a new leading axis, ready to be
split over the devices and run as one compiled loop.

Arrays are gathered straight into the `[steps, batch, ...]` layout (one copy,
one shuffle permutation per epoch). A `tf.data` dataset keeps its own
batches (never unbatched or rebatched): tf.data stacks a loop's worth of
them and prefetches, on its own threads, and the stacks are cut here into
the loops' lengths (views). Other iterables are read batch by batch and
stacked. A final short batch is dropped (training, as TPUs need static
shapes), kept at its exact size (evaluation: every example counts once), or
padded and marked (prediction: padding rows are cut off again). A short
batch in the middle of a training input is an error, as are batches that
change keys, dtypes or shapes (`checks`).

Each feature and label keeps its own leading dimension (an unlabeled batch
`k` times the labeled one); a batch's size is the smallest of them
(`checks.batch_rows`), which short batches are measured and padded by.
Arrays batched here must share one length (they are sliced by the batch
size); a dataset may hold tensors of different leading dimensions.

The engine's feed pads and places the chunks; `tf_data` holds what
is asked of a dataset.
"""

import collections
import itertools

import jax
import numpy as np

from keras_tpu_estimator.inputs import checks
from keras_tpu_estimator.inputs import host_gather
from keras_tpu_estimator.inputs import input_fn as input_fn_lib
from keras_tpu_estimator.inputs import tf_data
from keras_tpu_estimator.inputs import transforms

DROP, EXACT, PAD = "drop", "exact", "pad"


class Chunk(collections.namedtuple("Chunk", ["data", "steps", "size", "stacked"])):
    """Batches for one compiled loop.

    Attributes:
        data: `(features, labels)` with leaves `[steps, batch, ...]` when
            `stacked`, else one batch `[size, ...]` (a short last batch).
        steps: how many steps the data is for.
        size: how many real examples it holds (the rest is padding).
        stacked: whether axis 0 stacks steps.
    """


def pad_steps(chunk, steps):
    """`chunk` with its stacked batches padded to `steps` (copies of the last).

    The chunk's `steps` stays the number of real steps: a loop runs those
    and skips the rest (`engine.loop`), through the program compiled for
    the full length.
    """
    length = len(jax.tree.leaves(chunk.data)[0])
    if not chunk.stacked or length >= steps:
        return chunk
    return chunk._replace(data=_pad_rows(chunk.data, steps - length))


def is_dataset(x):
    return type(x).__module__.startswith("tensorflow") and hasattr(x, "as_numpy_iterator")


def split_features_labels(element):
    """`(features, labels)` from a batch: a pair, or features alone."""
    if isinstance(element, tuple) and len(element) == 2:
        return element
    if isinstance(element, tuple) and len(element) == 1:
        return element[0], None
    return element, None


def split_batch(element):
    """`split_features_labels` of a batch read from a dataset or iterable.

    Raises:
        ValueError: for a tuple of more than two (as TensorFlow's estimator:
            `(features, labels, weights)` is not an input).
    """
    if isinstance(element, tuple) and len(element) > 2:
        raise ValueError(
            "input_fn should return (features, labels) as a len 2 tuple: a batch of the "
            f"input is a tuple of {len(element)}. Sample weights go in the features "
            "(a feature the model_fn weighs its loss by)."
        )
    return split_features_labels(element)


def as_source(x, y=None, *, params=None, mode=None, config=None):
    """Turns what `fit`/`evaluate`/`predict` received into a `Source`.

    Args:
        x: an `input_fn`, a `tf.data.Dataset`, an iterable of batches, or
            arrays (`(features, labels)` or features alone).
        y: labels, when `x` holds features given as arrays.
        params: the `params` an `input_fn` receives.
        mode: the `ModeKeys` value an `input_fn` receives.
        config: the `RunConfig` an `input_fn` receives.

    Raises:
        ValueError: if `x` is missing or `y` is given with an `input_fn` or
            a dataset.
    """
    if x is None:
        raise ValueError("An input is required: an input_fn, a dataset or arrays.")
    if isinstance(x, (ArraySource, BatchSource)):
        return x
    if callable(x) and not is_dataset(x):
        if y is not None:
            raise ValueError("Argument `y` must be None when `x` is an input_fn.")
        x = input_fn_lib.read(x, params=params, mode=mode, config=config)
    x = transforms.apply(x)  # Host work of model-side APIs (feature columns).
    if is_dataset(x) or (
        not isinstance(x, (tuple, list, dict, np.ndarray))
        and hasattr(x, "__iter__")
        and not hasattr(x, "__array__")
    ):
        if y is not None:
            raise ValueError("Argument `y` must be None when `x` is a dataset.")
        return BatchSource(x)
    features, labels = (x, y) if y is not None else split_features_labels(
        tuple(x) if isinstance(x, list) else x
    )
    return ArraySource(features, labels)


def _nbytes(tree):
    return sum(np.asarray(a).nbytes for a in jax.tree.leaves(tree))


def steps_within_budget(steps, batch, max_bytes, position=0):
    """At most `steps`, and few enough that the stacked batches fit `max_bytes`.

    `steps` may be a callable `steps(position)`, asked for every chunk with
    the number of batches read before it (a loop length that is tuned, or
    that ends loops at checkpoint steps).
    """
    steps = steps(position) if callable(steps) else steps
    if max_bytes is None or batch is None:
        return steps
    return max(1, min(steps, int(max_bytes // max(1, _nbytes(batch)))))


def _pad_rows(tree, rows):
    """Pads each leaf's axis 0 with `rows` copies of its last row."""
    return jax.tree.map(
        lambda a: np.concatenate([a, np.repeat(a[-1:], rows, axis=0)]), tree
    )


class ArraySource:
    """In-memory arrays, batched and shuffled here."""

    runs_ahead = False  # Chunks are gathered when asked for.

    def __init__(self, features, labels=None):
        features = jax.tree.map(np.asarray, features)
        labels = None if labels is None else jax.tree.map(np.asarray, labels)
        named = checks.leaves((features, labels))
        sizes = {a.shape[0] if a.ndim else None for _, a in named}
        if len(sizes) != 1 or None in sizes:
            said = ", ".join(
                f"{name} has {a.shape[0] if a.ndim else 'no leading dimension'}"
                for name, a in named
            )
            raise ValueError(
                "All input arrays must have the same number of examples "
                f"(leading dimension). Received: {said or 'no arrays'}."
            )
        self.data = (features, labels)
        self.num_examples = sizes.pop()

    @property
    def nbytes(self):
        return _nbytes(self.data)

    def sample(self, batch_size, steps=None, max_bytes=None):
        """One batch of `(features, labels)`, to build the model from
        (`steps` and `max_bytes` as `BatchSource.sample` takes them)."""
        del steps, max_bytes  # Arrays are read when gathered.
        return jax.tree.map(lambda a: a[:batch_size], self.data)

    def num_steps(self, batch_size, remainder):
        """The steps `chunks(batch_size, remainder=remainder)` gives one pass."""
        if not batch_size:
            return None
        if remainder == DROP:
            return self.num_examples // batch_size
        return -(-self.num_examples // batch_size)

    def chunks(self, batch_size, steps, *, remainder, shuffle=False, max_steps=None,
               max_bytes=None, rng=None, indices=False):
        """Yields `Chunk`s of up to `steps` batches of `batch_size` examples.

        Args:
            batch_size: examples per batch.
            steps: batches per chunk (the on-device loop length), or a
                callable `steps(position)` asked for every chunk with the
                number of batches before it.
            remainder: what to do with a final short batch: `"drop"`,
                `"exact"` (its own unstacked chunk) or `"pad"`.
            shuffle: whether to visit examples in a random order.
            max_steps: stop after this many batches.
            max_bytes: split chunks so one holds at most this many bytes.
            rng: a `numpy.random.Generator` for the shuffle.
            indices: yield the example indices `[steps, batch]` (int32)
                instead of the data, for data that already lives on the
                devices (only with `remainder="drop"`).
        """
        full, rest = divmod(self.num_examples, batch_size)
        if remainder == DROP and max_steps is not None and max_steps > full \
                and self.num_examples <= batch_size:
            raise checks.one_batch_trained_longer(self.num_examples, batch_size, full, max_steps)
        if max_steps is not None and max_steps < full:
            full, rest = max_steps, 0
        order = (rng or np.random.default_rng()).permutation(self.num_examples) if shuffle else None
        one_batch = None if indices else jax.tree.map(lambda a: a[:batch_size], self.data)
        start = 0
        while start < full:
            count = min(steps_within_budget(steps, one_batch, max_bytes, start), full - start)
            lo, hi = start * batch_size, (start + count) * batch_size
            start += count
            if indices:
                index = np.arange(lo, hi) if order is None else order[lo:hi]
                yield Chunk(index.reshape(count, batch_size).astype("int32"), count, hi - lo, True)
            elif order is None:
                data = jax.tree.map(
                    lambda a: a[lo:hi].reshape((count, batch_size) + a.shape[1:]), self.data
                )
                yield Chunk(data, count, hi - lo, True)
            else:
                index = order[lo:hi].reshape(count, batch_size)
                # Aligned: on CPU devices, placing it then copies nothing.
                yield Chunk(jax.tree.map(lambda a: host_gather.take_rows(a, index), self.data),
                            count, hi - lo, True)
        if rest and remainder != DROP:
            lo = full * batch_size
            index = order[lo:] if order is not None else slice(lo, None)
            batch = jax.tree.map(lambda a: a[index], self.data)
            yield _short_chunk(batch, rest, batch_size, remainder)


def _short_chunk(batch, size, batch_size, remainder):
    """A short batch of `size` examples: exact, or padded to `batch_size`.

    Padding is keyed on the batch dimension: a leaf of `k * size` rows
    (the batch's own, `k = 1`, or an unlabeled batch `k` times larger) is
    padded to `k * batch_size` rows, copies of its last; a leaf of another
    leading dimension stays as it is.
    """
    if remainder == EXACT:
        return Chunk(batch, 1, size, False)

    def pad(a):
        rows = a.shape[0]
        return _pad_rows(a, (rows // size) * (batch_size - size)) if rows % size == 0 else a

    return Chunk(jax.tree.map(lambda a: pad(a)[None], batch), 1, size, True)


class BatchSource:
    """A `tf.data.Dataset` or any iterable of already-batched elements."""

    def __init__(self, batches):
        self.batches = batches
        self._iterator = None  # Elements of an iterable, after a `sample` peek.
        self._runs = None  # What `chunks` reads: `(batches, rows)` runs.
        self._rest = None  # The part of a run a resumed read starts with.
        self._sampled = False  # Whether `sample` started `_runs` for `chunks`.

    def sample(self, batch_size=None, steps=1, max_bytes=None):
        """A batch of `(features, labels)` to build the model from.

        Nothing is read that the next `chunks` would not read: the input is
        iterated once, as TensorFlow iterates it (a second reading of a
        dataset would find a `.cache()` half filled, or repeat what a
        generator does). A dataset with static shapes but for the batch
        dimension gives the shapes and dtypes of its `element_spec`
        (`jax.ShapeDtypeStruct`s of `batch_size` rows when its batch
        dimension is unknown and it holds one tensor). One of several
        tensors whose batch dimensions are unknown starts reading: its first
        batch tells each tensor's leading dimension (they may differ), and
        the next `chunks` goes on from that batch. Any other input gives its
        first batch, kept for the next `chunks`.

        Args:
            batch_size: the global batch size, or None.
            steps: the steps of a loop, which tf.data stacks when reading
                starts here (as `chunks` would: `steps`, `max_bytes`).
            max_bytes: the most bytes a loop's input may hold, or None.

        Returns:
            `(features, labels)` of arrays or `jax.ShapeDtypeStruct`s,
            leaves of full batches: `batch_size` rows, or a multiple.

        Raises:
            ValueError: for an empty input.
        """
        rows = batch_size // jax.process_count() if batch_size else None
        if is_dataset(self.batches) and self._iterator is None and not self._sampled:
            spec = tf_data.sample_spec(self.batches, rows)
            if spec is not None and not tf_data.leading_dims_unknown(self.batches):
                return split_batch(spec)
            if spec is not None:  # Stacked by tf.data: the first run is kept.
                self._runs = self._new_runs(self._stack_size(rows, steps, None, max_bytes))
                self._rest, self._sampled = next(self._runs, None), True
                if self._rest is None:
                    raise ValueError("The input is empty.")
                data, first = self._rest
                return jax.tree.map(
                    lambda a: jax.ShapeDtypeStruct(
                        (_full_rows(a.shape[1], first, rows),) + a.shape[2:], a.dtype), data)
        iterator = self._iterator or self._new_iterator()
        element = next(iterator, None)
        if element is None:
            raise ValueError("The input is empty.")
        self._iterator = itertools.chain([element], iterator)
        batch = jax.tree.map(np.asarray, split_batch(element))
        checks.batch_rows(batch, 0)
        return batch

    @property
    def runs_ahead(self):
        """Whether tf.data reads and stacks the batches ahead, on its threads.

        Not while a batch read by `sample` waits: the reading that began
        there goes on.
        """
        return (is_dataset(self.batches) and self._iterator is None
                and tf_data.stackable(self.batches))

    def _new_runs(self, stack):
        """Runs `(data, rows)`: `data` holds batches of `rows` rows stacked on
        axis 0, at most `stack` of them (tf.data stacks them), or one."""
        if self.runs_ahead:
            return _checked_runs(tf_data.stacked_runs(self.batches, stack))
        iterator, self._iterator = self._iterator or self._new_iterator(), None
        return _single_runs(iterator)

    def _new_iterator(self):
        if is_dataset(self.batches):
            return self.batches.as_numpy_iterator()
        return iter(self.batches)

    def is_infinite(self):
        if not is_dataset(self.batches):
            return False
        import tensorflow as tf

        return int(self.batches.cardinality()) == int(tf.data.INFINITE_CARDINALITY)

    def num_steps(self, batch_size, remainder):
        """The steps `chunks(batch_size, remainder=remainder)` gives one pass.

        From a dataset's cardinality, as Keras counts its progress bar's
        steps (see `tf_data.num_steps`: training skips short batches).

        Returns:
            The number of steps, or None when it is unknown (an iterable
            other than a dataset, an unknown or infinite cardinality, or a
            training input whose short batches cannot be counted).
        """
        if not is_dataset(self.batches):
            return None
        return tf_data.num_steps(self.batches, batch_size, drop_short=remainder == DROP)

    def chunks(self, batch_size, steps, *, remainder, shuffle=False, max_steps=None,
               max_bytes=None, rng=None, resume=False):
        """Yields `Chunk`s like `ArraySource.chunks`.

        The batch size is `batch_size` when given, else the size of the first
        batch. With `resume`, reading continues where the previous call
        stopped (for `steps_per_epoch` over a long or repeated dataset),
        and starts over once the input is exhausted.

        A dataset keeps its own batches: tf.data stacks them for the loops
        and prefetches (`padded_batch`, `prefetch(AUTOTUNE)`), so its
        threads run the pipeline ahead; the stacks are cut here (views)
        into the loops' lengths, and at short batches.

        Raises:
            ValueError: if a batch is larger than the batch size.
        """
        del shuffle, rng  # A dataset shuffles itself.
        if self._sampled:  # Reading began in `sample`: it goes on.
            self._sampled = False
        elif self._runs is None or not resume:
            self._runs, self._rest = self._new_runs(self._stack_size(
                batch_size, steps, max_steps, max_bytes)), None
        pending, taken = [], 0  # Full batches waiting for a chunk; batches read.
        while max_steps is None or taken < max_steps:
            run, self._rest = self._rest or next(self._runs, None), None
            if run is None:
                self._runs = None  # Exhausted: a resumed read starts over.
                break
            data, rows = run
            batch_size = batch_size or rows
            if rows > batch_size:
                raise ValueError(
                    f"The input yields batches of {rows} examples, more than "
                    f"the batch size {batch_size}. An input_fn must batch with "
                    "params['batch_size']."
                )
            if max_steps is not None and taken + _length(data) > max_steps:
                data, rest = _split(data, max_steps - taken)
                self._rest = (rest, rows)
            if rows < batch_size and remainder == DROP and (
                _length(data) > 1 or self._rest is not None or self._peek()
            ):
                raise checks.short_training_batch(taken, rows, batch_size, [
                    (name, np.shape(a)[1]) for name, a in checks.leaves(data)])
            if rows < batch_size:
                if pending:
                    yield _join(pending, rows=batch_size)
                    pending = []
                for i in range(_length(data)):
                    if remainder != DROP:
                        one = jax.tree.map(lambda a, i=i: a[i], data)
                        yield _short_chunk(one, rows, batch_size, remainder)
                    taken += 1
                continue
            while _length(data):
                waiting = sum(_length(p) for p in pending)
                one = jax.tree.map(lambda a: a[0], data)
                wanted = steps_within_budget(steps, one, max_bytes, taken - waiting)
                head, data = _split(data, max(0, wanted - waiting))
                pending.append(head)
                taken += _length(head)
                if waiting + _length(head) >= wanted:
                    yield _join(pending, rows=batch_size)
                    pending = []
        if pending:
            yield _join(pending, rows=batch_size)

    def _peek(self):
        """Whether another run follows (kept for the next read)."""
        following = next(self._runs, None)
        if following is None:
            return False
        self._rest = following
        return True

    def _stack_size(self, batch_size, steps, max_steps, max_bytes):
        """How many batches tf.data stacks: a loop's, within the budget."""
        if not self.runs_ahead:
            return 1
        nbytes = tf_data.batch_bytes(self.batches, batch_size)
        stack = steps(0) if callable(steps) else steps
        if max_bytes is not None:
            stack = min(stack, max(1, int(max_bytes // max(1, nbytes))))
        return max(1, min(stack, max_steps or stack))


def _full_rows(leaf_rows, rows, batch_size):
    """A leaf's rows in a full batch: `leaf_rows` of a batch of `rows` examples,
    scaled to `batch_size` (an unlabeled batch `k` times the labeled one)."""
    if not batch_size or rows == batch_size or leaf_rows % rows:
        return leaf_rows
    return leaf_rows // rows * batch_size


def _length(data):
    return len(jax.tree.leaves(data)[0])


def _split(data, count):
    """`data`'s first `count` stacked batches and the rest (views)."""
    return jax.tree.map(lambda a: a[:count], data), jax.tree.map(lambda a: a[count:], data)


def _join(pieces, rows):
    """One chunk of the stacked batches of `pieces` (copied only if several)."""
    data = pieces[0] if len(pieces) == 1 else jax.tree.map(
        lambda *xs: np.concatenate(xs), *pieces
    )
    steps = _length(data)
    return Chunk(data, steps, steps * rows, True)


def _single_runs(elements):
    for position, batch in enumerate(checked_batches(elements)):
        yield jax.tree.map(lambda a: a[None], batch), checks.batch_rows(batch, position)


def checked_batches(elements):
    """The batches `(features, labels)` of `elements`, each checked against the first."""
    check = checks.BatchCheck()
    for position, element in enumerate(elements):
        batch = jax.tree.map(np.asarray, split_batch(element))
        check(batch, position)
        yield batch


def _checked_runs(runs):
    """Runs `(batch, rows)` of tf.data's stacks, `rows` their batch dimension
    (`checks.batch_rows`: each leaf keeps its own leading dimension)."""
    for element, rows in runs:
        yield split_batch(element), checks.smallest_rows(rows)
