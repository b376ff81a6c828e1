"""`tf.compat.v2.summary`: TensorFlow 2's summaries, also inside `model_fn`.

Inside `model_fn` (TRAIN), a summary is written at the steps where the
`record_if` condition around it holds, into its writer's directory, at the
value its `step=` has in that step; its values leave the device only then.
The events are TensorFlow 2's own (each is written on the host by
`tf.summary.<name>` of TensorFlow). Outside `model_fn` (a `host_call`,
numpy values) the functions write at once. See `kte.summary.tf2`.

```python
import keras_tpu_estimator.compat.v1 as tf1
tf2 = tf1.compat.v2

def model_fn(features, labels, mode, params):
    ...
    global_step = tf1.train.get_or_create_global_step()
    writer = tf2.summary.create_file_writer(params["model_dir"] + "/extra")
    with writer.as_default(), tf2.summary.record_if(tf1.equal(tf1.mod(global_step, 100), 0)):
        tf2.summary.scalar("learning_rate", learning_rate, step=global_step)
        tf2.summary.histogram("logits", logits, step=global_step)
    train_op = tf1.group(train_op, *tf1.summary.all_v2_summary_ops())
```
"""

import types

from keras_tpu_estimator.summary import tf2 as _tf2

SummaryWriter = _tf2.SummaryWriter
create_file_writer = _tf2.create_file_writer
record_if = _tf2.record_if
should_record_summaries = _tf2.should_record_summaries

#: `tf.summary.experimental`: the default step.
experimental = types.SimpleNamespace(get_step=_tf2.get_step, set_step=_tf2.set_step)


def scalar(name, data, step=None, description=None):
    """Writes a scalar (TF2's `scalars` plugin: a float32 tensor) at `step`.

    Args:
        name: the summary's name; in `model_fn` the tag is under the open
            `variable_scope`s.
        data: a scalar tensor or number.
        step: the step (in `model_fn`, a tensor: its value in each step);
            None: the default step (`writer.as_default(step=)`,
            `experimental.set_step`).
        description: the summary's description.

    Returns:
        In `model_fn`, a boolean tensor: whether the step records it; on the
        host, what TensorFlow returns.

    Raises:
        ValueError: for no step, or data that is not a scalar.

    Example:

    ```python
    with writer.as_default():
        tf2.summary.scalar("loss", loss, step=tf1.train.get_global_step())
    ```
    """
    return _tf2.summarize("scalar", name, data, step, description=description)


def histogram(name, data, step=None, buckets=None, description=None):
    """Writes a histogram of `data` (TF2's `histograms` plugin), `buckets` buckets (30).

    Arguments and returns as `scalar`.
    """
    return _tf2.summarize("histogram", name, data, step, buckets=buckets,
                          description=description)


def image(name, data, step=None, max_outputs=3, description=None):
    """Writes the first `max_outputs` images of `data` as PNGs (TF2's `images` plugin).

    In `model_fn` only those images leave the device.

    Args:
        name: the summary's name.
        data: `[k, height, width, channels]`, channels 1, 3 or 4; floats in
            [0, 1] or uint8.
        step, description: as in `scalar`.
        max_outputs: how many images to write at most.

    Returns:
        As `scalar`.
    """
    return _tf2.summarize("image", name, data, step, max_outputs=max_outputs,
                          description=description)


def audio(name, data, sample_rate, step=None, max_outputs=3, encoding=None, description=None):
    """Writes the first `max_outputs` clips of `data` (`[k, t, c]`, floats in [-1, 1]) as WAV.

    `sample_rate` must be a number (not a tensor) in `model_fn`. Returns as
    `scalar`.
    """
    return _tf2.summarize("audio", name, data, step, sample_rate=sample_rate,
                          max_outputs=max_outputs, encoding=encoding, description=description)


def text(name, data, step=None, description=None):
    """Writes strings for TensorBoard's text plugin (in `model_fn`: Python or numpy strings)."""
    return _tf2.summarize("text", name, data, step, description=description)


def write(tag, tensor, step=None, metadata=None, name=None):
    """Writes `tensor` under `tag` with `metadata` (a `SummaryMetadata`), as TF2's `write`."""
    del name
    return _tf2.summarize("write", tag, tensor, step, metadata=metadata)


def flush(writer=None, name=None):
    """Flushes `writer` (default: the default writer); in `model_fn` nothing to do."""
    del name
    writer = writer if writer is not None else _tf2.default_writer()
    if writer is not None:
        writer.flush()
