"""How metric functions read their arguments, as `tf.compat.v1.metrics` does.

Inputs are converted and cast, a trailing dimension of size 1 is squeezed
from labels or predictions, `weights` are broadcast to the values, and
everything is flattened: TF1 metrics average over every element. Every
error names the TF1 function (`fn_name`) and the argument.
"""

import numbers

from keras import ops

FLOAT = "float32"  # The dtype of values, weights and float labels.
INT = "int32"  # The dtype of class ids.


def to_tensor(fn_name, arg, value, dtype=None):
    """Argument `arg` of metric function `fn_name` as a tensor.

    Args:
        fn_name: the TF1 metric function's name, for error messages.
        arg: the argument's name, for error messages.
        value: the argument; anything `keras.ops.convert_to_tensor` takes.
        dtype: cast to this dtype if given.

    Returns:
        A tensor.

    Raises:
        ValueError: if `value` is `None`.

    Example:

    ```python
    labels = to_tensor("accuracy", "labels", labels)
    ```
    """
    if value is None:
        raise ValueError(f"{fn_name}: `{arg}` is required, got None.")
    value = ops.convert_to_tensor(value)
    return value if dtype is None else ops.cast(value, dtype)


def shape_of(x):
    """The static shape of tensor `x`, a tuple."""
    return tuple(x.shape)


def flatten(x):
    """Tensor `x` reshaped to one dimension."""
    return ops.reshape(x, [-1])


def squeeze_pair(fn_name, labels, predictions, names=("labels", "predictions")):
    """TF1's `remove_squeezable_dimensions`, then a shape check.

    Args:
        fn_name: the TF1 metric function's name, for error messages.
        labels, predictions: tensors.
        names: what to call them in error messages.

    Returns:
        `(labels, predictions)` of the same shape, a trailing dimension of
        size 1 removed from the one that has one more dimension.

    Raises:
        ValueError: if the shapes then differ.
    """
    lr, pr = len(labels.shape), len(predictions.shape)
    if pr - lr == 1 and predictions.shape[-1] == 1:
        predictions = ops.squeeze(predictions, axis=-1)
    elif lr - pr == 1 and labels.shape[-1] == 1:
        labels = ops.squeeze(labels, axis=-1)
    if shape_of(labels) != shape_of(predictions):
        raise ValueError(
            f"{fn_name}: `{names[0]}` of shape {shape_of(labels)} and `{names[1]}` of "
            f"shape {shape_of(predictions)} must have the same shape (a trailing "
            "dimension of size 1 on one of them is removed first)."
        )
    return labels, predictions


def flat_weights(fn_name, weights, values):
    """TF1's weight squeezing and broadcasting; returns flat float weights.

    `weights` must be a scalar or, after removing or adding a trailing
    dimension of size 1, have the rank of `values` with every dimension 1 or
    equal to that of `values`.

    Args:
        fn_name: the TF1 metric function's name, for error messages.
        weights: the `weights` argument, or `None`.
        values: the tensor the weights apply to.

    Returns:
        `None` if `weights` is `None`, else a flat float tensor with one
        weight per element of `values`.

    Raises:
        ValueError: if `weights` cannot be broadcast to `values`.
    """
    if weights is None:
        return None
    weights = to_tensor(fn_name, "weights", weights, FLOAT)
    wr, vr = len(weights.shape), len(values.shape)
    if wr != 0:
        if wr - vr == 1 and weights.shape[-1] == 1:
            weights = ops.squeeze(weights, axis=-1)
        elif vr - wr == 1:
            weights = ops.expand_dims(weights, axis=-1)
        w_shape, v_shape = shape_of(weights), shape_of(values)
        if len(w_shape) != len(v_shape) or any(
            w not in (1, v) for w, v in zip(w_shape, v_shape)
        ):
            raise ValueError(
                f"{fn_name}: `weights` of shape {w_shape} cannot be broadcast to "
                f"the values of shape {v_shape}: weights must be a scalar or "
                "have the values' rank, each dimension 1 or equal to the "
                "values' one."
            )
    return flatten(ops.broadcast_to(weights, shape_of(values)))


def bool_pair(fn_name, labels, predictions, weights):
    """Labels and predictions cast to bool (nonzero is True), as floats 0/1.

    Returns:
        `(labels, predictions, weights)`, flat; `weights` as `flat_weights`.
    """
    labels = ops.cast(to_tensor(fn_name, "labels", labels, "bool"), FLOAT)
    predictions = ops.cast(to_tensor(fn_name, "predictions", predictions, "bool"), FLOAT)
    labels, predictions = squeeze_pair(fn_name, labels, predictions)
    return flatten(labels), flatten(predictions), flat_weights(fn_name, weights, predictions)


def float_pair(fn_name, labels, predictions):
    """Labels and predictions as floats of one shape; see `squeeze_pair`."""
    labels = to_tensor(fn_name, "labels", labels, FLOAT)
    predictions = to_tensor(fn_name, "predictions", predictions, FLOAT)
    return squeeze_pair(fn_name, labels, predictions)


def check_integer(fn_name, arg, value, minimum):
    """Returns `value` as an int if it is an integer >= `minimum`.

    Raises:
        ValueError: otherwise (a `bool` is not an integer here); the message
            names `fn_name` and `arg`.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{fn_name}: `{arg}` must be an integer >= {minimum}. Received: {value!r}")
    return int(value)


def check_thresholds(fn_name, thresholds):
    """Returns `thresholds` (a number or a sequence) as a list of floats.

    Raises:
        ValueError: if the list is empty or a threshold is outside [0, 1].
    """
    if isinstance(thresholds, numbers.Real):
        thresholds = [thresholds]
    try:
        thresholds = [float(t) for t in thresholds]
    except (TypeError, ValueError):
        raise ValueError(
            f"{fn_name}: `thresholds` must be a list of floats in [0, 1]. "
            f"Received: {thresholds!r}"
        ) from None
    if not thresholds or any(not 0.0 <= t <= 1.0 for t in thresholds):
        raise ValueError(
            f"{fn_name}: `thresholds` must be a non-empty list of floats in [0, 1]. "
            f"Received: {thresholds!r}"
        )
    return thresholds

