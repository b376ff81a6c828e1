"""The hooks TensorFlow users reach for most, and the checkpoint-saver listener.

`StopAtStepHook`, `LoggingTensorHook`, `NanTensorHook` (raising
`NanLossDuringTrainingError`) are `SessionRunHook`s; `CheckpointSaverListener`
is the base of `TPUEstimator.train(saving_listeners=...)`, and a
`CheckpointSaverHook` among the training hooks makes `TPUEstimator.train`
save on its schedule too.
"""

import numbers

import numpy as np

from keras_tpu_estimator.hooks._common import Timer as _Timer
from keras_tpu_estimator.hooks._common import check_count as _check_count
from keras_tpu_estimator.hooks._common import describe as _describe
from keras_tpu_estimator.hooks._common import log as _log
from keras_tpu_estimator.hooks.session import SessionRunArgs
from keras_tpu_estimator.hooks.session import SessionRunHook


class StopAtStepHook(SessionRunHook):
    """Stops training at a global step: `tf.compat.v1.train.StopAtStepHook`.

    After every run, requests a stop when the global step has reached
    `last_step`. A loop always finishes, so with loops of
    `iterations_per_loop` steps training stops at the end of the loop that
    reaches `last_step`, unless the loops are cut to end there:
    `TPUEstimator` reads `target_step(global_step)` before training and
    does so.

    Args:
        num_steps: steps to train, counted from the global step when
            training starts (`after_create_session`).
        last_step: the global step to stop at.

    Raises:
        ValueError: unless exactly one of the two is given, as an int >= 0.

    Example:

    ```python
    model.fit(x, callbacks=kte.hooks.as_callbacks(
        [kte.StopAtStepHook(last_step=1000)], kte.ModeKeys.TRAIN))
    ```
    """

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        _check_count("num_steps", num_steps, 0)
        _check_count("last_step", last_step, 0)
        self._num_steps = None if num_steps is None else int(num_steps)
        self._given_last_step = None if last_step is None else int(last_step)
        self._last_step = self._given_last_step

    @property
    def num_steps(self):
        """The `num_steps` given, or None."""
        return self._num_steps

    @property
    def last_step(self):
        """The step training stops at; None before `num_steps` is counted from a start."""
        return self._last_step

    def target_step(self, global_step):
        """The step this hook stops at when training starts at `global_step`."""
        if self._num_steps is None:
            return self._given_last_step
        return int(global_step) + self._num_steps

    def after_create_session(self, session, coord):
        if self._num_steps is not None:
            self._last_step = self.target_step(session.run("global_step"))

    def before_run(self, run_context):
        return SessionRunArgs("global_step")

    def after_run(self, run_context, run_values):
        # The global step the run's last step read, before its increment (TF's "stale" step).
        if run_values.results + 1 >= self._last_step:
            run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs fetched values: `tf.compat.v1.train.LoggingTensorHook`.

    Logs `"tag = value, tag = value (1.234 sec)"` at INFO level to the
    `keras_tpu_estimator` logger, after the first run and then every
    `every_n_iter` runs or `every_n_secs` seconds; with `at_end`, also the
    last values when the loop ends.

    An iteration is a `session.run`, as TensorFlow counted them: a step with
    `use_tpu=False` (the hook logs the values of iterations 0, n, 2n, ...:
    with `{"step": global_step}` among them, the steps 0, n, 2n of a fresh
    start), a whole on-device loop on a TPU. The values are those of the
    run's (last) step, the global step included: the step it read, before
    its own increment, as TensorFlow logged it.

    Args:
        tensors: what to log, as a list (tags are the names) or a dict
            `tag -> fetch`. A fetch is what `SessionRunArgs` takes: a tensor
            of `model_fn` (the hook built in `model_fn`, returned in the
            spec's hooks: its value at the run's step), the global
            step, a variable, or a name (`"loss"`, `"losses"`,
            `"global_step"`).
        every_n_iter: log every this many steps.
        every_n_secs: log every this many seconds.
        at_end: log the last values at the end.
        formatter: `formatter(dict tag -> value) -> str` replaces the format.

    Raises:
        ValueError: unless exactly one of `every_n_iter` and `every_n_secs`
            is given (or neither, with `at_end=True`); for `every_n_iter` <= 0,
            or `tensors` not a list or dict. At the first loop, for what
            cannot be fetched in the loop's mode (a tensor not held by a
            hook of the spec, an unknown name).

    Example:

    ```python
    # In model_fn, as TF1 programs write it:
    hook = kte.LoggingTensorHook({"loss": loss, "accuracy": accuracy}, every_n_iter=100)
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[hook])
    ```
    """

    may_request_stop = False

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError(
                "either at_end and/or exactly one of every_n_iter and every_n_secs "
                f"must be provided. Received: every_n_iter={every_n_iter!r}, "
                f"every_n_secs={every_n_secs!r}, at_end={at_end!r}"
            )
        if every_n_iter is not None and (
            isinstance(every_n_iter, bool) or not isinstance(every_n_iter, numbers.Integral)
            or every_n_iter <= 0
        ):
            raise ValueError(f"invalid every_n_iter={every_n_iter!r}.")
        if every_n_secs is not None and (
            isinstance(every_n_secs, bool) or not isinstance(every_n_secs, numbers.Real)
            or every_n_secs <= 0
        ):
            raise ValueError(f"invalid every_n_secs={every_n_secs!r}.")
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors)
            self._tensors = dict(tensors)
        elif isinstance(tensors, (list, tuple)):
            self._tensors = {_tag(fetch): fetch for fetch in tensors}
            self._tag_order = list(self._tensors)
        else:
            raise ValueError(
                "`tensors` must be a list of tensors or names, or a dict of tag to "
                f"tensor or name. Received: tensors={_describe(tensors)}"
            )
        if formatter is not None and not callable(formatter):
            raise ValueError(f"`formatter` must be callable. Received: formatter={formatter!r}")
        self._timer = _Timer(every_n_iter, every_n_secs)
        self._log_periodically = not only_log_at_end
        self._log_at_end = at_end
        self._formatter = formatter
        self._last_values = None
        self._iterations = 0
        self._should_log = False

    def begin(self):
        self._timer.reset()
        self._last_values = None
        self._iterations = 0

    def before_run(self, run_context):
        self._should_log = self._log_periodically and self._timer.should_trigger(self._iterations)
        return SessionRunArgs(self._tensors)

    def after_run(self, run_context, run_values):
        values = run_values.results
        self._last_values = values
        if self._should_log:
            self._log(values, self._iterations)
        self._iterations += 1

    def end(self, session):
        if self._log_at_end and self._last_values is not None:
            self._log(self._last_values, None)

    def _log(self, values, step):
        elapsed = self._timer.update(step)[0] if step is not None else None
        if self._formatter is not None:
            _log.info("%s", self._formatter(values))
            return
        with np.printoptions(suppress=True):
            text = ", ".join(f"{tag} = {values[tag]!s}" for tag in self._tag_order)
        if elapsed is not None:
            _log.info("%s (%.3f sec)", text, elapsed)
        else:
            _log.info("%s", text)


def _tag(fetch):
    """TensorFlow's tag of a fetch given in a list: its name."""
    return fetch if isinstance(fetch, str) else str(getattr(fetch, "name", None) or fetch)


class NanLossDuringTrainingError(RuntimeError):
    """Raised by `NanTensorHook` when a training loss is NaN or infinite.

    Attributes:
        global_step: the global step of the first bad step (the step's
            number counted from 0, as `kte.get_global_step()` gives it
            inside `model_fn`), or None.
        loss: its loss, or None.
    """

    def __init__(self, global_step=None, loss=None):
        self.global_step = global_step
        self.loss = loss
        message = "NaN loss during training."
        if global_step is not None:
            message += f" The loss of global step {global_step} is {loss}."
        super().__init__(message)


class NanTensorHook(SessionRunHook):
    """Stops training on a NaN or infinite loss: `tf.compat.v1.train.NanTensorHook`.

    After every loop it checks the loss of every step of the loop (not only
    the last, as TensorFlow did once per `session.run`). On a bad one it
    raises `NanLossDuringTrainingError` naming the first bad step, or, with
    `fail_on_nan_loss=False`, logs a warning and requests a stop.

    It must come *before* any checkpoint saver in the callback list: Keras
    calls callbacks in order, so the error is raised before the saver's
    `on_train_batch_end` can write the NaN weights, and the exception skips
    `on_train_end` (no final save): the last good checkpoint stays the
    latest. `TPUEstimator.train` puts it first. With `fail_on_nan_loss=False`
    training stops normally and `on_train_end` savers save the last loop's
    weights, as in TensorFlow, unless they are not finite: then the saver
    raises `kte.checkpoint.NonFiniteWeightsError` instead (a NaN checkpoint
    is never written).

    Args:
        loss_tensor: ignored; the hook always checks the spec's `loss`.
            Accepted so that `NanTensorHook(loss)` in a `model_fn` works.
        fail_on_nan_loss: raise (default), or log and stop.
    """

    def __init__(self, loss_tensor=None, fail_on_nan_loss=True):
        del loss_tensor  # The runtime's loss is the only loss.
        self._fail_on_nan_loss = bool(fail_on_nan_loss)

    @property
    def may_request_stop(self):
        """Only with `fail_on_nan_loss=False` (else it raises)."""
        return not self._fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs({"losses": "losses", "global_step": "global_step"})

    def after_run(self, run_context, run_values):
        losses = np.asarray(run_values.results["losses"])
        bad = np.flatnonzero(~np.isfinite(losses))
        if not bad.size:
            return
        first = int(bad[0])
        # "global_step" is the step the run's last step read: its first step read it - size + 1.
        step = run_values.results["global_step"] + 1 - losses.size + first
        if self._fail_on_nan_loss:
            error = NanLossDuringTrainingError(step, losses[first].item())
            _log.error("%s", error)
            raise error
        _log.warning(
            "Model diverged with loss = %s at global step %d. Stopping training.",
            losses[first], step,
        )
        run_context.request_stop()


class CheckpointSaverListener:
    """Called around checkpoint saves: `tf.compat.v1.train.CheckpointSaverListener`.

    Pass instances to `TPUEstimator.train(saving_listeners=...)`. Every
    method is a no-op; override the ones you need. `session` is always
    None.

    - `begin()`: once, when training starts;
    - `before_save(session, global_step_value)`: before each save;
    - `after_save(session, global_step_value)`: after each save; returning
      True stops training;
    - `end(session, global_step_value)`: once, after the last save.
    """

    def begin(self):
        """Called once when training starts."""

    def before_save(self, session, global_step_value):  # noqa: ARG002
        """Called before each checkpoint save."""

    def after_save(self, session, global_step_value):  # noqa: ARG002
        """Called after each save; return True to stop training."""
        return None

    def end(self, session, global_step_value):  # noqa: ARG002
        """Called once at the end of training."""




class CheckpointSaverHook(SessionRunHook):
    """Saves checkpoints every N steps or seconds: `tf.compat.v1.train.CheckpointSaverHook`.

    Also what `tf.contrib.tpu`'s `AsyncCheckpointSaverHook` becomes (ResNet,
    RetinaNet with `--use_async_checkpointing`, which set the RunConfig's
    schedule to None and save through the hook alone). Given in
    `TPUEstimator.train(hooks=...)` or a spec's `training_hooks`, it makes
    the estimator write `model_dir` checkpoints on this schedule as well as
    on `RunConfig`'s, and at the end of training, calling `listeners`
    around each save. It holds the schedule only: the estimator's own
    checkpoint writer does the writing (whole checkpoints, never half
    written, in TensorFlow's format).

    Args:
        checkpoint_dir: where to save: the estimator's `model_dir`.
        save_secs: save every this many seconds (checked after each loop).
        save_steps: save every this many global steps.
        saver: must be None (the estimator saves every variable).
        checkpoint_basename: must be `"model.ckpt"`.
        scaffold: accepted for TF1 compatibility; its saver is the
            estimator's.
        listeners: `CheckpointSaverListener`s called around each save.
        save_graph_def: ignored (there is no graph).

    Raises:
        ValueError: unless exactly one of `save_secs` and `save_steps` is
            given as a positive int, or for a `saver` or another
            `checkpoint_basename`.

    Example:

    ```python
    estimator.train(input_fn, max_steps=10000, hooks=[
        kte.CheckpointSaverHook(checkpoint_dir=estimator.model_dir, save_steps=1000)])
    ```
    """

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None,
                 save_graph_def=True):
        del scaffold, save_graph_def
        if (save_secs is None) == (save_steps is None):
            raise ValueError(
                "CheckpointSaverHook: exactly one of save_secs or save_steps must be "
                f"provided. Received: save_secs={save_secs!r}, save_steps={save_steps!r}")
        if save_secs is not None and (isinstance(save_secs, bool) or not isinstance(
                save_secs, numbers.Real) or not save_secs > 0):
            raise ValueError(
                f"`save_secs` must be None or a number > 0. Received: save_secs={save_secs!r}")
        _check_count("save_steps", save_steps, 1)
        if saver is not None:
            raise ValueError(
                "CheckpointSaverHook(saver=...) must be None: the estimator saves every "
                f"variable of the model. Received: saver={saver!r}")
        if checkpoint_basename != "model.ckpt":
            raise ValueError(
                "CheckpointSaverHook(checkpoint_basename=...) must be 'model.ckpt', the "
                f"name model_dir checkpoints have. Received: {checkpoint_basename!r}")
        if not isinstance(checkpoint_dir, (str, bytes)) and not hasattr(checkpoint_dir,
                                                                        "__fspath__"):
            raise TypeError(
                "CheckpointSaverHook(checkpoint_dir=...) must be a path. Received: "
                f"checkpoint_dir={_describe(checkpoint_dir)}")
        self.checkpoint_dir = checkpoint_dir
        self.save_secs = save_secs
        self.save_steps = save_steps
        self.listeners = list(listeners or [])
