"""`tf.image`'s resizing: TF1's four methods and `crop_and_resize`.

TF1 resized with corner-aligned coordinates (an output pixel `i` reads the
input at `i * in / out`, or `i * (in - 1) / (out - 1)` with
`align_corners`), not half-pixel centres; these functions do the same.
`BICUBIC` is TF1's cubic of coefficient -0.75 with the input's edge pixels
repeated, its offsets rounded to 1/1024 of a pixel as TF's weight table
rounds them; `AREA` averages the input pixels each output pixel covers,
weighted by how much of each it covers. Both are matrix products over the
height and the width, in float32 at full precision.

```python
image = tf1.image.resize_images(image, [224, 224], tf1.image.ResizeMethod.BICUBIC)
crops = tf1.image.crop_and_resize(images, boxes, box_ind, crop_size=[14, 14])
```
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from keras_tpu_estimator.compat.v1._image_common import check_image
from keras_tpu_estimator.compat.v1._image_common import spatial_axis
from keras_tpu_estimator.compat.v1._op_helpers import static_value

_CUBIC_A = np.float32(-0.75)
_CUBIC_TABLE_SIZE = 1024


class ResizeMethod:
    """TF1's resize methods (`tf.image.ResizeMethod`)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_METHOD_NAMES = {"bilinear": 0, "nearest": 1, "bicubic": 2, "area": 3}


def _static_size(size, name):
    """`size` as two Python ints (`[height, width]`)."""
    value = static_value(size)
    if value is None or value.shape != (2,):
        raise ValueError(
            f"`{name}` needs `size` as two integers known while tracing ([height, width]). "
            f"Received: size={size!r}"
        )
    return int(value[0]), int(value[1])


def _scale(in_size, out_size, align_corners):
    """How far apart, in input pixels, two neighbouring output pixels read (as float32)."""
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def _source_coordinates(in_size, out_size, align_corners):
    scale = _scale(in_size, out_size, align_corners)
    return jnp.arange(out_size, dtype="float32") * scale


def _interpolate_axis(image, axis, out_size, method, align_corners):
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


def _cubic(distance):
    """TF1's cubic kernel (coefficient -0.75) at `distance` in `[0, 2]`, in float32."""
    a, d = _CUBIC_A, np.asarray(distance, np.float32)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, far).astype(np.float32)


def _bicubic_matrix(in_size, out_size, align_corners):
    """The `[out, in]` weights of TF1's bicubic resize along one axis."""
    location = np.arange(out_size, dtype=np.float32) * _scale(in_size, out_size, align_corners)
    base = np.floor(location)
    # TF reads its weights from a table of 1024 offsets per pixel.
    steps = np.rint((location - base) * _CUBIC_TABLE_SIZE)
    fraction = (steps / _CUBIC_TABLE_SIZE).astype(np.float32)
    complement = ((_CUBIC_TABLE_SIZE - steps) / _CUBIC_TABLE_SIZE).astype(np.float32)
    weights = [_cubic(fraction + 1), _cubic(fraction), _cubic(complement),
               _cubic(complement + 1)]
    matrix = np.zeros((out_size, in_size), np.float32)
    rows = np.arange(out_size)
    for tap, weight in enumerate(weights):
        index = np.clip(base.astype(np.int64) - 1 + tap, 0, in_size - 1)
        np.add.at(matrix, (rows, index), weight)
    return matrix


def _area_matrix(in_size, out_size, align_corners):
    """The `[out, in]` weights of TF1's area resize along one axis (not yet normalized)."""
    scale = _scale(in_size, out_size, align_corners)
    matrix = np.zeros((out_size, in_size), np.float32)
    for out in range(out_size):
        start, end = np.float32(out) * scale, np.float32(out + 1) * scale
        for cell in range(int(np.floor(start)), int(np.ceil(end))):
            after, beyond = np.float32(cell + 1), np.float32(cell + 1) > end
            if cell < start:
                covered = scale if beyond else after - start
            else:
                covered = end - np.float32(cell) if beyond else np.float32(1.0)
            matrix[out, min(cell, in_size - 1)] += covered
    return matrix, scale


def _apply_matrices(images, height_matrix, width_matrix):
    top, left = spatial_axis(images, 0), spatial_axis(images, 1)
    images = jnp.asarray(images).astype("float32")
    highest = jax.lax.Precision.HIGHEST
    images = jnp.moveaxis(jnp.tensordot(height_matrix, images, axes=[[1], [top]],
                                        precision=highest), 0, top)
    return jnp.moveaxis(jnp.tensordot(width_matrix, images, axes=[[1], [left]],
                                      precision=highest), 0, left)


def _check_images(images, name):
    images = jnp.asarray(images)
    check_image(images, name)
    return images


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """`images` resized to `size` `[height, width]` by TF1's bicubic interpolation, in float32.

    Args:
        images: images of rank 3 (HWC) or 4 (NHWC), any real dtype.
        size: `[height, width]`, known while tracing.
        align_corners: whether the corner pixels of input and output align.
        half_pixel_centers: must be False (TF1's coordinates).

    Returns:
        float32 images of height and width `size`.

    Raises:
        ValueError: for `half_pixel_centers=True`, a size not known while
            tracing, or images of another rank.

    ```python
    image = tf1.image.resize_bicubic([image], [224, 224])[0]
    ```
    """
    _no_half_pixel_centers(half_pixel_centers)
    images = _check_images(images, "resize_bicubic")
    height, width = _static_size(size, "resize_bicubic")
    top, left = spatial_axis(images, 0), spatial_axis(images, 1)
    return _apply_matrices(images,
                           _bicubic_matrix(images.shape[top], height, align_corners),
                           _bicubic_matrix(images.shape[left], width, align_corners))


def resize_area(images, size, align_corners=False, name=None):
    """`images` resized to `size` by averaging the pixels each output pixel covers, in float32.

    Args:
        images: images of rank 3 (HWC) or 4 (NHWC), any real dtype.
        size: `[height, width]`, known while tracing.
        align_corners: whether the corner pixels of input and output align.

    Returns:
        float32 images of height and width `size`.

    Raises:
        ValueError: for a size not known while tracing or images of another rank.
    """
    images = _check_images(images, "resize_area")
    height, width = _static_size(size, "resize_area")
    top, left = spatial_axis(images, 0), spatial_axis(images, 1)
    height_matrix, height_scale = _area_matrix(images.shape[top], height, align_corners)
    width_matrix, width_scale = _area_matrix(images.shape[left], width, align_corners)
    sums = _apply_matrices(images, height_matrix, width_matrix)
    return sums * (np.float32(1.0) / (height_scale * width_scale))


def _aspect_preserving_size(images, height, width):
    """The largest size within `[height, width]` of the images' aspect ratio, as TF1 rounded it."""
    in_height = np.float32(images.shape[spatial_axis(images, 0)])
    in_width = np.float32(images.shape[spatial_axis(images, 1)])
    factor = min(np.float32(height) / in_height, np.float32(width) / in_width)
    return int(np.rint(factor * in_height)), int(np.rint(factor * in_width))


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None):
    """`images` resized to `size` `[height, width]` as TF1 resized them.

    `NEAREST_NEIGHBOR` keeps the dtype, the other methods return float32;
    an image already of the (aspect-preserving) size is returned as it is.

    Args:
        images: images of rank 3 (HWC) or 4 (NHWC).
        size: `[height, width]`, known while tracing.
        method: a `ResizeMethod` (`BILINEAR`, `NEAREST_NEIGHBOR`, `BICUBIC`,
            `AREA`) or its name (`"bilinear"`, `"nearest"`, `"bicubic"`, `"area"`).
        align_corners: whether the corner pixels of input and output align.
        preserve_aspect_ratio: whether to resize to the largest size within
            `size` that keeps the images' aspect ratio.

    Raises:
        ValueError: for another method, a size not known while tracing or
            images of another rank.

    ```python
    image = tf1.image.resize_images(image, [224, 224])          # TF1's bilinear, float32
    ```
    """
    method = _METHOD_NAMES.get(method, method)
    if method not in _METHOD_NAMES.values():
        raise ValueError(
            "Resize method is not implemented: method must be one of ResizeMethod.BILINEAR, "
            f"NEAREST_NEIGHBOR, BICUBIC or AREA. Received: method={method!r}"
        )
    images = _check_images(images, "resize_images")
    height, width = _static_size(size, "resize_images")
    if preserve_aspect_ratio:
        height, width = _aspect_preserving_size(images, height, width)
    top, left = spatial_axis(images, 0), spatial_axis(images, 1)
    if (images.shape[top], images.shape[left]) == (height, width):
        return images
    if method == ResizeMethod.BICUBIC:
        return resize_bicubic(images, [height, width], align_corners)
    if method == ResizeMethod.AREA:
        return resize_area(images, [height, width], align_corners)
    if method == ResizeMethod.BILINEAR:
        images = images.astype("float32")
    images = _interpolate_axis(images, top, height, method, align_corners)
    return _interpolate_axis(images, left, width, method, align_corners)


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


def _crop_coordinates(low, high, in_size, out_size):
    """`[boxes, out_size]` input coordinates of a crop from `low` to `high` (normalized)."""
    last = np.float32(in_size - 1)
    if out_size > 1:
        step = (high - low) * last / np.float32(out_size - 1)
        return low[:, None] * last + jnp.arange(out_size, dtype="float32") * step[:, None]
    return (np.float32(0.5) * (low + high) * last)[:, None]


def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear",
                    extrapolation_value=0, name=None, box_indices=None):
    """Crops of `image` at `boxes`, each resized to `crop_size`, in float32.

    A box `[y1, x1, y2, x2]` is in normalized coordinates (`0` and `1` are
    the first and last pixel centres; `y1 > y2` flips the crop); its
    samples outside the image take `extrapolation_value`.

    Args:
        image: images `[batch, height, width, depth]`, any real dtype.
        boxes: float `[num_boxes, 4]`.
        box_ind: int `[num_boxes]`, the image of each box (TF2's
            `box_indices`; give one of the two). Indices outside
            `[0, batch)` read the nearest image (TF's CPU kernel raised).
        crop_size: `[crop_height, crop_width]`, known while tracing.
        method: `"bilinear"` or `"nearest"`.
        extrapolation_value: the value of samples outside the image.

    Returns:
        float32 `[num_boxes, crop_height, crop_width, depth]`.

    Raises:
        ValueError: for another method or rank, or a missing `box_ind`.

    ```python
    crops = tf1.image.crop_and_resize(features, boxes, box_ind, [7, 7])
    ```
    """
    if box_ind is None:
        box_ind = box_indices
    elif box_indices is not None:
        raise ValueError("crop_and_resize: give `box_ind` or `box_indices`, not both.")
    if box_ind is None:
        raise ValueError("crop_and_resize needs `box_ind` (the image of each box).")
    if method not in ("bilinear", "nearest"):
        raise ValueError(
            f"crop_and_resize: method must be 'bilinear' or 'nearest'. Received: method={method!r}")
    image = jnp.asarray(image)
    check_image(image, "crop_and_resize", ranks=(4,))
    crop_height, crop_width = _static_size(crop_size, "crop_and_resize")
    return _crop_and_resize(image, jnp.asarray(boxes, "float32"), jnp.asarray(box_ind, "int32"),
                            jnp.asarray(extrapolation_value, "float32"), crop_height,
                            crop_width, method)


# One compiled program for eager calls (outside a step); inlined inside one.
@functools.partial(jax.jit, static_argnums=(4, 5, 6))
def _crop_and_resize(image, boxes, box_ind, extrapolation_value, crop_height, crop_width,
                     method):
    height, width = image.shape[1], image.shape[2]
    ys = _crop_coordinates(boxes[:, 0], boxes[:, 2], height, crop_height)
    xs = _crop_coordinates(boxes[:, 1], boxes[:, 3], width, crop_width)
    inside = ((ys >= 0) & (ys <= height - 1))[:, :, None] & \
        ((xs >= 0) & (xs <= width - 1))[:, None, :]
    batch = jnp.clip(box_ind, 0, image.shape[0] - 1)[:, None, None]

    def read(y, x):
        y = jnp.clip(y, 0, height - 1).astype("int32")[:, :, None]
        x = jnp.clip(x, 0, width - 1).astype("int32")[:, None, :]
        return image[batch, y, x].astype("float32")

    if method == "nearest":
        # C's roundf: halves away from zero (the coordinates read are >= 0).
        crops = read(*(jnp.where(c - jnp.floor(c) >= 0.5, jnp.floor(c) + 1, jnp.floor(c))
                       for c in (ys, xs)))
    else:
        top, left = jnp.floor(ys), jnp.floor(xs)
        bottom, right = jnp.ceil(ys), jnp.ceil(xs)
        y_lerp, x_lerp = (ys - top)[:, :, None, None], (xs - left)[:, None, :, None]
        upper = read(top, left) + (read(top, right) - read(top, left)) * x_lerp
        lower = read(bottom, left) + (read(bottom, right) - read(bottom, left)) * x_lerp
        crops = upper + (lower - upper) * y_lerp
    return jnp.where(inside[..., None], crops, extrapolation_value)


__all__ = sorted([
    "ResizeMethod", "crop_and_resize", "resize", "resize_area", "resize_bicubic",
    "resize_bilinear", "resize_images", "resize_nearest_neighbor",
])
