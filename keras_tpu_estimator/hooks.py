"""`SessionRunHook`s as Keras callbacks.

TensorFlow 1 programs pass hooks to `train`/`evaluate`/`predict` and return
them from `model_fn` (`training_hooks`, ...). A hook is an object with
`begin()`, `after_create_session(session, coord)`, `before_run(run_context)`,
`after_run(run_context, run_values)` and `end(session)`; `MonitoredSession`
called them around every `session.run`. On a TPU, one `session.run` was one
on-device loop of `iterations_per_loop` steps, and so it is here:
`HookCallback` adapts a hook to a Keras callback whose batch methods
`EstimatorModel` calls once per loop.

There is no graph, so a hook cannot fetch a tensor. `SessionRunArgs` fetch
*names* of the values this runtime has after each loop:

| name | value | modes |
| --- | --- | --- |
| `"loss"` | the loss of the loop's last step (a numpy scalar) | TRAIN |
| `"losses"` | the loss of every step of the loop (a 1-D numpy array) | TRAIN |
| `"global_step"` | the global step after the loop (an int) | all |

```python
class PrintLoss(kte.SessionRunHook):
    def before_run(self, run_context):
        return kte.SessionRunArgs({"loss": "loss", "step": "global_step"})

    def after_run(self, run_context, run_values):
        print(run_values.results)  # {'loss': 0.31, 'step': 100}
        if run_values.results["loss"] < 0.01:
            run_context.request_stop()

model.fit(x, callbacks=kte.hooks.as_callbacks([PrintLoss()], "train"))
```

The hooks TensorFlow users reach for most are provided: `StopAtStepHook`,
`LoggingTensorHook` and `NanTensorHook`; `CheckpointSaverListener` is the
base of `TPUEstimator.train(saving_listeners=...)`, and `LoggingCallback`
logs the loss and steps per second as the estimator did every
`RunConfig.log_step_count_steps` steps.
"""

import collections
import logging
import numbers
import time

import keras
import numpy as np

from keras_tpu_estimator.spec import ModeKeys

_log = logging.getLogger("keras_tpu_estimator")

_MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)
_HOOK_METHODS = ("begin", "after_create_session", "before_run", "after_run", "end")

#: The names a hook may fetch in each mode.
FETCHABLE = {
    ModeKeys.TRAIN: ("loss", "global_step", "losses"),
    ModeKeys.EVAL: ("global_step",),
    ModeKeys.PREDICT: ("global_step",),
}

# The attribute of the model that stops each mode's loop (Keras's names).
_STOP_ATTRIBUTE = {
    ModeKeys.TRAIN: "stop_training",
    ModeKeys.EVAL: "stop_evaluating",
    ModeKeys.PREDICT: "stop_predicting",
}


def _describe(value):
    """`repr(value)`, shortened for error messages."""
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _check_mode(mode):
    if mode not in _MODES:
        raise ValueError(
            f"`mode` must be one of {list(_MODES)} (kte.ModeKeys). Received: mode={mode!r}"
        )


# ----------------------------------------------------------------------
# The session-run records.


class SessionRunArgs(
    collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])
):
    """What a hook's `before_run` asks for: `tf.compat.v1.train.SessionRunArgs`.

    Args:
        fetches: a name (`"loss"`, `"losses"` or `"global_step"`), or a
            list, tuple or dict of them, nested as deep as needed. The
            results in `SessionRunValues.results` have the same structure.
        feed_dict: must be None or empty: there is no graph to feed.
        options: kept and handed back in `SessionRunValues.options`.
    """

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunValues(
    collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])
):
    """What a hook's `after_run` receives: `tf.compat.v1.train.SessionRunValues`.

    Attributes:
        results: the values of the hook's fetches, in their structure; None
            when `before_run` asked for nothing.
        options: the `options` of the hook's `SessionRunArgs`.
        run_metadata: always None.
    """


class SessionRunContext:
    """The run a hook is called around: `tf.compat.v1.train.SessionRunContext`.

    Args:
        original_args: the `SessionRunArgs` of the run itself; its fetches
            are None, since the runtime runs the loop without a fetch.
        session: the `HostSession` of the run.
    """

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        """The `SessionRunArgs` of the run (fetches None)."""
        return self._original_args

    @property
    def session(self):
        """The `HostSession`: `session.run(name)` fetches a value by name."""
        return self._session

    @property
    def stop_requested(self):
        """Whether a hook called `request_stop()` during this run."""
        return self._stop_requested

    def request_stop(self):
        """Stops the loop (training, evaluation) after this run's hooks."""
        self._stop_requested = True


class HostSession:
    """The stand-in for `tf.compat.v1.Session` that hooks receive.

    TensorFlow hooks read values with `session.run(tensor)` in
    `after_create_session` and `end` (TensorFlow's `StopAtStepHook` reads the
    global step that way). Here `run` takes the names `SessionRunArgs`
    takes, in any structure, and returns the values they have now: before
    the first loop, only `"global_step"`.

    Args:
        values: a function `name -> value` of the current values.
        mode: the `ModeKeys` value of the run.
    """

    def __init__(self, values, mode):
        self._values = values
        self._mode = mode

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Returns the current values of `fetches` (names, nested).

        Raises:
            ValueError: for a fetch that is not a name of this mode, or a
                `feed_dict`.
        """
        _check_feed_dict(feed_dict, "session.run")
        _check_fetches(fetches, self._mode, "session.run")
        return _resolve(fetches, self._values)


def _check_feed_dict(feed_dict, owner):
    if feed_dict:
        raise ValueError(
            f"{owner} gave feed_dict={_describe(feed_dict)}: there is no graph "
            "to feed on this runtime; `feed_dict` must be None."
        )


def _check_fetches(fetches, mode, owner):
    """Raises ValueError unless `fetches` is None or names, nested."""
    names = FETCHABLE[mode]

    def check(fetch):
        if fetch is None:
            return
        if isinstance(fetch, str):
            if fetch not in names:
                fail()
            return
        if isinstance(fetch, dict):
            for value in fetch.values():
                check(value)
            return
        if isinstance(fetch, (list, tuple)):
            for value in fetch:
                check(value)
            return
        fail()

    def fail():
        raise ValueError(
            f"{owner} asked to fetch {_describe(fetches)}. There is no graph on "
            "this runtime: a hook fetches values by name, and in mode "
            f"{mode!r} the names are {list(names)} (or lists, tuples and "
            "dicts of them)."
            + (
                " 'loss' is the loss of the loop's last step, 'losses' the "
                "loss of every step of the loop."
                if mode == ModeKeys.TRAIN
                else ""
            )
        )

    check(fetches)


def _resolve(fetches, values):
    """The values of checked `fetches`, in their structure."""
    if fetches is None:
        return None
    if isinstance(fetches, str):
        return values(fetches)
    if isinstance(fetches, dict):
        return {k: _resolve(v, values) for k, v in fetches.items()}
    items = [_resolve(v, values) for v in fetches]
    if isinstance(fetches, tuple) and hasattr(fetches, "_fields"):
        return type(fetches)(*items)
    return type(fetches)(items)


# ----------------------------------------------------------------------
# Hooks.


class SessionRunHook:
    """The base of hooks: `tf.compat.v1.train.SessionRunHook`.

    Every method is a no-op; override the ones you need. Adapted to a Keras
    callback by `as_callback`, a hook is called:

    - `begin()`, then `after_create_session(session, coord)` (`coord` is
      None), when `fit`/`evaluate`/`predict` starts;
    - `before_run(run_context)` before every on-device loop; it may return
      `SessionRunArgs` naming the values it wants;
    - `after_run(run_context, run_values)` after every loop, with those
      values in `run_values.results`; `run_context.request_stop()` ends the
      loop (training and evaluation);
    - `end(session)` when the loop ends normally (not after an exception).

    `session` is a `HostSession`: `session.run("global_step")` works.
    """

    def begin(self):
        """Called once before the first loop."""

    def after_create_session(self, session, coord):  # noqa: ARG002
        """Called once after `begin`, with a `HostSession` and `coord=None`."""

    def before_run(self, run_context):  # noqa: ARG002
        """Called before every loop; may return `SessionRunArgs`."""
        return None

    def after_run(self, run_context, run_values):  # noqa: ARG002
        """Called after every loop with the values `before_run` asked for."""

    def end(self, session):  # noqa: ARG002
        """Called once after the last loop."""


def _is_hook(value):
    return any(
        callable(getattr(value, name, None)) for name in ("begin", "before_run", "after_run", "end")
    )


class HookCallback(keras.callbacks.Callback):
    """A `SessionRunHook`-shaped object as a Keras callback.

    A "run" is one on-device loop. In mode TRAIN the hook is called from
    `on_train_begin`, `on_train_batch_begin`, `on_train_batch_end` and
    `on_train_end`; in EVAL from the `on_test_*` methods, in PREDICT from
    the `on_predict_*` ones. The fetched values come from the model's
    `last_loop` (`EstimatorModel.last_loop`) and `global_step`.

    A stop requested in `after_run` sets the model's `stop_training`
    (TRAIN), `stop_evaluating` (EVAL) or `stop_predicting` (PREDICT),
    Keras's flags: the model stops after the current loop's callbacks.

    The hook may define any subset of the `SessionRunHook` methods.

    Args:
        hook: the hook.
        mode: the `kte.ModeKeys` value of the loop it runs in.

    Raises:
        TypeError: for a `hook` with none of the `SessionRunHook` methods.
        ValueError: for an unknown `mode`; at the first loop, for
            `SessionRunArgs` that fetch anything but the mode's names.
    """

    def __init__(self, hook, mode):
        super().__init__()
        _check_mode(mode)
        if not _is_hook(hook):
            raise TypeError(
                "`hook` must have SessionRunHook methods (begin, before_run, "
                f"after_run, end). Received: hook={_describe(hook)}"
            )
        self.hook = hook
        self.mode = mode
        self._session = None
        self._context = None
        self._request = None

    def __repr__(self):
        return f"HookCallback({self.hook!r}, mode={self.mode!r})"

    def _call(self, name, *args):
        method = getattr(self.hook, name, None)
        return method(*args) if callable(method) else None

    def _value(self, name):
        model = self.model
        if name == "global_step":
            return _global_step(model)
        loop = getattr(model, "last_loop", None)
        if loop is None:
            raise ValueError(
                f"{name!r} is known only after the first training loop of an "
                "EstimatorModel (it reads `model.last_loop`)."
            )
        losses = np.array(loop.losses)
        return losses if name == "losses" else losses[-1]

    def _begin(self):
        self._session = HostSession(self._value, self.mode)
        self._call("begin")
        self._call("after_create_session", self._session, None)

    def _before_run(self):
        self._context = SessionRunContext(SessionRunArgs(None), self._session)
        request = self._call("before_run", self._context)
        if request is not None:
            if not hasattr(request, "fetches"):
                raise TypeError(
                    f"{self.hook!r}.before_run must return None or "
                    f"SessionRunArgs. Received: {_describe(request)}"
                )
            owner = f"The SessionRunArgs of {_describe(self.hook)}"
            _check_feed_dict(getattr(request, "feed_dict", None), owner)
            _check_fetches(request.fetches, self.mode, owner)
        self._request = request

    def _after_run(self):
        if self._context is None:  # A loop without `*_batch_begin`.
            self._before_run()
        request, context = self._request, self._context
        values = SessionRunValues(
            results=None if request is None else _resolve(request.fetches, self._value),
            options=None if request is None else getattr(request, "options", None),
            run_metadata=None,
        )
        self._context = self._request = None
        self._call("after_run", context, values)
        if context.stop_requested:
            setattr(self.model, _STOP_ATTRIBUTE[self.mode], True)

    def _end(self):
        self._call("end", self._session)

    def _in(self, mode):
        return self.mode == mode

    def on_train_begin(self, logs=None):
        if self._in(ModeKeys.TRAIN):
            self._begin()

    def on_train_batch_begin(self, batch, logs=None):
        if self._in(ModeKeys.TRAIN):
            self._before_run()

    def on_train_batch_end(self, batch, logs=None):
        if self._in(ModeKeys.TRAIN):
            self._after_run()

    def on_train_end(self, logs=None):
        if self._in(ModeKeys.TRAIN):
            self._end()

    def on_test_begin(self, logs=None):
        if self._in(ModeKeys.EVAL):
            self._begin()

    def on_test_batch_begin(self, batch, logs=None):
        if self._in(ModeKeys.EVAL):
            self._before_run()

    def on_test_batch_end(self, batch, logs=None):
        if self._in(ModeKeys.EVAL):
            self._after_run()

    def on_test_end(self, logs=None):
        if self._in(ModeKeys.EVAL):
            self._end()

    def on_predict_begin(self, logs=None):
        if self._in(ModeKeys.PREDICT):
            self._begin()

    def on_predict_batch_begin(self, batch, logs=None):
        if self._in(ModeKeys.PREDICT):
            self._before_run()

    def on_predict_batch_end(self, batch, logs=None):
        if self._in(ModeKeys.PREDICT):
            self._after_run()

    def on_predict_end(self, logs=None):
        if self._in(ModeKeys.PREDICT):
            self._end()


def _global_step(model):
    """The model's global step: `EstimatorModel.global_step`, or its optimizer's iterations."""
    step = getattr(model, "global_step", None)
    if step is None:
        optimizer = getattr(model, "optimizer", None)
        step = 0 if optimizer is None else np.asarray(optimizer.iterations.value)
    return int(step)


def as_callback(hook, mode):
    """A Keras callback for `hook`.

    Args:
        hook: a `keras.callbacks.Callback` (returned unchanged), or an
            object with any of the `SessionRunHook` methods `begin`,
            `before_run`, `after_run`, `end` (wrapped in a `HookCallback`).
        mode: the `kte.ModeKeys` value of the loop the hook runs in.

    Returns:
        A `keras.callbacks.Callback`.

    Raises:
        TypeError: for anything else.
        ValueError: for an unknown `mode`.
    """
    _check_mode(mode)
    if isinstance(hook, keras.callbacks.Callback):
        return hook
    if _is_hook(hook):
        return HookCallback(hook, mode)
    raise TypeError(
        "A hook must be a keras.callbacks.Callback or a SessionRunHook-shaped "
        "object (with begin, before_run, after_run or end). Received: "
        f"{_describe(hook)}"
    )


def as_callbacks(hooks, mode):
    """`as_callback` over a list of hooks, in order; None gives `[]`.

    Raises:
        TypeError: for `hooks` that is not a list or tuple (or None), or an
            element that is not a hook.
    """
    if hooks is None:
        return []
    if isinstance(hooks, (str, bytes, dict)) or not isinstance(hooks, (list, tuple)):
        raise TypeError(
            f"`hooks` must be None or a list of hooks. Received: hooks={_describe(hooks)}"
        )
    return [as_callback(hook, mode) for hook in hooks]


# ----------------------------------------------------------------------
# Provided hooks.


def _check_count(name, value, minimum, allow_none=True):
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(
            f"`{name}` must be {'None or ' if allow_none else ''}an int >= "
            f"{minimum}. Received: {name}={value!r}"
        )


class StopAtStepHook(SessionRunHook):
    """Stops training at a global step: `tf.compat.v1.train.StopAtStepHook`.

    After every loop, requests a stop when the global step has reached
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
        if run_values.results >= self._last_step:
            run_context.request_stop()


class _Timer:
    """When to act: every `every_steps` global steps or `every_secs` seconds.

    The first call triggers. By steps, a later one triggers when the step
    has reached a new multiple of `every_steps` (loops may jump over the
    multiple itself); by seconds, when `every_secs` have passed.
    """

    def __init__(self, every_steps=None, every_secs=None):
        self.every_steps, self.every_secs = every_steps, every_secs
        self.reset()

    def reset(self):
        self.last_step = self.last_time = None

    def should_trigger(self, step):
        if self.last_step is None:
            return True
        if step == self.last_step:
            return False
        if self.every_secs is not None:
            return time.perf_counter() - self.last_time >= self.every_secs
        if self.every_steps is not None:
            return step // self.every_steps > self.last_step // self.every_steps
        return False

    def update(self, step):
        """Marks `step` done; returns `(seconds, steps)` since the last, or Nones."""
        now = time.perf_counter()
        elapsed = (None, None)
        if self.last_step is not None:
            elapsed = (now - self.last_time, step - self.last_step)
        self.last_step, self.last_time = step, now
        return elapsed


class LoggingTensorHook(SessionRunHook):
    """Logs fetched values: `tf.compat.v1.train.LoggingTensorHook`.

    Logs `"tag = value, tag = value (1.234 sec)"` at INFO level to the
    `keras_tpu_estimator` logger, after the first loop and then every
    `every_n_iter` steps or `every_n_secs` seconds, checked after each
    loop; with `at_end`, also the last values when the loop ends.

    An iteration is a training step here (TensorFlow counted
    `session.run`s): the hook logs after a loop whose global step reaches a
    new multiple of `every_n_iter`.

    Args:
        tensors: the names to log, as a list (tags are the names) or a dict
            `tag -> name`. Names are those `SessionRunArgs` take: `"loss"`,
            `"losses"`, `"global_step"`.
        every_n_iter: log every this many steps.
        every_n_secs: log every this many seconds.
        at_end: log the last values at the end.
        formatter: `formatter(dict tag -> value) -> str` replaces the format.

    Raises:
        ValueError: unless exactly one of `every_n_iter` and `every_n_secs`
            is given (or neither, with `at_end=True`); for `every_n_iter` <= 0,
            `tensors` not a list or dict, or a tensor (of `model_fn`, say)
            instead of a name. At the first loop, for a name that cannot be
            fetched in the loop's mode.

    Example:

    ```python
    hook = kte.LoggingTensorHook({"loss": "loss", "step": "global_step"},
                                 every_n_iter=100)
    ```
    """

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
            self._tag_order = list(tensors)
            self._tensors = {name: name for name in tensors}
        else:
            raise ValueError(
                "`tensors` must be a list of names or a dict of tag to name. "
                f"Received: tensors={_describe(tensors)}"
            )
        not_names = {tag: name for tag, name in self._tensors.items() if not isinstance(name, str)}
        if not_names:
            raise ValueError(
                "LoggingTensorHook logs values by name: there is no graph, so a "
                "tensor of model_fn cannot be fetched. Use the names "
                f"{list(FETCHABLE[ModeKeys.TRAIN])}. Received: {_describe(not_names)}"
            )
        if formatter is not None and not callable(formatter):
            raise ValueError(f"`formatter` must be callable. Received: formatter={formatter!r}")
        self._timer = _Timer(every_n_iter, every_n_secs)
        self._log_periodically = not only_log_at_end
        self._log_at_end = at_end
        self._formatter = formatter
        self._last_values = None

    def begin(self):
        self._timer.reset()
        self._last_values = None

    def before_run(self, run_context):
        return SessionRunArgs({"values": self._tensors, "step": "global_step"})

    def after_run(self, run_context, run_values):
        values, step = run_values.results["values"], run_values.results["step"]
        self._last_values = values
        if self._log_periodically and self._timer.should_trigger(step):
            self._log(values, step)

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
    training stops normally, and `on_train_end` savers do save the weights
    of that last loop, as in TensorFlow.

    Args:
        loss_tensor: ignored; the hook always checks the spec's `loss`.
            Accepted so that `NanTensorHook(loss)` in a `model_fn` works.
        fail_on_nan_loss: raise (default), or log and stop.
    """

    def __init__(self, loss_tensor=None, fail_on_nan_loss=True):
        del loss_tensor  # The runtime's loss is the only loss.
        self._fail_on_nan_loss = bool(fail_on_nan_loss)

    def before_run(self, run_context):
        return SessionRunArgs({"losses": "losses", "global_step": "global_step"})

    def after_run(self, run_context, run_values):
        losses = np.asarray(run_values.results["losses"])
        bad = np.flatnonzero(~np.isfinite(losses))
        if not bad.size:
            return
        first = int(bad[0])
        step = run_values.results["global_step"] - losses.size + first
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


class LoggingCallback(keras.callbacks.Callback):
    """Logs the loss and the training speed, as TensorFlow's estimator did.

    After a training loop whose global step reaches a new multiple of
    `every_n_steps` (and after the first loop), logs at INFO level to the
    `keras_tpu_estimator` logger:

        global_step/sec: 812.4
        loss = 0.123, step = 100 (0.123 sec)

    The loss is that of the loop's last step; the speed and the seconds are
    measured since the previous log, in wall time (the first log has
    neither: its loop included compilation). It reads an
    `EstimatorModel`'s `last_loop` and `global_step`.

    Args:
        every_n_steps: log every this many global steps
            (`RunConfig.log_step_count_steps`).

    Raises:
        ValueError: for `every_n_steps` that is not an int >= 1.
    """

    def __init__(self, every_n_steps):
        super().__init__()
        _check_count("every_n_steps", every_n_steps, 1, allow_none=False)
        self.every_n_steps = int(every_n_steps)
        self._timer = _Timer(every_steps=self.every_n_steps)

    def on_train_begin(self, logs=None):
        self._timer.reset()

    def on_train_batch_end(self, batch, logs=None):
        model = self.model
        step = _global_step(model)
        if not self._timer.should_trigger(step):
            return
        seconds, steps = self._timer.update(step)
        loss = np.asarray(model.last_loop.losses)[-1]
        if seconds is None:
            _log.info("loss = %s, step = %d", loss, step)
            return
        _log.info("global_step/sec: %g", steps / max(seconds, 1e-9))
        _log.info("loss = %s, step = %d (%.3f sec)", loss, step, seconds)
