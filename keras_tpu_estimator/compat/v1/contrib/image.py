"""`tf.contrib.image`: projective transforms (`transform`, `translate`, `rotate`) in JAX.

Each output pixel `(x, y)` (column, row) reads the input at
`((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)`, `k = c0 x + c1 y + 1`,
for a transform `[a0, a1, a2, b0, b1, b2, c0, c1]`, as TensorFlow's
`ImageProjectiveTransform` kernel does: `NEAREST` rounds halves away from
zero, `BILINEAR` weighs the four neighbours, and points outside the image
(or with `k == 0`) read 0.

Given TensorFlow tensors (in a `tf.data` pipeline: AutoAugment runs there),
they call TensorFlow's own kernel instead, with the same meaning.

```python
image = tf1.contrib.image.rotate(image, math.radians(30))      # counterclockwise
image = tf1.contrib.image.translate(image, [-4, 0])            # 4 pixels left
image = tf1.contrib.image.transform(image, [1., 0.2, 0., 0., 1., 0., 0., 0.])  # shear
```
"""

import jax.numpy as jnp
from keras import ops

from keras_tpu_estimator.compat.v1._symbolic import symbolic_op as _symbolic_op
from keras_tpu_estimator.compat.v1.contrib import _image_tf

_INTERPOLATIONS = ("NEAREST", "BILINEAR")


def _to_batch(images):
    rank = len(images.shape)
    if rank not in (2, 3, 4):
        raise ValueError(
            "contrib.image needs images of rank 2 (HW), 3 (HWC) or 4 (NHWC). Received: "
            f"images of shape {tuple(images.shape)}"
        )
    batched = images[None, :, :, None] if rank == 2 else images[None] if rank == 3 else images
    return batched, rank


def _from_batch(images, rank):
    return images[0, :, :, 0] if rank == 2 else images[0] if rank == 3 else images


def _interpolation(interpolation):
    if not isinstance(interpolation, str) or interpolation.upper() not in _INTERPOLATIONS:
        raise ValueError(
            "Argument `interpolation` of contrib.image must be 'NEAREST' or 'BILINEAR'. "
            f"Received: interpolation={interpolation!r}"
        )
    return interpolation.upper()


def _round_half_away(value):
    return jnp.sign(value) * jnp.floor(jnp.abs(value) + 0.5)


def _project(images, transforms, interpolation, height, width):
    """`images` `[n, h, w, c]`, `transforms` `[n or 1, 8]` float32 -> `[n, height, width, c]`."""
    n, in_h, in_w = images.shape[0], images.shape[1], images.shape[2]
    transforms = jnp.broadcast_to(transforms, (n, 8))
    t = [transforms[:, i, None, None] for i in range(8)]
    ys, xs = jnp.meshgrid(jnp.arange(height, dtype="float32"),
                          jnp.arange(width, dtype="float32"), indexing="ij")
    k = t[6] * xs + t[7] * ys + 1.0
    at_infinity = k == 0
    k = jnp.where(at_infinity, 1.0, k)
    x = (t[0] * xs + t[1] * ys + t[2]) / k
    y = (t[3] * xs + t[4] * ys + t[5]) / k
    rows = jnp.arange(n)[:, None, None]

    def read(xi, yi):
        # Clipped before the cast: a huge coordinate is outside all the same.
        xi = jnp.clip(xi, -1, in_w).astype("int32")
        yi = jnp.clip(yi, -1, in_h).astype("int32")
        inside = (xi >= 0) & (xi < in_w) & (yi >= 0) & (yi < in_h) & ~at_infinity
        values = images[rows, jnp.clip(yi, 0, in_h - 1), jnp.clip(xi, 0, in_w - 1)]
        return jnp.where(inside[..., None], values, jnp.zeros((), images.dtype))

    if interpolation == "NEAREST":
        return read(_round_half_away(x), _round_half_away(y))
    x0, y0 = jnp.floor(x), jnp.floor(y)
    x1, y1 = x0 + 1, y0 + 1

    def term(weight, xi, yi):
        return weight[..., None] * read(xi, yi).astype("float32")

    top = term(x1 - x, x0, y0) + term(x - x0, x1, y0)
    bottom = term(x1 - x, x0, y1) + term(x - x0, x1, y1)
    out = (y1 - y)[..., None] * top + (y - y0)[..., None] * bottom
    return out.astype(images.dtype)


@_symbolic_op
def _transform(images, transforms, interpolation, output_shape):
    batched, rank = _to_batch(images)
    transforms = jnp.asarray(transforms, "float32")
    if transforms.ndim == 1:
        transforms = transforms[None]
    if transforms.ndim != 2 or transforms.shape[1] != 8:
        raise ValueError(
            "Argument `transforms` of contrib.image.transform must have shape [8] or "
            f"[num_images, 8]. Received: shape {tuple(transforms.shape)}"
        )
    if output_shape is None:
        height, width = batched.shape[1], batched.shape[2]
    else:
        height, width = (int(v) for v in output_shape)
    return _from_batch(_project(batched, transforms, interpolation, height, width), rank)


def transform(images, transforms, interpolation="NEAREST", output_shape=None, name=None):
    """Applies projective transforms, as `tf.contrib.image.transform`.

    Args:
        images: `[h, w]`, `[h, w, c]` or `[n, h, w, c]`, any numeric dtype.
        transforms: `[a0, a1, a2, b0, b1, b2, c0, c1]` (one for every image)
            or `[n, 8]`: each maps an output point to the input point it reads.
        interpolation: `'NEAREST'` or `'BILINEAR'`.
        output_shape: `[height, width]` of the output; default the input's.
        name: ignored.

    Returns:
        The transformed images, with the rank and dtype of `images`.

    Raises:
        ValueError: for another rank, `interpolation` or transforms shape.

    Example:

    ```python
    sheared = tf1.contrib.image.transform(image, [1., 0.3, 0., 0., 1., 0., 0., 0.])
    ```
    """
    del name
    if _image_tf.is_tensorflow(images, transforms, output_shape):
        return _image_tf.transform(images, transforms, _interpolation(interpolation),
                                   output_shape)
    return _transform(images, transforms, _interpolation(interpolation),
                      None if output_shape is None else tuple(output_shape))


def translate(images, translations, interpolation="NEAREST", name=None):
    """Shifts images by `translations` `[dx, dy]` (or `[n, 2]`), as `tf.contrib.image.translate`.

    A positive `dx` moves the content right, a positive `dy` down; the
    uncovered pixels are 0.

    Example:

    ```python
    shifted = tf1.contrib.image.translate(image, [-pixels, 0])
    ```
    """
    del name
    if _image_tf.is_tensorflow(images, translations):
        return transform(images, _image_tf.translations_to_transforms(translations),
                         interpolation=interpolation)
    translations = ops.cast(ops.convert_to_tensor(translations), "float32")
    if len(translations.shape) == 1:
        translations = translations[None]
    ones, zeros = ops.ones_like(translations[:, :1]), ops.zeros_like(translations[:, :1])
    transforms = ops.concatenate(
        [ones, zeros, -translations[:, :1], zeros, ones, -translations[:, 1:2], zeros, zeros],
        axis=1)
    return transform(images, transforms, interpolation=interpolation)


def angles_to_projective_transforms(angles, image_height, image_width, name=None):
    """The transforms that rotate `[h, w]` images counterclockwise by `angles` (radians).

    Returns:
        `[8]` for a scalar angle, `[n, 8]` for `n` angles.
    """
    del name
    angles = ops.cast(ops.convert_to_tensor(angles), "float32")
    scalar = len(angles.shape) == 0
    angles = ops.reshape(angles, (-1,))
    height, width = float(image_height) - 1, float(image_width) - 1
    cos, sin = ops.cos(angles), ops.sin(angles)
    x_offset = (width - (cos * width - sin * height)) / 2.0
    y_offset = (height - (sin * width + cos * height)) / 2.0
    zeros = ops.zeros_like(angles)
    transforms = ops.stack([cos, -sin, x_offset, sin, cos, y_offset, zeros, zeros], axis=1)
    return transforms[0] if scalar else transforms


def rotate(images, angles, interpolation="NEAREST", name=None):
    """Rotates images counterclockwise by `angles` (radians), as `tf.contrib.image.rotate`.

    Each image turns about its centre; corners that come from outside are 0.

    Args:
        images: `[h, w]`, `[h, w, c]` or `[n, h, w, c]`.
        angles: a scalar, or one angle per image.
        interpolation: `'NEAREST'` or `'BILINEAR'`.
        name: ignored.

    Returns:
        The rotated images, with the rank and dtype of `images`.

    Example:

    ```python
    image = tf1.contrib.image.rotate(image, degrees * math.pi / 180.0)
    ```
    """
    del name
    if _image_tf.is_tensorflow(images, angles):
        return transform(images, _image_tf.rotations_to_transforms(images, angles),
                         interpolation=interpolation)
    height, width = images.shape[-3], images.shape[-2]
    if len(images.shape) == 2:
        height, width = images.shape
    transforms = angles_to_projective_transforms(angles, height, width)
    return transform(images, transforms, interpolation=interpolation)


__all__ = ["angles_to_projective_transforms", "rotate", "transform", "translate"]
