"""`tf.image.draw_bounding_boxes`: box outlines drawn on a batch of images.

TF1's kernel, in JAX: each box `[y_min, x_min, y_max, x_max]` (relative to
the image) becomes pixel rows and columns by `coordinate * (size - 1)`,
truncated towards zero, and its outline, one pixel wide, is painted in the
box's colour; later boxes paint over earlier ones. The colours cycle
through `colors` (TF2's argument) or TF's ten default RGBA colours
(yellow, blue, red, lime, purple, olive, maroon, navy, aqua, fuchsia; all
white on one-channel images). An inverted box, or one wholly outside the
image, is not drawn; the edges of a box partly outside are drawn where
they fall inside. The output has the images' shape and dtype: a summary of
a model_fn's images with its boxes compiles like any other op.

```python
boxes = tf1.expand_dims(tf1.stack([y_min, x_min, y_max, x_max], 1), 0)
tf1.summary.image("boxes", tf1.image.draw_bounding_boxes(images[:1], boxes))
```
"""

import jax
import jax.numpy as jnp
import numpy as np

from keras_tpu_estimator.compat.v1 import dtypes

# TF's default colours, RGBA, in the order boxes cycle through them.
DEFAULT_COLORS = np.array([
    [1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
    [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1],
], np.float32)

# Pixel positions are int32 here (int64 in TF): clipped first, beyond any image.
_FAR = 2.0**30


def _color_table(colors, depth):
    """`[n, depth]` colours: the given ones (their first `depth` channels) or TF's defaults."""
    if colors is not None:
        shape = tuple(np.shape(colors))
        if len(shape) != 2:
            raise ValueError(f"colors must be a 2-D matrix. Received: shape {shape}")
        if shape[1] < depth:
            raise ValueError(
                "colors must have equal or more channels than the image provided. "
                f"Received: colors of shape {shape} for images of {depth} channels")
        if shape[0] * shape[1]:
            return jnp.asarray(colors, "float32")[:, :depth]
    table = DEFAULT_COLORS[:, :depth].copy()
    if depth == 1:
        table[:, 0] = 1
    return jnp.asarray(table)


def _pixel(coordinate, size):
    """TF's `int64(float(coordinate) * (size - 1))`: truncated towards zero."""
    scaled = coordinate * np.float32(size - 1)
    return jnp.clip(scaled, -_FAR, _FAR).astype("int32")


def _outlines(box, height, width):
    """`[batch, height, width]`: where the outline of `box` (`[batch, 4]`) falls."""
    top, bottom = _pixel(box[:, 0], height), _pixel(box[:, 2], height)
    left, right = _pixel(box[:, 1], width), _pixel(box[:, 3], width)
    drawn = (top <= bottom) & (left <= right) & (top < height) & (bottom >= 0) & (
        left < width) & (right >= 0)
    rows, cols = jnp.arange(height)[None, :], jnp.arange(width)[None, :]
    # Clamped spans: the pixels an edge covers. An edge outside the image is not drawn.
    row_span = (rows >= top[:, None]) & (rows <= bottom[:, None])
    col_span = (cols >= left[:, None]) & (cols <= right[:, None])
    edge_rows = (rows == top[:, None]) | (rows == bottom[:, None])
    edge_cols = (cols == left[:, None]) | (cols == right[:, None])
    outline = (edge_rows[:, :, None] & col_span[:, None, :]) | (
        row_span[:, :, None] & edge_cols[:, None, :])
    return outline & drawn[:, None, None]


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """Draws the outlines of `boxes` on `images` (see the module docstring).

    Args:
        images: float `[batch, height, width, depth]` images, `depth` 1, 3
            or 4.
        boxes: float `[batch, num_boxes, 4]`, `[y_min, x_min, y_max, x_max]`
            relative to the image (`[0, 1]` inside it).
        name: unused. TF2's positional order (`images, boxes, colors`)
            is read too: a matrix here is `colors`.
        colors: float `[num_colors, >= depth]` colours the boxes cycle
            through; None or empty: TF's default colours.

    Returns:
        `images` with the outlines drawn, same shape and dtype.

    Raises:
        ValueError: for images not of rank 4 or depth 1, 3 or 4, boxes not
            `[batch, num_boxes, 4]`, or colors not a matrix of at least
            `depth` channels.
        TypeError: for images that are not floats.

    Example:

    ```python
    drawn = tf1.image.draw_bounding_boxes(
        tf1.zeros([1, 3, 3, 3]), [[[0.0, 0.0, 1.0, 1.0]]], colors=[[1.0, 0.0, 0.0]])
    ```
    """
    if name is not None and not isinstance(name, str) and colors is None:
        name, colors = None, name
    images = jnp.asarray(images)
    boxes = jnp.asarray(boxes, "float32")
    if images.ndim != 4:
        raise ValueError(f"The rank of the images should be 4. Received: shape {images.shape}")
    if not dtypes.as_dtype(images.dtype).is_floating:
        raise TypeError(
            "draw_bounding_boxes needs float images (TF: float32 or half). "
            f"Received: images of dtype {images.dtype}")
    batch, height, width, depth = images.shape
    if depth not in (1, 3, 4):
        raise ValueError(
            f"Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA). Received: {depth}")
    if boxes.ndim != 3 or boxes.shape[2] != 4 or boxes.shape[0] != batch:
        raise ValueError(
            "boxes must be [batch, num_bounding_boxes, 4] with the images' batch size "
            f"{batch}. Received: shape {boxes.shape}")
    table = _color_table(colors, depth).astype(images.dtype)
    if boxes.shape[1] == 0:
        return images
    return _draw(images, boxes, table)


# One compiled program: called eagerly (outside a step), not one dispatch per op.
@jax.jit
def _draw(images, boxes, table):
    height, width = images.shape[1:3]

    def draw(index, canvas):
        outline = _outlines(boxes[:, index], height, width)
        color = table[index % table.shape[0]]
        return jnp.where(outline[..., None], color, canvas)

    return jax.lax.fori_loop(0, boxes.shape[1], draw, images)


__all__ = ["draw_bounding_boxes"]
