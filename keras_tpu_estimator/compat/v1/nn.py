"""`tf.compat.v1.nn`: activations, cross-entropies, dropout, moments, conv/pool.

Numerically TF1's definitions (e.g. `sigmoid_cross_entropy_with_logits` in
its stable form, `l2_loss = sum(x ** 2) / 2`), on `keras.ops`.

```python
loss = tf1.reduce_mean(tf1.nn.sparse_softmax_cross_entropy_with_logits(
    labels=labels, logits=logits))
```
"""

from keras import ops

from keras_tpu_estimator.compat.v1 import ops as tf1_ops
# A private alias: `nn` is `tf1.nn`, and `take_rows` is not a TF1 name.
from keras_tpu_estimator.compat.v1._row_gather import take_rows as _take_rows
from keras_tpu_estimator.compat.v1._symbolic import symbolic_ops as _symbolic_ops


def relu(features, name=None):
    return ops.relu(features)


def relu6(features, name=None):
    return ops.relu6(features)


def elu(features, name=None):
    return ops.elu(features)


def selu(features, name=None):
    return ops.selu(features)


def leaky_relu(features, alpha=0.2, name=None):
    """`max(x, alpha * x)` (TF1's default `alpha` is 0.2)."""
    return ops.leaky_relu(features, negative_slope=alpha)


def gelu(features, approximate=False, name=None):
    return ops.gelu(features, approximate=approximate)


def softplus(features, name=None):
    return ops.softplus(features)


def swish(features, name=None):
    return ops.silu(features)


silu = swish
tanh = tf1_ops.tanh
sigmoid = tf1_ops.sigmoid


def softmax(logits, axis=None, name=None, dim=None):
    return ops.softmax(logits, axis=-1 if axis is None and dim is None else (axis if axis is not None else dim))


def log_softmax(logits, axis=None, name=None, dim=None):
    return ops.log_softmax(logits, axis=-1 if axis is None and dim is None else (axis if axis is not None else dim))


def _check_labels(function, labels, logits, sparse):
    expected = tuple(logits.shape[:-1]) if sparse else tuple(logits.shape)
    if tuple(labels.shape) != expected:
        raise ValueError(
            f"{function}: `labels` must have shape {expected} (the shape of "
            f"`logits`{' without its last axis' if sparse else ''}). "
            f"Received: labels.shape={tuple(labels.shape)}, logits.shape={tuple(logits.shape)}"
        )


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Per-example cross-entropy of integer `labels` against `logits`.

    Args:
        labels: int tensor of class ids, shape `logits.shape[:-1]`.
        logits: unscaled log-probabilities, `[..., num_classes]`.

    Returns:
        The loss per example, shape `labels.shape`.

    Raises:
        ValueError: if positional arguments are used (as TF1) or the shapes
            do not match.
    """
    if _sentinel is not None:
        raise ValueError("sparse_softmax_cross_entropy_with_logits takes only named arguments (labels=, logits=).")
    labels, logits = ops.convert_to_tensor(labels), ops.convert_to_tensor(logits)
    _check_labels("sparse_softmax_cross_entropy_with_logits", labels, logits, sparse=True)
    log_probs = ops.log_softmax(ops.cast(logits, "float32") if logits.dtype == "bfloat16" else logits, axis=-1)
    picked = ops.take_along_axis(log_probs, ops.expand_dims(ops.cast(labels, "int32"), -1), axis=-1)
    return -ops.squeeze(picked, -1)


def softmax_cross_entropy_with_logits_v2(_sentinel=None, labels=None, logits=None, axis=-1, name=None, dim=None):
    """Per-example cross-entropy of a distribution `labels` against `logits`.

    Gradients flow into `labels` too (the `_v2` behaviour).
    """
    if _sentinel is not None:
        raise ValueError("softmax_cross_entropy_with_logits takes only named arguments (labels=, logits=).")
    axis = dim if dim is not None else axis
    labels, logits = ops.convert_to_tensor(labels), ops.convert_to_tensor(logits)
    _check_labels("softmax_cross_entropy_with_logits", labels, logits, sparse=False)
    return -ops.sum(ops.cast(labels, logits.dtype) * ops.log_softmax(logits, axis=axis), axis=axis)


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1, name=None, axis=None):
    """Like `softmax_cross_entropy_with_logits_v2`, without gradients into `labels` (TF1's v1)."""
    labels = ops.stop_gradient(ops.convert_to_tensor(labels))
    return softmax_cross_entropy_with_logits_v2(
        labels=labels, logits=logits, axis=dim if axis is None else axis
    )


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Elementwise `-(z log(sigmoid(x)) + (1 - z) log(1 - sigmoid(x)))`, stably:
    `max(x, 0) - x * z + log(1 + exp(-|x|))` as TF1 computes it."""
    if _sentinel is not None:
        raise ValueError("sigmoid_cross_entropy_with_logits takes only named arguments (labels=, logits=).")
    labels, logits = ops.convert_to_tensor(labels), ops.convert_to_tensor(logits)
    _check_labels("sigmoid_cross_entropy_with_logits", labels, logits, sparse=False)
    labels = ops.cast(labels, logits.dtype)
    return ops.relu(logits) - logits * labels + ops.log1p(ops.exp(-ops.abs(logits)))


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None, targets=None):
    """Sigmoid cross-entropy with positive examples weighted by `pos_weight`."""
    labels = targets if labels is None else labels
    labels, logits = ops.convert_to_tensor(labels), ops.convert_to_tensor(logits)
    labels = ops.cast(labels, logits.dtype)
    log_weight = 1 + (pos_weight - 1) * labels
    return (1 - labels) * logits + log_weight * (
        ops.log1p(ops.exp(-ops.abs(logits))) + ops.relu(-logits)
    )


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Dropout, always on (TF1's `nn.dropout` has no `training` flag).

    Give `rate` (drop probability) or TF1's `keep_prob = 1 - rate`. Code
    like `nn.dropout(x, keep_prob=0.9 if training else 1.0)` is identity
    outside training, as before. Draws from the model's seed generator.

    Raises:
        ValueError: for both or neither of `keep_prob` and `rate`, or a
            value outside `[0, 1)` / `(0, 1]`.
    """
    from keras_tpu_estimator.compat.v1 import layers

    if (keep_prob is None) == (rate is None):
        raise ValueError(
            f"nn.dropout needs exactly one of `keep_prob` and `rate`. Received: "
            f"keep_prob={keep_prob!r}, rate={rate!r}"
        )
    if keep_prob is not None:
        if not 0 < keep_prob <= 1:
            raise ValueError(f"Argument `keep_prob` of nn.dropout must be in (0, 1]. Received: keep_prob={keep_prob!r}")
        rate = 1 - keep_prob
    return layers.Dropout(rate, noise_shape=noise_shape)(x, training=True)


def l2_loss(t, name=None):
    """`sum(t ** 2) / 2` (TF1's definition: half the squared L2 norm)."""
    return ops.sum(ops.square(ops.convert_to_tensor(t))) / 2


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """`x / sqrt(max(sum(x ** 2, axis), epsilon))`."""
    axis = dim if axis is None else axis
    square_sum = ops.sum(ops.square(x), axis=axis, keepdims=True)
    return x * ops.rsqrt(ops.maximum(square_sum, epsilon))


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """Rows of the table `params` at `ids` (any shape): `[*ids.shape, dim]`.

    As in TF1, a variable's gradient counts in `global_norm` /
    `clip_by_global_norm` as its gathered rows (`IndexedSlices`), duplicates
    separately.

    Raises:
        NotImplementedError: for a list of sharded tables or `max_norm`
            (shard with the distribution's layout map instead).
    """
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise NotImplementedError(
                "embedding_lookup on a list of table shards is not supported: "
                "use one table and shard it with the layout map."
            )
        params = params[0]
    if max_norm is not None:
        raise NotImplementedError("embedding_lookup(max_norm=...) is not supported.")
    return _take_rows(params, ops.cast(ids, "int32"))


def bias_add(value, bias, data_format=None, name=None):
    """`value + bias` on the channel axis (last; second with 'NC...' formats)."""
    if data_format is not None and data_format.startswith("NC"):
        shape = (1, -1) + (1,) * (len(value.shape) - 2)
        return value + ops.reshape(bias, shape)
    return value + bias


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """Mean and (biased) variance of `x` over `axes`."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    return ops.moments(x, axes=tuple(axes), keepdims=keep)


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """`(x - mean) / sqrt(variance + epsilon) * scale + offset` (None: no scale/offset)."""
    inv = ops.rsqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    out = (x - mean) * inv
    return out if offset is None else out + offset


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002
    """The `k` largest values of the last axis and their indices."""
    return ops.top_k(input, k=k, sorted=sorted)


def in_top_k(predictions, targets, k, name=None):
    """Whether each target is among the `k` largest predictions of its row."""
    return ops.in_top_k(targets, predictions, k)


def _data_format(data_format, rank):
    if data_format is None or data_format.startswith("N") and data_format.endswith("C"):
        return "channels_last"
    if data_format.startswith("NC"):
        return "channels_first"
    raise ValueError(f"Unsupported data_format={data_format!r}: use 'NHWC' or 'NCHW'.")


def _spatial(value, rank, data_format):
    """TF's 4-element `strides`/`ksize` lists, reduced to their spatial part."""
    if isinstance(value, int):
        return value
    value = list(value)
    if len(value) == rank + 2:
        return tuple(value[1:-1]) if _data_format(data_format, rank) == "channels_last" else tuple(value[2:])
    return tuple(value)


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
           data_format="NHWC", dilations=(1, 1, 1, 1), name=None, filters=None):
    """Convolution of `input` with an explicit `filter` (`[h, w, in, out]`).

    `padding` is 'SAME' or 'VALID'; `strides`/`dilations` are TF's
    4-element lists (or ints).
    """
    kernel = filter if filter is not None else filters
    return ops.conv(
        input, kernel, strides=_spatial(strides, 2, data_format), padding=padding.lower(),
        data_format=_data_format(data_format, 2),
        dilation_rate=_spatial(dilations, 2, data_format),
    )


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    """Max pooling with TF's 4-element `ksize`/`strides` and 'SAME'/'VALID'."""
    value = input if value is None else value
    return ops.max_pool(
        value, _spatial(ksize, 2, data_format), _spatial(strides, 2, data_format),
        padding.lower(), _data_format(data_format, 2),
    )


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    """Average pooling with TF's 4-element `ksize`/`strides` and 'SAME'/'VALID'."""
    value = input if value is None else value
    return ops.average_pool(
        value, _spatial(ksize, 2, data_format), _spatial(strides, 2, data_format),
        padding.lower(), _data_format(data_format, 2),
    )


def zero_fraction(value, name=None):
    """The fraction of zeros in `value` (used in TF1 activation summaries)."""
    return ops.mean(ops.cast(ops.equal(value, 0), "float32"))


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """`max_pool` under TF's newer name (`ksize`/`strides`: ints, pairs or 4-element lists)."""
    return max_pool(input, ksize, strides, padding, data_format=data_format)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """`avg_pool` under TF's newer name."""
    return avg_pool(input, ksize, strides, padding, data_format=data_format)


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None, dilations=None):
    """Depthwise convolution with `filter` `[h, w, in, multiplier]`: `in * multiplier` channels.

    `strides` is TF's 4-element list; `rate` (or `dilations`) the 2-element
    dilation.
    """
    rate = dilations if rate is None else rate
    data_format = data_format or "NHWC"
    return ops.depthwise_conv(
        input, filter, strides=_spatial(strides, 2, data_format), padding=padding.lower(),
        data_format=_data_format(data_format, 2),
        dilation_rate=1 if rate is None else _spatial(rate, 2, data_format),
    )


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     rate=None, name=None, data_format=None, dilations=None):
    """`depthwise_conv2d` followed by a 1x1 convolution with `pointwise_filter`."""
    rate = dilations if rate is None else rate
    data_format = data_format or "NHWC"
    return ops.separable_conv(
        input, depthwise_filter, pointwise_filter, strides=_spatial(strides, 2, data_format),
        padding=padding.lower(), data_format=_data_format(data_format, 2),
        dilation_rate=1 if rate is None else _spatial(rate, 2, data_format),
    )


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format=None, name=None, input=None, dilations=None):  # noqa: A002
    """1-D convolution of `value` `[batch, width, in]` with `filters` `[w, in, out]`."""
    value = input if value is None else value
    data_format = "NWC" if data_format in (None, "NHWC") else data_format
    return ops.conv(
        value, filters, strides=_spatial(stride, 1, data_format), padding=padding.lower(),
        data_format=_data_format(data_format, 1),
        dilation_rate=1 if dilations is None else _spatial(dilations, 1, data_format),
    )


def softsign(features, name=None):
    """`x / (1 + |x|)`."""
    return ops.softsign(features)


def xw_plus_b(x, weights, biases, name=None):
    """`x @ weights + biases`."""
    return ops.matmul(x, weights) + biases


def relu_layer(x, weights, biases, name=None):
    """`relu(x @ weights + biases)`."""
    return ops.relu(xw_plus_b(x, weights, biases))


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None, exponential_avg_factor=1.0):
    """TF1's fused batch normalization of a 4D `x`: `(y, batch_mean, batch_variance)`.

    Training (`is_training`) normalizes with the batch's mean and biased
    variance and returns the unbiased variance (`n / (n - 1)`), as TF1's
    kernel; otherwise it normalizes with `mean` and `variance` and returns
    them.

    Raises:
        ValueError: for `exponential_avg_factor` other than 1.0, or
            inference without `mean` and `variance`.
    """
    if exponential_avg_factor != 1.0:
        raise ValueError("fused_batch_norm(exponential_avg_factor=...) is not supported.")
    axis = 1 if data_format.startswith("NC") else len(x.shape) - 1
    reduced = tuple(a for a in range(len(x.shape)) if a != axis)
    shape = [1] * len(x.shape)
    shape[axis] = -1
    if is_training:
        mean, biased = ops.moments(x, axes=reduced)
        n = 1
        for a in reduced:
            n *= x.shape[a]
        variance = biased * (n / max(n - 1, 1))
    elif mean is None or variance is None:
        raise ValueError("fused_batch_norm(is_training=False) needs `mean` and `variance`.")
    else:
        biased = variance
    inv = ops.rsqrt(ops.reshape(biased, shape) + epsilon) * ops.reshape(scale, shape)
    y = (x - ops.reshape(mean, shape)) * inv + ops.reshape(offset, shape)
    return y, mean, variance


# Every op runs in the symbolic build pass as in the step (see `_symbolic`);
# dropout is a layer call, which Keras builds symbolically itself.
_symbolic_ops(globals(), exclude=("dropout",))


# N-D convolution and the two halves of `moments` live in their own module.
from keras_tpu_estimator.compat.v1._nn_moments import convolution  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._nn_moments import normalize_moments  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._nn_moments import sufficient_statistics  # noqa: E402,F401

# Block rearrangements, also at the top level (`space_ops`).
from keras_tpu_estimator.compat.v1.space_ops import depth_to_space  # noqa: E402,F401
from keras_tpu_estimator.compat.v1.space_ops import space_to_batch  # noqa: E402,F401
from keras_tpu_estimator.compat.v1.space_ops import space_to_depth  # noqa: E402,F401

# Recurrent cells (`tf.nn.rnn_cell`) and loops; after `_symbolic_ops`: they create variables.
from keras_tpu_estimator.compat.v1._rnn import rnn_cell  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._rnn.loops import bidirectional_dynamic_rnn  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._rnn.loops import dynamic_rnn  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._rnn.loops import static_bidirectional_rnn  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._rnn.loops import static_rnn  # noqa: E402,F401

# Keep last: on TensorFlow tensors (input_fn), TensorFlow's own functions run (see `_sides`).
from keras_tpu_estimator.compat.v1._sides import run_where_called as _run_where_called  # noqa: E402,E501

_run_where_called(globals())
