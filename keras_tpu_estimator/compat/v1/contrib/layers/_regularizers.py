"""`tf.contrib.layers` regularizers (also `slim.l2_regularizer`, ...), with TF1's rules.

A regularizer is `fn(weights) -> scalar penalty`, for the `*_regularizer`
arguments of `tf1.layers`, `tf1.get_variable` and slim's layers, or
`apply_regularization`. As in TF1: `l2_regularizer` is `scale * sum(w**2) / 2`
(`tf.nn.l2_loss`, with its half), a scale of 0.0 gives a regularizer that
returns None (no penalty), and an integer scale is an error (`1` was
almost always a mistake for `1e-...`).

```python
reg = tf1.contrib.layers.l2_regularizer(1e-4)
x = tf1.layers.dense(x, 64, kernel_regularizer=reg)
loss += tf1.losses.get_regularization_loss()
```
"""

import numbers

from keras import ops

from keras_tpu_estimator.compat.v1 import graph as _graph
from keras_tpu_estimator.compat.v1 import nn as _nn

_WEIGHTS = "weights"  # TF1's GraphKeys.WEIGHTS.


def _check_scale(scale, argument):
    """Returns whether `scale` disables the regularizer (it is 0.0)."""
    if isinstance(scale, numbers.Integral):
        raise ValueError(
            f"Argument `{argument}` of a regularizer cannot be an integer: {scale!r}. "
            "Write it as a float (e.g. 1e-4)."
        )
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(
                f"Setting a scale less than 0 on a regularizer: {argument}={scale!r}"
            )
        return scale == 0.0
    return False  # A tensor: used as it is.


def _scaled(scale, penalty):
    return ops.multiply(ops.cast(scale, penalty.dtype), penalty)


def l1_regularizer(scale, scope=None):
    """`fn(weights) = scale * sum(|weights|)`, as `tf.contrib.layers.l1_regularizer`.

    Args:
        scale: a float (0.0 disables it: `fn` returns None) or a scalar tensor.
        scope: accepted (TF1's name scope of the penalty).

    Returns:
        The regularizer `fn(weights)`.

    Raises:
        ValueError: if `scale` is an integer or negative.

    Example:

    ```python
    penalty = tf1.contrib.layers.l1_regularizer(0.5)(weights)
    ```
    """
    del scope
    if _check_scale(scale, "scale"):
        return lambda _: None

    def l1(weights):
        return _scaled(scale, ops.sum(ops.abs(weights)))

    return l1


def l2_regularizer(scale, scope=None):
    """`fn(weights) = scale * sum(weights ** 2) / 2` (TF1's `tf.nn.l2_loss`, with its half).

    Args:
        scale: a float (0.0 disables it: `fn` returns None) or a scalar tensor.
        scope: accepted (TF1's name scope of the penalty).

    Returns:
        The regularizer `fn(weights)`.

    Raises:
        ValueError: if `scale` is an integer or negative.

    Example:

    ```python
    with slim.arg_scope([slim.conv2d], weights_regularizer=slim.l2_regularizer(4e-5)):
        net = slim.conv2d(images, 32, [3, 3])
    ```
    """
    del scope
    if _check_scale(scale, "scale"):
        return lambda _: None

    def l2(weights):
        return _scaled(scale, _nn.l2_loss(weights))

    return l2


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    """`fn(weights) = scale_l1 * sum(|w|) + scale_l2 * sum(w ** 2) / 2`.

    A zero scale drops its term (both zero: `fn` returns None).

    Raises:
        ValueError: if a scale is an integer or negative.
    """
    l1_off = _check_scale(scale_l1, "scale_l1")
    l2_off = _check_scale(scale_l2, "scale_l2")
    if l1_off:
        return l2_regularizer(scale_l2, scope)
    if l2_off:
        return l1_regularizer(scale_l1, scope)
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope)


def sum_regularizer(regularizer_list, scope=None):
    """`fn(weights)`: the sum of the penalties of `regularizer_list`.

    None regularizers are skipped, and so are None penalties; `fn` returns
    None when no penalty is left.

    Returns:
        The regularizer, or None if `regularizer_list` holds none.

    Example:

    ```python
    reg = tf1.contrib.layers.sum_regularizer(
        [tf1.contrib.layers.l1_regularizer(0.1), tf1.contrib.layers.l2_regularizer(0.2)])
    ```
    """
    del scope
    regularizers = [r for r in regularizer_list if r is not None]
    if not regularizers:
        return None

    def total(weights):
        penalties = [p for p in (r(weights) for r in regularizers) if p is not None]
        if not penalties:
            return None
        result = penalties[0]
        for penalty in penalties[1:]:
            result = ops.add(result, penalty)
        return result

    return total


def apply_regularization(regularizer, weights_list=None):
    """Sums `regularizer` over `weights_list` and adds it to `REGULARIZATION_LOSSES`.

    As `tf.contrib.layers.apply_regularization`: a None penalty counts 0.0;
    the sum is appended to `GraphKeys.REGULARIZATION_LOSSES` of this
    `model_fn` call and returned.

    Args:
        regularizer: `fn(weights) -> scalar` (or None).
        weights_list: the variables or tensors to regularize; default the
            `"weights"` collection (`GraphKeys.WEIGHTS`).

    Returns:
        The summed penalty, a scalar.

    Raises:
        ValueError: if there are no weights, or a penalty is not a scalar.

    Example:

    ```python
    penalty = tf1.contrib.layers.apply_regularization(
        tf1.contrib.layers.l2_regularizer(1e-4), tf1.trainable_variables())
    ```
    """
    if not weights_list:
        weights_list = _graph.get_collection(_WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize: `weights_list` is empty and so is "
                         "the 'weights' collection.")
    penalties = []
    for weights in weights_list:
        penalty = regularizer(weights)
        penalty = ops.convert_to_tensor(0.0 if penalty is None else penalty)
        if len(penalty.shape) != 0:
            raise ValueError("regularizer must return a scalar tensor instead of a tensor "
                             f"of shape {tuple(penalty.shape)}.")
        penalties.append(penalty)
    total = penalties[0]
    for penalty in penalties[1:]:
        total = ops.add(total, penalty)
    _graph.add_to_collection(_graph.GraphKeys.REGULARIZATION_LOSSES, total)
    return total
