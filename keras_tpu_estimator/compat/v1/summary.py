"""`tf.compat.v1.summary`: TF1 summaries, in `model_fn` and in host calls.

In `model_fn` (TRAIN), a summary is written to `model_dir` every
`RunConfig.save_summary_steps` steps, as TF1's estimator wrote the summaries
of its graph: at the global step after the step that made it, beside the
`loss`. Its values leave the device only at those steps. In EVAL and
PREDICT nothing is written (as TF1's estimator wrote only the metrics).

In a `host_call` (numpy values), a summary is written at once into the
event file of the enclosing `kte.summary.record_summaries` (which
`TPUEstimator.train` opens on `model_dir`), at the host call's step (or
`step=`).

The events are TF1's own: `simple_value` scalars, `HistogramProto`
histograms over TF1's bucket limits, PNG images, WAV audio, text tensors;
the tags are TF1's (`name/image/0`, `family/family/name`, `loss_1` for a
second `loss` in one `model_fn`).

```python
def model_fn(features, labels, mode, params):
    ...
    tf1.summary.scalar("learning_rate", learning_rate)
    tf1.summary.image("inputs", features["image"], max_outputs=2)
    tf1.summary.histogram("logits", logits)

def host_call_fn(gs, loss):
    tf1.summary.scalar("loss", loss[0], step=gs[0])
```

`tf.summary.create_file_writer`, `always_record_summaries`,
`record_summaries_every_n_global_steps` and `all_summary_ops`, which TF1.13
programs reached through `tf.summary`, are `tf.contrib.summary`'s.
"""

from keras_tpu_estimator import summary as _summary
from keras_tpu_estimator.compat.v1 import graph as _graph
from keras_tpu_estimator.summary import contrib as _contrib
from keras_tpu_estimator.summary import tf1 as _tf1
from keras_tpu_estimator.summary import tf2 as _tf2

SummaryOp = _tf1.SummaryOp


def _collected(result, collections):
    """Adds a `model_fn` summary's handle to its collections, as TF1 did."""
    if isinstance(result, SummaryOp):
        keys = [_graph.GraphKeys.SUMMARIES] if collections is None else list(collections)
        for key in keys:
            _graph.add_to_collection(key, result)
    return result


def scalar(name, tensor, collections=None, family=None, step=None):
    """Writes a scalar summary (a TF1 `simple_value`).

    Args:
        name: the summary's name; the tag is TF1's (see the module docstring).
        tensor: a tensor or number with one element.
        collections: the collections the handle joins in `model_fn`
            (default: `GraphKeys.SUMMARIES`).
        family: TF1's tag prefix.
        step: the step to write at. Default: in `model_fn`, the global step
            after this step; in a host call, the host call's step.

    Returns:
        In `model_fn`, a `SummaryOp` handle; in a host call, True when
        written (False outside `kte.summary.record_summaries`).

    Raises:
        ValueError: for an empty `name`, or a value that is not one number.

    Example:

    ```python
    tf1.summary.scalar("learning_rate", learning_rate)
    ```
    """
    return _collected(_tf1.summarize("scalar", name, tensor, family, step), collections)


def histogram(name, values, collections=None, family=None, step=None):
    """Writes a histogram summary: TF1's `HistogramProto` of `values`.

    The buckets are TF1's: limits growing by 10% from 1e-12 to 1e20, their
    negatives and 0, with runs of empty buckets merged. A NaN or an infinity
    fails the step, as in TF1. Arguments and returns as `scalar`.

    Example:

    ```python
    tf1.summary.histogram("logits", logits)
    ```
    """
    return _collected(_tf1.summarize("histogram", name, values, family, step), collections)


def image(name, tensor, max_outputs=3, collections=None, family=None, step=None):
    """Writes the first `max_outputs` images of `tensor` as PNG images.

    Tags: `name/image` when `max_outputs` is 1, else `name/image/0`,
    `name/image/1`, ... uint8 images are written as they are; float images
    are scaled per image, as TF1 did: without negative values by
    `255 / max`, else by `127 / max(|min|, |max|)` around 128; pixels holding
    a NaN or an infinity are red. In `model_fn` only the first `max_outputs`
    images leave the device.

    Args:
        name: the summary's name.
        tensor: `[batch_size, height, width, channels]`, channels 1, 3 or 4;
            uint8, float16, float32 or float64.
        max_outputs: how many images to write at most.
        collections, family, step: as in `scalar`.

    Returns:
        As `scalar`.

    Raises:
        ValueError: for another shape or dtype, or `max_outputs` < 1.

    Example:

    ```python
    tf1.summary.image("generated", generated_images, max_outputs=4)
    ```
    """
    return _collected(
        _tf1.summarize("image", name, tensor, family, step, max_outputs=max_outputs), collections
    )


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None, step=None):
    """Writes the first `max_outputs` clips of `tensor` as 16-bit WAV audio.

    Args:
        name: the summary's name (tags `name/audio` or `name/audio/0`, ...).
        tensor: floats in [-1, 1], `[batch_size, frames]` or
            `[batch_size, frames, channels]`.
        sample_rate: samples per second.
        max_outputs: how many clips to write at most.
        collections, family, step: as in `scalar`.

    Returns:
        As `scalar`.

    Example:

    ```python
    tf1.summary.audio("speech", waveforms, sample_rate=16000)
    ```
    """
    return _collected(
        _tf1.summarize("audio", name, tensor, family, step, max_outputs=max_outputs,
                       sample_rate=sample_rate),
        collections,
    )


def text(name, tensor, collections=None, step=None):
    """Writes strings for TensorBoard's text plugin.

    In `model_fn` the strings must be Python or numpy strings (JAX has no
    string tensors); they are written at the summary steps.

    Example:

    ```python
    tf1.summary.text("config", "lr=0.1, batch=256")
    ```
    """
    return _collected(_tf1.summarize("text", name, tensor, None, step), collections)


def merge(inputs, collections=None, name=None):
    """Combines summary handles into one (TF1 merged their serialized summaries).

    Summaries are written by the step that makes them, so the merged handle
    only lists their tags.

    Args:
        inputs: `SummaryOp` handles (other values are ignored: the host
            returns whether each summary was written).
        collections: collections the merged handle joins in `model_fn`.
        name: ignored.

    Returns:
        A `SummaryOp`.
    """
    del name
    tags = [tag for op in inputs if isinstance(op, SummaryOp) for tag in op.tags]
    result = SummaryOp(tags)
    if collections is not None and _in_model_fn():
        _collected(result, collections)
    return result


def merge_all(key=_graph.GraphKeys.SUMMARIES, scope=None, name=None):
    """Merges the summary handles of collection `key` made in this `model_fn` call.

    Returns:
        A `SummaryOp`, or None when there are none (or outside `model_fn`),
        as TF1 returned None for an empty collection.
    """
    if not _in_model_fn():
        return None
    ops = [op for op in _graph.get_collection(key, scope) if isinstance(op, SummaryOp)]
    return merge(ops, name=name) if ops else None


def _in_model_fn():
    try:
        _graph.current_graph()
    except RuntimeError:
        return False
    return True


flush = _summary.flush

# TF1.13 programs reached `tf.contrib.summary`'s writers through `tf.summary`.
create_file_writer = _contrib.create_file_writer
always_record_summaries = _contrib.always_record_summaries
record_summaries_every_n_global_steps = _contrib.record_summaries_every_n_global_steps
all_summary_ops = _contrib.all_summary_ops

# TensorFlow 2's summaries made in this model_fn call (`compat.v2.summary`): a list.
all_v2_summary_ops = _tf2.all_v2_summary_ops
