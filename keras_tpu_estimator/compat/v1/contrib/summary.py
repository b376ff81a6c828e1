"""`tf.contrib.summary`: TF1.x's summary writers, in host calls and `model_fn`.

TPU programs wrote their training summaries in the `host_call`:

```python
def host_call_fn(gs, loss, lr, images):
    gs = gs[0]
    with tf1.contrib.summary.create_file_writer(model_dir).as_default():
        with tf1.contrib.summary.always_record_summaries():
            tf1.contrib.summary.scalar("loss", loss[0], step=gs)
            tf1.contrib.summary.image("generated", images, max_images=4, step=gs)
            return tf1.contrib.summary.all_summary_ops()
```

The host call runs on the host with numpy values after each on-device loop,
and that code writes TensorBoard event files through `kte.summary` (see
`kte.summary.contrib`): the writer's `as_default()` shares the event file
`TPUEstimator.train` writes in its directory. As in TF1, a summary is
recorded only inside `always_record_summaries()` or
`record_summaries_every_n_global_steps(n)`; the events are TF1's
(`simple_value`, `HistogramProto`, PNG, WAV; tags `family/family/name`).

In `model_fn`, the same code writes from the compiled step, at the steps its
recording condition selects (the global step before the step's update, as
TF1 read it), into the writer made default around it; only then do the
values leave the device.
"""

from keras_tpu_estimator.summary import contrib as _contrib
from keras_tpu_estimator.summary import recording as _recording
from keras_tpu_estimator.summary import tf1 as _tf1

SummaryWriter = _contrib.SummaryWriter
create_file_writer = _contrib.create_file_writer
always_record_summaries = _contrib.always_record_summaries
never_record_summaries = _contrib.never_record_summaries
record_summaries_every_n_global_steps = _contrib.record_summaries_every_n_global_steps
all_summary_ops = _contrib.all_summary_ops


def _summarize(kind, name, tensor, family, step, **params):
    return _tf1.summarize(kind, name, tensor, family, step, _contrib.recording_rule(), **params)


def scalar(name, tensor, family=None, step=None):
    """Writes a scalar summary at `step` (default: the global step).

    Returns:
        On the host, whether it was written (False when no recording
        condition selects the step); in `model_fn`, a `SummaryOp` handle.

    Raises:
        ValueError: for an empty `name` or a value that is not one number.
    """
    return _summarize("scalar", name, tensor, family, step)


def histogram(name, tensor, family=None, step=None):
    """Writes a TF1 histogram summary (see `tf1.summary.histogram`); returns as `scalar`."""
    return _summarize("histogram", name, tensor, family, step)


def image(name, tensor, bad_color=None, max_images=3, family=None, step=None):
    """Writes the first `max_images` images as PNG images (see `tf1.summary.image`).

    Args:
        name: the summary's name (tags `name/image` or `name/image/0`, ...).
        tensor: `[batch_size, height, width, channels]`, channels 1, 3 or 4.
        bad_color: the uint8 colour of pixels holding a NaN or an infinity
            (default red).
        max_images: how many images to write at most.
        family, step: as in `scalar`.

    Returns:
        As `scalar`.
    """
    return _summarize("image", name, tensor, family, step, max_outputs=max_images,
                      bad_color=bad_color)


def audio(name, tensor, sample_rate, max_outputs, family=None, step=None):
    """Writes the first `max_outputs` clips as WAV audio (see `tf1.summary.audio`).

    Returns:
        As `scalar`.
    """
    return _summarize("audio", name, tensor, family, step, max_outputs=max_outputs,
                      sample_rate=sample_rate)


def flush(writer=None, name=None):
    """Flushes `writer` (default: the default writer's event file)."""
    del name
    if writer is not None:
        writer.flush()
    else:
        _recording.flush()
