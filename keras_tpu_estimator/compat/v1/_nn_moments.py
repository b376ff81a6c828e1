"""`tf.nn.convolution`, `tf.nn.sufficient_statistics`, `tf.nn.normalize_moments`.

Exported from `tf1.nn`. Distributed batch normalization written for TF1
(AmoebaNet's) sums statistics per shard, adds them over replicas and
normalizes:

```python
counts, mean_ss, variance_ss, _ = tf1.nn.sufficient_statistics(x, [0, 1, 2])
mean, variance = tf1.nn.normalize_moments(counts, mean_ss, variance_ss, shift=None)
```

In the global view the sums already cover the whole batch.
"""

import math

from keras import ops

from keras_tpu_estimator.compat.v1._symbolic import symbolic_op


def _spatial_format(data_format, rank):
    if data_format is None or not data_format.startswith("NC"):
        if data_format is not None and not (data_format.startswith("N")
                                            and data_format.endswith("C")):
            raise ValueError(
                f"Argument `data_format` of convolution must be None, 'N...C' or 'NC...'. "
                f"Received: data_format={data_format!r}"
            )
        return "channels_last"
    return "channels_first"


def _per_axis(value, rank, argument):
    if value is None:
        return 1
    if isinstance(value, int):
        return value
    value = tuple(int(v) for v in value)
    if len(value) != rank:
        raise ValueError(
            f"Argument `{argument}` of convolution needs {rank} values (one per spatial "
            f"axis) for a rank-{rank + 2} filter. Received: {argument}={value!r}"
        )
    return value


@symbolic_op
def convolution(input, filter=None, padding=None, strides=None,  # noqa: A002
                dilation_rate=None, name=None, data_format=None, filters=None,
                dilations=None):
    """N-D convolution (`N` = 1, 2, 3), as `tf.nn.convolution`.

    Args:
        input: `[batch, *spatial, in]` (or `[batch, in, *spatial]` with an
            `NC...` `data_format`).
        filter: `[*spatial, in, out]` (`filters` is its other name).
        padding: `'SAME'` or `'VALID'`.
        strides: one stride per spatial axis, or an int; default 1.
        dilation_rate: one per spatial axis, or an int (`dilations` is its
            other name); default 1.
        name: ignored.
        data_format: None, `'NWC'`/`'NHWC'`/`'NDHWC'` (channels last) or
            `'NCW'`/`'NCHW'`/`'NCDHW'`.

    Returns:
        The convolution.

    Raises:
        ValueError: for another `padding`, `data_format`, or a per-axis
            argument of the wrong length.

    Example:

    ```python
    y = tf1.nn.convolution(x, kernel, padding="SAME", strides=[2, 2])
    ```
    """
    kernel = filter if filter is not None else filters
    if kernel is None:
        raise ValueError("convolution needs `filter` (or `filters`). Received: None")
    rank = len(kernel.shape) - 2
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(
            f"Argument `padding` of convolution must be 'SAME' or 'VALID'. Received: "
            f"padding={padding!r}"
        )
    rate = dilations if dilation_rate is None else dilation_rate
    return ops.conv(
        input, kernel, strides=_per_axis(strides, rank, "strides"),
        padding=padding.lower(), data_format=_spatial_format(data_format, rank),
        dilation_rate=_per_axis(rate, rank, "dilation_rate"),
    )


@symbolic_op
def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """The sums that `normalize_moments` turns into a mean and a variance.

    Args:
        x: a tensor.
        axes: the axes to reduce.
        shift: None, or a value subtracted first (for numerical stability).
        keep_dims, keepdims: keep the reduced axes with size 1.
        name: ignored.

    Returns:
        `(count, mean_ss, variance_ss, shift)`: the number of elements summed
        (a scalar of `x`'s dtype), `sum(x - shift)`, `sum((x - shift)^2)`
        and `shift` (None when not given).
    """
    keep = bool(keepdims if keepdims is not None else keep_dims)
    axes = tuple(a % len(x.shape) for a in axes)
    # The product of the reduced sizes; a symbolic (exported) batch size stays symbolic.
    count = math.prod(x.shape[a] for a in axes)
    centered = x if shift is None else x - shift
    mean_ss = ops.sum(centered, axis=axes, keepdims=keep)
    variance_ss = ops.sum(ops.square(centered), axis=axes, keepdims=keep)
    count = ops.cast(ops.convert_to_tensor(count), x.dtype)
    return count, mean_ss, variance_ss, shift


@symbolic_op
def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """Mean and (biased) variance from `sufficient_statistics`.

    Args:
        counts: the number of elements summed.
        mean_ss: `sum(x - shift)`.
        variance_ss: `sum((x - shift)^2)`.
        shift: the shift subtracted, or None.
        name: ignored.

    Returns:
        `(mean, variance)`: `mean_ss / counts + shift` and
        `variance_ss / counts - (mean_ss / counts)^2`.
    """
    divisor = 1.0 / counts
    shifted_mean = mean_ss * divisor
    mean = shifted_mean if shift is None else shifted_mean + shift
    variance = variance_ss * divisor - ops.square(shifted_mean)
    return mean, variance
