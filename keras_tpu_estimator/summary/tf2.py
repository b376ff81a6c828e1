"""TensorFlow 2's summaries (`tf.compat.v2.summary`) made in `model_fn` and on the host.

TF1 programs on TensorFlow 2 wrote TF2 summaries from `model_fn`:

```python
writer = tf2.summary.create_file_writer(os.path.join(model_dir, "extra"))
with writer.as_default(), tf2.summary.record_if(tf1.equal(tf1.mod(global_step, 100), 0)):
    tf2.summary.scalar("learning_rate", learning_rate, step=global_step)
train_op = tf1.group(train_op, *tf1.summary.all_v2_summary_ops())
```

In TF1's graph each call made an op that wrote into the writer's event file
when the step ran it, if the recording condition held then. Here `model_fn`
is traced into the compiled step: a summary made there hands its values to
the host (`summary.traced`: one `jax.lax.cond` on the condition, so values
leave the device only at the steps recorded, also inside an on-device loop)
and the host writes them with TensorFlow's own `tf.summary` function of the
same name, at the value `step=` had in that step. The events are therefore
TF2's (tensor summaries with their plugin's metadata), in the writer's
directory, in the one event file this process keeps there
(`summary.writers`). As TF1's estimator ran `model_fn`'s summaries only
while training, summaries made in EVAL or PREDICT write nothing.

On the host (a `host_call`, numpy values) the same calls write at once, into
the writer made default (or TensorFlow's own default writer).

The default writer, the default step and the recording condition are per
thread, as in TensorFlow; `record_if` replaces the condition around it.
"""

import contextlib
import functools
import sys
import threading
import weakref

import jax
import keras
import numpy as np

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.model_fn import train_ops
from keras_tpu_estimator.spec import ModeKeys
from keras_tpu_estimator.summary import traced
from keras_tpu_estimator.summary import writers

#: The summaries: each is TensorFlow's `tf.summary.<kind>` on the host.
KINDS = ("scalar", "histogram", "image", "audio", "text", "write")

_local = threading.local()
_NO_STEP = (
    "No step set. Please specify one either through the `step` argument or "
    "through tf.summary.experimental.set_step()"
)


def _state():
    if not hasattr(_local, "writer"):
        _local.writer, _local.step, _local.condition = None, None, None
    return _local


class SummaryWriter:
    """A writer on one directory (`create_file_writer`), usable in `model_fn`.

    Its events go into the event file the process keeps for the directory
    (`summary.writers.acquire`); the writer holds that file open from its
    first write until it is closed or garbage-collected (a compiled step
    that writes through it keeps it alive), so a training run writes one
    event file. Every write from `model_fn` is flushed.

    Attributes:
        logdir: the directory of the event files.
    """

    def __init__(self, logdir):
        self.logdir = writers.check_logdir(logdir)
        self._held = None
        self._release = None
        self._lock = threading.Lock()  # The writing thread opens the file, the host closes it.

    def event_writer(self):
        """TensorFlow's writer of `logdir`, opened on first use and held by this writer."""
        writers.hold_for_run(self.logdir)  # One event file per training run.
        with self._lock:
            if self._held is None:
                self._held = writers.acquire(self.logdir)
                self._release = weakref.finalize(self, writers.release, self.logdir)
            return self._held

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Makes this the default writer inside the block (and `step` the default step)."""
        state = _state()
        previous_writer, previous_step = state.writer, state.step
        state.writer = self
        if step is not None:
            state.step = step
        try:
            yield self
        finally:
            state.writer = previous_writer
            if step is not None:
                state.step = previous_step

    def set_as_default(self, step=None):
        """Makes this the default writer (and `step` the default step) from now on."""
        state = _state()
        state.writer = self
        if step is not None:
            state.step = step

    def init(self):
        """Nothing to run: the event file opens on first use (TF1's `init` op)."""
        return None

    def flush(self):
        """Flushes the event file; in `model_fn` nothing to do (every write is flushed)."""
        if _model_fn_call() is None and self._held is not None:
            self._held.flush()

    def close(self):
        """Flushes and lets go of the event file (outside `model_fn`)."""
        if _model_fn_call() is None:
            with self._lock:
                release, self._held, self._release = self._release, None, None
            if release is not None:
                release()

    def __repr__(self):
        return f"SummaryWriter(logdir={self.logdir!r})"


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None, **kwargs):
    """A `SummaryWriter` on `logdir`; TensorFlow's queue and flush settings are accepted.

    Args:
        logdir: the directory of the event files.
        max_queue, flush_millis, filename_suffix, name: accepted for
            compatibility: the event file is the process's shared one for
            `logdir`, flushed after every write.
        **kwargs: TensorFlow's experimental arguments, accepted.

    Returns:
        A `SummaryWriter`.

    Raises:
        ValueError: if `logdir` is not a directory path.
    """
    del max_queue, flush_millis, filename_suffix, name, kwargs
    return SummaryWriter(logdir)


@contextlib.contextmanager
def record_if(condition):
    """Inside the block, summaries are recorded only when `condition` holds.

    Args:
        condition: a bool, a boolean tensor (in `model_fn`: its value in
            each step), or a callable returning one, called by each summary.

    Yields:
        None.
    """
    state = _state()
    previous, state.condition = state.condition, condition
    try:
        yield
    finally:
        state.condition = previous


def set_step(step):
    """Sets the default step of summaries written without `step=` (per thread)."""
    _state().step = step


def get_step():
    """The default step (`set_step`, `as_default(step=)`), or None."""
    return _state().step


def default_writer():
    """The default `SummaryWriter` of this thread, or None."""
    return _state().writer


def _model_fn_call():
    try:
        return store_lib.current_call("summary")
    except RuntimeError:
        return None


def _is_tf_tensor(value):
    tf = sys.modules.get("tensorflow")
    return tf is not None and isinstance(value, tf.Tensor)


def _condition():
    """The open recording condition, evaluated now: None (always), a bool or a tensor."""
    condition = _state().condition
    return condition() if callable(condition) else condition


def should_record_summaries():
    """Whether summaries are recorded here: False without a default writer.

    Returns:
        In `model_fn`, a boolean tensor (its value in each step); on the
        host, a bool.
    """
    recorded = _recorded(_condition())
    if _model_fn_call() is not None:
        return _as_tensor(recorded)
    return bool(np.asarray(recorded))


def _recorded(condition):
    if _state().writer is None:
        return False
    return True if condition is None else condition


def _as_tensor(recorded):
    if isinstance(recorded, (bool, np.bool_)):
        return keras.ops.convert_to_tensor(bool(recorded))
    return keras.ops.cast(recorded, "bool")


def _check_name(name):
    if not isinstance(name, str) or not name:
        raise ValueError(f"A summary `name` must be a non-empty string. Received: name={name!r}")


def summarize(kind, name, data, step=None, **params):
    """Makes TensorFlow 2's summary `kind` of `data` (see the module docstring).

    Args:
        kind: one of `KINDS`.
        name: the summary's name (for `write`, its tag).
        data: the tensor (for `text`, the strings).
        step: the step; None: the default step (`as_default(step=)`,
            `set_step`).
        **params: the keyword arguments of TensorFlow's function
            (`max_outputs`, `buckets`, `sample_rate`, `description`, ...).

    Returns:
        In `model_fn`, a boolean tensor: whether the summary is recorded in
        the step (TF's op); on the host, what TensorFlow returns.

    Raises:
        ValueError: for an empty name, no step, or (in `model_fn`) a scalar
            that is not a scalar.
    """
    _check_name(name)
    context = _model_fn_call()
    if context is None or _is_tf_tensor(data):
        return _on_host(kind, name, data, step, params)
    return _in_model_fn(context, kind, name, data, step, params)


def _on_host(kind, name, data, step, params):
    tf = writers.tf_module()
    condition = _condition()
    if condition is not None and not bool(np.asarray(condition)):
        return False
    if isinstance(data, jax.Array):
        data = np.asarray(data)
    step = get_step() if step is None else step
    function = getattr(tf.compat.v2.summary, kind)
    writer = _state().writer
    if writer is None:  # TensorFlow's own default writer, if any (a host call's).
        return function(name, data, step=step, **params)
    with writer.event_writer().as_default():
        return function(name, data, step=step, **params)


def _tag(kind, name):
    """TF2's tag in a graph: the name under the open scopes (`write` takes its tag as is)."""
    scope = _keras_internals.current_scope_path()
    return f"{scope}/{name}" if scope and kind != "write" else name


def _is_symbolic(*values):
    return any(isinstance(v, keras.KerasTensor) for v in values)


def _in_model_fn(context, kind, name, data, step, params):
    tag = _tag(kind, name)
    step = get_step() if step is None else step
    if step is None:
        raise ValueError(_NO_STEP)
    writer, condition = _state().writer, _condition()
    recorded = _recorded(condition)
    handle = _as_tensor(recorded)
    store_lib.call_state("summary.v2_ops", list).append(handle)
    if kind != "text" and not isinstance(data, (jax.core.Tracer, keras.KerasTensor)):
        data = keras.ops.convert_to_tensor(data)
    if kind == "text":
        params = dict(params, text=data)
    elif kind == "scalar" and None not in data.shape and len(data.shape) != 0:
        raise ValueError(f"Expected scalar shape for {tag}, saw shape: {tuple(data.shape)}.")
    if (
        writer is None or context.building or context.mode != ModeKeys.TRAIN
        or train_ops.replaying() or _is_symbolic(data, step, condition)
        or recorded is False or (isinstance(recorded, np.bool_) and not recorded)
    ):
        return handle
    operands = _operands(kind, data, params)
    when = None if recorded is True else keras.ops.cast(recorded, "bool")
    build = functools.partial(_writing, writer, kind, tag, params)
    traced.emit(writer.logdir, build, operands, step, when)
    return handle


def _operands(kind, data, params):
    """The arrays the step hands the host: images and audio cut to `max_outputs`."""
    if kind == "text":
        return []
    if kind in ("image", "audio"):
        return [data[:params.get("max_outputs", 3)]]  # TensorFlow's default: 3.
    return [data]


def _writing(holder, kind, tag, params, *arrays):
    """On the host: the function writing the summary with TensorFlow's own `tf.summary`."""

    def write(event_writer, step):
        holder.event_writer()  # The event file stays open while the step can write to it.
        tf = writers.tf_module()
        function = getattr(tf.compat.v2.summary, kind)
        data = params["text"] if kind == "text" else arrays[0]
        extra = {k: v for k, v in params.items() if k != "text"}
        with event_writer.as_default():
            function(tag, data, step=step, **extra)

    return write


def all_v2_summary_ops():
    """The summaries made in this `model_fn` call (their recording tensors); [] elsewhere.

    TF1 returned the ops of the `_SUMMARY_V2` collection of the graph, a
    list also when empty; programs pass them to `tf.group`,
    `tf.control_dependencies` or their `train_op`. Here the summaries are
    written by the step itself: running them changes nothing.

    Returns:
        A list.
    """
    if _model_fn_call() is None:
        return []
    return list(store_lib.call_state("summary.v2_ops", list))
