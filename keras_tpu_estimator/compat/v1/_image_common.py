"""What the `tf1.image` modules share: image checks, axes and dtype conversion.

TF1's images are `[height, width, channels]` or batches `[n, height, width,
channels]`; integer images hold `[0, MAX]`, float images `[0, 1)`.
`convert_image_dtype` is public (`tf1.image.convert_image_dtype`); the rest
is private to the image modules.
"""

import jax.numpy as jnp
import numpy as np

from keras_tpu_estimator.compat.v1 import dtypes


def check_image(image, name, ranks=(3, 4)):
    """Whether `image` is a batch; raises unless its rank is one of `ranks`.

    Raises:
        ValueError: for another rank, naming the op `name`.
    """
    if len(image.shape) not in ranks:
        layouts = {3: "3 (HWC)", 4: "4 (NHWC)"}
        allowed = " or ".join(layouts.get(r, str(r)) for r in ranks)
        raise ValueError(
            f"`{name}` needs an image of rank {allowed}. "
            f"Received: image of shape {tuple(image.shape)}"
        )
    return len(image.shape) == 4


def spatial_axis(image, axis):
    """The axis of the image's height (0) or width (1), batched or not."""
    return axis + 1 if len(image.shape) == 4 else axis


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """`image` in `dtype`, rescaled: integers span `[0, MAX]`, floats `[0, 1)`.

    Args:
        image: an image of any dtype.
        dtype: the dtype to convert to.
        saturate: whether to clip to `dtype`'s range before a cast from
            floats to integers (values outside `[0, 1]` otherwise wrap).

    Returns:
        `image` as `dtype`; `image` itself when the dtypes agree.

    ```python
    floats = tf1.image.convert_image_dtype(uint8_image, tf1.float32)   # x / 255
    ```
    """
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


def in_float(image, adjust, saturate=True):
    """`adjust` of `image` in floats, back in `image`'s dtype (as TF1's colour ops).

    float16 and float32 images are adjusted as they are, other dtypes in
    float32 (integers rescaled to `[0, 1]`).
    """
    dtype = dtypes.as_dtype(image.dtype)
    floats = image if dtype in ("float16", "float32") else convert_image_dtype(image, "float32")
    return convert_image_dtype(adjust(floats), dtype, saturate=saturate)
