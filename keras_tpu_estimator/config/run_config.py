"""`RunConfig`: where and how a `TPUEstimator` runs (`tf.estimator.tpu.RunConfig`)."""

import os

from keras_tpu_estimator.config.checks import check_int
from keras_tpu_estimator.config.checks import check_number
from keras_tpu_estimator.config.tpu_config import TPUConfig


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
            if "://" not in model_dir and os.path.exists(model_dir) and not os.path.isdir(
                model_dir
            ):
                raise ValueError(
                    "`model_dir` must be a directory (existing or not), but it is "
                    f"an existing file. Received: model_dir={model_dir!r}"
                )

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
            tf_random_seed=check_int("tf_random_seed", tf_random_seed, None, True),
            save_summary_steps=check_int("save_summary_steps", save_summary_steps, 0, True),
            save_checkpoints_steps=check_int(
                "save_checkpoints_steps", save_checkpoints_steps, 0, True
            ),
            save_checkpoints_secs=check_number(
                "save_checkpoints_secs", save_checkpoints_secs, 0, True
            ),
            session_config=session_config,
            keep_checkpoint_max=check_int("keep_checkpoint_max", keep_checkpoint_max, 0, True),
            keep_checkpoint_every_n_hours=check_number(
                "keep_checkpoint_every_n_hours", keep_checkpoint_every_n_hours, 0, True,
                strict=True,
            ),
            log_step_count_steps=check_int("log_step_count_steps", log_step_count_steps, 1, True),
            train_distribute=train_distribute,
            device_fn=device_fn,
            protocol=protocol,
            eval_distribute=eval_distribute,
            experimental_distribute=experimental_distribute,
            experimental_max_worker_delay_secs=check_int(
                "experimental_max_worker_delay_secs",
                experimental_max_worker_delay_secs, None, True,
            ),
            session_creation_timeout_secs=check_number(
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

    def get_config(self):
        """The constructor arguments, as a dict: `RunConfig(**c.get_config())`
        is a copy of `c` (`tpu_config` stays a `TPUConfig`)."""
        return dict(self._values)

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
