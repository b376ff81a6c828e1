"""TF1's diagonal ops: `tf.matrix_diag`, `tf.matrix_diag_part`, `tf.matrix_set_diag`, `tf.diag`.

The `matrix_*` ops act on the last two axes (batched over the others) and on
a band of diagonals `k`: an int (one diagonal: 0 the main one, positive
above it, negative below), or a pair `(low, high)` for the diagonals
`low..high`, stored highest first, each `max_diag_len` long, a shorter one
padded as `align` says: 'RIGHT_LEFT' (TF's default) right-aligns the
diagonals on and above the main one and left-aligns those below;
'LEFT_RIGHT', 'LEFT_LEFT' and 'RIGHT_RIGHT' likewise. `diag`/`diag_part`
are TF1's other pair: a tensor of any rank on the diagonal of a tensor of
twice its rank. Also under `tf1.linalg` (`diag`, `diag_part`, `set_diag`,
`tensor_diag`, `tensor_diag_part`). `k`, `num_rows` and `num_cols` are static.

```python
# Zero the main diagonal of an attention score matrix.
scores = tf1.matrix_set_diag(scores, tf1.zeros(tf1.shape(scores)[:-1]))
```
"""

import jax.numpy as jnp
import numpy as np

from keras_tpu_estimator.compat.v1._op_helpers import as_tensor as _as_tensor
from keras_tpu_estimator.compat.v1._op_helpers import static_value as _static_value
from keras_tpu_estimator.compat.v1._symbolic import symbolic_ops as _symbolic_ops

_ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")


def _band(k, op):
    """`(low, high)` from `k`: an int or a pair, static."""
    value = _static_value(k)
    if value is None or value.size not in (1, 2) or not np.issubdtype(value.dtype, np.integer):
        raise ValueError(f"{op}(): k must be a static int or a pair of ints. Received: k={k!r}")
    low, high = (int(v) for v in np.broadcast_to(value.reshape(-1), (2,)))
    if low > high:
        raise ValueError(f"{op}(): the lower diagonal k[0]={low} must not exceed the upper "
                         f"k[1]={high}.")
    return low, high


def _check_align(align, op):
    if align not in _ALIGNS:
        raise ValueError(f"{op}(): align must be one of {_ALIGNS}. Received: align={align!r}")


def _length(d, rows, cols):
    """The number of elements of diagonal `d` of a `rows x cols` matrix."""
    return min(rows + min(d, 0), cols - max(d, 0))


def _offset(d, max_len, rows, cols, align):
    """Where diagonal `d`'s first element sits in its stored row (its left padding)."""
    side = align.split("_")[0 if d >= 0 else 1]
    return max_len - _length(d, rows, cols) if side == "RIGHT" else 0


def _stored_index(rows, cols, band, max_len, align):
    """For each matrix position: its diagonal's row `t`, its place `n` there, and whether the
    band holds it (static arrays `[rows, cols]`)."""
    low, high = band
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    d = j - i
    inside = (d >= low) & (d <= high)
    t = np.where(inside, high - d, 0)
    offsets = np.array([_offset(int(v), max_len, rows, cols, align) for v in d.reshape(-1)])
    n = np.where(inside, np.minimum(i, j) + offsets.reshape(d.shape), 0)
    return t, n, inside


def _diagonals(diagonal, band, op):
    """`diagonal` as `[..., num_diags, max_len]` (one diagonal gets its axis)."""
    x = _as_tensor(diagonal)
    low, high = band
    if low == high:
        return x[..., None, :]
    if len(x.shape) < 2 or x.shape[-2] != high - low + 1:
        raise ValueError(f"{op}(): diagonal must have shape [..., {high - low + 1}, max_diag_len] "
                         f"for k=({low}, {high}). Received shape: {tuple(x.shape)}")
    return x


def _static_int(value, what, op):
    array = _static_value(value)
    if array is None or array.size != 1:
        raise ValueError(f"{op}(): {what} must be a static int. Received: {what}={value!r}")
    return int(array.reshape(()))


def matrix_diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
                align="RIGHT_LEFT"):
    """A batch of matrices with `diagonal` on the diagonals `k`, `padding_value` elsewhere.

    Args:
        diagonal: `[..., max_diag_len]` for one diagonal, or `[..., num_diags,
            max_diag_len]` for a band `k=(low, high)` (highest diagonal first).
        name: ignored.
        k: the diagonal (an int) or the band `(low, high)`.
        num_rows, num_cols: the matrices' size; -1 (default): the smallest
            that holds the diagonals (square when both are -1).
        padding_value: the value off the band.
        align: how shorter diagonals sit in `diagonal` (see the module).

    Returns:
        A tensor `[..., num_rows, num_cols]` of `diagonal`'s dtype.

    Raises:
        ValueError: for a `diagonal` whose shape does not fit `k` and the
            sizes, or non-static `k`, `num_rows`, `num_cols`.

    Example:

    ```python
    tf1.matrix_diag([[1, 2], [3, 4]])  # [[[1, 0], [0, 2]], [[3, 0], [0, 4]]]
    ```
    """
    _check_align(align, "matrix_diag")
    band = _band(k, "matrix_diag")
    x = _diagonals(diagonal, band, "matrix_diag")
    low, high = band
    max_len = x.shape[-1]
    rows = _static_int(num_rows, "num_rows", "matrix_diag")
    cols = _static_int(num_cols, "num_cols", "matrix_diag")
    min_rows, min_cols = max_len - min(high, 0), max_len + max(low, 0)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if (rows != min_rows and cols != min_cols) or rows < min_rows or cols < min_cols:
        raise ValueError(f"matrix_diag(): diagonals of length {max_len} for k=({low}, {high}) "
                         f"do not fit a {rows} x {cols} matrix.")
    t, n, inside = _stored_index(rows, cols, band, max_len, align)
    values = x[..., t, n]
    return jnp.where(inside, values, _as_tensor(padding_value, x.dtype))


def matrix_diag_part(input, name="diag_part", k=0, padding_value=0,  # noqa: A002
                     align="RIGHT_LEFT"):
    """The diagonals `k` of a batch of matrices.

    Args:
        input: a tensor `[..., rows, cols]`.
        name: ignored.
        k: the diagonal (an int) or the band `(low, high)`.
        padding_value: fills the stored rows of diagonals shorter than the
            longest.
        align: how shorter diagonals sit in the result (see the module).

    Returns:
        `[..., max_diag_len]` for one diagonal, `[..., num_diags,
        max_diag_len]` for a band (highest diagonal first).

    Raises:
        ValueError: for a diagonal outside the matrices, or non-static `k`.
    """
    _check_align(align, "matrix_diag_part")
    low, high = _band(k, "matrix_diag_part")
    x = _as_tensor(input)
    if len(x.shape) < 2:
        raise ValueError(f"matrix_diag_part(): input must be at least 2-D. Received shape: "
                         f"{tuple(x.shape)}")
    rows, cols = x.shape[-2:]
    if not (-rows < low <= high < cols) and not (rows == 0 or cols == 0):
        raise ValueError(f"matrix_diag_part(): k=({low}, {high}) is outside a {rows} x {cols} "
                         "matrix.")
    max_len = min(rows + min(high, 0), cols - max(low, 0))
    row_index, col_index, inside = [], [], []
    for d in range(high, low - 1, -1):
        m = np.arange(max_len) - _offset(d, max_len, rows, cols, align)
        valid = (m >= 0) & (m < _length(d, rows, cols))
        m = np.where(valid, m, 0)
        row_index.append(m - min(d, 0))
        col_index.append(m + max(d, 0))
        inside.append(valid)
    out = jnp.where(np.array(inside), x[..., np.array(row_index), np.array(col_index)],
                    _as_tensor(padding_value, x.dtype))
    return out[..., 0, :] if low == high else out


def matrix_set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """`input` with its diagonals `k` replaced by `diagonal`.

    Args:
        input: a tensor `[..., rows, cols]`.
        diagonal: `[..., max_diag_len]` for one diagonal, `[..., num_diags,
            max_diag_len]` for a band (highest diagonal first), as
            `matrix_diag_part` gives them.
        name: ignored.
        k: the diagonal (an int) or the band `(low, high)`.
        align: how shorter diagonals sit in `diagonal` (see the module).

    Returns:
        A tensor of `input`'s shape and dtype.

    Raises:
        ValueError: for a `diagonal` of the wrong shape, or non-static `k`.
    """
    _check_align(align, "matrix_set_diag")
    band = _band(k, "matrix_set_diag")
    x = _as_tensor(input)
    if len(x.shape) < 2:
        raise ValueError(f"matrix_set_diag(): input must be at least 2-D. Received shape: "
                         f"{tuple(x.shape)}")
    diagonals = _diagonals(_as_tensor(diagonal, x.dtype), band, "matrix_set_diag")
    rows, cols = x.shape[-2:]
    low, high = band
    max_len = min(rows + min(high, 0), cols - max(low, 0))
    if diagonals.shape[-1] != max_len:
        raise ValueError(f"matrix_set_diag(): the diagonals of a {rows} x {cols} matrix for "
                         f"k=({low}, {high}) are {max_len} long. Received diagonal of shape "
                         f"{tuple(_as_tensor(diagonal).shape)}")
    t, n, inside = _stored_index(rows, cols, band, max_len, align)
    return jnp.where(inside, diagonals[..., t, n], x)


def diag(diagonal, name=None):
    """A tensor of twice `diagonal`'s rank with `diagonal` on its diagonal, zeros elsewhere.

    `out[i1, ..., ik, i1, ..., ik] = diagonal[i1, ..., ik]` (TF1's `tf.diag`,
    `tf.linalg.tensor_diag`; for batched matrices see `matrix_diag`).

    Args:
        diagonal: a tensor of rank 1 or more.
        name: ignored.

    Returns:
        A tensor of shape `diagonal.shape + diagonal.shape`.

    Raises:
        ValueError: for a scalar.
    """
    x = _as_tensor(diagonal)
    if not x.shape:
        raise ValueError("diag(): diagonal must be at least 1-D. Received a scalar.")
    size = int(np.prod(x.shape))
    flat = x.reshape(size)
    eye = np.eye(size, dtype=bool)
    return jnp.where(eye, flat[:, None], jnp.zeros((), x.dtype)).reshape(x.shape + x.shape)


def diag_part(input, name=None):  # noqa: A002
    """The diagonal of a tensor of even rank: `out[i1, ..., ik] = input[i1, ..., ik, i1, ..., ik]`.

    Args:
        input: a tensor of shape `S + S` (rank 2k, k >= 1).
        name: ignored.

    Returns:
        A tensor of shape `S`.

    Raises:
        ValueError: for an odd rank or halves of different shapes.
    """
    x = _as_tensor(input)
    rank = len(x.shape)
    half = tuple(x.shape[:rank // 2])
    if rank == 0 or rank % 2 or tuple(x.shape[rank // 2:]) != half:
        raise ValueError(f"diag_part(): input must have a shape S + S (even rank). Received "
                         f"shape: {tuple(x.shape)}")
    size = int(np.prod(half))
    return jnp.diagonal(x.reshape(size, size)).reshape(half)


__all__ = ["diag", "diag_part", "matrix_diag", "matrix_diag_part", "matrix_set_diag"]

# Every op runs in the symbolic build pass as in the step (see `_symbolic`).
_symbolic_ops(globals())
