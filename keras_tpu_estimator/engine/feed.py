"""From the user's input to placed, prefetched chunks of batches.

`Feed` turns what `fit`/`evaluate`/`predict` receive (an `input_fn`, a
dataset or arrays) into a source (`inputs`), calling an `input_fn` as
`per_host_input_for_training` deploys it (`context.plan_input`); cuts the
source into chunks, one per on-device loop; places each chunk on the
devices (`placement`) ahead of the loop. Training arrays small enough are
placed on every device once (`resident`), and the chunks then hold only
example indices into them.

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

from keras_tpu_estimator import context as context_lib
from keras_tpu_estimator import distribute
from keras_tpu_estimator import grouped_input
from keras_tpu_estimator import input_checks
from keras_tpu_estimator import inputs as inputs_lib
from keras_tpu_estimator.engine import ahead
from keras_tpu_estimator.engine import placement
from keras_tpu_estimator.spec import ModeKeys

BATCH_SIZE_NAMES = {
    ModeKeys.TRAIN: "train_batch_size",
    ModeKeys.EVAL: "eval_batch_size",
    ModeKeys.PREDICT: "predict_batch_size",
}


class Feed:
    """The input side of one model.

    Args:
        distribution: the model's `keras.distribution` layout.
        config: the `RunConfig`.
        params: the user's params (an `input_fn` receives them, with
            `batch_size` and `context`).
        use_tpu: whether the model runs on the accelerators.
        batch_sizes: `{mode: global batch size or None}`, the defaults.
        max_loop_bytes: the most input bytes one loop may stack.
        max_resident_bytes: the most bytes of training arrays placed on
            every device once (0 turns it off).

    Raises:
        ValueError: for a batch size that does not divide over the replicas.
    """

    def __init__(self, distribution, config, params, use_tpu, batch_sizes, max_loop_bytes,
                 max_resident_bytes):
        self.distribution = distribution
        self.num_replicas = distribute.num_replicas(distribution)
        for mode, batch_size in batch_sizes.items():
            distribute.check_batch_size(BATCH_SIZE_NAMES[mode], batch_size, self.num_replicas)
        self._batch_sizes = dict(batch_sizes)
        self._config = config
        self._params = params
        self._use_tpu = use_tpu
        self.max_loop_bytes = max_loop_bytes
        self.max_resident_bytes = max_resident_bytes

    def source(self, x, y, mode, batch_size=None):
        """The input as a source of this process's rows of each batch.

        Args:
            x: an `input_fn`, a dataset, or arrays.
            y: labels, when `x` holds features as arrays.
            mode: a `ModeKeys` value.
            batch_size: the global batch size; defaults to the mode's.

        Returns:
            `(source, batch_size)`, the batch size checked.
        """
        batch_size = batch_size or self._batch_sizes[mode]
        source = self._source(x, y, mode, batch_size)
        return source, self.check_batch_size(mode, batch_size, source)

    def _source(self, x, y, mode, batch_size):
        if not callable(x) or inputs_lib.is_dataset(x):
            return inputs_lib.as_source(x, y, mode=mode, config=self._config)
        plan = context_lib.plan_input(
            self._config.tpu_config,
            mode,
            batch_size,
            self.num_replicas,
            distribute.cores_per_replica(self.distribution),
            use_tpu=self._use_tpu,
        )
        sources = [
            inputs_lib.as_source(x, y, params=self._input_fn_params(c), mode=mode,
                                 config=self._config)
            for c in plan.contexts
        ]
        if len(sources) == 1 and plan.group == 1:
            return sources[0]
        return grouped_input.GroupedSource(sources, plan.group, plan.contexts[0].batch_size)

    def _input_fn_params(self, context):
        params = dict(self._params, context=context)
        if context.batch_size is not None:
            params["batch_size"] = context.batch_size
        return params

    def check_batch_size(self, mode, batch_size, source):
        """Validates the global batch size for `source`; returns it."""
        name = BATCH_SIZE_NAMES[mode]
        if batch_size is None and isinstance(source, inputs_lib.ArraySource):
            raise ValueError(
                f"A batch size is required to batch arrays: give `{name}` to "
                "EstimatorModel or `batch_size` to this call."
            )
        distribute.check_batch_size(name, batch_size, self.num_replicas)
        return batch_size

    def check_training_source(self, source, max_steps):
        """Refuses an endless training input without a step count."""
        endless = isinstance(source, inputs_lib.BatchSource) and source.is_infinite()
        if endless and max_steps is None:
            raise ValueError(
                "The training input is endless (repeated): give `steps_per_epoch`."
            )

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
        if isinstance(source, inputs_lib.BatchSource):
            options["resume"] = max_steps is not None
        if resident is not None:
            options["indices"] = True
        return self.chunks(
            source, ModeKeys.TRAIN, batch_size, steps, inputs_lib.DROP,
            shuffle=shuffle, max_steps=max_steps, rng=rng, pad_to=pad_to, **options,
        )

    def resident(self, source):
        """Training arrays placed on every device once, or None."""
        if (
            not isinstance(source, inputs_lib.ArraySource)
            or jax.process_count() > 1
            or source.nbytes > self.max_resident_bytes
        ):
            return None
        input_checks.refuse_strings(source.data)  # Named here, not by device_put.
        return placement.put_replicated(source.data, self.distribution)

    def gather(self, data, rows):
        """The batch of `rows` of resident `data`, laid out as a placed batch."""
        batch = jax.tree.map(lambda a: a[rows], data)
        shardings = placement.input_shardings(
            batch, self.distribution, stacked=False,
            partition_dims=self._config.tpu_config.input_partition_dims,
        )
        return jax.tree.map(jax.lax.with_sharding_constraint, batch, shardings)

    def chunks(self, source, mode, batch_size, steps, remainder, pad_to=None, **kwargs):
        """Chunks of `source` placed on the devices, prefetched.

        Args:
            source: a source of `source`.
            mode: a `ModeKeys` value (PREDICT drops the labels).
            batch_size: the global batch size.
            steps: steps per chunk, or `steps(position)`.
            remainder: what a final short batch does (`inputs.DROP`,
                `EXACT` or `PAD`).
            pad_to: a loop length: shorter chunks of stacked batches are
                padded to it (at most what `max_loop_bytes` allows), so that
                they run through the program of that length.
            **kwargs: passed to the source's `chunks`.

        Returns:
            An iterator of placed `inputs.Chunk`s and a context manager
            that stops its producer.
        """
        per_process = None if batch_size is None else batch_size // jax.process_count()
        chunks = source.chunks(
            per_process, steps, remainder=remainder, max_bytes=self.max_loop_bytes, **kwargs
        )
        partition_dims = self._config.tpu_config.input_partition_dims

        def place(chunk):
            if pad_to and chunk.stacked:
                one = jax.tree.map(lambda a: a[0], chunk.data)
                length = inputs_lib.steps_within_budget(pad_to, one, self.max_loop_bytes)
                chunk = inputs_lib.pad_steps(chunk, length)
            data = chunk.data
            if mode == ModeKeys.PREDICT and isinstance(data, tuple):
                data = (data[0], None)  # As Estimator: labels are not predicted from.
            input_checks.refuse_strings(data)  # Named here, not by device_put.
            global_size = chunk.size * jax.process_count()
            divisible = chunk.stacked or global_size % self.num_replicas == 0
            # Resident training data arrives as example indices: not partitioned.
            data = placement.put_batches(
                data, self.distribution, chunk.stacked, divisible,
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


def steps_of(source, batch_size, drop_remainder=False):
    """Steps in one pass over `source`, when they are known.

    What Keras's progress bar and `params['steps']` show as the epoch's
    target: the batches that will run, from arrays' length or a dataset's
    cardinality (`inputs.BatchSource.num_steps`).

    Args:
        source: a source of `Feed.source`.
        batch_size: the global batch size, or None (a dataset's own).
        drop_remainder: whether short batches are skipped (training).

    Returns:
        The number of steps, or None when unknown.
    """
    per_process = batch_size // jax.process_count() if batch_size else None
    remainder = inputs_lib.DROP if drop_remainder else inputs_lib.EXACT
    return source.num_steps(per_process, remainder)
