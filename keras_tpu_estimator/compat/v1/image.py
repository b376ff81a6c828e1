"""`tf.image`: flips, crops, resizing and colour adjustments of TF1's `tf.image`.

Images are `[height, width, channels]` or batches `[n, height, width,
channels]`, as in TF1; integer images hold `[0, MAX]`, float images `[0, 1)`.
The random ones (`random_flip_left_right`, `random_crop`, `random_brightness`,
`random_contrast`) draw from the model's seed generator, as `tf1.random_uniform`
does; their `seed` is accepted and ignored. Given TensorFlow tensors (a
`Dataset.map` function), each runs TensorFlow's own (see `_sides`), so an
augmentation shared by `input_fn` and `model_fn` works on both.

```python
image = tf1.image.random_flip_left_right(image)
image = tf1.image.resize_images(image, [224, 224])          # TF1's bilinear, float32
image = tf1.image.random_brightness(image, max_delta=32. / 255.)
```
"""

import jax
import jax.numpy as jnp
import keras
import numpy as np

from keras_tpu_estimator.compat.v1 import dtypes
from keras_tpu_estimator.compat.v1._sides import run_where_called as _run_where_called
from keras_tpu_estimator.compat.v1._symbolic import symbolic_call as _symbolic_call
from keras_tpu_estimator.compat.v1._symbolic import symbolic_ops as _symbolic_ops
from keras_tpu_estimator.model_fn import store as _store


class ResizeMethod:
    """TF1's resize methods (`tf.image.ResizeMethod`)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def _check_image(image, name):
    if len(image.shape) not in (3, 4):
        raise ValueError(
            f"`{name}` needs an image of rank 3 (HWC) or 4 (NHWC). "
            f"Received: image of shape {tuple(image.shape)}"
        )
    return len(image.shape) == 4


def _axis(image, axis):
    """The axis of the image's height (0) or width (1), batched or not."""
    return axis + 1 if len(image.shape) == 4 else axis


# -- Flips and transposes. ----------------------------------------------------


def flip_left_right(image):
    """`image` mirrored left to right."""
    _check_image(image, "flip_left_right")
    return jnp.flip(image, _axis(image, 1))


def flip_up_down(image):
    """`image` mirrored top to bottom."""
    _check_image(image, "flip_up_down")
    return jnp.flip(image, _axis(image, 0))


def transpose_image(image):
    """`image` with height and width swapped."""
    return jnp.swapaxes(image, _axis(image, 0), _axis(image, 1))


transpose = transpose_image


def rot90(image, k=1, name=None):
    """`image` rotated `k` quarter turns counterclockwise."""
    return jnp.rot90(image, int(k), axes=(_axis(image, 0), _axis(image, 1)))


def _random_flip(image, axis, name):
    batched = _check_image(image, name)
    generator = _store.get_seed_generator()  # Created before any symbolic trace.

    def flip(x):
        draws = keras.random.uniform((x.shape[0],) if batched else (), seed=generator)
        flips = jnp.reshape(draws < 0.5, (-1, 1, 1, 1) if batched else ())
        return jnp.where(flips, jnp.flip(x, _axis(x, axis)), x)

    return _symbolic_call(flip, image)


def random_flip_left_right(image, seed=None):
    """`image` mirrored left to right with probability 1/2 (each image of a batch apart)."""
    return _random_flip(image, 1, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """`image` mirrored top to bottom with probability 1/2 (each image of a batch apart)."""
    return _random_flip(image, 0, "random_flip_up_down")


# -- Crops and pads. ----------------------------------------------------------


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The `target_height` x `target_width` window of `image` at the given offsets."""
    top, left = _axis(image, 0), _axis(image, 1)
    index = [slice(None)] * len(image.shape)
    index[top] = slice(int(offset_height), int(offset_height) + int(target_height))
    index[left] = slice(int(offset_width), int(offset_width) + int(target_width))
    return image[tuple(index)]


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """`image` padded with zeros to `target_height` x `target_width`, placed at the offsets."""
    height, width = image.shape[_axis(image, 0)], image.shape[_axis(image, 1)]
    pads = [(0, 0)] * len(image.shape)
    pads[_axis(image, 0)] = (int(offset_height), int(target_height) - int(offset_height) - height)
    pads[_axis(image, 1)] = (int(offset_width), int(target_width) - int(offset_width) - width)
    if any(p < 0 for pair in pads for p in pair):
        raise ValueError(
            f"pad_to_bounding_box: the image ({height}x{width}) at offset "
            f"({offset_height}, {offset_width}) does not fit in {target_height}x{target_width}."
        )
    return jnp.pad(image, pads)


def central_crop(image, central_fraction):
    """The central `central_fraction` (in `(0, 1]`) of each side of `image`."""
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    if central_fraction == 1.0:
        return image
    height, width = image.shape[_axis(image, 0)], image.shape[_axis(image, 1)]
    top = int((height - height * central_fraction) / 2)
    left = int((width - width * central_fraction) / 2)
    return crop_to_bounding_box(image, top, left, height - 2 * top, width - 2 * left)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """`image` centrally cropped and/or zero-padded to `target_height` x `target_width`."""
    height, width = image.shape[_axis(image, 0)], image.shape[_axis(image, 1)]
    crop_top, crop_left = max(height - target_height, 0) // 2, max(width - target_width, 0) // 2
    pad_top, pad_left = max(target_height - height, 0) // 2, max(target_width - width, 0) // 2
    image = crop_to_bounding_box(image, crop_top, crop_left, min(height, target_height),
                                 min(width, target_width))
    return pad_to_bounding_box(image, pad_top, pad_left, target_height, target_width)


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def random_crop(value, size, seed=None, name=None):
    """A `size` window of `value` at a uniformly drawn offset (`tf.random_crop`).

    Raises:
        ValueError: where `size` exceeds the shape of `value`.
    """
    size = tuple(int(s) for s in size)
    if len(size) != len(value.shape) or any(s > d for s, d in zip(size, value.shape)):
        raise ValueError(f"random_crop: size {size} does not fit in shape {tuple(value.shape)}.")
    generator = _store.get_seed_generator()

    def crop(x):
        limits = np.array(x.shape) - np.array(size) + 1
        draws = keras.random.uniform((len(size),), seed=generator)
        offsets = jnp.floor(draws * limits).astype("int32")
        return jax.lax.dynamic_slice(x, [offsets[i] for i in range(len(size))], size)

    return _symbolic_call(crop, value)


# -- Resizing (TF1's corner-aligned coordinates, not half-pixel centres). -----


def _source_coordinates(in_size, out_size, align_corners):
    if align_corners and out_size > 1:
        scale = (in_size - 1) / (out_size - 1)
    else:
        scale = in_size / out_size
    return jnp.arange(out_size, dtype="float32") * np.float32(scale)


def _resize_axis(image, axis, out_size, method, align_corners):
    in_size = image.shape[axis]
    coords = _source_coordinates(in_size, out_size, align_corners)
    if method == ResizeMethod.NEAREST_NEIGHBOR:
        index = jnp.round(coords) if align_corners else jnp.floor(coords)
        return jnp.take(image, jnp.minimum(index.astype("int32"), in_size - 1), axis=axis)
    low = jnp.floor(coords)
    high = jnp.minimum(low + 1, in_size - 1).astype("int32")
    shape = [1] * len(image.shape)
    shape[axis] = out_size
    fraction = jnp.reshape(coords - low, shape)
    low = jnp.take(image, low.astype("int32"), axis=axis)
    return low + (jnp.take(image, high, axis=axis) - low) * fraction


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None):
    """`images` resized to `size` `[height, width]` as TF1 resized them.

    `BILINEAR` returns float32, `NEAREST_NEIGHBOR` keeps the dtype; an image
    already of `size` is returned as it is.

    Raises:
        ValueError: for `BICUBIC`, `AREA` or `preserve_aspect_ratio`.
    """
    method = {"bilinear": 0, "nearest": 1}.get(method, method)
    if method not in (ResizeMethod.BILINEAR, ResizeMethod.NEAREST_NEIGHBOR) or \
            preserve_aspect_ratio:
        raise ValueError(
            "compat.v1 image resizing supports BILINEAR and NEAREST_NEIGHBOR without "
            f"preserve_aspect_ratio. Received: method={method!r}, "
            f"preserve_aspect_ratio={preserve_aspect_ratio!r}"
        )
    height, width = (int(s) for s in size)
    top, left = _axis(images, 0), _axis(images, 1)
    if (images.shape[top], images.shape[left]) == (height, width):
        return images
    if method == ResizeMethod.BILINEAR:
        images = images.astype("float32")
    images = _resize_axis(images, top, height, method, align_corners)
    return _resize_axis(images, left, width, method, align_corners)


resize = resize_images


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """`resize_images` with `BILINEAR` (half-pixel centres are not supported)."""
    _no_half_pixel_centers(half_pixel_centers)
    return resize_images(images, size, ResizeMethod.BILINEAR, align_corners)


def resize_nearest_neighbor(images, size, align_corners=False, name=None,
                            half_pixel_centers=False):
    """`resize_images` with `NEAREST_NEIGHBOR` (half-pixel centres are not supported)."""
    _no_half_pixel_centers(half_pixel_centers)
    return resize_images(images, size, ResizeMethod.NEAREST_NEIGHBOR, align_corners)


def _no_half_pixel_centers(half_pixel_centers):
    if half_pixel_centers:
        raise ValueError("compat.v1 image resizing does not support half_pixel_centers=True: "
                         "use keras.ops.image.resize.")


# -- Colour. ------------------------------------------------------------------


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """`image` in `dtype`, rescaled: integers span `[0, MAX]`, floats `[0, 1)`."""
    source, target = dtypes.as_dtype(image.dtype), dtypes.as_dtype(dtype)
    if source == target:
        return image
    if source.is_floating and target.is_floating:
        return image.astype(target)
    if source.is_integer and target.is_floating:
        return image.astype(target) * np.array(1.0 / source.max, target)
    if source.is_floating:
        scaled = image * np.array(target.max + 0.5, source)
        if saturate:
            scaled = jnp.clip(scaled, target.min, target.max)
        return scaled.astype(target)
    scale_in, scale_out = int(source.max) + 1, int(target.max) + 1
    if scale_in > scale_out:
        return (image // (scale_in // scale_out)).astype(target)
    return image.astype(target) * np.array(scale_out // scale_in, target)


def _in_float(image, adjust):
    dtype = dtypes.as_dtype(image.dtype)
    floats = image if dtype in ("float16", "float32") else convert_image_dtype(image, "float32")
    return convert_image_dtype(adjust(floats), dtype, saturate=True)


def adjust_brightness(image, delta):
    """`image` plus `delta` (computed in floats for integer images, then saturated)."""
    return _in_float(image, lambda x: x + jnp.asarray(delta, x.dtype))


def adjust_contrast(images, contrast_factor):
    """Each channel moved away from its mean by `contrast_factor`: `(x - mean) * f + mean`."""

    def adjust(x):
        mean = jnp.mean(x, axis=(-3, -2), keepdims=True)
        return (x - mean) * jnp.asarray(contrast_factor, x.dtype) + mean

    return _in_float(images, adjust)


def per_image_standardization(image):
    """`(x - mean) / max(stddev, 1 / sqrt(pixels))` per image, in float32."""
    image = image.astype("float32")
    pixels = np.prod(image.shape[-3:])
    mean = jnp.mean(image, axis=(-3, -2, -1), keepdims=True)
    stddev = jnp.std(image, axis=(-3, -2, -1), keepdims=True)
    return (image - mean) / jnp.maximum(stddev, np.float32(1.0 / np.sqrt(pixels)))


def rgb_to_grayscale(images, name=None):
    """The luma of RGB `images`, keeping a last axis of 1."""
    floats = convert_image_dtype(images, "float32")
    gray = jnp.tensordot(floats, jnp.array([0.2989, 0.5870, 0.1140], "float32"), [[-1], [-1]])
    return convert_image_dtype(gray[..., None], dtypes.as_dtype(images.dtype))


def grayscale_to_rgb(images, name=None):
    """Grayscale `images` (last axis 1) repeated into three channels."""
    return jnp.repeat(images, 3, axis=-1)


def random_brightness(image, max_delta, seed=None):
    """`adjust_brightness` by a delta drawn from `[-max_delta, max_delta)`.

    Raises:
        ValueError: for a negative `max_delta`.
    """
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    generator = _store.get_seed_generator()
    return _symbolic_call(lambda x: adjust_brightness(x, keras.random.uniform(
        (), -max_delta, max_delta, seed=generator)), image)


def random_contrast(image, lower, upper, seed=None):
    """`adjust_contrast` by a factor drawn from `[lower, upper)`.

    Raises:
        ValueError: unless `0 <= lower < upper`.
    """
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    generator = _store.get_seed_generator()
    return _symbolic_call(lambda x: adjust_contrast(x, keras.random.uniform(
        (), lower, upper, seed=generator)), image)


_RANDOM = ("random_flip_left_right", "random_flip_up_down", "random_crop",
           "random_brightness", "random_contrast")
__all__ = sorted(
    ["ResizeMethod", "adjust_brightness", "adjust_contrast", "central_crop",
     "convert_image_dtype", "crop_to_bounding_box", "flip_left_right", "flip_up_down",
     "grayscale_to_rgb", "pad_to_bounding_box", "per_image_standardization", "resize",
     "resize_bilinear", "resize_image_with_crop_or_pad", "resize_images",
     "resize_nearest_neighbor", "resize_with_crop_or_pad", "rgb_to_grayscale", "rot90",
     "transpose", "transpose_image", *_RANDOM]
)
# The deterministic ops also run on the build pass's KerasTensors; the random
# ones trace themselves (their seed generator is fetched first).
_symbolic_ops(globals(), exclude=_RANDOM)
_run_where_called(globals())
