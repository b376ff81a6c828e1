"""TF1's non-fused batch normalization step, with renorm, virtual batches and `adjustment`.

`tf1.layers.batch_normalization` (its `TF1BatchNormalization` layer) and
`tf1.contrib.layers.batch_norm` take this path for TF1's arguments that its
fused kernel did not take (TF1 fell back to the non-fused path for them,
whatever `fused` said):

- `renorm`: batch renormalization (Ioffe, 2017). Training normalizes with
  the batch's statistics, then corrects by `r = stddev / renorm_stddev` and
  `d = (mean - renorm_mean) / renorm_stddev` (computed from the values
  before this step's update, clipped by `renorm_clipping`'s `rmin`, `rmax`
  and `dmax`, without gradient): `(x_hat * r + d) * gamma + beta`.
  `renorm_mean` and `renorm_stddev` move by `renorm_momentum`;
  `moving_mean` and `moving_stddev` (of `sqrt(variance + epsilon)`) by
  `momentum`, and `moving_variance` is `max(moving_stddev^2 - epsilon, 0)`.
- `virtual_batch_size` (ghost batch normalization): the batch is reshaped
  to `[virtual_batch_size, batch / virtual_batch_size, ...]`, as TF1 did,
  and each of the `batch / virtual_batch_size` columns (examples `i`,
  `i + batch / virtual_batch_size`, ...) is normalized with its own
  statistics; the moving statistics move toward their mean over the
  virtual batches. The parameters have TF1's shape `[1, 1, ..., C]`
  (the input's rank plus one).
- `adjustment(shape)`: a function of the input's shape giving
  `(scale, bias)`, applied in training only: `x_hat * scale * gamma +
  bias * gamma + beta`.

Everything here is a pure function of values: the callers read their
variables and assign the new moving statistics this returns.
"""

from keras import ops

from keras_tpu_estimator.compat.v1 import ops as _tf1_ops

RENORM_CLIPPING_KEYS = ("rmax", "rmin", "dmax")
RENORM_VARIABLES = ("moving_stddev", "renorm_mean", "renorm_stddev")


def check_renorm_clipping(renorm_clipping):
    """`renorm_clipping` as a dict, with TF1's check of its keys.

    Raises:
        ValueError: for a key other than `rmax`, `rmin` and `dmax`.
    """
    clipping = dict(renorm_clipping or {})
    if set(clipping) - set(RENORM_CLIPPING_KEYS):
        raise ValueError(
            f"Received invalid keys for `renorm_clipping` argument: {renorm_clipping}. "
            f"Supported values: {list(RENORM_CLIPPING_KEYS)}."
        )
    return clipping


def check_virtual_batch_size(virtual_batch_size, axis, rank, adjustment):
    """TF1's checks of `virtual_batch_size` against the axis and `adjustment`.

    Raises:
        ValueError: for a size that is not a positive int, a batch axis
            (0) normalized over, or an `adjustment` given too.
    """
    if virtual_batch_size is None:
        return
    if isinstance(virtual_batch_size, bool) or not isinstance(virtual_batch_size, int) or (
            virtual_batch_size <= 0):
        raise ValueError(
            "`virtual_batch_size` must be a positive integer that divides the true batch "
            f"size of the input tensor. Received: virtual_batch_size={virtual_batch_size!r}"
        )
    if axis % rank == 0:
        raise ValueError(
            "When using `virtual_batch_size`, the batch dimension must be 0 and thus axis "
            f"cannot include 0. Received axis={axis}"
        )
    if adjustment is not None:
        raise ValueError("When using `virtual_batch_size`, adjustment cannot be specified")


def parameter_shape(input_shape, axis, virtual_batch_size):
    """The shape of the parameters: `(C,)`, or TF1's `[1, 1, ..., C]` with virtual batches."""
    rank = len(input_shape)
    axis %= rank
    if virtual_batch_size is None:
        return (int(input_shape[axis]),)
    shape = [int(input_shape[a]) if a == axis else 1 for a in range(rank)]
    return tuple(shape[:1] + [1] + shape[1:])


def moving_average(old, value, momentum):
    """TF1's `assign_moving_average`: `old - (old - value) * (1 - momentum)`."""
    return old - (old - ops.cast(value, old.dtype)) * ops.cast(1.0 - momentum, old.dtype)


def _compose(scale, offset, then_scale, then_offset):
    """`(x * scale + offset) * then_scale + then_offset` as one scale and offset."""
    if then_scale is not None:
        scale = scale * then_scale
        offset = offset * then_scale
    if then_offset is not None:
        offset = offset + then_offset
    return scale, offset


def renorm_correction(mean, variance, values, epsilon, momentum, renorm_momentum, clipping):
    """Batch renormalization's `(r, d)` and the new values of the moving statistics.

    Args:
        mean, variance: the batch's statistics (biased variance).
        values: the current `moving_mean`, `moving_stddev`, `renorm_mean`
            and `renorm_stddev`.
        epsilon: the layer's epsilon.
        momentum: the decay of `moving_mean`/`moving_stddev`.
        renorm_momentum: the decay of `renorm_mean`/`renorm_stddev`.
        clipping: a dict of `rmin`, `rmax`, `dmax` (each optional, numbers
            or scalar tensors).

    Returns:
        `(r, d, updates)`: the corrections (without gradient) and the new
        `moving_mean`, `moving_stddev`, `moving_variance`, `renorm_mean`
        and `renorm_stddev`.
    """
    stddev = ops.sqrt(variance + epsilon)
    renorm_mean = values["renorm_mean"]
    # The floor keeps r and d finite while renorm_stddev is still near zero.
    renorm_stddev = ops.maximum(values["renorm_stddev"], ops.sqrt(ops.cast(epsilon, mean.dtype)))
    r = stddev / renorm_stddev
    d = (mean - renorm_mean) / renorm_stddev
    rmin, rmax, dmax = (clipping.get(key) for key in ("rmin", "rmax", "dmax"))
    if rmin is not None:
        r = ops.maximum(r, ops.cast(rmin, r.dtype))
    if rmax is not None:
        r = ops.minimum(r, ops.cast(rmax, r.dtype))
    if dmax is not None:
        d = ops.minimum(ops.maximum(d, -ops.cast(dmax, d.dtype)), ops.cast(dmax, d.dtype))
    moving_stddev = moving_average(values["moving_stddev"], stddev, momentum)
    updates = {
        "moving_mean": moving_average(values["moving_mean"], mean, momentum),
        "moving_stddev": moving_stddev,
        "moving_variance": ops.relu(moving_stddev * moving_stddev - epsilon),
        "renorm_mean": moving_average(values["renorm_mean"], mean, renorm_momentum),
        "renorm_stddev": moving_average(values["renorm_stddev"], stddev, renorm_momentum),
    }
    return ops.stop_gradient(r), ops.stop_gradient(d), updates


def _broadcast(value, rank, axis):
    """A `(C,)` vector shaped to broadcast along `axis` of a rank-`rank` tensor."""
    if value is None or len(value.shape) == rank or axis == rank - 1:
        return value
    shape = [1] * rank
    shape[axis] = -1
    return ops.reshape(value, shape)


def _squeeze_virtual(value):
    """A `[1, 1, ..., C]` parameter of virtual batches, for the unreshaped input."""
    return None if value is None else ops.squeeze(value, axis=1)


def normalize(x, values, axis, epsilon, momentum, training, renorm=False, renorm_clipping=None,
              renorm_momentum=0.99, virtual_batch_size=None, adjustment=None):
    """TF1's non-fused batch normalization of `x`; the output and the new moving statistics.

    Args:
        x: the input (float32 or float64).
        values: `gamma` and `beta` (None when absent), `moving_mean`,
            `moving_variance` and, with `renorm`, `moving_stddev`,
            `renorm_mean`, `renorm_stddev`, of `parameter_shape`.
        axis: the channels' axis (an int).
        epsilon, momentum: the layer's.
        training: a Python bool: batch statistics and updates, or the
            moving statistics.
        renorm, renorm_clipping, renorm_momentum: batch renormalization
            (`renorm_clipping` checked by `check_renorm_clipping`).
        virtual_batch_size: None, or the size of the virtual batches
            (checked by `check_virtual_batch_size`).
        adjustment: None, or `adjustment(shape) -> (scale, bias)`.

    Returns:
        `(outputs, updates)`: `updates` maps the moving statistics' names
        to their new values (empty when not training).

    Raises:
        ValueError: for a batch that `virtual_batch_size` does not divide.
    """
    shape = tuple(x.shape)
    rank = len(shape)
    axis %= rank
    gamma, beta = values.get("gamma"), values.get("beta")
    if not training:
        mean, variance = values["moving_mean"], values["moving_variance"]
        if virtual_batch_size is not None:
            mean, variance, gamma, beta = map(_squeeze_virtual, (mean, variance, gamma, beta))
        outputs = _batch_normalization(x, mean, variance, beta, gamma, epsilon, rank, axis)
        return outputs, {}

    if virtual_batch_size is not None:
        if shape[0] is not None and shape[0] % virtual_batch_size:
            raise ValueError(
                f"`virtual_batch_size` ({virtual_batch_size}) must divide the batch size of "
                f"the input; received an input of shape {shape}."
            )
        x = ops.reshape(x, (virtual_batch_size, -1) + shape[1:])
        rank, axis = rank + 1, axis + 1
        reduced = tuple(a for a in range(rank) if a not in (1, axis))
        mean, variance = ops.moments(x, axes=reduced, keepdims=True)
        batch_mean = ops.mean(mean, axis=1, keepdims=True)
        batch_variance = ops.mean(variance, axis=1, keepdims=True)
    else:
        mean, variance = ops.moments(x, axes=tuple(a for a in range(rank) if a != axis))
        batch_mean, batch_variance = mean, variance

    scale, offset = _broadcast(gamma, rank, axis), _broadcast(beta, rank, axis)
    if adjustment is not None:
        adjust_scale, adjust_bias = adjustment(_tf1_ops.shape(x))
        scale, offset = _compose(ops.cast(adjust_scale, x.dtype), ops.cast(adjust_bias, x.dtype),
                                 scale, offset)
    if renorm:
        r, d, updates = renorm_correction(
            batch_mean, batch_variance, values, epsilon, momentum, renorm_momentum,
            check_renorm_clipping(renorm_clipping))
        scale, offset = _compose(_broadcast(r, rank, axis), _broadcast(d, rank, axis),
                                 scale, offset)
    else:
        updates = {
            "moving_mean": moving_average(values["moving_mean"], batch_mean, momentum),
            "moving_variance": moving_average(values["moving_variance"], batch_variance,
                                              momentum),
        }
    outputs = _batch_normalization(x, mean, variance, offset, scale, epsilon, rank, axis)
    if virtual_batch_size is not None:
        outputs = ops.reshape(outputs, (-1,) + shape[1:])
    return outputs, updates


def _batch_normalization(x, mean, variance, offset, scale, epsilon, rank, axis):
    """`tf.nn.batch_normalization` of vectors along `axis` (or of broadcastable tensors)."""
    mean, variance, offset, scale = (_broadcast(v, rank, axis)
                                     for v in (mean, variance, offset, scale))
    inv = ops.rsqrt(variance + epsilon)
    if scale is not None:
        inv = inv * scale
    # TF's form: x * inv + (offset - mean * inv).
    shift = -mean * inv if offset is None else offset - mean * inv
    return x * inv + shift
