"""`TPUConfig`: how the steps of a `TPUEstimator` run on the devices."""

import collections
import warnings
from collections.abc import Mapping

from keras_tpu_estimator.config.checks import check_int
from keras_tpu_estimator.config.checks import check_number
from keras_tpu_estimator.config.checks import is_int
from keras_tpu_estimator.config.input_pipeline import PIPELINE_NAMES
from keras_tpu_estimator.config.input_pipeline import InputPipelineConfig
from keras_tpu_estimator.config.iterations import parse_iterations_per_loop

_TRAINING_PIPELINES = (
    InputPipelineConfig.PER_SHARD_V1,
    InputPipelineConfig.PER_HOST_V1,
    InputPipelineConfig.PER_HOST_V2,
    InputPipelineConfig.BROADCAST,
)
_EVAL_TRAINING_PIPELINES = (InputPipelineConfig.PER_HOST_V1, InputPipelineConfig.SLICED)
_CORES_PER_REPLICA = (1, 2, 4, 8, 16, 32, 64, 128)


class _FrozenDict(Mapping):
    """A read-only, hashable dict (per-feature `input_partition_dims`)."""

    __slots__ = ("_items",)

    def __init__(self, items):
        self._items = dict(items)

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __hash__(self):
        return hash(frozenset(self._items.items()))

    def __repr__(self):
        return repr(self._items)


_TPU_CONFIG_FIELDS = [
    "iterations_per_loop",
    "num_shards",
    "num_cores_per_replica",
    "per_host_input_for_training",
    "tpu_job_name",
    "initial_infeed_sleep_secs",
    "input_partition_dims",
    "eval_training_input_configuration",
    "experimental_host_call_every_n_steps",
]


class TPUConfig(collections.namedtuple("TPUConfig", _TPU_CONFIG_FIELDS)):
    """How the steps of a `TPUEstimator` run on the devices.

    A namedtuple, as in TensorFlow: fields are read-only, `_replace` returns
    a validated copy, and equal configs compare and hash equal.

    Args:
        iterations_per_loop: how many training steps run as one compiled
            on-device loop before control returns to the host (checkpoints,
            hooks and logs happen between loops). A positive int, or a time
            `"<N>s"`, `"<N>m"`, `"<N>h"`. See `iterations_per_loop_parsed`.
        num_shards: deprecated and ignored, as in TensorFlow: the number of
            replicas is the number of devices divided by
            `num_cores_per_replica`. A positive int if given; warns.
        num_cores_per_replica: devices per model replica, one of 1, 2, 4, 8,
            16, 32, 64, 128; `None` (the default) disables model parallelism.
        per_host_input_for_training: how `input_fn` is deployed: `True`
            (`PER_HOST_V1`, the default), `False` (`PER_SHARD_V1`), or an
            `InputPipelineConfig` constant among `PER_SHARD_V1`,
            `PER_HOST_V1`, `PER_HOST_V2`, `BROADCAST`. Stored normalized to
            the constant, as in TensorFlow (see `input_deployment`).
        tpu_job_name: the name of the TPU job, a string or `None`; kept, has
            no effect here.
        initial_infeed_sleep_secs: seconds to wait before the first batch, a
            non-negative number or `None`.
        input_partition_dims: how to split input tensors over the
            `num_cores_per_replica` cores of a replica: a list of one or two
            entries, for the features and the labels. Each entry is `None`
            (replicated), a list of positive ints (one per tensor dimension,
            their product 1 or `num_cores_per_replica`), or a dict of such
            entries for dict features. Requires `PER_HOST_V2` and
            `num_cores_per_replica`. Stored as tuples (and read-only
            mappings), so the config stays hashable.
        eval_training_input_configuration: `InputPipelineConfig.PER_HOST_V1`
            (the default) or `InputPipelineConfig.SLICED`.
        experimental_host_call_every_n_steps: run the host call every this
            many training steps, a positive int.

    Raises:
        ValueError: if an argument is out of its range; the message names
            the argument and the value.

    Example:

    ```python
    tpu_config = kte.TPUConfig(
        iterations_per_loop=100,
        num_cores_per_replica=4,
        per_host_input_for_training=kte.InputPipelineConfig.PER_HOST_V2,
        input_partition_dims=[[1, 2, 2, 1], None],  # images over 4 cores
    )
    tpu_config.iterations_per_loop_parsed  # IterationsPerLoop(100, 'count')
    longer = tpu_config._replace(iterations_per_loop="10m")
    ```
    """

    __slots__ = ()

    def __new__(
        cls,
        iterations_per_loop=2,
        num_shards=None,
        num_cores_per_replica=None,
        per_host_input_for_training=True,
        tpu_job_name=None,
        initial_infeed_sleep_secs=None,
        input_partition_dims=None,
        eval_training_input_configuration=InputPipelineConfig.PER_HOST_V1,
        experimental_host_call_every_n_steps=1,
    ):
        if parse_iterations_per_loop(iterations_per_loop).unit == "count":
            iterations_per_loop = int(iterations_per_loop)

        if num_shards is not None:
            num_shards = check_int("num_shards", num_shards, minimum=1)
            warnings.warn(
                f"TPUConfig `num_shards` is deprecated and ignored (received "
                f"num_shards={num_shards}): the number of replicas is the "
                "number of devices divided by `num_cores_per_replica`.",
                DeprecationWarning,
                stacklevel=2,
            )

        if num_cores_per_replica is not None:
            if not is_int(num_cores_per_replica) or (
                num_cores_per_replica not in _CORES_PER_REPLICA
            ):
                raise ValueError(
                    "num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; "
                    f"got {num_cores_per_replica!r}"
                )
            num_cores_per_replica = int(num_cores_per_replica)

        per_host_input_for_training = _normalize_per_host(per_host_input_for_training)

        if tpu_job_name is not None and not isinstance(tpu_job_name, str):
            raise ValueError(
                "`tpu_job_name` must be a string or None. "
                f"Received: tpu_job_name={tpu_job_name!r}"
            )

        if initial_infeed_sleep_secs is not None:
            check_number("initial_infeed_sleep_secs", initial_infeed_sleep_secs, 0)

        if not is_int(eval_training_input_configuration) or (
            eval_training_input_configuration not in _EVAL_TRAINING_PIPELINES
        ):
            raise ValueError(
                "eval_training_input_configuration must be PER_HOST_V1 (2) or "
                f"SLICED (5); got {eval_training_input_configuration!r}"
            )
        eval_training_input_configuration = int(eval_training_input_configuration)

        experimental_host_call_every_n_steps = check_int(
            "experimental_host_call_every_n_steps",
            experimental_host_call_every_n_steps,
            minimum=1,
        )

        if input_partition_dims is not None:
            input_partition_dims = _check_input_partition_dims(
                input_partition_dims,
                per_host_input_for_training,
                num_cores_per_replica,
            )

        return super().__new__(
            cls,
            iterations_per_loop=iterations_per_loop,
            num_shards=num_shards,
            num_cores_per_replica=num_cores_per_replica,
            per_host_input_for_training=per_host_input_for_training,
            tpu_job_name=tpu_job_name,
            initial_infeed_sleep_secs=initial_infeed_sleep_secs,
            input_partition_dims=input_partition_dims,
            eval_training_input_configuration=eval_training_input_configuration,
            experimental_host_call_every_n_steps=experimental_host_call_every_n_steps,
        )

    def _replace(self, **kwargs):
        """Returns a new, validated `TPUConfig` with `kwargs` replaced."""
        unknown = sorted(set(kwargs) - set(self._fields))
        if unknown:
            raise ValueError(
                f"Got unexpected field names: {unknown}. "
                f"TPUConfig fields are {list(self._fields)}."
            )
        return type(self)(**{**self._asdict(), **kwargs})

    @classmethod
    def _make(cls, iterable):
        """Returns a new, validated `TPUConfig` from a sequence of fields."""
        return cls(*iterable)

    @property
    def iterations_per_loop_parsed(self):
        """`iterations_per_loop` as an `IterationsPerLoop(value, unit)`."""
        return parse_iterations_per_loop(self.iterations_per_loop)

    @property
    def input_deployment(self):
        """How `input_fn` is deployed, an `InputPipelineConfig` constant.

        `per_host_input_for_training` with `True`/`False` resolved to
        `PER_HOST_V1`/`PER_SHARD_V1` (the field itself is stored that way).
        """
        return self.per_host_input_for_training


def _normalize_per_host(value):
    """Maps `per_host_input_for_training` to an `InputPipelineConfig` value."""
    if value is True:
        return InputPipelineConfig.PER_HOST_V1
    if value is False:
        return InputPipelineConfig.PER_SHARD_V1
    if is_int(value) and value in _TRAINING_PIPELINES:
        return int(value)
    allowed = ", ".join(f"{PIPELINE_NAMES[v]} ({v})" for v in _TRAINING_PIPELINES)
    raise ValueError(
        f"per_host_input_for_training must be True, False, {allowed}; "
        f"got {value!r}"
    )


def _check_input_partition_dims(dims, per_host, num_cores_per_replica):
    """Validates `input_partition_dims`; returns it as nested tuples."""
    if not isinstance(dims, (list, tuple)) or len(dims) not in (1, 2):
        raise ValueError(
            "input_partition_dims must be a list/tuple with one or two "
            "elements (features partition dims, labels partition dims). "
            f"Received: input_partition_dims={dims!r}"
        )
    if per_host != InputPipelineConfig.PER_HOST_V2:
        raise ValueError(
            "input_partition_dims requires per_host_input_for_training="
            f"PER_HOST_V2 ({InputPipelineConfig.PER_HOST_V2}); got "
            f"per_host_input_for_training={per_host!r} "
            f"({PIPELINE_NAMES[per_host]})"
        )
    if num_cores_per_replica is None:
        raise ValueError(
            "input_partition_dims requires setting num_cores_per_replica; "
            "got num_cores_per_replica=None"
        )

    def freeze(entry, where):
        if entry is None:
            return None
        if isinstance(entry, Mapping):
            return _FrozenDict(
                (key, freeze(value, f"{where}[{key!r}]"))
                for key, value in entry.items()
            )
        if isinstance(entry, (list, tuple)) and entry and all(map(is_int, entry)):
            if any(d < 1 for d in entry):
                raise ValueError(
                    f"All input partition dims must be >= 1. Received: {where}"
                    f"={list(entry)!r}"
                )
            product = 1
            for d in entry:
                product *= int(d)
            if product not in (1, num_cores_per_replica):
                raise ValueError(
                    "The product of each input partition dim should equal to "
                    f"num_cores_per_replica (or be 1 to replicate). Received: "
                    f"{where}={list(entry)!r}, whose product is {product}, "
                    f"with num_cores_per_replica={num_cores_per_replica}"
                )
            return tuple(int(d) for d in entry)
        raise ValueError(
            "Each input partition dims entry must be None, a list of positive "
            f"ints or a dict of such entries. Received: {where}={entry!r}"
        )

    names = ("input_partition_dims[0]", "input_partition_dims[1]")
    return tuple(freeze(entry, name) for entry, name in zip(dims, names))
