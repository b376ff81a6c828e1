"""`tf.image`: TF1's flips, crops, resizing, colour and box ops, and its codecs by name.

Images are `[height, width, channels]` or batches `[n, height, width,
channels]`, as in TF1; integer images hold `[0, MAX]`, float images `[0, 1)`.
This module holds the flips and crops and assembles the namespace from
`_image_resize` (`resize_images` with TF1's four methods, `crop_and_resize`),
`_image_color` (brightness, contrast, hue, saturation, HSV, grayscale),
`_image_boxes` (`sample_distorted_bounding_box`), `_image_draw`
(`draw_bounding_boxes`), `_image_nms` (non-maximum suppression with static
output shapes) and `_image_codecs` (`decode_jpeg` and the other
encoded-image ops, for the input pipeline only).

The random ops draw from the model's seed generator, as `tf1.random_uniform`
does; their `seed` is accepted and ignored. Given TensorFlow tensors (a
`Dataset.map` function), each function runs TensorFlow's own (see `_sides`),
so an augmentation shared by `input_fn` and `model_fn` works on both.

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

from keras_tpu_estimator.compat.v1._image_boxes import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1._image_codecs import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1._image_color import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1._image_draw import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1._image_nms import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1._image_resize import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1 import _image_boxes
from keras_tpu_estimator.compat.v1 import _image_codecs
from keras_tpu_estimator.compat.v1 import _image_color
from keras_tpu_estimator.compat.v1 import _image_draw
from keras_tpu_estimator.compat.v1 import _image_nms
from keras_tpu_estimator.compat.v1 import _image_resize
from keras_tpu_estimator.compat.v1._image_common import check_image as _check_image
from keras_tpu_estimator.compat.v1._image_common import convert_image_dtype  # noqa: F401
from keras_tpu_estimator.compat.v1._image_common import spatial_axis as _axis
from keras_tpu_estimator.compat.v1._sides import run_where_called as _run_where_called
from keras_tpu_estimator.compat.v1._symbolic import symbolic_call as _symbolic_call
from keras_tpu_estimator.compat.v1._symbolic import symbolic_ops as _symbolic_ops
from keras_tpu_estimator.model_fn import store as _store


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


_RANDOM = ("random_flip_left_right", "random_flip_up_down", "random_crop",
           *_image_color.RANDOM, *_image_boxes.__all__)
__all__ = sorted(
    ["central_crop", "convert_image_dtype", "crop_to_bounding_box", "flip_left_right",
     "flip_up_down", "pad_to_bounding_box", "resize_image_with_crop_or_pad",
     "resize_with_crop_or_pad", "rot90", "transpose", "transpose_image",
     "random_flip_left_right", "random_flip_up_down", "random_crop",
     *_image_boxes.__all__, *_image_codecs.__all__, *_image_color.__all__,
     *_image_draw.__all__, *_image_nms.__all__, *_image_resize.__all__]
)
# The deterministic ops also run on the build pass's KerasTensors; the random
# ones trace themselves (their seed generator is fetched first), and the
# codecs never run on the library's values.
_symbolic_ops(globals(), exclude=_RANDOM + tuple(_image_codecs.__all__))
_run_where_called(globals())
