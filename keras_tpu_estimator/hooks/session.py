"""The `SessionRunHook` emulation: hooks, their session-run records, the Keras adapter.

TensorFlow 1 programs pass hooks to `train`/`evaluate`/`predict` and return
them from `model_fn` (`training_hooks`, ...). `HookCallback` adapts a hook to
a Keras callback whose batch methods `EstimatorModel` calls once per
on-device loop; after each loop the hook is called once per `session.run`
the loop stands for (`engine.logs.LOOP_RUNS`): once per step with
`use_tpu=False`, as TensorFlow ran it around every step, once per loop on a
TPU (one `session.run` of a TPU program). What a hook may fetch:
the tensors of `model_fn` it holds (see `hooks.fetches`), the global step,
variables, and the names listed in `FETCHABLE`; see the package docstring.
"""

import collections
import contextlib

import keras
import numpy as np

from keras_tpu_estimator.hooks._common import describe as _describe
from keras_tpu_estimator.hooks._common import global_step_of as _global_step
from keras_tpu_estimator.hooks._common import is_session_run_hook
from keras_tpu_estimator.hooks import fetches as fetches_lib
from keras_tpu_estimator.hooks.fetches import FETCHABLE  # noqa: F401  (exported here too)
from keras_tpu_estimator.hooks.fetches import check_feed_dict as _check_feed_dict
from keras_tpu_estimator.hooks.fetches import check_fetches as _check_fetches
from keras_tpu_estimator.hooks.fetches import resolve as _resolve
from keras_tpu_estimator.hooks.fetches import variable_of as _variable_of
from keras_tpu_estimator.engine import logs as logs_lib
from keras_tpu_estimator.engine.logs import hook_values_of
from keras_tpu_estimator.engine.logs import loop_of
from keras_tpu_estimator.spec import ModeKeys

_MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)

# The attribute of the model that stops each mode's loop (Keras's names).
_STOP_ATTRIBUTE = {
    ModeKeys.TRAIN: "stop_training",
    ModeKeys.EVAL: "stop_evaluating",
    ModeKeys.PREDICT: "stop_predicting",
}


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
        fetches: what to fetch, or a list, tuple or dict of them, nested as
            deep as needed: a tensor of `model_fn` the hook holds (built in
            `model_fn`, returned in the spec's hooks), the global step
            (`tf1.train.get_or_create_global_step()`), a variable, or a name
            (`"loss"`, `"losses"` or `"global_step"`). The results in
            `SessionRunValues.results` have the same structure.
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
    `after_create_session`, `after_run` and `end` (ELECTRA's `ETAHook` reads
    the global step that way). Here `run` takes what `SessionRunArgs` takes,
    in any structure, and returns the values it has now: the global step
    (in `after_run`, the step after the run, as TensorFlow's variable then
    held it); a tensor of `model_fn`, its value at the run's last step.

    Args:
        values: a function `fetch -> value` of the current values.
        mode: the `ModeKeys` value of the run.
        hook: the hook the session is given to (whose tensors it fetches).
    """

    def __init__(self, values, mode, hook=None):
        self._values = values
        self._mode = mode
        self._hook = hook

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Returns the current values of `fetches` (nested).

        Raises:
            ValueError: for a fetch this runtime cannot fetch, or a
                `feed_dict`.
        """
        _check_feed_dict(feed_dict, "session.run")
        _check_fetches(fetches, self._mode, "session.run", self._hook)
        return _resolve(fetches, self._values)


# ----------------------------------------------------------------------
# Hooks.


class SessionRunHook:
    """The base of hooks: `tf.compat.v1.train.SessionRunHook`.

    Every method is a no-op; override the ones you need. Adapted to a Keras
    callback by `as_callback`, a hook is called:

    - `begin()`, then `after_create_session(session, coord)` (`coord` is
      None), when `fit`/`evaluate`/`predict` starts;
    - `before_run(run_context)` before every run; it may return
      `SessionRunArgs` naming the values it wants;
    - `after_run(run_context, run_values)` after every run, with those
      values in `run_values.results`; `run_context.request_stop()` ends the
      loop (training and evaluation);

    A run is a step with `use_tpu=False` (each step's values are carried out
    of the compiled loop, and the hook is called once per step after it), a
    whole on-device loop on a TPU.
    - `end(session)` when the loop ends normally (not after an exception).

    `session` is a `HostSession`: `session.run(global_step)` works.

    Attributes:
        may_request_stop: whether `after_run` may call `request_stop()`
            (True unless a hook says otherwise). While a training hook may,
            each loop keeps a copy of its starting state, to wind the model
            back to the step that stopped (with `use_tpu=False`).
    """

    may_request_stop = True

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


class HookCallback(keras.callbacks.Callback):
    """A `SessionRunHook`-shaped object as a Keras callback.

    A "run" is what the loop's logs say (`engine.logs.LOOP_RUNS`): each
    step of the loop with `use_tpu=False`, the whole loop on a TPU. In mode
    TRAIN the hook is called from `on_train_begin`, `on_train_batch_begin`
    (the first run's `before_run`), `on_train_batch_end` (the first run's
    `after_run`, then `before_run` and `after_run` of every later run) and
    `on_train_end`; in EVAL from the `on_test_*` methods, in PREDICT from
    the `on_predict_*` ones.

    Every value of a run carries the run's step, as a TensorFlow
    `session.run` fetched them: `"global_step"` (and the global step handle)
    is the global step the run's last step read, before its own increment
    (in TRAIN; the model's `global_step` in EVAL and PREDICT); `"loss"` is
    that step's loss and `"losses"` the loss of each step of the run, from
    the `logs` of the latest `on_train_batch_end` (or `on_train_end`)
    (`LOOP_LOSSES`); a tensor of `model_fn` that the hook holds has its
    value at that step (`LOOP_HOOK_VALUES`). `session.run(global_step)` in
    `after_run` gives the step after the run.

    A stop requested in `after_run` sets the model's `stop_training`
    (TRAIN), `stop_evaluating` (EVAL) or `stop_predicting` (PREDICT),
    Keras's flags: the model stops after the current loop's callbacks. With
    runs of one step, the hook is called for no later step of the loop, nor
    are the callbacks after it (`LOOP_STOP_RUN`); the loop itself ran on the
    device to its end, and is then rewound (`engine.logs.LoopCallbackList`):
    the model's weights and global step are those of the run that stopped,
    as TensorFlow left them.

    The hook may define any subset of the `SessionRunHook` methods.

    Args:
        hook: the hook.
        mode: the `kte.ModeKeys` value of the loop it runs in.

    Raises:
        TypeError: for a `hook` with none of the `SessionRunHook` methods.
        ValueError: for an unknown `mode`; at the first loop, for
            `SessionRunArgs` that fetch what cannot be fetched (a tensor the
            hook does not hold, an unknown name); when `"loss"`, `"losses"`
            or a tensor is fetched before the first loop, or the logs report
            no loop.

    Example:

    ```python
    callback = kte.hooks.HookCallback(kte.NanTensorHook(), kte.ModeKeys.TRAIN)
    model.fit(x, callbacks=[callback])
    ```
    """

    reads_loop_logs = True  # Gets the loop keys of `engine.logs`.

    def __init__(self, hook, mode):
        super().__init__()
        _check_mode(mode)
        if not is_session_run_hook(hook):
            raise TypeError(
                "`hook` must have SessionRunHook methods (begin, before_run, "
                f"after_run, end). Received: hook={_describe(hook)}"
            )
        self.hook = hook
        self.mode = mode
        # A training hook that may stop mid-loop: the loop keeps its start to rewind to.
        self.stops_mid_loop = mode == ModeKeys.TRAIN and getattr(hook, "may_request_stop", True)
        self._session = None
        self._context = None
        self._request = None
        self._loop = None
        self._hook_values = None
        self._span = None  # The steps [start, stop) of the loop the current run covers.

    def __repr__(self):
        return f"HookCallback({self.hook!r}, mode={self.mode!r})"

    def _call(self, name, *args):
        method = getattr(self.hook, name, None)
        return method(*args) if callable(method) else None

    def _value(self, fetch, in_run=False):
        """The value of a checked `fetch`: of the current run (`in_run`, what
        `SessionRunArgs` get) or now (what `session.run` gets)."""
        if fetch is fetches_lib.GLOBAL_STEP or (isinstance(fetch, str) and fetch == "global_step"):
            return self._global_step(in_run)
        variable = _variable_of(fetch)
        if variable is not None and getattr(variable, "path", None) == "global_step":
            return self._global_step(in_run)  # TF1's global_step variable of model_fn.
        if not isinstance(fetch, str):
            return self._fetched(fetch)
        name = fetch
        if self._loop is None:
            raise ValueError(
                f"{name!r} is known only after the first training loop of an "
                "EstimatorModel: it is read from the `logs` that "
                "EstimatorModel.fit gives on_train_batch_end."
            )
        losses = np.array(self._loop[1])
        start, stop = self._span or (0, losses.size)
        return losses[start:stop] if name == "losses" else losses[stop - 1]

    def _global_step(self, in_run):
        """The global step a run's last step read (`in_run`), or the step after it."""
        if self.mode != ModeKeys.TRAIN or self._loop is None or self._span is None:
            return _global_step(self.model)
        after = self._loop[0] + self._span[1]
        return after - 1 if in_run else after

    def _fetched(self, fetch):
        """The value of a fetch that is neither a name nor the global step (checked)."""
        variable = _variable_of(fetch)
        if variable is not None:
            return np.asarray(variable.value)
        values = None
        if self._hook_values is not None:
            values = (self._hook_values.values if self._span is None
                      else self._hook_values.at(self._span[1] - 1))
        return fetches_lib.resolve_tensor(self.hook, fetch, values)

    def _see(self, logs, keep=False):
        """Takes the loop `logs` reports; with `keep`, only if they report one."""
        loop = loop_of(logs)
        if loop is not None or not keep:
            self._loop = loop
        self._see_values(logs)

    def _see_values(self, logs):
        """Takes the values of the spec hooks' tensors the logs carry, if any."""
        values = hook_values_of(logs)
        if values is not None:
            self._hook_values = values

    def _begin(self):
        self._loop = None
        self._hook_values = None
        self._span = None
        self._session = HostSession(self._value, self.mode, self.hook)
        # As in TF1, `begin` sees the graph `model_fn` built (its variables).
        graph = getattr(self.model, "model_fn_graph", None)
        with graph(self.mode) if graph is not None else contextlib.nullcontext():
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
            _check_fetches(request.fetches, self.mode, owner, self.hook)
        self._request = request

    def _after_run(self):
        if self._context is None:  # A loop without `*_batch_begin`.
            self._before_run()
        request, context = self._request, self._context
        values = SessionRunValues(
            results=None if request is None else _resolve(
                request.fetches, lambda fetch: self._value(fetch, in_run=True)),
            options=None if request is None else getattr(request, "options", None),
            run_metadata=None,
        )
        self._context = self._request = None
        self._call("after_run", context, values)
        if context.stop_requested:
            setattr(self.model, _STOP_ATTRIBUTE[self.mode], True)
        return context.stop_requested

    def _runs(self, logs):
        """`after_run` of the loop's first run, then `before_run` and
        `after_run` of every later run the `logs` report (`LOOP_RUNS`), up
        to a stop requested by this hook or one before it."""
        total = int((logs or {}).get(logs_lib.LOOP_RUNS, 1))
        if self._loop is not None:
            steps = self._loop[1].size
        elif self._hook_values is not None:
            steps = len(self._hook_values.steps)
        else:
            steps = total
        try:
            for run in range(logs_lib.runs_of(logs)):
                if run > 0:
                    self._before_run()
                self._span = logs_lib.run_steps(run, total, steps) if steps else None
                if self._after_run():
                    logs_lib.record_stop_run(logs, run)
                    break
        finally:
            self._span = None

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
            self._see(logs)
            self._runs(logs)

    def on_train_end(self, logs=None):
        if self._in(ModeKeys.TRAIN):
            self._see(logs, keep=True)
            self._end()

    def on_test_begin(self, logs=None):
        if self._in(ModeKeys.EVAL):
            self._begin()

    def on_test_batch_begin(self, batch, logs=None):
        if self._in(ModeKeys.EVAL):
            self._before_run()

    def on_test_batch_end(self, batch, logs=None):
        if self._in(ModeKeys.EVAL):
            self._see_values(logs)
            self._runs(logs)

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
            self._see_values(logs)
            self._runs(logs)

    def on_predict_end(self, logs=None):
        if self._in(ModeKeys.PREDICT):
            self._end()


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
    if is_session_run_hook(hook):
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


