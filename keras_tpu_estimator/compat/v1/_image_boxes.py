"""`tf.image.sample_distorted_bounding_box`: a random crop that keeps enough of an object.

TF1's sampler, the Inception-style crop of ResNet, MnasNet and EfficientNet
preprocessing: up to `max_attempts` times, it draws an aspect ratio and a
height within `area_range` of the image, places the crop at random, and
keeps the first crop of 10 pixels or more that covers at least
`min_object_covered` of one of `bounding_boxes`; with none, the whole image.
Heights and widths are rounded, and offsets drawn, as TF's kernel did (an
offset never puts a smaller crop flush against the bottom or right edge).
All attempts are drawn at once and the first good one is selected: no loop
in the compiled program. The numbers come from the model's seed generator,
as `tf1.random_uniform`'s do; `seed` and `seed2` are accepted and ignored.

```python
begin, size, _ = tf1.image.sample_distorted_bounding_box(
    tf1.shape(image), bounding_boxes=bbox, min_object_covered=0.1,
    aspect_ratio_range=(3. / 4, 4. / 3.), area_range=(0.08, 1.0), max_attempts=10,
    use_image_if_no_bounding_boxes=True)
image = tf1.slice(image, begin, size)
```
"""

import collections
import functools

import jax
import jax.numpy as jnp
import keras
import numpy as np

from keras_tpu_estimator.compat.v1._op_helpers import computed_dtype
from keras_tpu_estimator.compat.v1._op_helpers import static_value
from keras_tpu_estimator.compat.v1._symbolic import symbolic_call
from keras_tpu_estimator.model_fn import store

SampleDistortedBoundingBox = collections.namedtuple(
    "SampleDistortedBoundingBox", ["begin", "size", "bboxes"])
SampleDistortedBoundingBox.__doc__ = """What `sample_distorted_bounding_box` returns:
`begin` `[offset_y, offset_x, 0]` and `size` `[height, width, -1]` for
`tf1.slice`, and `bboxes`, the crop as a normalized box `[1, 1, 4]`."""

# Crops of fewer pixels are never kept.
_MIN_CROP_AREA = 10


def _range(value, default, name):
    """`value` (or `default`) as two float32 numbers, checked."""
    value = default if value is None else value
    if len(value) != 2:
        raise ValueError(f"{name} must hold 2 numbers. Received: {name}={value!r}")
    low, high = np.float32(value[0]), np.float32(value[1])
    if low < 0 or high < 0:
        raise ValueError(f"{name} must be non-negative. Received: {name}={value!r}")
    return low, high


def _check_boxes(bounding_boxes):
    if len(bounding_boxes.shape) != 3 or bounding_boxes.shape[-1] != 4:
        raise ValueError(
            "sample_distorted_bounding_box needs bounding_boxes of shape [batch, N, 4]. "
            f"Received: shape {tuple(bounding_boxes.shape)}"
        )
    values = static_value(bounding_boxes)
    if values is not None and values.size and ((values < 0) | (values > 1)).any():
        raise ValueError(
            "All bounding box coordinates must be in [0.0, 1.0]. Received: "
            f"{values[(values < 0) | (values > 1)][0]!r}"
        )


def _rint(x):
    """C's `lrintf` (halves to even) as int32."""
    return jnp.round(x).astype("int32")


def _uniform_below(draw, limit):
    """An int in `[0, limit)` from a uniform `draw` in `[0, 1)` (0 for `limit <= 1`)."""
    return jnp.minimum(jnp.floor(draw * limit).astype("int32"), jnp.maximum(limit - 1, 0))


def _crops(height, width, area_range, aspect_ratio, draws):
    """Candidate crops `(y, x, h, w)` and whether each fits the constraints (TF's rounding)."""
    total = height.astype("float32") * width.astype("float32")
    min_area, max_area = area_range[0] * total, area_range[1] * total
    low = _rint(jnp.sqrt(min_area / aspect_ratio))
    high = _rint(jnp.sqrt(max_area / aspect_ratio))
    too_wide = _rint(high * aspect_ratio) > width
    # The tallest crop whose rounded width still fits.
    fitted = ((width + np.float32(0.5 - 1e-7)) / aspect_ratio).astype("int32")
    fitted = jnp.where(_rint(fitted * aspect_ratio) > width, fitted - 1, fitted)
    high = jnp.minimum(jnp.where(too_wide, fitted, high), height)
    low = jnp.minimum(low, high)
    h = low + _uniform_below(draws[:, 1], high - low + 1)
    w = _rint(h * aspect_ratio)
    # One step up, then one down, where rounding left the area outside the range.
    h = jnp.where(w * h < min_area, h + 1, h)
    w = _rint(h * aspect_ratio)
    h = jnp.where(w * h > max_area, h - 1, h)
    w = _rint(h * aspect_ratio)
    area = (w * h).astype("float32")
    fits = (area >= min_area) & (area <= max_area) & (w <= width) & (h <= height) & (
        w > 0) & (h > 0) & (aspect_ratio > 0) & (area_range[1] > 0) & (
        area_range[0] <= area_range[1])
    y = jnp.where(h < height, _uniform_below(draws[:, 2], height - h), 0)
    x = jnp.where(w < width, _uniform_below(draws[:, 3], width - w), 0)
    return (y, x, h, w), fits


def _covers(crop, objects, min_object_covered):
    """Whether each crop covers at least `min_object_covered` of one of `objects`."""
    y, x, h, w = (c[:, None] for c in crop)
    top, left, bottom, right = (objects[None, :, i] for i in range(4))
    overlap_h = jnp.maximum(jnp.minimum(y + h, bottom) - jnp.maximum(y, top), 0)
    overlap_w = jnp.maximum(jnp.minimum(x + w, right) - jnp.maximum(x, left), 0)
    object_area = (bottom - top) * (right - left)
    covered = (overlap_h * overlap_w).astype("float32") / jnp.where(
        object_area == 0, 1, object_area).astype("float32")
    enough = (object_area != 0) & (covered >= min_object_covered)
    return jnp.any(enough, axis=1) & (h[:, 0] * w[:, 0] >= _MIN_CROP_AREA)


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None,
                                  min_object_covered=0.1, aspect_ratio_range=None,
                                  area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """A random crop of an image that covers enough of one of `bounding_boxes`.

    Args:
        image_size: `[height, width, channels]` (`tf1.shape(image)`), integers.
        bounding_boxes: float `[batch, N, 4]` boxes `[y_min, x_min, y_max,
            x_max]` in `[0, 1]`, relative to the image.
        seed, seed2: accepted and ignored (the model's seed generator draws).
        min_object_covered: the least fraction of a box the crop must cover.
        aspect_ratio_range: `(min, max)` of the crop's width / height;
            default `(0.75, 1.33)`.
        area_range: `(min, max)` of the crop's fraction of the image's area;
            default `(0.05, 1.0)`.
        max_attempts: how many crops to draw before using the whole image;
            default 100.
        use_image_if_no_bounding_boxes: whether the whole image stands for
            the box when `bounding_boxes` holds none.

    Returns:
        `(begin, size, bboxes)`: `begin` `[offset_y, offset_x, 0]` and `size`
        `[height, width, -1]` in `image_size`'s integer dtype, for
        `tf1.slice`; `bboxes`, the crop's normalized box, float32 `[1, 1, 4]`.

    Raises:
        ValueError: for a range that is not 2 non-negative numbers, an area
            above 1, `max_attempts < 1`, boxes of another shape or (when
            known while tracing) outside `[0, 1]`, or no boxes without
            `use_image_if_no_bounding_boxes`.
    """
    aspect_ratio_range = _range(aspect_ratio_range, (0.75, 1.33), "aspect_ratio_range")
    area_range = _range(area_range, (0.05, 1.0), "area_range")
    if area_range[0] > 1 or area_range[1] > 1:
        raise ValueError(f"area_range must be <= 1.0. Received: area_range={area_range!r}")
    max_attempts = 100 if max_attempts is None else int(max_attempts)
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be positive. Received: max_attempts={max_attempts}")
    bounding_boxes = bounding_boxes if hasattr(bounding_boxes, "shape") else np.asarray(
        bounding_boxes, np.float32)
    _check_boxes(bounding_boxes)
    no_boxes = bounding_boxes.shape[0] * bounding_boxes.shape[1] == 0
    if no_boxes and not use_image_if_no_bounding_boxes:
        raise ValueError(
            "No bounding boxes provided as input. One must enable "
            "use_image_if_no_bounding_boxes if you wish to not provide any bounding boxes.")
    dtype = getattr(image_size, "dtype", None)
    size_dtype = "int32" if dtype is None else computed_dtype(dtype)
    generator = store.get_seed_generator()  # Created before any symbolic trace.

    def sample(image_size, bounding_boxes, min_object_covered):
        draws = keras.random.uniform((max_attempts, 4), seed=generator)
        return _select(draws, image_size, jnp.reshape(jnp.asarray(bounding_boxes, "float32"),
                                                      (-1, 4)),
                       min_object_covered, aspect_ratio_range, area_range, size_dtype)

    return symbolic_call(sample, image_size, bounding_boxes, min_object_covered)


# One compiled program: called eagerly (outside a step), not one dispatch per op.
@functools.partial(jax.jit, static_argnums=(4, 5, 6))
def _select(draws, image_size, boxes, min_object_covered, aspect_ratio_range, area_range,
            size_dtype):
    """The first of the crops `draws` gives that fits and covers enough of `boxes`."""
    size = jnp.asarray(image_size).astype("int32")
    height, width = size[0], size[1]
    if boxes.shape[0] == 0:
        objects = jnp.stack([0, 0, height, width])[None]
    else:
        scale = jnp.stack([height, width, height, width]).astype("float32")
        objects = (boxes * scale).astype("int32")
    ratio = draws[:, 0] * (aspect_ratio_range[1] - aspect_ratio_range[0]) + aspect_ratio_range[0]
    crop, fits = _crops(height, width, area_range, ratio, draws)
    good = fits & _covers(crop, objects, jnp.asarray(min_object_covered, "float32"))
    first = jnp.argmax(good)
    y, x, h, w = (jnp.where(jnp.any(good), c[first], whole)
                  for c, whole in zip(crop, (0, 0, height, width)))
    begin = jnp.stack([y, x, 0]).astype(size_dtype)
    extent = jnp.stack([h, w, -1]).astype(size_dtype)
    bboxes = jnp.stack([y / height, x / width, (y + h) / height, (x + w) / width])
    return SampleDistortedBoundingBox(begin, extent, bboxes.astype("float32")[None, None])


__all__ = ["sample_distorted_bounding_box"]
