"""Run configuration: `TPUConfig`, `RunConfig` and `InputPipelineConfig`.

These are the configuration objects of `tf.estimator.tpu`, with the same
argument names, defaults and error messages, so legacy programs construct
them unchanged:

```python
config = kte.RunConfig(
    model_dir="~/models/mnist",
    save_checkpoints_steps=1000,
    tpu_config=kte.TPUConfig(iterations_per_loop=100, num_cores_per_replica=2),
)
```

Both are immutable and validated when they are built: a bad value fails at
the line that wrote it, naming the argument and the value. `TPUConfig` is a
namedtuple (use `_replace`), `RunConfig` has read-only properties (use
`replace`). Arguments that only meant something to a TensorFlow session or
cluster (`session_config`, `device_fn`, `master`, ...) are accepted and kept,
and change nothing. This module only describes a run; it does no JAX work.
"""

import collections
import numbers
import os
import re
import warnings
from collections.abc import Mapping


class InputPipelineConfig:
    """How `input_fn` is deployed; see `TPUConfig.per_host_input_for_training`.

    Attributes:
        PER_SHARD_V1: `input_fn` runs once per replica (`False` in TF).
        PER_HOST_V1: `input_fn` runs once per host (`True` in TF).
        PER_HOST_V2: `input_fn` runs once per host, batch size per replica;
            required by `input_partition_dims`.
        BROADCAST: `input_fn` runs once, its batch goes to every replica.
        SLICED: `input_fn` runs once, each replica gets a slice (only for
            `eval_training_input_configuration`).
    """

    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


_PIPELINE_NAMES = {
    value: name
    for name, value in vars(InputPipelineConfig).items()
    if not name.startswith("_")
}
_TRAINING_PIPELINES = (
    InputPipelineConfig.PER_SHARD_V1,
    InputPipelineConfig.PER_HOST_V1,
    InputPipelineConfig.PER_HOST_V2,
    InputPipelineConfig.BROADCAST,
)
_EVAL_TRAINING_PIPELINES = (InputPipelineConfig.PER_HOST_V1, InputPipelineConfig.SLICED)
_CORES_PER_REPLICA = (1, 2, 4, 8, 16, 32, 64, 128)


# ---------------------------------------------------------------------------
# iterations_per_loop


class IterationsPerLoop(collections.namedtuple("IterationsPerLoop", ["value", "unit"])):
    """A parsed `iterations_per_loop`: a number of steps or of seconds.

    Attributes:
        value: a positive int.
        unit: `"count"` (`value` steps per loop) or `"seconds"` (loop for
            `value` seconds; minutes and hours are converted).
    """

    __slots__ = ()


_ITERATIONS_PER_LOOP_RE = re.compile(r"(?P<value>[1-9][0-9]*)(?P<unit>[smh]?)")
_SECONDS_PER_UNIT = {"s": 1, "m": 60, "h": 3600}


def parse_iterations_per_loop(value):
    """Parses an `iterations_per_loop` value.

    Args:
        value: a positive int (a number of steps), or a string `"<N>s"`,
            `"<N>m"` or `"<N>h"` with `N` a positive int (a time per loop).
            A string of digits alone counts steps, as in TensorFlow.

    Returns:
        An `IterationsPerLoop(value, unit)`, `unit` being `"count"` or
        `"seconds"`.

    Raises:
        ValueError: if `value` is none of these.

    Example:

    >>> parse_iterations_per_loop(100)
    IterationsPerLoop(value=100, unit='count')
    >>> parse_iterations_per_loop("2m")
    IterationsPerLoop(value=120, unit='seconds')
    """
    match = None
    if _is_int(value):
        match = _ITERATIONS_PER_LOOP_RE.fullmatch(str(int(value)))
    elif isinstance(value, str):
        match = _ITERATIONS_PER_LOOP_RE.fullmatch(value)
    if match is None:
        raise ValueError(
            "Invalid TPUConfig `iterations_per_loop` value. Value must be "
            "positive integer value or time-based value `<N><s|m|h>` where "
            "<N> is any positive integer and `s`, `m`, `h` are unit of time in "
            "seconds, minutes, hours respectively. Examples of valid values: "
            f"`3600s`, `60m`, `1h`. Received: iterations_per_loop={value!r}"
        )
    steps, unit = int(match["value"]), match["unit"]
    if not unit:
        return IterationsPerLoop(steps, "count")
    return IterationsPerLoop(steps * _SECONDS_PER_UNIT[unit], "seconds")


# ---------------------------------------------------------------------------
# TPUConfig


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
            num_shards = _check_int("num_shards", num_shards, minimum=1)
            warnings.warn(
                f"TPUConfig `num_shards` is deprecated and ignored (received "
                f"num_shards={num_shards}): the number of replicas is the "
                "number of devices divided by `num_cores_per_replica`.",
                DeprecationWarning,
                stacklevel=2,
            )

        if num_cores_per_replica is not None:
            if not _is_int(num_cores_per_replica) or (
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
            _check_number("initial_infeed_sleep_secs", initial_infeed_sleep_secs, 0)

        if not _is_int(eval_training_input_configuration) or (
            eval_training_input_configuration not in _EVAL_TRAINING_PIPELINES
        ):
            raise ValueError(
                "eval_training_input_configuration must be PER_HOST_V1 (2) or "
                f"SLICED (5); got {eval_training_input_configuration!r}"
            )
        eval_training_input_configuration = int(eval_training_input_configuration)

        experimental_host_call_every_n_steps = _check_int(
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
    if _is_int(value) and value in _TRAINING_PIPELINES:
        return int(value)
    allowed = ", ".join(f"{_PIPELINE_NAMES[v]} ({v})" for v in _TRAINING_PIPELINES)
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
            f"({_PIPELINE_NAMES[per_host]})"
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
        if isinstance(entry, (list, tuple)) and entry and all(map(_is_int, entry)):
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


# ---------------------------------------------------------------------------
# RunConfig


_USE_DEFAULT = object()


def _field(name, doc):
    return property(lambda self: self._values[name], doc=doc)


class RunConfig:
    """Where and how a `TPUEstimator` runs: `tf.estimator.tpu.RunConfig`.

    Immutable: every argument is a read-only property, and `replace` returns
    a new, validated config.

    Args:
        model_dir: directory for checkpoints and summaries, a string or a
            path (`~` is expanded). `None` lets the estimator choose.
        tf_random_seed: an int seeding initializers and shuffling, or `None`.
        save_summary_steps: write summaries every this many steps (int >= 0).
        save_checkpoints_steps: save a checkpoint every this many steps
            (int >= 0). Can not be given with `save_checkpoints_secs`.
        save_checkpoints_secs: save a checkpoint every this many seconds
            (>= 0). If neither this nor `save_checkpoints_steps` is given it
            defaults to 600; if both are passed as `None`, checkpoints are
            disabled, as in TensorFlow.
        session_config: kept; no effect here.
        keep_checkpoint_max: how many recent checkpoints to keep (int >= 0);
            `None` or 0 keeps all.
        keep_checkpoint_every_n_hours: also keep one checkpoint per this many
            hours (> 0).
        log_step_count_steps: log the step rate and loss every this many
            steps (int > 0), or `None`.
        train_distribute: kept; no effect here (see `TPUConfig`).
        device_fn: kept, a callable or `None`; no effect here.
        protocol: kept, `None`, `"grpc"` or `"grpc+verbs"`; no effect here.
        eval_distribute: kept; no effect here.
        experimental_distribute: kept; no effect here.
        experimental_max_worker_delay_secs: kept, an int or `None`.
        session_creation_timeout_secs: kept, a number > 0.
        checkpoint_save_graph_def: kept; no effect here.
        tpu_config: a `TPUConfig`; `None` means `TPUConfig()`.
        evaluation_master: kept; defaults to `master`.
        master: kept, a string; defaults to `""`. Not with `cluster`.
        cluster: kept (a cluster resolver); no effect here.

    Raises:
        ValueError: if both `save_checkpoints_steps` and
            `save_checkpoints_secs` are set, if `master` and `cluster` are
            both set, if `tpu_config` is not a `TPUConfig`, or if a value is
            out of its range; the message names the argument and the value.

    Example:

    ```python
    config = kte.RunConfig(
        model_dir="/tmp/model",
        save_checkpoints_steps=500,
        tpu_config=kte.TPUConfig(iterations_per_loop=100),
    )
    config.save_checkpoints_secs  # None: steps were given
    other = config.replace(model_dir="/tmp/other")
    ```
    """

    __slots__ = ("_values",)

    def __init__(
        self,
        model_dir=None,
        tf_random_seed=None,
        save_summary_steps=100,
        save_checkpoints_steps=_USE_DEFAULT,
        save_checkpoints_secs=_USE_DEFAULT,
        session_config=None,
        keep_checkpoint_max=5,
        keep_checkpoint_every_n_hours=10000,
        log_step_count_steps=100,
        train_distribute=None,
        device_fn=None,
        protocol=None,
        eval_distribute=None,
        experimental_distribute=None,
        experimental_max_worker_delay_secs=None,
        session_creation_timeout_secs=7200,
        checkpoint_save_graph_def=True,
        tpu_config=None,
        evaluation_master=None,
        master=None,
        cluster=None,
    ):
        steps_default = save_checkpoints_steps is _USE_DEFAULT
        secs_default = save_checkpoints_secs is _USE_DEFAULT
        if steps_default and secs_default:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif steps_default:
            save_checkpoints_steps = None
        elif secs_default:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError(
                "`save_checkpoints_steps` and `save_checkpoints_secs` cannot be "
                "both set. Received: save_checkpoints_steps="
                f"{save_checkpoints_steps!r}, save_checkpoints_secs="
                f"{save_checkpoints_secs!r}"
            )

        if model_dir is not None:
            if isinstance(model_dir, os.PathLike):
                model_dir = os.fspath(model_dir)
            if not isinstance(model_dir, str) or not model_dir:
                raise ValueError(
                    "`model_dir` should be a non-empty string or path. "
                    f"Received: model_dir={model_dir!r}"
                )
            model_dir = os.path.expanduser(model_dir)

        if tpu_config is None:
            tpu_config = TPUConfig()
        elif not isinstance(tpu_config, TPUConfig):
            raise ValueError(
                "`tpu_config` must be a TPUConfig. "
                f"Received: tpu_config={tpu_config!r} of type {type(tpu_config)}"
            )
        if master is not None and cluster is not None:
            raise ValueError(
                "Both master and cluster are set. Received: "
                f"master={master!r}, cluster={cluster!r}"
            )
        if device_fn is not None and not callable(device_fn):
            raise ValueError(
                f"`device_fn` must be callable or None. Received: device_fn={device_fn!r}"
            )
        if protocol not in (None, "grpc", "grpc+verbs"):
            raise ValueError(
                "`protocol` should be None, 'grpc' or 'grpc+verbs'. "
                f"Received: protocol={protocol!r}"
            )

        values = dict(
            model_dir=model_dir,
            tf_random_seed=_check_int("tf_random_seed", tf_random_seed, None, True),
            save_summary_steps=_check_int("save_summary_steps", save_summary_steps, 0, True),
            save_checkpoints_steps=_check_int(
                "save_checkpoints_steps", save_checkpoints_steps, 0, True
            ),
            save_checkpoints_secs=_check_number(
                "save_checkpoints_secs", save_checkpoints_secs, 0, True
            ),
            session_config=session_config,
            keep_checkpoint_max=_check_int("keep_checkpoint_max", keep_checkpoint_max, 0, True),
            keep_checkpoint_every_n_hours=_check_number(
                "keep_checkpoint_every_n_hours", keep_checkpoint_every_n_hours, 0, True,
                strict=True,
            ),
            log_step_count_steps=_check_int("log_step_count_steps", log_step_count_steps, 1, True),
            train_distribute=train_distribute,
            device_fn=device_fn,
            protocol=protocol,
            eval_distribute=eval_distribute,
            experimental_distribute=experimental_distribute,
            experimental_max_worker_delay_secs=_check_int(
                "experimental_max_worker_delay_secs",
                experimental_max_worker_delay_secs, None, True,
            ),
            session_creation_timeout_secs=_check_number(
                "session_creation_timeout_secs", session_creation_timeout_secs, 0, True,
                strict=True,
            ),
            checkpoint_save_graph_def=checkpoint_save_graph_def,
            tpu_config=tpu_config,
            evaluation_master=evaluation_master,
            master=master,
            cluster=cluster,
        )
        object.__setattr__(self, "_values", values)

    model_dir = _field("model_dir", "Directory for checkpoints and summaries, or None.")
    tf_random_seed = _field("tf_random_seed", "The random seed, an int or None.")
    save_summary_steps = _field("save_summary_steps", "Steps between summaries.")
    save_checkpoints_steps = _field(
        "save_checkpoints_steps", "Steps between checkpoints, or None."
    )
    save_checkpoints_secs = _field(
        "save_checkpoints_secs", "Seconds between checkpoints, or None."
    )
    session_config = _field("session_config", "Kept from the arguments; unused.")
    keep_checkpoint_max = _field(
        "keep_checkpoint_max", "How many recent checkpoints to keep (None or 0: all)."
    )
    keep_checkpoint_every_n_hours = _field(
        "keep_checkpoint_every_n_hours", "Also keep one checkpoint per this many hours."
    )
    log_step_count_steps = _field(
        "log_step_count_steps", "Steps between step-rate and loss logs, or None."
    )
    train_distribute = _field("train_distribute", "Kept from the arguments; unused.")
    device_fn = _field("device_fn", "Kept from the arguments; unused.")
    protocol = _field("protocol", "Kept from the arguments; unused.")
    eval_distribute = _field("eval_distribute", "Kept from the arguments; unused.")
    experimental_distribute = _field(
        "experimental_distribute", "Kept from the arguments; unused."
    )
    experimental_max_worker_delay_secs = _field(
        "experimental_max_worker_delay_secs", "Kept from the arguments; unused."
    )
    session_creation_timeout_secs = _field(
        "session_creation_timeout_secs", "Kept from the arguments; unused."
    )
    checkpoint_save_graph_def = _field(
        "checkpoint_save_graph_def", "Kept from the arguments; unused."
    )
    tpu_config = _field("tpu_config", "The `TPUConfig`.")
    cluster = _field("cluster", "Kept from the arguments; unused.")

    @property
    def master(self):
        """Kept from the arguments (unused); `""` when not given, as in TF."""
        master = self._values["master"]
        return "" if master is None else master

    @property
    def evaluation_master(self):
        """Kept from the arguments (unused); defaults to `master`."""
        evaluation_master = self._values["evaluation_master"]
        return self.master if evaluation_master is None else evaluation_master

    def replace(self, **kwargs):
        """Returns a new `RunConfig` with some arguments replaced.

        Any constructor argument can be replaced. As in TensorFlow, setting
        one of `save_checkpoints_steps` and `save_checkpoints_secs` to a value
        clears the other.

        Args:
            **kwargs: constructor arguments and their new values.

        Returns:
            A new, validated `RunConfig`.

        Raises:
            ValueError: if a name is not a `RunConfig` argument, or a new value
                is invalid.

        Example:

        ```python
        config = kte.RunConfig(save_checkpoints_secs=60)
        config = config.replace(save_checkpoints_steps=100)
        config.save_checkpoints_secs  # None
        ```
        """
        unknown = sorted(set(kwargs) - set(self._values))
        if unknown:
            raise ValueError(
                f"Replacing {unknown} is not supported. Allowed properties are "
                f"{list(self._values)}."
            )
        values = {**self._values, **kwargs}
        pair = ("save_checkpoints_steps", "save_checkpoints_secs")
        for given, other in (pair, pair[::-1]):
            if kwargs.get(given) is not None and other not in kwargs:
                values[other] = None
        return type(self)(**values)

    def __setattr__(self, name, value):
        raise AttributeError(
            f"RunConfig is immutable: can not set `{name}`. "
            "Use `config.replace(...)` for a modified copy."
        )

    def __reduce__(self):
        return (_rebuild_run_config, (type(self), self._values))

    def __repr__(self):
        args = ", ".join(f"{name}={value!r}" for name, value in self._values.items())
        return f"{type(self).__name__}({args})"


def _rebuild_run_config(cls, values):
    return cls(**values)


# ---------------------------------------------------------------------------
# Validation helpers


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_int(name, value, minimum, allow_none=False):
    """Returns `value` as an int, if it is one and is >= `minimum`."""
    if value is None and allow_none:
        return None
    if _is_int(value) and (minimum is None or value >= minimum):
        return int(value)
    what = "an int" if minimum is None else f"an int >= {minimum}"
    if allow_none:
        what += " or None"
    raise ValueError(f"`{name}` must be {what}. Received: {name}={value!r}")


def _check_number(name, value, minimum, allow_none=False, strict=False):
    """Returns `value` if it is a real number >= (or > if `strict`) `minimum`."""
    if value is None and allow_none:
        return None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if value > minimum or (value == minimum and not strict):
            return value
    what = f"a number {'>' if strict else '>='} {minimum}"
    if allow_none:
        what += " or None"
    raise ValueError(f"`{name}` must be {what}. Received: {name}={value!r}")
