"""`tf.image`'s non-maximum suppression, with the static output shapes a TPU step needs.

Detection models (RetinaNet, Mask R-CNN, ShapeMask) prune their boxes in
`model_fn` with the padded forms, whose outputs have a size fixed by their
arguments:

- `non_max_suppression_padded(..., pad_to_max_output_size=True)`:
  `max_output_size` indices per image (one image `[n, 4]`, or a batch
  `[..., n, 4]`) and how many of them are valid. Its semantics are TF 2's
  (the tiled algorithm of `tf.image.non_max_suppression_padded`): boxes
  whose score is not above `score_threshold` are zeroed; the coordinates
  are put in `[y_min, x_min, y_max, x_max]` order by how the first box is
  given; boxes are visited by descending score (ties: lower index first) and
  one is dropped when its IoU with a kept box is at least `iou_threshold`;
  a kept box is output only if one of its coordinates is above 0.
- `combined_non_max_suppression`: TF's kernel, per image and class (a box
  is dropped when its IoU with a kept box of its class is above
  `iou_threshold`), then the kept boxes of all classes by descending score.

Each runs as one compiled loop over the kept boxes (`jax.lax.while_loop`),
not over all boxes. `non_max_suppression`, `non_max_suppression_with_scores`
and `non_max_suppression_overlaps` (and the padded form without padding)
return as many indices as they keep, a number known only from the values:
given TensorFlow's tensors (an input pipeline) or called outside `model_fn`
they run TensorFlow's op; in `model_fn` they raise and point to the padded
form.

```python
indices, num_valid = tf1.image.non_max_suppression_padded(
    boxes, scores, 100, iou_threshold=0.5, score_threshold=0.05,
    pad_to_max_output_size=True)
boxes = tf1.gather(boxes, indices)        # [100, 4]; rows past num_valid are padding
```
"""

import functools

import jax
import jax.numpy as jnp
import keras
import numpy as np

from keras_tpu_estimator.compat.v1._op_helpers import static_value
from keras_tpu_estimator.model_fn import store

# TF's padded NMS adds it to the union (TF's kernels do not).
_UNION_EPSILON = np.float32(1e-8)


def _static_int(value, name):
    found = static_value(value)
    if found is None or found.size != 1:
        raise ValueError(
            f"{name} must be known when the step is traced (a Python int or a constant): "
            f"it fixes the output's shape. Received: {name}={value!r}")
    return int(found.reshape(()))


def _threshold(value, dtype):
    return jnp.asarray(value, "float32").astype(dtype)


# -- IoU, as each TF op computes it. ------------------------------------------


def _padded_iou(box, boxes):
    """IoU of `box` with each of `boxes` (`[y_min, x_min, y_max, x_max]`), TF's padded NMS."""
    width = jnp.maximum(jnp.minimum(box[3], boxes[:, 3]) - jnp.maximum(box[1], boxes[:, 1]), 0)
    height = jnp.maximum(jnp.minimum(box[2], boxes[:, 2]) - jnp.maximum(box[0], boxes[:, 0]), 0)
    intersection = width * height
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return intersection / (area + areas - intersection + _UNION_EPSILON)


def _corners(boxes):
    y_min, y_max = jnp.minimum(boxes[..., 0], boxes[..., 2]), jnp.maximum(boxes[..., 0],
                                                                           boxes[..., 2])
    x_min, x_max = jnp.minimum(boxes[..., 1], boxes[..., 3]), jnp.maximum(boxes[..., 1],
                                                                           boxes[..., 3])
    return y_min, x_min, y_max, x_max


def _kernel_iou(box, boxes):
    """IoU of `box` with each of `boxes` (corners in any order), TF's NMS kernels; 0 for an
    empty box."""
    (y0, x0, y1, x1), (ys0, xs0, ys1, xs1) = _corners(box), _corners(boxes)
    area, areas = (y1 - y0) * (x1 - x0), (ys1 - ys0) * (xs1 - xs0)
    intersection = jnp.maximum(jnp.minimum(y1, ys1) - jnp.maximum(y0, ys0), 0) * jnp.maximum(
        jnp.minimum(x1, xs1) - jnp.maximum(x0, xs0), 0)
    iou = intersection / (area + areas - intersection)
    return jnp.where((area <= 0) | (areas <= 0), 0.0, iou)


def _descending(scores):
    """Positions by descending score, ties in index order (0.0 and -0.0 tie, as in TF)."""
    return jnp.argsort(-(scores + 0), axis=-1, stable=True)


# -- non_max_suppression_padded. ----------------------------------------------


def _padded_greedy(boxes, max_output_size, iou_threshold):
    """Positions kept among `boxes` (float32 `[n, 4]`, visited in order) and their count."""
    n = boxes.shape[0]
    positions = jnp.arange(n)
    output = jnp.any(boxes > 0, axis=-1)
    # A zero box (no box, or a score under the threshold) overlaps nothing.
    alive = ~jnp.all(boxes == 0, axis=-1)

    def more(state):
        alive, count, _ = state
        return jnp.any(alive) & (count < max_output_size)

    def keep_next(state):
        alive, count, kept = state
        p = jnp.argmax(alive)
        iou = _padded_iou(boxes[p], boxes)
        suppressed = (iou >= iou_threshold) & (iou > 0) & (positions > p)
        alive = alive & ~suppressed & (positions != p)
        kept = jnp.where(output[p], kept.at[count].set(p), kept)
        return alive, count + output[p].astype("int32"), kept

    start = (alive, jnp.int32(0), jnp.zeros((max_output_size,), "int32"))
    _, count, kept = jax.lax.while_loop(more, keep_next, start)
    return kept, count


# One compiled program: called eagerly (outside a step), not one dispatch per op.
@functools.partial(jax.jit, static_argnums=(4, 5, 6, 7))
def _padded_nms(boxes, scores, iou_threshold, score_threshold, max_output_size, filter_scores,
                sorted_input, canonicalized_coordinates):
    batch_shape, n = boxes.shape[:-2], boxes.shape[-2]
    if max_output_size == 0 or n == 0:
        return (jnp.zeros((*batch_shape, max_output_size), "int32"),
                jnp.zeros(batch_shape, "int32"))
    boxes = jnp.reshape(boxes, (-1, n, 4))
    scores = jnp.reshape(scores, (-1, n))
    if filter_scores:
        above = scores > _threshold(score_threshold, scores.dtype)
        scores = scores * above.astype(scores.dtype)
        boxes = boxes * above[..., None].astype(boxes.dtype)
    if not canonicalized_coordinates:
        # TF orders every box's corners as the first box gives them.
        swap_y, swap_x = boxes[0, 0, 0] > boxes[0, 0, 2], boxes[0, 0, 1] > boxes[0, 0, 3]
        boxes = jnp.stack([jnp.where(swap_y, boxes[..., 2], boxes[..., 0]),
                           jnp.where(swap_x, boxes[..., 3], boxes[..., 1]),
                           jnp.where(swap_y, boxes[..., 0], boxes[..., 2]),
                           jnp.where(swap_x, boxes[..., 1], boxes[..., 3])], -1)
    if sorted_input:
        order = jnp.broadcast_to(jnp.arange(n), scores.shape)
    else:
        order = _descending(scores)
        boxes = jnp.take_along_axis(boxes, order[..., None], axis=1)
    boxes = boxes.astype("float32")
    kept, count = jax.vmap(lambda b: _padded_greedy(b, max_output_size, iou_threshold))(boxes)
    indices = jnp.take_along_axis(order, kept, axis=1).astype("int32")
    indices = jnp.where(jnp.arange(max_output_size) < count[:, None], indices, 0)
    return (jnp.reshape(indices, (*batch_shape, max_output_size)),
            jnp.reshape(count, batch_shape))


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5,
                               score_threshold=float("-inf"), pad_to_max_output_size=False,
                               name=None, sorted_input=False, canonicalized_coordinates=False,
                               tile_size=512):
    """Indices of the boxes greedy NMS keeps, padded to `max_output_size` (TF 2's semantics).

    Args:
        boxes: float `[..., num_boxes, 4]`, `[y1, x1, y2, x2]`; leading axes
            are a batch.
        scores: float `[..., num_boxes]`.
        max_output_size: how many indices to return; static.
        iou_threshold: a box is dropped when its IoU with a kept box is at
            least this.
        score_threshold: boxes whose score is not above it are never kept.
        pad_to_max_output_size: must be True in `model_fn` (otherwise the
            size of the result depends on the values).
        name: unused.
        sorted_input: whether boxes are already by descending score (then
            they are visited in their order).
        canonicalized_coordinates: whether boxes are `[y_min, x_min,
            y_max, x_max]` already.
        tile_size: TF's parallelism knob; the result does not depend on it.

    Returns:
        `(selected_indices, valid_outputs)`: int32 `[..., max_output_size]`
        indices into `boxes` (0 past the valid ones) and int32 `[...]`
        counts.

    Raises:
        ValueError: for batched boxes without `pad_to_max_output_size`,
            mismatched shapes, or a `max_output_size` unknown when tracing.
        NotImplementedError: without `pad_to_max_output_size` in `model_fn`.

    Example:

    ```python
    indices, num_valid = tf1.image.non_max_suppression_padded(
        boxes, scores, 100, 0.5, 0.05, pad_to_max_output_size=True)
    ```
    """
    rank = len(np.shape(boxes))
    if not pad_to_max_output_size:
        if rank > 2:
            raise ValueError(f"'pad_to_max_output_size' (value {pad_to_max_output_size}) must "
                             "be True for batched input")
        return _value_dependent("non_max_suppression_padded", boxes, scores, max_output_size,
                                iou_threshold, score_threshold, pad_to_max_output_size, name,
                                sorted_input, canonicalized_coordinates, tile_size)
    boxes, scores = jnp.asarray(boxes), jnp.asarray(scores)
    if rank < 2 or boxes.shape[-1] != 4 or scores.shape != boxes.shape[:-1]:
        raise ValueError(
            "non_max_suppression_padded needs boxes [..., num_boxes, 4] and scores "
            f"[..., num_boxes]. Received: boxes {boxes.shape}, scores {scores.shape}")
    max_output_size = _static_int(max_output_size, "max_output_size")
    if max_output_size < 0:
        raise ValueError(f"max_output_size must be non-negative. Received: {max_output_size}")
    known = static_value(score_threshold)
    filter_scores = known is None or float(known) != float("-inf")
    return _padded_nms(boxes, scores, jnp.asarray(iou_threshold, "float32"),
                       jnp.asarray(score_threshold, "float32"), max_output_size,
                       filter_scores, bool(sorted_input), bool(canonicalized_coordinates))


# -- combined_non_max_suppression. --------------------------------------------


def _class_greedy(boxes, scores, size, iou_threshold, score_threshold):
    """TF's per-class NMS: `size` slots of (score, box), -inf and zeros where empty."""
    positions = jnp.arange(scores.shape[0])

    def keep_next(k, state):
        alive, slot_scores, slot_boxes = state
        p = jnp.argmax(jnp.where(alive, scores, -jnp.inf))
        found = jnp.any(alive)
        slot_scores = slot_scores.at[k].set(jnp.where(found, scores[p], -jnp.inf))
        slot_boxes = slot_boxes.at[k].set(jnp.where(found, boxes[p], 0.0))
        suppressed = _kernel_iou(boxes[p], boxes) > iou_threshold
        alive = jnp.where(found, alive & ~suppressed & (positions != p), alive)
        return alive, slot_scores, slot_boxes

    start = (scores > score_threshold, jnp.full((size,), -jnp.inf, "float32"),
             jnp.zeros((size, 4), "float32"))
    _, slot_scores, slot_boxes = jax.lax.fori_loop(0, size, keep_next, start)
    return slot_scores, slot_boxes


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size,
                                 iou_threshold=0.5, score_threshold=float("-inf"),
                                 pad_per_class=False, clip_boxes=True, name=None):
    """Greedy NMS per image and class, then the kept boxes of all classes by score.

    Args:
        boxes: float `[batch, num_boxes, q, 4]`: `q` 1 (one box for every
            class) or `num_classes` (a box per class).
        scores: float `[batch, num_boxes, num_classes]`.
        max_output_size_per_class: how many boxes each class keeps at
            most; static, positive.
        max_total_size: how many boxes each image keeps at most; static,
            positive.
        iou_threshold: a box is dropped when its IoU with a kept box of its
            class is above this; in `[0, 1]`.
        score_threshold: boxes whose score is not above it are never kept.
        pad_per_class: whether the outputs hold `min(max_total_size,
            max_output_size_per_class * num_classes)` boxes rather than
            `max_total_size`.
        clip_boxes: whether the output boxes are clipped to `[0, 1]`.
        name: unused.

    Returns:
        `(nmsed_boxes, nmsed_scores, nmsed_classes, valid_detections)`:
        float32 `[batch, size, 4]`, `[batch, size]`, `[batch, size]` (the
        class indices, as floats) by descending score, zeros past
        `valid_detections`, int32 `[batch]`.

    Raises:
        ValueError: for shapes TF refuses, sizes that are not positive or
            unknown when tracing, or an `iou_threshold` outside `[0, 1]`.

    Example:

    ```python
    boxes, scores, classes, valid = tf1.image.combined_non_max_suppression(
        boxes[:, :, None], scores, 100, 100, iou_threshold=0.5, score_threshold=0.05)
    ```
    """
    boxes, scores = jnp.asarray(boxes, "float32"), jnp.asarray(scores, "float32")
    if boxes.ndim != 4 or boxes.shape[3] != 4:
        raise ValueError(f"boxes must be 4-D [batch, num_boxes, q, 4], got shape {boxes.shape}")
    if scores.ndim != 3:
        raise ValueError("scores must be 3-D [batch, num_boxes, num_classes], got shape "
                         f"{scores.shape}")
    batch, n, q, _ = boxes.shape
    classes = scores.shape[2]
    if q not in (1, classes):
        raise ValueError("third dimension of boxes must be either 1 or num classes. "
                         f"Received: boxes {boxes.shape}, scores {scores.shape}")
    if scores.shape[:2] != (batch, n):
        raise ValueError(f"scores has incompatible shape {scores.shape} for boxes {boxes.shape}")
    per_class = _static_int(max_output_size_per_class, "max_output_size_per_class")
    total = _static_int(max_total_size, "max_total_size")
    if per_class <= 0:
        raise ValueError(f"max_size_per_class must be positive. Received: {per_class}")
    if total <= 0:
        raise ValueError(f"max_total_size must be > 0. Received: {total}")
    known = static_value(iou_threshold)
    if known is not None and not 0 <= float(known) <= 1:
        raise ValueError(f"iou_threshold must be in [0, 1]. Received: {float(known)}")
    size = min(per_class, n)
    out_size = min(total, per_class * classes) if pad_per_class else total
    return _combined(boxes, scores, jnp.asarray(iou_threshold, "float32"),
                     jnp.asarray(score_threshold, "float32"), size, out_size, bool(clip_boxes))


@functools.partial(jax.jit, static_argnums=(4, 5, 6))
def _combined(boxes, scores, iou_threshold, score_threshold, size, out_size, clip_boxes):
    batch, n, _, _ = boxes.shape
    classes = scores.shape[2]

    def per_class_nms(class_boxes, class_scores):
        return _class_greedy(class_boxes, class_scores, size, iou_threshold, score_threshold)

    # [batch, classes, ...]: each class's boxes (q = classes) or the shared ones.
    class_boxes = jnp.broadcast_to(jnp.moveaxis(boxes, 2, 1), (batch, classes, n, 4))
    slot_scores, slot_boxes = jax.vmap(jax.vmap(per_class_nms))(
        class_boxes, jnp.moveaxis(scores, 2, 1))
    slot_scores = slot_scores.reshape(batch, classes * size)
    slot_boxes = slot_boxes.reshape(batch, classes * size, 4)
    slot_classes = jnp.repeat(jnp.arange(classes, dtype="float32"), size)
    order = _descending(slot_scores)[:, :out_size]
    valid = jnp.minimum(jnp.sum(slot_scores > -jnp.inf, axis=1), out_size).astype("int32")
    pad = out_size - order.shape[1]
    kept = jnp.arange(out_size) < valid[:, None]
    nmsed_scores = jnp.pad(jnp.take_along_axis(slot_scores, order, 1), ((0, 0), (0, pad)))
    nmsed_boxes = jnp.pad(jnp.take_along_axis(slot_boxes, order[..., None], 1),
                          ((0, 0), (0, pad), (0, 0)))
    nmsed_classes = jnp.pad(slot_classes[order], ((0, 0), (0, pad)))
    if clip_boxes:
        nmsed_boxes = jnp.clip(nmsed_boxes, 0.0, 1.0)
    return (jnp.where(kept[..., None], nmsed_boxes, 0.0), jnp.where(kept, nmsed_scores, 0.0),
            jnp.where(kept, nmsed_classes, 0.0), valid)


# -- The forms whose output size depends on the values. ------------------------


def _library_value(args):
    leaves = jax.tree.leaves(args, is_leaf=lambda x: isinstance(x, keras.KerasTensor))
    return any(isinstance(leaf, (jax.Array, keras.KerasTensor, keras.Variable))
               for leaf in leaves)


def _value_dependent(name, *args, **kwargs):
    """TensorFlow's `tf.image.<name>` outside `model_fn`; in `model_fn`, an error."""
    if _library_value((args, kwargs)) or store.in_model_fn_call():
        raise NotImplementedError(
            f"tf1.image.{name}() returns as many indices as it keeps, a number known only "
            "from the values, which a compiled step cannot have. In model_fn use "
            "tf1.image.non_max_suppression_padded(boxes, scores, max_output_size, "
            "iou_threshold, score_threshold, pad_to_max_output_size=True): max_output_size "
            "indices and how many are valid (or combined_non_max_suppression).")
    import tensorflow as tf  # Host values outside model_fn: TensorFlow's op, eagerly.

    # TF's padded form reads `boxes.get_shape()`: arrays become tensors.
    args = [tf.convert_to_tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    return getattr(tf.compat.v1.image, name)(*args, **kwargs)


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None):
    """Indices greedy NMS keeps: only outside `model_fn` (see the module docstring).

    Raises:
        NotImplementedError: in `model_fn` (its output size depends on the values):
            use `non_max_suppression_padded(..., pad_to_max_output_size=True)`.
    """
    return _value_dependent("non_max_suppression", boxes, scores, max_output_size,
                            iou_threshold, score_threshold, name)


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0,
                                    name=None):
    """Indices and scores (soft-)NMS keeps: only outside `model_fn` (see the module docstring).

    Raises:
        NotImplementedError: in `model_fn` (its output size depends on the values):
            use `non_max_suppression_padded(..., pad_to_max_output_size=True)`.
    """
    return _value_dependent("non_max_suppression_with_scores", boxes, scores, max_output_size,
                            iou_threshold, score_threshold, soft_nms_sigma, name)


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"), name=None):
    """Indices greedy NMS keeps by given overlaps: only outside `model_fn` (see the module
    docstring).

    Raises:
        NotImplementedError: in `model_fn` (its output size depends on the values):
            use `non_max_suppression_padded(..., pad_to_max_output_size=True)`.
    """
    return _value_dependent("non_max_suppression_overlaps", overlaps, scores, max_output_size,
                            overlap_threshold, score_threshold, name)


__all__ = ["combined_non_max_suppression", "non_max_suppression", "non_max_suppression_overlaps",
           "non_max_suppression_padded", "non_max_suppression_with_scores"]
