"""TensorFlow 1's summary protos, made from numpy values on the host.

What TF1's summary kernels put in an event file, computed here with numpy
(and TensorFlow's own PNG and WAV encoders) from the values a host call or a
`model_fn` summary hands over:

- `scalar_value`: `simple_value`, a float32 (`tf.summary.scalar`);
- `histogram_value`: a `HistogramProto` over TF1's fixed bucket limits
  (`tf.summary.histogram`): limits growing by 10% from 1e-12 to 1e20, their
  negatives, and 0; runs of empty buckets merged into one;
- `image_values`: one PNG per image of the first `max_outputs`
  (`tf.summary.image`); float images scaled to uint8 per image;
- `audio_values`: one 16-bit WAV per clip of the first `max_outputs`
  (`tf.summary.audio`);
- `text_value`: a string tensor for TensorBoard's text plugin
  (`tf.summary.text`).

`write(writer, values, step)` writes the values as one `Summary` at `step`
with a TensorFlow 2 writer (`tf.summary.experimental.write_raw_pb`).

Example:

```python
summary = [protos.scalar_value("loss", 0.5), protos.histogram_value("w", weights)]
protos.write(writer, summary, step=100)
```
"""

import functools

import numpy as np

# The colour TF1 paints an image's pixels that hold a NaN or an infinity.
BAD_COLOR = (255, 0, 0, 255)
_FLOAT_IMAGE_TYPES = ("float16", "float32", "float64", "bfloat16")


def _tf():
    import tensorflow as tf

    return tf


def _summary_pb2():
    from tensorflow.core.framework import summary_pb2

    return summary_pb2


def scalar_value(tag, value):
    """`Summary.Value` of a TF1 scalar summary: `simple_value` (float32)."""
    number = np.asarray(value)
    if number.size != 1 or number.dtype.kind not in "biuf":
        raise ValueError(
            f"The value of scalar summary {tag!r} must be one number. Received: "
            f"a value of shape {number.shape} and dtype {number.dtype}"
        )
    return _summary_pb2().Summary.Value(tag=tag, simple_value=float(number.reshape(())))


def _dtype_name(dtype):
    return dtype if isinstance(dtype, str) else np.dtype(dtype).name


def check_histogram_dtype(tag, dtype):
    """Raises ValueError unless `dtype` holds real numbers (bfloat16 included)."""
    name = _dtype_name(dtype)
    if name != "bfloat16" and np.dtype(dtype).kind not in "biuf":
        raise ValueError(
            f"The values of histogram summary {tag!r} must be real numbers. "
            f"Received dtype {name}"
        )


def check_image_dtype(tag, dtype):
    """Raises ValueError unless `dtype` is uint8 or a float type (bfloat16 included)."""
    name = _dtype_name(dtype)
    if name != "uint8" and name not in _FLOAT_IMAGE_TYPES:
        raise ValueError(
            f"The images of image summary {tag!r} must be uint8, float16, float32, "
            f"float64 or bfloat16. Received dtype {name}"
        )


@functools.lru_cache(maxsize=1)
def bucket_limits():
    """TF1's histogram bucket limits (float64), in increasing order.

    The positive limits start at 1e-12 and grow by 10% while below 1e20; the
    largest double ends them. The negative limits mirror them, and 0 sits
    between the two halves.
    """
    positive = []
    limit = 1.0e-12
    while limit < 1.0e20:
        positive.append(limit)
        limit *= 1.1
    positive.append(np.finfo(np.float64).max)
    negative = [-x for x in reversed(positive)]
    return np.array(negative + [0.0] + positive, dtype=np.float64)


def histogram_value(tag, values):
    """`Summary.Value` of a TF1 histogram summary of `values` (any shape).

    Each value counts in the first bucket whose limit is above it. Runs of
    empty buckets become one, at the limit of the run's last bucket; the
    sum and sum of squares are accumulated in float64, in order.

    Raises:
        ValueError: for values that are not real numbers, or that hold a NaN
            or an infinity (as TF1's kernel refuses them).
    """
    array = np.asarray(values)
    check_histogram_dtype(tag, array.dtype)
    flat = array.astype(np.float64).reshape(-1)
    if not np.all(np.isfinite(flat)):
        kind = "Nan" if np.any(np.isnan(flat)) else "Infinity"  # TF1's words.
        raise ValueError(f"{kind} in summary histogram for: {tag}")
    limits = bucket_limits()
    counts = np.bincount(np.searchsorted(limits, flat, side="right"), minlength=limits.size)
    histo = _summary_pb2().HistogramProto(
        min=float(flat.min()) if flat.size else np.finfo(np.float64).max,
        max=float(flat.max()) if flat.size else -np.finfo(np.float64).max,
        num=float(flat.size),
        sum=float(np.cumsum(flat)[-1]) if flat.size else 0.0,
        sum_squares=float(np.cumsum(flat * flat)[-1]) if flat.size else 0.0,
    )
    i = 0
    while i < limits.size:
        end, count = limits[i], counts[i]
        i += 1
        if count == 0:  # A run of empty buckets is one bucket.
            while i < limits.size and counts[i] == 0:
                end = limits[i]
                i += 1
        histo.bucket_limit.append(float(end))
        histo.bucket.append(float(count))
    return _summary_pb2().Summary.Value(tag=tag, histo=histo)


def _numbered_tags(tag, kind, max_outputs, count):
    """`tag/kind` for `max_outputs == 1`, else `tag/kind/0`, `tag/kind/1`, ..."""
    if max_outputs == 1:
        return [f"{tag}/{kind}"][:count]
    return [f"{tag}/{kind}/{i}" for i in range(count)]


def check_max_outputs(max_outputs):
    """Raises ValueError unless `max_outputs` is an int >= 1."""
    if isinstance(max_outputs, bool) or not isinstance(max_outputs, (int, np.integer)) or (
        max_outputs < 1
    ):
        raise ValueError(f"`max_outputs` must be an int >= 1. Received: max_outputs={max_outputs!r}")


def check_image_shape(tag, shape):
    """Raises ValueError unless `shape` is `[batch, height, width, 1|3|4]`."""
    if len(shape) != 4 or shape[-1] not in (1, 3, 4, None):
        raise ValueError(
            f"The images of image summary {tag!r} must have shape [batch_size, "
            f"height, width, channels] with 1, 3 or 4 channels. Received shape {tuple(shape)}"
        )


def _as_uint8(image, bad_color):
    """One `[height, width, channels]` image as TF1's image summary makes it uint8.

    uint8 images stay. A float image is scaled by its finite pixels (a
    pixel is finite when all its channels are): without negatives, by
    `255 / max`; with negatives, by `127 / max(|min|, |max|)` and shifted
    by 128. A maximum below 1e-6 scales by 0. The result is truncated to
    uint8, in the image's own float type; non-finite pixels get `bad_color`.
    """
    if image.dtype == np.uint8:
        return image
    depth = image.shape[-1]
    finite = np.all(np.isfinite(image), axis=-1)
    good = image[finite]
    low = np.float32(good.min()) if good.size else np.float32(np.inf)
    high = np.float32(good.max()) if good.size else np.float32(-np.inf)
    if low < 0:
        bound = max(abs(low), abs(high))
        scale, offset = (np.float32(0.0) if bound < 1e-6 else np.float32(127.0) / bound), 128.0
    else:
        scale, offset = (np.float32(0.0) if high < 1e-6 else np.float32(255.0) / high), 0.0
    kind = image.dtype.type
    scaled = image * kind(scale) + kind(offset)
    out = np.where(finite[..., None], scaled, 0).astype(np.uint8)
    out[~finite] = np.asarray(bad_color, np.uint8)[:depth]
    return out


def image_values(tag, images, max_outputs=3, bad_color=None):
    """`Summary.Value`s of a TF1 image summary: one PNG per image.

    Args:
        tag: the summary's tag; the images get `tag/image` when
            `max_outputs` is 1, else `tag/image/0`, `tag/image/1`, ...
        images: `[batch, height, width, channels]`, channels 1 (grayscale),
            3 (RGB) or 4 (RGBA); uint8, or float16/32/64 (scaled per image,
            see `_as_uint8`); bfloat16, which TF1 refused, as float32.
        max_outputs: the first this many images are written.
        bad_color: the uint8 colour of non-finite pixels; red by default.

    Raises:
        ValueError: for another shape or dtype, or a bad `max_outputs`.
    """
    check_max_outputs(max_outputs)
    array = np.asarray(images)
    check_image_shape(tag, array.shape)
    check_image_dtype(tag, array.dtype)
    if array.dtype.name == "bfloat16":  # TF1 refused bfloat16; scaled as float32 here.
        array = array.astype(np.float32)
    color = BAD_COLOR if bad_color is None else np.asarray(bad_color).reshape(-1)
    if len(color) < array.shape[-1]:
        raise ValueError(
            f"`bad_color` must give a value for each of the {array.shape[-1]} "
            f"channels. Received: bad_color={bad_color!r}"
        )
    count = min(int(max_outputs), array.shape[0])
    pb2, tf = _summary_pb2(), _tf()
    values = []
    for tag_i, image in zip(_numbered_tags(tag, "image", max_outputs, count), array[:count]):
        pixels = _as_uint8(image, color)
        encoded = tf.io.encode_png(pixels).numpy()
        values.append(pb2.Summary.Value(tag=tag_i, image=pb2.Summary.Image(
            height=pixels.shape[0], width=pixels.shape[1], colorspace=pixels.shape[2],
            encoded_image_string=encoded,
        )))
    return values


def check_audio_shape(tag, shape):
    """Raises ValueError unless `shape` is `[batch, frames]` or `[batch, frames, channels]`."""
    if len(shape) not in (2, 3):
        raise ValueError(
            f"The audio of audio summary {tag!r} must have shape [batch_size, frames] "
            f"or [batch_size, frames, channels]. Received shape {tuple(shape)}"
        )


def audio_values(tag, audio, sample_rate, max_outputs=3):
    """`Summary.Value`s of a TF1 audio summary: one 16-bit PCM WAV per clip.

    Args:
        tag: the summary's tag; the clips get `tag/audio` when
            `max_outputs` is 1, else `tag/audio/0`, ...
        audio: float values in [-1, 1], `[batch, frames]` or
            `[batch, frames, channels]`.
        sample_rate: samples per second (a number, or an array holding one).
        max_outputs: the first this many clips are written.

    Raises:
        ValueError: for another shape, non-float audio, or a bad rate.
    """
    check_max_outputs(max_outputs)
    array = np.asarray(audio)
    check_audio_shape(tag, array.shape)
    if array.dtype.kind != "f":
        raise ValueError(
            f"The audio of audio summary {tag!r} must be floats in [-1, 1]. "
            f"Received dtype {array.dtype}"
        )
    rate = np.asarray(sample_rate)
    if rate.size != 1 or rate.dtype.kind not in "iuf" or float(rate.reshape(())) <= 0:
        raise ValueError(
            f"`sample_rate` of audio summary {tag!r} must be one positive number. "
            f"Received: sample_rate={sample_rate!r}"
        )
    rate = float(rate.reshape(()))
    if array.ndim == 2:
        array = array[:, :, None]
    count = min(int(max_outputs), array.shape[0])
    pb2, tf = _summary_pb2(), _tf()
    values = []
    for tag_i, clip in zip(_numbered_tags(tag, "audio", max_outputs, count), array[:count]):
        encoded = tf.audio.encode_wav(clip.astype(np.float32), int(rate)).numpy()
        values.append(pb2.Summary.Value(tag=tag_i, audio=pb2.Summary.Audio(
            sample_rate=rate, num_channels=clip.shape[1], length_frames=clip.shape[0],
            content_type="audio/wav", encoded_audio_string=encoded,
        )))
    return values


def text_value(tag, text):
    """`Summary.Value` of a TF1 text summary: a string tensor for the text plugin.

    Raises:
        ValueError: for values that are not strings.
    """
    array = np.asarray(text, dtype=object) if isinstance(text, (str, bytes)) else np.asarray(text)
    if array.dtype.kind not in "SUO" or not all(
        isinstance(x, (str, bytes)) for x in array.reshape(-1).tolist()
    ):
        raise ValueError(
            f"The text of text summary {tag!r} must be strings. Received: {text!r}"
        )
    encoded = np.vectorize(lambda x: x.encode("utf-8") if isinstance(x, str) else x,
                           otypes=[object])(array) if array.size else array.astype(object)
    pb2 = _summary_pb2()
    tensor = _tf().make_tensor_proto(np.asarray(encoded, dtype=object).reshape(array.shape))
    metadata = pb2.SummaryMetadata(plugin_data=pb2.SummaryMetadata.PluginData(plugin_name="text"))
    return pb2.Summary.Value(tag=tag, tensor=tensor, metadata=metadata)


def write(writer, values, step):
    """Writes `values` (`Summary.Value`s) as one `Summary` at `step` with `writer`.

    Args:
        writer: a `tf.summary.SummaryWriter`.
        values: a list of `Summary.Value`.
        step: the step, an int.

    Returns:
        True when written.
    """
    summary = _summary_pb2().Summary(value=list(values))
    with writer.as_default():
        return bool(_tf().summary.experimental.write_raw_pb(summary.SerializeToString(), step=step))
