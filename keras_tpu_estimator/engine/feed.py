"""From a source of batches to placed, prefetched chunks of batches.

`Feed` stacks a source's batches (`inputs.InputReader` made the source from
what the user gave) into chunks, one per on-device loop, pads a short
chunk to the loop's length, and places each chunk on the devices
(`placement`) ahead of the loop. Training arrays small enough are placed on
every device once (`resident`), and the chunks then hold only example
indices into them.

Who works ahead of the loop:

- a `tf.data` dataset: tf.data itself, on its threads (it reads, stacks
  the loop's batches and prefetches); here only the next chunk's transfer
  is started early (`ahead.look_ahead`, asynchronous `jax.device_put`, as
  Keras's JAX trainer does);
- resident arrays: nothing to prepare (indices); the same look-ahead;
- arrays gathered on the host, and other iterables: a thread
  (`ahead.prefetch`) gathers or stacks the next chunks and places them
  while the devices run the current loop. Nothing else does that job:
  Keras's array and generator adapters slice batches on the calling
  thread, and a tf.data pipeline over the arrays would copy them into its
  graph and shuffle example by example. Placing these chunks one ahead on
  the calling thread instead ran at 0.96-0.98 of the thread's speed
  (`benchmarks/bench_fit.py` row (e), 2-core CPU): the gather then waits
  for the loop before it.
"""

import jax

from keras_tpu_estimator import distribute
from keras_tpu_estimator.engine import ahead
from keras_tpu_estimator.engine import placement
from keras_tpu_estimator.inputs import checks as input_checks
from keras_tpu_estimator.inputs import sources
from keras_tpu_estimator.spec import ModeKeys


class Feed:
    """Chunks of one model's input, placed on its devices ahead of its loops.

    Args:
        distribution: the model's `keras.distribution` layout (set again
            when the model's is).
        input_partition_dims: `TPUConfig.input_partition_dims`, or None.
        max_loop_bytes: the most input bytes one loop may stack.
        max_resident_bytes: the most bytes of training arrays placed on
            every device once (0 turns it off).

    Example:

    ```python
    feed = Feed(distribution, None, max_loop_bytes=2**30, max_resident_bytes=0)
    chunks, stop = feed.chunks(source, ModeKeys.EVAL, 64, 100, sources.EXACT)
    ```
    """

    def __init__(self, distribution, input_partition_dims, max_loop_bytes, max_resident_bytes):
        self.distribution = distribution
        self._partition_dims = input_partition_dims
        self.max_loop_bytes = max_loop_bytes
        self.max_resident_bytes = max_resident_bytes

    @property
    def num_replicas(self):
        """The model replicas in sync, which a placed batch divides over."""
        return distribute.num_replicas(self.distribution)

    def training_chunks(self, source, batch_size, steps, *, shuffle, max_steps, rng, resident,
                        pad_to=None):
        """The chunks of one training epoch (full batches only).

        Args:
            source: the training source.
            batch_size: the global batch size.
            steps: `steps(position)`, the steps of the chunk starting at
                `position` in the epoch.
            shuffle: shuffle arrays.
            max_steps: the epoch's steps (`steps_per_epoch`), or None for
                one pass; a dataset then resumes where the last epoch stopped.
            rng: the numpy generator of the shuffles.
            resident: the arrays `resident` placed, or None; chunks then hold
                example indices into them.
            pad_to: the loop length that shorter chunks are padded to.
        """
        options = {}
        if isinstance(source, sources.BatchSource):
            options["resume"] = max_steps is not None
        if resident is not None:
            options["indices"] = True
        return self.chunks(
            source, ModeKeys.TRAIN, batch_size, steps, sources.DROP,
            shuffle=shuffle, max_steps=max_steps, rng=rng, pad_to=pad_to, **options,
        )

    def resident(self, source, examples_read=None):
        """Training arrays placed on every device once, or None.

        Args:
            source: the training input.
            examples_read: how many examples the training reads (None:
                unknown). On CPU devices, which are the host's memory,
                arrays read less than twice stay on the host: the copy to
                the devices costs a pass over them (0.5-0.8 s for 482 MB on
                a 2-core CPU) and saves the host's gather (done on a thread
                beside the loop) from the second pass on
                (`benchmarks/bench_fit.py`: 1 epoch 1.26x faster without the
                copy, 3 epochs 1.09x faster with it).
        """
        if (
            not isinstance(source, sources.ArraySource)
            or jax.process_count() > 1
            or source.nbytes > self.max_resident_bytes
        ):
            return None
        if (examples_read is not None and examples_read < 2 * source.num_examples
                and distribute.on_cpu(self.distribution)):
            return None
        input_checks.refuse_strings(source.data)  # Named here, not by device_put.
        return placement.put_replicated(source.data, self.distribution)

    def gather(self, data, rows):
        """The batch of `rows` of resident `data`, laid out as a placed batch."""
        batch = jax.tree.map(lambda a: a[rows], data)
        shardings = placement.input_shardings(
            batch, self.distribution, stacked=False,
            partition_dims=self._partition_dims,
        )
        return jax.tree.map(jax.lax.with_sharding_constraint, batch, shardings)

    def chunks(self, source, mode, batch_size, steps, remainder, pad_to=None, **kwargs):
        """Chunks of `source` placed on the devices, prefetched.

        Args:
            source: a source of `inputs.InputReader.source`.
            mode: a `ModeKeys` value (PREDICT drops the labels).
            batch_size: the global batch size.
            steps: steps per chunk, or `steps(position)`.
            remainder: what a final short batch does (`sources.DROP`,
                `EXACT` or `PAD`).
            pad_to: a loop length: shorter chunks of stacked batches are
                padded to it (at most what `max_loop_bytes` allows), so that
                they run through the program of that length.
            **kwargs: passed to the source's `chunks`.

        Returns:
            An iterator of placed `inputs.sources.Chunk`s and a context manager
            that stops its producer.
        """
        per_process = None if batch_size is None else batch_size // jax.process_count()
        chunks = source.chunks(
            per_process, steps, remainder=remainder, max_bytes=self.max_loop_bytes, **kwargs
        )
        partition_dims = self._partition_dims

        def place(chunk):
            if pad_to and chunk.stacked:
                one = jax.tree.map(lambda a: a[0], chunk.data)
                length = sources.steps_within_budget(pad_to, one, self.max_loop_bytes)
                chunk = sources.pad_steps(chunk, length)
            data = chunk.data
            if mode == ModeKeys.PREDICT and isinstance(data, tuple):
                data = (data[0], None)  # As Estimator: labels are not predicted from.
            input_checks.refuse_strings(data)  # Named here, not by device_put.
            # Each leaf is split along its own leading dimension. In a batch
            # that divides over the replicas, each leaf must divide; a short
            # last batch that does not is replicated, leaf by leaf.
            rows = chunk.size // chunk.steps * jax.process_count()
            if rows % self.num_replicas == 0 and isinstance(data, tuple):
                input_checks.check_divisible(
                    data, self.num_replicas, int(chunk.stacked), jax.process_count()
                )
            # Resident training data arrives as example indices: not partitioned.
            data = placement.put_batches(
                data, self.distribution, chunk.stacked, None,
                partition_dims if isinstance(data, tuple) else None,
            )
            return chunk._replace(data=data)

        if kwargs.get("indices") or source.runs_ahead:
            # tf.data reads and stacks ahead on its own threads, and indices
            # cost nothing to make: only the transfer is started early.
            return ahead.look_ahead(chunks, place)
        return ahead.prefetch(chunks, place)


def sample_of(chunk, resident=None):
    """The shapes and dtypes of one batch of `chunk` (one step's input)."""
    if resident is not None:
        rows = chunk.data.shape[1]
        return jax.tree.map(
            lambda a: jax.ShapeDtypeStruct((rows,) + a.shape[1:], a.dtype), resident
        )
    return jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape[1:] if chunk.stacked else a.shape, a.dtype),
        chunk.data,
    )
