"""`tf.compat.v1.losses`: weighted, reduced losses collected in `GraphKeys.LOSSES`.

Each loss is computed per element, multiplied by `weights` (broadcast), and
reduced as `reduction` says; the default, TF1's, is
`Reduction.SUM_BY_NONZERO_WEIGHTS` (the mean over examples of non-zero
weight). The result is also added to the `LOSSES` collection, so
`get_total_loss()` works as in TF1.

```python
loss = tf1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
loss += tf1.losses.get_regularization_loss()
```
"""

import math

from keras import ops

from keras_tpu_estimator.compat.v1 import nn
from keras_tpu_estimator.compat.v1 import ops as tf1_ops
from keras_tpu_estimator.compat.v1.graph import GraphKeys
from keras_tpu_estimator.compat.v1.graph import add_to_collection
from keras_tpu_estimator.compat.v1.graph import get_collection


class Reduction:
    """How a weighted loss is reduced (TF1's `tf.losses.Reduction`)."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE, cls.MEAN,
                cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key!r}: must be one of {cls.all()}.")


def _safe_div(numerator, denominator):
    return ops.where(denominator > 0, numerator / ops.maximum(denominator, 1e-30), 0.0)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """`losses * weights`, reduced by `reduction` and added to `loss_collection`.

    Args:
        losses: per-element losses.
        weights: a scalar or a tensor broadcastable to `losses`.
        loss_collection: the collection to add the result to (None: none).
        reduction: a `Reduction` value.

    Returns:
        The reduced loss (float32), or the weighted losses with `Reduction.NONE`.

    Raises:
        ValueError: for an unknown `reduction`.
    """
    Reduction.validate(reduction)
    losses = ops.cast(losses, "float32")
    weights = ops.broadcast_to(ops.cast(weights, "float32"), ops.shape(losses))
    weighted = losses * weights
    if reduction == Reduction.NONE:
        loss = weighted
    elif reduction == Reduction.SUM:
        loss = ops.sum(weighted)
    elif reduction == Reduction.MEAN:
        loss = _safe_div(ops.sum(weighted), ops.sum(weights))
    elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
        loss = ops.sum(weighted) / max(math.prod(losses.shape), 1)
    else:
        loss = _safe_div(ops.sum(weighted), ops.sum(ops.cast(ops.not_equal(weights, 0), "float32")))
    if loss_collection is not None:
        add_to_collection(loss_collection, loss)
    return loss


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Cross-entropy of integer `labels` (`[batch]`) against `logits` (`[batch, classes]`)."""
    losses = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Cross-entropy of one-hot labels against `logits`.

    With `label_smoothing > 0` the labels become
    `onehot_labels * (1 - label_smoothing) + label_smoothing / num_classes`.
    """
    labels = ops.cast(onehot_labels, "float32")
    if label_smoothing:
        labels = labels * (1 - label_smoothing) + label_smoothing / labels.shape[-1]
    losses = nn.softmax_cross_entropy_with_logits_v2(labels=ops.stop_gradient(labels), logits=logits)
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Elementwise sigmoid cross-entropy; smoothing moves labels toward 0.5."""
    labels = ops.cast(multi_class_labels, "float32")
    if label_smoothing:
        labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
    losses = nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """`(predictions - labels) ** 2`, weighted and reduced."""
    losses = ops.square(ops.cast(predictions, "float32") - ops.cast(labels, "float32"))
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """`|predictions - labels|`, weighted and reduced."""
    losses = ops.abs(ops.cast(predictions, "float32") - ops.cast(labels, "float32"))
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Quadratic below `delta`, linear above it."""
    error = ops.abs(ops.cast(predictions, "float32") - ops.cast(labels, "float32"))
    quadratic = ops.minimum(error, delta)
    losses = 0.5 * quadratic**2 + delta * (error - quadratic)
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """`-labels * log(p + eps) - (1 - labels) * log(1 - p + eps)`."""
    labels = ops.cast(labels, "float32")
    predictions = ops.cast(predictions, "float32")
    losses = -labels * ops.log(predictions + epsilon) - (1 - labels) * ops.log(1 - predictions + epsilon)
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """Adds `loss` to `loss_collection` (for `get_total_loss`)."""
    if loss_collection is not None:
        add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    """The losses added so far in this `model_fn` call."""
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    """The regularizers' penalties collected so far in this call."""
    return get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of `get_regularization_losses()` (0.0 when there are none).

    Example:

    ```python
    x = tf1.layers.dense(x, 64, kernel_regularizer=tf1.contrib.layers.l2_regularizer(1e-4))
    loss = data_loss + tf1.losses.get_regularization_loss()
    ```
    """
    losses = get_regularization_losses(scope)
    return tf1_ops.add_n(losses) if losses else ops.convert_to_tensor(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of `get_losses()`, plus the regularization losses by default.

    Raises:
        ValueError: when there is no loss at all (TF1's error).
    """
    losses = get_losses(scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope)
    if not losses:
        raise ValueError("No losses were added: use tf1.losses.* or add_loss first.")
    return tf1_ops.add_n(losses)
