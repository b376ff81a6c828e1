"""TF1 summaries (`tf.summary.*`, `tf.contrib.summary.*`): where each one is written.

`compat.v1.summary` and `compat.v1.contrib.summary` call `summarize`, which
sends a summary one of three ways, by what its value is:

- in `model_fn` (a tensor of the traced step): written from the device at
  the summary steps (`summary.traced`). `tf.summary.*` go where and when
  the estimator's summaries go (`model_dir`, every `save_summary_steps`),
  in TRAIN only (TF1's estimator wrote no `model_fn` summary in EVAL or
  PREDICT); `tf.contrib.summary.*` go to the writer made default around
  them, at the steps their recording condition says (TF1's contrib rules);
- on the host (a `host_call`, numpy values): written at once into the
  default writer of `kte.summary.record_summaries`;
- a TensorFlow graph tensor (code left on TensorFlow: a `tf.data` map
  function): TensorFlow's own `tf.compat.v1.summary` function makes it.

The events are TF1's: a `simple_value` for scalars, a `HistogramProto`
over TF1's bucket limits, PNG images, WAV audio, text tensors (see
`summary.protos`). Tags are TF1's: `family/family/name` with a family; in
`model_fn`, under the open variable scopes and unique per call (`loss`,
`loss_1`, as TF1's name scopes made them).
"""

import re
import sys

import jax
import keras
import numpy as np

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.model_fn import train_ops
from keras_tpu_estimator.spec import ModeKeys
from keras_tpu_estimator.summary import protos
from keras_tpu_estimator.summary import recording
from keras_tpu_estimator.summary import traced

KINDS = ("scalar", "histogram", "image", "audio", "text")

#: `recording` of `summarize` for `tf.summary.*` (the estimator's period).
V1 = "v1"


class SummaryOp:
    """What a summary made in `model_fn` returns: a handle, not a value.

    TF1 returned a string tensor (the serialized `Summary`) that the
    estimator's summary hook ran; here the summary is written by the step
    itself, so there is nothing to run. `merge` and `merge_all` combine
    handles.

    Attributes:
        tags: the summary's tags (an image summary has one per image).
    """

    def __init__(self, tags):
        self.tags = list(tags)

    def __repr__(self):
        return f"SummaryOp(tags={self.tags!r})"


def clean_tag(name):
    """`name` with the characters TF1 refuses in tags replaced by `_` (and no leading `/`)."""
    return re.sub(r"[^-/\w\.]", "_", name).lstrip("/")


def _check(name, family):
    if not isinstance(name, str) or not name:
        raise ValueError(f"A summary `name` must be a non-empty string. Received: name={name!r}")
    if family is not None and (not isinstance(family, str) or not family):
        raise ValueError(
            f"A summary `family` must be None or a non-empty string. Received: family={family!r}"
        )


def host_tag(name, family=None):
    """The tag of a summary made on the host: TF1's, outside any scope."""
    name = clean_tag(name)
    return name if family is None else f"{clean_tag(family)}/{clean_tag(family)}/{name}"


def _model_fn_tag(name, family):
    """The tag of a summary made in `model_fn`: under the open scopes, unique per call."""
    name = clean_tag(name)
    base = name if family is None else f"{clean_tag(family)}/{name}"
    scope = _keras_internals.current_scope_path()
    scoped = f"{scope}/{base}" if scope else base
    used = store_lib.call_state("summary.tags", dict)  # TF1's names in use, lowercase.
    key = scoped.lower()
    count = used.get(key, 0)
    used[key] = count + 1
    unique = scoped
    if count:
        while f"{key}_{count}" in used:
            count += 1
        used[key] = count + 1
        used[f"{key}_{count}"] = 1
        unique = f"{scoped}_{count}"
    return unique if family is None else f"{clean_tag(family)}/{unique}"


# ----------------------------------------------------------------------
# Each kind: its checks on shapes, the operands the step hands over, and
# the `Summary.Value`s made from them on the host.


def _builder(kind, tag, params):
    if kind == "scalar":
        return lambda value: [protos.scalar_value(tag, value)]
    if kind == "histogram":
        return lambda values: [protos.histogram_value(tag, values)]
    if kind == "image":
        return lambda images: protos.image_values(
            tag, images, params["max_outputs"], params.get("bad_color"))
    if kind == "audio":
        return lambda audio, rate: protos.audio_values(tag, audio, rate, params["max_outputs"])
    text = params["text"]
    return lambda: [protos.text_value(tag, text)]


def _check_traced(kind, tag, value):
    """Checks a `model_fn` summary's value by its shape and dtype, when the step is traced."""
    if kind == "text":
        protos.text_value(tag, value)  # Strings known when tracing (JAX has no string tensors).
        return
    shape, dtype = tuple(value.shape), keras.backend.standardize_dtype(value.dtype)
    if kind == "scalar" and None not in shape and int(np.prod(shape)) != 1:
        raise ValueError(
            f"The value of scalar summary {tag!r} must be one number. "
            f"Received: a tensor of shape {shape}"
        )
    if kind == "histogram":
        protos.check_histogram_dtype(tag, dtype)
    if kind == "image":
        protos.check_image_shape(tag, shape)
        protos.check_image_dtype(tag, dtype)
    if kind == "audio":
        protos.check_audio_shape(tag, shape)


def _traced_operands(kind, value, params):
    """The arrays a traced step hands the host: images and audio cut to `max_outputs`."""
    if kind == "scalar":
        return [keras.ops.reshape(value, ())]
    if kind == "histogram":
        return [value]
    if kind == "image":
        return [value[: params["max_outputs"]]]
    if kind == "audio":
        return [value[: params["max_outputs"]], params["sample_rate"]]
    return []


def _tags(kind, tag, params, count=None):
    if kind in ("image", "audio"):
        count = params["max_outputs"] if count is None else count
        if params["max_outputs"] == 1:
            return [f"{tag}/{kind}"]
        return [f"{tag}/{kind}/{i}" for i in range(min(count, params["max_outputs"]))]
    return [tag]


def _is_tf_graph_tensor(value):
    tf = sys.modules.get("tensorflow")
    return tf is not None and hasattr(tf, "is_symbolic_tensor") and tf.is_symbolic_tensor(value)


def _is_traced(value):
    return isinstance(value, (jax.core.Tracer, keras.KerasTensor))


def _model_fn_call():
    try:
        return store_lib.current_call("summary")
    except RuntimeError:
        return None


def summarize(kind, name, value, family=None, step=None, recording_rule=V1, **params):
    """Makes the TF1 summary `kind` of `value` (see the module docstring).

    Args:
        kind: one of `KINDS`.
        name: the summary's name.
        value: the tensor (for `text`, the strings).
        family: TF1's tag prefix, or None.
        step: the step to write at; None: the summary's default (see
            `summary.traced`, `kte.summary.at_step`).
        recording_rule: `V1` for `tf.summary.*`; for `tf.contrib.summary.*`
            the period of the open recording condition (1 for
            `always_record_summaries`), or None when none is open (nothing
            is recorded), optionally as `(period, global_step)`.
        **params: the kind's arguments: `max_outputs`, `bad_color`,
            `sample_rate`.

    Returns:
        In `model_fn`, a `SummaryOp`; on the host, whether it was written;
        for a TensorFlow graph tensor, what TensorFlow returns.

    Raises:
        ValueError: for a bad name, family or value.
        RuntimeError: for a traced value outside `model_fn`.
    """
    _check(name, family)
    if "max_outputs" in params:
        protos.check_max_outputs(params["max_outputs"])
    if kind == "text":
        params["text"] = value
    if _is_tf_graph_tensor(value):
        return _tensorflow_summary(kind, name, value, family, params)
    context = _model_fn_call()
    if context is not None:
        return _in_model_fn(context, kind, name, value, family, step, recording_rule, params)
    if _is_traced(value) or _is_traced(step):
        raise RuntimeError(
            f"summary {name!r} was given a traced tensor outside a model_fn run by "
            "this library: write it in model_fn, or pass the tensor through the "
            "spec's `host_call` and write it there."
        )
    return _on_host(kind, host_tag(name, family), value, step, recording_rule, params)


def _tensorflow_summary(kind, name, value, family, params):
    import tensorflow as tf

    function = getattr(tf.compat.v1.summary, kind)
    if kind == "text":
        return function(name, value)
    extra = {k: params[k] for k in ("max_outputs", "sample_rate") if k in params}
    return function(name, value, family=family, **extra)


def _period(recording_rule):
    """`(period, global_step)` of a contrib recording rule; None when not recording."""
    if recording_rule is None:
        return None
    if isinstance(recording_rule, tuple):
        return recording_rule
    return recording_rule, None


def _on_host(kind, tag, value, step, recording_rule, params):
    if recording_rule != V1:
        rule = _period(recording_rule)
        if rule is None:
            return False
        period, global_step = rule
        at = recording.resolve_step(tag, step)
        if at is None:
            return False
        checked = at if global_step is None else int(np.asarray(global_step).reshape(()))
        if checked % period:
            return False
    build = _builder(kind, tag, params)
    if kind == "audio":
        values = build(np.asarray(value), params["sample_rate"])
    elif kind == "text":
        values = build()
    else:
        values = build(np.asarray(value))
    return recording.write_values(values, step, tag)


def _in_model_fn(context, kind, name, value, family, step, recording_rule, params):
    tag = _model_fn_tag(name, family)
    if kind != "text":
        value = keras.ops.convert_to_tensor(value) if not _is_traced(value) else value
    _check_traced(kind, tag, value)
    batch = value.shape[0] if kind in ("image", "audio") else None
    op = SummaryOp(_tags(kind, tag, params, batch))
    if (
        context.building or context.mode != ModeKeys.TRAIN or train_ops.replaying()
        or isinstance(value, keras.KerasTensor)
    ):
        return op
    operands = _traced_operands(kind, value, params)
    global_step = context.global_step
    if recording_rule == V1:
        target = traced.destination()
        if target is None:
            return op
        logdir, period = target
        after = global_step + 1
        when = (after - 1) % period == 0  # Steps 1, n + 1, 2n + 1: where the loss is written.
        at = after if step is None else step
    else:
        rule, logdir = _period(recording_rule), recording.current_logdir()
        if rule is None or logdir is None:
            return op
        period, rule_step = rule
        at = global_step if step is None else step
        checked = at if rule_step is None else rule_step
        when = None if period == 1 else checked % period == 0
    traced.emit(logdir, _builder(kind, tag, params), operands, at, when)
    return op
