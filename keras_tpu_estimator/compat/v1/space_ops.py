"""TF1's block rearrangements: `tf.space_to_depth`, `tf.batch_to_space_nd`, ...

`space_to_depth` moves each `block_size x block_size` spatial block of an
image into the channels (`[b, h, w, c]` -> `[b, h/bs, w/bs, bs*bs*c]`, the
block's row, then column, then the channel ordering the new channels);
`depth_to_space` undoes it. `space_to_batch_nd` pads the spatial axes and
moves each position of a `block_shape` block into the batch (the block's
offsets first, then the original batch); `batch_to_space_nd` undoes it and
crops. Block sizes, paddings and crops are static (Python ints or
constants). Same conventions as `ops`: TF1's argument names, `name`
accepted and ignored. Also under `tf1.nn` (`space_to_depth`,
`depth_to_space`, `space_to_batch`).

```python
# ResNet's conv0 on TPU: 2x2 blocks of the image into channels.
images = tf1.nn.space_to_depth(images, block_size=2)
```
"""

import jax.numpy as jnp
import numpy as np

from keras_tpu_estimator.compat.v1._op_helpers import as_tensor as _as_tensor
from keras_tpu_estimator.compat.v1._op_helpers import static_value as _static_value
from keras_tpu_estimator.compat.v1._symbolic import symbolic_ops as _symbolic_ops

_FORMATS = ("NHWC", "NCHW")


def _block_size(block_size, op):
    value = _static_value(block_size)
    if value is None or value.size != 1 or int(value.reshape(())) < 2:
        raise ValueError(f"{op}(): block_size must be a static int of at least 2. "
                         f"Received: block_size={block_size!r}")
    return int(value.reshape(()))


def _nhwc(input, data_format, op):  # noqa: A002
    """`input` as a 4-D NHWC tensor, and the function that gives a result back its format."""
    if data_format not in _FORMATS:
        raise ValueError(f"{op}(): data_format must be one of {_FORMATS}. "
                         f"Received: data_format={data_format!r}")
    x = _as_tensor(input)
    if len(x.shape) != 4:
        raise ValueError(f"{op}(): input must be 4-D. Received shape: {tuple(x.shape)}")
    if data_format == "NHWC":
        return x, lambda y: y
    return jnp.transpose(x, (0, 2, 3, 1)), lambda y: jnp.transpose(y, (0, 3, 1, 2))


def space_to_depth(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """Moves `block_size x block_size` spatial blocks of `input` into its channels.

    Args:
        input: a 4-D tensor, `[b, h, w, c]` (NHWC) or `[b, c, h, w]` (NCHW).
        block_size: an int >= 2 dividing `h` and `w`.
        name: ignored.
        data_format: 'NHWC' (default) or 'NCHW'.

    Returns:
        `[b, h / bs, w / bs, bs * bs * c]` (NHWC) or its NCHW layout; channel
        `(i * bs + j) * c + k` of an output position holds channel `k` of
        the block's pixel at row `i`, column `j`.

    Raises:
        ValueError: for a `block_size` under 2 or not dividing `h` and `w`,
            an input not 4-D, or another `data_format`.

    Example:

    ```python
    x = tf1.space_to_depth(tf1.reshape(tf1.range(16), [1, 4, 4, 1]), 2)  # [1, 2, 2, 4]
    ```
    """
    bs = _block_size(block_size, "space_to_depth")
    x, back = _nhwc(input, data_format, "space_to_depth")
    b, h, w, c = x.shape
    if h % bs or w % bs:
        raise ValueError(f"space_to_depth(): height {h} and width {w} must be multiples of "
                         f"block_size {bs}.")
    x = x.reshape(b, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5)
    return back(x.reshape(b, h // bs, w // bs, bs * bs * c))


def depth_to_space(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """Moves channels of `input` into `block_size x block_size` spatial blocks (the inverse
    of `space_to_depth`).

    Args:
        input: a 4-D tensor, `[b, h, w, c]` (NHWC) or `[b, c, h, w]` (NCHW).
        block_size: an int >= 2 whose square divides `c`.
        name: ignored.
        data_format: 'NHWC' (default) or 'NCHW'.

    Returns:
        `[b, h * bs, w * bs, c / (bs * bs)]` (NHWC) or its NCHW layout.

    Raises:
        ValueError: for a `block_size` under 2 or whose square does not
            divide `c`, an input not 4-D, or another `data_format`.
    """
    bs = _block_size(block_size, "depth_to_space")
    x, back = _nhwc(input, data_format, "depth_to_space")
    b, h, w, c = x.shape
    if c % (bs * bs):
        raise ValueError(f"depth_to_space(): the depth {c} must be a multiple of block_size "
                         f"squared ({bs * bs}).")
    x = x.reshape(b, h, w, bs, bs, c // (bs * bs)).transpose(0, 1, 3, 2, 4, 5)
    return back(x.reshape(b, h * bs, w * bs, c // (bs * bs)))


def _static_ints(value, what, op, shape=None):
    array = _static_value(value)
    if array is None or (array.size and not np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"{op}(): {what} must be static integers. Received: {value!r}")
    array = array.astype(np.int64)
    if shape is not None and array.shape != shape:
        raise ValueError(f"{op}(): {what} must have shape {shape}. Received shape: "
                         f"{array.shape}")
    return array


def _blocks(input, block_shape, pairs, what, op):  # noqa: A002
    """`input` as a tensor, the static block shape and the static `[M, 2]` paddings/crops."""
    x = _as_tensor(input)
    block = _static_ints(block_shape, "block_shape", op).reshape(-1)
    m = block.size
    if m < 1 or np.any(block < 1) or len(x.shape) < m + 1:
        raise ValueError(f"{op}(): block_shape must hold 1 to rank(input) - 1 positive ints. "
                         f"Received: block_shape={block.tolist()} for input of shape "
                         f"{tuple(x.shape)}")
    pairs = _static_ints(pairs, what, op, (m, 2))
    if np.any(pairs < 0):
        raise ValueError(f"{op}(): {what} must not be negative. Received: {pairs.tolist()}")
    return x, [int(b) for b in block], [(int(lo), int(hi)) for lo, hi in pairs]


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """Pads the spatial axes of `input` and moves each block position into the batch.

    Args:
        input: a tensor `[batch] + spatial_shape + remaining_shape`, with
            `len(spatial_shape) == len(block_shape)`.
        block_shape: M static positive ints.
        paddings: static `[M, 2]` non-negative ints: the zeros before and
            after each spatial axis; each padded size must be a multiple of
            its block size.
        name: ignored.

    Returns:
        A tensor `[batch * prod(block_shape)] + [padded / block] +
        remaining_shape`; output batch `offset * batch + n` holds the block
        position `offset` (row-major over `block_shape`) of input batch `n`.

    Raises:
        ValueError: for values not static, of the wrong shape, or padded
            sizes not divisible by the block.
    """
    x, block, pads = _blocks(input, block_shape, paddings, "paddings", "space_to_batch_nd")
    m = len(block)
    x = jnp.pad(x, [(0, 0)] + pads + [(0, 0)] * (len(x.shape) - m - 1))
    batch, spatial, rest = x.shape[0], x.shape[1:m + 1], tuple(x.shape[m + 1:])
    if any(s % b for s, b in zip(spatial, block)):
        raise ValueError(f"space_to_batch_nd(): padded spatial shape {tuple(spatial)} must be "
                         f"divisible by block_shape {block}.")
    split = [d for s, b in zip(spatial, block) for d in (s // b, b)]
    x = x.reshape((batch,) + tuple(split) + rest)
    offsets = [2 + 2 * i for i in range(m)]
    outer = [1 + 2 * i for i in range(m)]
    x = x.transpose(offsets + [0] + outer + list(range(2 * m + 1, 2 * m + 1 + len(rest))))
    return x.reshape((batch * int(np.prod(block)),) + tuple(s // b for s, b in
                                                             zip(spatial, block)) + rest)


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002
    """Moves batch blocks of `input` back into its spatial axes and crops them (the inverse
    of `space_to_batch_nd`).

    Args:
        input: a tensor `[batch] + spatial_shape + remaining_shape`, `batch`
            a multiple of `prod(block_shape)`.
        block_shape: M static positive ints.
        crops: static `[M, 2]` non-negative ints: what to remove before and
            after each spatial axis once it is `spatial * block` long.
        name: ignored.

    Returns:
        A tensor `[batch / prod(block_shape)] + [spatial * block - crops] +
        remaining_shape`.

    Raises:
        ValueError: for values not static, of the wrong shape, a batch not
            divisible by `prod(block_shape)`, or crops longer than an axis.
    """
    x, block, crop = _blocks(input, block_shape, crops, "crops", "batch_to_space_nd")
    m, total = len(block), int(np.prod(block))
    batch, spatial, rest = x.shape[0], tuple(x.shape[1:m + 1]), tuple(x.shape[m + 1:])
    if batch % total:
        raise ValueError(f"batch_to_space_nd(): the batch {batch} must be divisible by "
                         f"prod(block_shape) = {total}.")
    sizes = [s * b for s, b in zip(spatial, block)]
    if any(lo + hi > size for (lo, hi), size in zip(crop, sizes)):
        raise ValueError(f"batch_to_space_nd(): crops {crop} are larger than the spatial "
                         f"shape {sizes}.")
    x = x.reshape(tuple(block) + (batch // total,) + spatial + rest)
    order = [m] + [i for axis in range(m) for i in (m + 1 + axis, axis)]
    x = x.transpose(order + list(range(2 * m + 1, 2 * m + 1 + len(rest))))
    x = x.reshape((batch // total,) + tuple(sizes) + rest)
    return x[(slice(None),) + tuple(slice(lo, size - hi) for (lo, hi), size in
                                     zip(crop, sizes))]


def _block_size_argument(block_size, block_shape, op):
    if block_size is not None and block_shape is not None and block_size != block_shape:
        raise ValueError(f"{op}(): give block_size or its alias block_shape, not both.")
    value = block_size if block_size is not None else block_shape
    if value is None:
        raise ValueError(f"{op}(): block_size is required.")
    return value


def space_to_batch(input, paddings, block_size=None, name=None, block_shape=None):  # noqa: A002
    """`space_to_batch_nd` of a 4-D `input` `[b, h, w, c]` with square blocks `block_size`.

    Args:
        input: a 4-D tensor.
        paddings: static `[2, 2]` non-negative ints for height and width.
        block_size: a static int >= 2 (`block_shape` is its alias).
        name: ignored.
        block_shape: an alias of `block_size`.

    Returns:
        A tensor `[b * bs * bs, padded_h / bs, padded_w / bs, c]`.
    """
    bs = _block_size(_block_size_argument(block_size, block_shape, "space_to_batch"),
                     "space_to_batch")
    return space_to_batch_nd(input, [bs, bs], paddings)


def batch_to_space(input, crops, block_size, name=None, block_shape=None):  # noqa: A002
    """`batch_to_space_nd` of a 4-D `input` with square blocks `block_size`.

    Args:
        input: a 4-D tensor `[b * bs * bs, h, w, c]`.
        crops: static `[2, 2]` non-negative ints for height and width.
        block_size: a static int >= 2 (`block_shape` is its alias).
        name: ignored.
        block_shape: an alias of `block_size`.

    Returns:
        A tensor `[b, h * bs - crops, w * bs - crops, c]`.
    """
    bs = _block_size(_block_size_argument(block_size, block_shape, "batch_to_space"),
                     "batch_to_space")
    return batch_to_space_nd(input, [bs, bs], crops)


__all__ = [
    "batch_to_space", "batch_to_space_nd", "depth_to_space", "space_to_batch",
    "space_to_batch_nd", "space_to_depth",
]

# Every op runs in the symbolic build pass as in the step (see `_symbolic`).
_symbolic_ops(globals())
