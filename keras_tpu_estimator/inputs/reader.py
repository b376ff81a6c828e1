"""What `fit`/`evaluate`/`predict` are given, read as a source of batches.

`InputReader` is where the user's input enters the library: an `input_fn`
is called as `per_host_input_for_training` deploys it (`deployment`), with
`params['batch_size']` and `params['context']`; what it returns is read
(`input_fn`) and checked (`checks`); a dataset or arrays given directly are
read the same way. The result is a source (`sources`, or `grouped` for
several calls or batches per step), which the engine's feed stacks and
places; nothing here knows of devices beyond the number of replicas.
"""

import jax

from keras_tpu_estimator import distribute
from keras_tpu_estimator.inputs import deployment
from keras_tpu_estimator.inputs import grouped
from keras_tpu_estimator.inputs import sources
from keras_tpu_estimator.spec import ModeKeys

BATCH_SIZE_NAMES = {
    ModeKeys.TRAIN: "train_batch_size",
    ModeKeys.EVAL: "eval_batch_size",
    ModeKeys.PREDICT: "predict_batch_size",
}


class InputReader:
    """Reads one model's input: an `input_fn`, a dataset or arrays.

    Args:
        distribution: the model's `keras.distribution` layout (its replicas
            divide the batch; set again when the model's is).
        config: the `RunConfig`.
        params: the user's params (an `input_fn` receives them, with
            `batch_size` and `context`).
        use_tpu: whether the model runs on the accelerators.
        batch_sizes: `{mode: global batch size or None}`, the defaults.

    Raises:
        ValueError: for a batch size that does not divide over the replicas.

    Example:

    ```python
    reader = InputReader(distribution, config, {}, True, {ModeKeys.TRAIN: 64})
    source, batch_size = reader.source(train_input_fn, None, ModeKeys.TRAIN)
    ```
    """

    def __init__(self, distribution, config, params, use_tpu, batch_sizes):
        self.distribution = distribution
        for mode, batch_size in batch_sizes.items():
            distribute.check_batch_size(BATCH_SIZE_NAMES[mode], batch_size, self.num_replicas)
        self._batch_sizes = dict(batch_sizes)
        self._config = config
        self._params = params
        self._use_tpu = use_tpu

    @property
    def num_replicas(self):
        """The model replicas in sync, which a global batch divides over."""
        return distribute.num_replicas(self.distribution)

    def source(self, x, y, mode, batch_size=None):
        """The input as a source of this process's rows of each batch.

        Args:
            x: an `input_fn`, a dataset, or arrays.
            y: labels, when `x` holds features as arrays.
            mode: a `ModeKeys` value.
            batch_size: the global batch size; defaults to the mode's.

        Returns:
            `(source, batch_size)`, the batch size checked.

        Raises:
            ValueError: for arrays without a batch size, a batch size that
                does not divide over the replicas, and what the checks of an
                `input_fn`'s result raise.
        """
        batch_size = batch_size or self._batch_sizes[mode]
        source = self._source(x, y, mode, batch_size)
        return source, self.check_batch_size(mode, batch_size, source)

    def _source(self, x, y, mode, batch_size):
        if not callable(x) or sources.is_dataset(x):
            return sources.as_source(x, y, mode=mode, config=self._config)
        plan = deployment.plan_input(
            self._config.tpu_config,
            mode,
            batch_size,
            self.num_replicas,
            distribute.cores_per_replica(self.distribution),
            use_tpu=self._use_tpu,
        )
        calls = [
            sources.as_source(x, y, params=self._input_fn_params(c), mode=mode,
                              config=self._config)
            for c in plan.contexts
        ]
        if len(calls) == 1 and plan.group == 1:
            return calls[0]
        return grouped.GroupedSource(calls, plan.group, plan.contexts[0].batch_size)

    def _input_fn_params(self, context):
        params = dict(self._params, context=context)
        if context.batch_size is not None:
            params["batch_size"] = context.batch_size
        return params

    def check_batch_size(self, mode, batch_size, source):
        """Validates the global batch size for `source`; returns it."""
        name = BATCH_SIZE_NAMES[mode]
        if batch_size is None and isinstance(source, sources.ArraySource):
            raise ValueError(
                f"A batch size is required to batch arrays: give `{name}` to "
                "EstimatorModel or `batch_size` to this call."
            )
        distribute.check_batch_size(name, batch_size, self.num_replicas)
        return batch_size

    def check_training_source(self, source, max_steps):
        """Refuses an endless training input without a step count."""
        endless = isinstance(source, sources.BatchSource) and source.is_infinite()
        if endless and max_steps is None:
            raise ValueError(
                "The training input is endless (repeated): give `steps_per_epoch`."
            )


def steps_of(source, batch_size, drop_remainder=False):
    """Steps in one pass over `source`, when they are known.

    What Keras's progress bar and `params['steps']` show as the epoch's
    target: the batches that will run, from arrays' length or a dataset's
    cardinality (`sources.BatchSource.num_steps`).

    Args:
        source: a source of `InputReader.source`.
        batch_size: the global batch size, or None (a dataset's own).
        drop_remainder: whether short batches are skipped (training).

    Returns:
        The number of steps, or None when unknown.
    """
    per_process = batch_size // jax.process_count() if batch_size else None
    remainder = sources.DROP if drop_remainder else sources.EXACT
    return source.num_steps(per_process, remainder)
