"""`tf.image`'s colour ops: brightness, contrast, hue, saturation, HSV and grayscale.

Integer images are adjusted in float32 and converted back, as TF1 did;
float16 and float32 images are adjusted as they are. Hue and saturation
work on the HSV hexcone: a pixel's largest and smallest channels stay
where they are (hue) or its largest does (saturation), and the middle
channel follows the hue. The random ones draw one value per call (the
whole batch shares it, as in TF1) from the model's seed generator; their
`seed` is accepted and ignored, as `tf1.random_uniform`'s is.

```python
image = tf1.image.random_saturation(image, lower=0.5, upper=1.5)
image = tf1.image.random_hue(image, max_delta=0.2)
hsv = tf1.image.rgb_to_hsv(image)                # hue, saturation, value in [0, 1]
```
"""

import jax
import jax.numpy as jnp
import keras
import numpy as np

from keras_tpu_estimator.compat.v1 import dtypes
from keras_tpu_estimator.compat.v1._image_common import convert_image_dtype
from keras_tpu_estimator.compat.v1._image_common import in_float
from keras_tpu_estimator.compat.v1._op_helpers import computed_dtype
from keras_tpu_estimator.compat.v1._symbolic import symbolic_call
from keras_tpu_estimator.model_fn import store

# Where each of red, green and blue peaks on the hue circle (in sixths).
_CHANNEL_SHIFTS = np.array([0.0, 4.0, 2.0], "float32")


def _check_rgb(images, name):
    if len(images.shape) < 1 or images.shape[-1] != 3:
        raise ValueError(
            f"`{name}` needs RGB images, with 3 channels in the last dimension. "
            f"Received: images of shape {tuple(images.shape)}"
        )


def _check_float(images, name):
    dtype = dtypes.as_dtype(images.dtype)
    if not dtype.is_floating:
        raise TypeError(
            f"`{name}` takes float images (float16, bfloat16, float32, float64). "
            f"Received: images of dtype {dtype.name}; convert them with "
            "tf1.image.convert_image_dtype first."
        )


def _hue_sixths(red, green, blue, high, spread):
    """Hue in `[0, 6)` of pixels whose largest channel is `high`; 0 where `spread` is 0."""
    safe = jnp.where(spread > 0, spread, jnp.ones_like(spread))
    hue = jnp.where(red == high, (green - blue) / safe,
                    jnp.where(green == high, (blue - red) / safe + 2, (red - green) / safe + 4))
    hue = jnp.where(spread > 0, hue, jnp.zeros_like(hue))
    return jnp.where(hue < 0, hue + 6, hue)


def _from_hexcone(hue, low, high):
    """RGB of the pixels of hue `hue` (sixths, any real) and smallest/largest channel."""
    shifted = jnp.mod(hue[..., None] + _CHANNEL_SHIFTS, 6.0)
    weight = jnp.clip(jnp.abs(shifted - 3.0) - 1.0, 0.0, 1.0)
    return low[..., None] + (high - low)[..., None] * weight


def _channels(images):
    return images[..., 0], images[..., 1], images[..., 2]


def _saturation(high, spread):
    return jnp.where(high > 0, spread / jnp.where(high > 0, high, 1.0), 0.0)


# The conversions are compiled once each: eager calls (outside a step) run
# one program, not one per operation; inside a step they are inlined.
@jax.jit
def _rgb_to_hsv(x):
    red, green, blue = _channels(x)
    high, low = jnp.max(x, axis=-1), jnp.min(x, axis=-1)
    hue = _hue_sixths(red, green, blue, high, high - low) / 6.0
    return jnp.stack([hue, _saturation(high, high - low), high], axis=-1)


@jax.jit
def _hsv_to_rgb(x):
    hue, saturation, value = _channels(x)
    hue = hue * 6.0
    hue = jnp.where((hue >= 0) & (hue < 6), hue, jnp.zeros_like(hue))
    return _from_hexcone(hue, value - saturation * value, value)


@jax.jit
def _turn_hue(x, delta):
    red, green, blue = _channels(x.astype("float32"))
    high = jnp.maximum(jnp.maximum(red, green), blue)
    low = jnp.minimum(jnp.minimum(red, green), blue)
    hue = _hue_sixths(red, green, blue, high, high - low) + jnp.asarray(delta, "float32") * 6.0
    return _from_hexcone(hue, low, high).astype(x.dtype)


@jax.jit
def _scale_saturation(x, factor):
    red, green, blue = _channels(x.astype("float32"))
    high = jnp.maximum(jnp.maximum(red, green), blue)
    spread = high - jnp.minimum(jnp.minimum(red, green), blue)
    hue = _hue_sixths(red, green, blue, high, spread)
    saturation = jnp.clip(_saturation(high, spread) * jnp.asarray(factor, "float32"), 0.0, 1.0)
    return _from_hexcone(hue, high - saturation * high, high).astype(x.dtype)


def _in_float32(images, convert):
    """`convert` of float `images` computed in float32, in their own float dtype."""
    return convert(jnp.asarray(images, "float32")).astype(computed_dtype(images.dtype))


def rgb_to_hsv(images, name=None):
    """RGB float `images` as hue, saturation and value, each in `[0, 1]` for inputs in `[0, 1]`.

    Value is the largest channel, saturation `(max - min) / max` (0 where
    `max <= 0`), hue the angle on the hexcone in turns (0 for grays).

    Args:
        images: float images with 3 channels in the last dimension.

    Returns:
        The HSV images, of `images`' shape and dtype.

    Raises:
        TypeError: for integer images.
        ValueError: unless the last dimension is 3.
    """
    _check_float(images, "rgb_to_hsv")
    _check_rgb(images, "rgb_to_hsv")

    return _in_float32(images, _rgb_to_hsv)


def hsv_to_rgb(images, name=None):
    """HSV float `images` (hue, saturation, value) as RGB: the inverse of `rgb_to_hsv`.

    As TF's kernel, a hue outside `[0, 1)` gives the colour of hue 0.

    Raises:
        TypeError: for integer images.
        ValueError: unless the last dimension is 3.
    """
    _check_float(images, "hsv_to_rgb")
    _check_rgb(images, "hsv_to_rgb")

    return _in_float32(images, _hsv_to_rgb)


def adjust_hue(image, delta, name=None):
    """`image` with its hue turned by `delta` (in turns; `[-1, 1]` covers the circle).

    Each pixel keeps its largest and smallest channel; the hue wraps around.

    Args:
        image: RGB images (3 channels last), of rank 3 or more, any dtype.
        delta: the turn, a float (or a scalar tensor).

    Returns:
        The adjusted images, of `image`'s shape and dtype.

    Raises:
        ValueError: unless the last dimension is 3 and the rank at least 3.

    ```python
    image = tf1.image.adjust_hue(image, 0.1)
    ```
    """
    _check_rgb(image, "adjust_hue")
    _check_rank(image, "adjust_hue")

    return in_float(image, lambda x: _turn_hue(x, delta), saturate=False)


def adjust_saturation(image, saturation_factor, name=None):
    """`image` with its saturation multiplied by `saturation_factor` (then clipped to `[0, 1]`).

    Each pixel keeps its hue and largest channel (its value).

    Args:
        image: RGB images (3 channels last), of rank 3 or more, any dtype.
        saturation_factor: the factor, a float (or a scalar tensor).

    Returns:
        The adjusted images, of `image`'s shape and dtype.

    Raises:
        ValueError: unless the last dimension is 3 and the rank at least 3.
    """
    _check_rgb(image, "adjust_saturation")
    _check_rank(image, "adjust_saturation")

    return in_float(image, lambda x: _scale_saturation(x, saturation_factor), saturate=False)


def _check_rank(image, name):
    if len(image.shape) < 3:
        raise ValueError(
            f"`{name}` needs an image of rank 3 or more (HWC, NHWC). "
            f"Received: image of shape {tuple(image.shape)}"
        )


def adjust_brightness(image, delta):
    """`image` plus `delta` (computed in floats for integer images, then saturated)."""
    return in_float(image, lambda x: x + jnp.asarray(delta, x.dtype))


def adjust_contrast(images, contrast_factor):
    """Each channel moved away from its mean by `contrast_factor`: `(x - mean) * f + mean`."""

    def adjust(x):
        mean = jnp.mean(x, axis=(-3, -2), keepdims=True)
        return (x - mean) * jnp.asarray(contrast_factor, x.dtype) + mean

    return in_float(images, adjust)


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


def _random_adjust(image, adjust, minval, maxval):
    """`adjust(image, value)` of a value drawn from `[minval, maxval)` per call."""
    generator = store.get_seed_generator()  # Created before any symbolic trace.
    return symbolic_call(lambda x: adjust(x, keras.random.uniform(
        (), minval, maxval, seed=generator)), image)


def random_brightness(image, max_delta, seed=None):
    """`adjust_brightness` by a delta drawn from `[-max_delta, max_delta)`.

    Raises:
        ValueError: for a negative `max_delta`.
    """
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return _random_adjust(image, adjust_brightness, -max_delta, max_delta)


def random_contrast(image, lower, upper, seed=None):
    """`adjust_contrast` by a factor drawn from `[lower, upper)`.

    Raises:
        ValueError: unless `0 <= lower < upper`.
    """
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return _random_adjust(image, adjust_contrast, lower, upper)


def random_hue(image, max_delta, seed=None):
    """`adjust_hue` by a turn drawn from `[-max_delta, max_delta)`.

    Args:
        image: RGB images (3 channels last), of rank 3 or more.
        max_delta: the largest turn, in `[0, 0.5]`.
        seed: accepted and ignored (the model's seed generator draws).

    Raises:
        ValueError: unless `0 <= max_delta <= 0.5`.

    ```python
    image = tf1.image.random_hue(image, max_delta=0.2)
    ```
    """
    if max_delta > 0.5:
        raise ValueError(f"max_delta must be <= 0.5. Received: max_delta={max_delta!r}")
    if max_delta < 0:
        raise ValueError(f"max_delta must be non-negative. Received: max_delta={max_delta!r}")
    _check_rgb(image, "random_hue")
    _check_rank(image, "random_hue")
    return _random_adjust(image, adjust_hue, -max_delta, max_delta)


def random_saturation(image, lower, upper, seed=None):
    """`adjust_saturation` by a factor drawn from `[lower, upper)`.

    Args:
        image: RGB images (3 channels last), of rank 3 or more.
        lower, upper: the factor's range, `0 <= lower < upper`.
        seed: accepted and ignored (the model's seed generator draws).

    Raises:
        ValueError: unless `0 <= lower < upper`.
    """
    if upper <= lower:
        raise ValueError(f"upper must be > lower. Received: lower={lower!r}, upper={upper!r}")
    if lower < 0:
        raise ValueError(f"lower must be non-negative. Received: lower={lower!r}")
    _check_rgb(image, "random_saturation")
    _check_rank(image, "random_saturation")
    return _random_adjust(image, adjust_saturation, lower, upper)


RANDOM = ("random_brightness", "random_contrast", "random_hue", "random_saturation")
__all__ = sorted([
    "adjust_brightness", "adjust_contrast", "adjust_hue", "adjust_saturation",
    "grayscale_to_rgb", "hsv_to_rgb", "per_image_standardization", "rgb_to_grayscale",
    "rgb_to_hsv", *RANDOM,
])
