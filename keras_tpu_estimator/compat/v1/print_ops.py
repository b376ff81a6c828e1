"""TF1's printing ops: `tf.Print` and `tf.print`, printed when the step runs.

A compiled step cannot print while it is traced: the values exist only when
it runs. Both ops hand their tensors to the host with `jax.debug.callback`
at every run of the step (not in the build pass, which computes no values),
and print them as TensorFlow formatted them:

- `tf.Print(input_, data, message, first_n, summarize)` returns `input_` and
  prints `message` followed by each of `data`, TF1's way: the first
  `summarize` elements (3 by default) in nested brackets, `...` where cut
  (`[[0 1 2...]...]`, a scalar `[7]`); only the first `first_n` runs print, when given.
- `tf.print(*inputs, output_stream, summarize, sep, end)` prints like
  `print`, each tensor as TF 2 shows it (the first and last `summarize`
  elements of each axis, rows on their own lines), and returns an op for
  `control_dependencies` or `group`.

Both print to standard error by default, as TensorFlow's kernels log.

```python
logits = tf1.Print(logits, [tf1.reduce_mean(logits)], message="mean logit: ")
tf1.print("step", tf1.train.get_global_step(), output_stream=sys.stdout)
```
"""

import sys

import jax
import numpy as np

from keras_tpu_estimator.compat.v1._op_helpers import as_tensor
from keras_tpu_estimator.compat.v1.training_ops import no_op


def _number(value):
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):g}"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def summarize_tf1(value, limit):
    """TF1's `tf.Print` text of an array: its first `limit` elements, nested."""
    array = np.asarray(value)
    if array.ndim == 0:
        return f"[{_number(array.item())}]"
    flat, shape, position = array.reshape(-1), array.shape, [0]
    limit = array.size if limit is None or limit < 0 else limit

    def dims(axis):
        if position[0] >= limit:
            return ""
        if axis == len(shape) - 1:
            parts = []
            for i in range(shape[axis]):
                if position[0] >= limit:
                    return " ".join(parts) + ("..." if axis else "")
                parts.append(_number(flat[position[0]]))
                position[0] += 1
            return " ".join(parts)
        text = ""
        for _ in range(shape[axis]):
            opened = position[0] < limit
            inner = dims(axis + 1)
            text += f"[{inner}]" if opened else inner
        return text

    text = dims(0)
    return f"[{text}{'...' if array.size > limit else ''}]"


def summarize_tf2(value, edge):
    """TF 2's `tf.print` text of an array: `edge` elements each side of `...`, per axis."""
    array = np.asarray(value)
    if array.ndim == 0:
        return _number(array.item())
    edge = None if edge is None or edge < 0 else edge

    def rows(sub, depth):
        items = list(range(sub.shape[0]))
        if edge is not None and len(items) > 2 * edge:
            items = items[:edge] + [None] + items[-edge:]
        if sub.ndim == 1:
            return "[" + " ".join("..." if i is None else _number(sub[i]) for i in items) + "]"
        separator = "\n" + " " * (depth + 1)
        return "[" + separator.join(
            "..." if i is None else rows(sub[i], depth + 1) for i in items) + "]"

    return rows(array, 0)


def _host_print(fn, values):
    """Calls `fn(*numpy values)` on the host at every run of the step."""
    jax.debug.callback(lambda *arrays: fn(*[np.asarray(a) for a in arrays]), *values)


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """TF1's `tf.Print`: `input_`, printing `message` and `data` when the step runs.

    Args:
        input_: the tensor returned.
        data: a list of tensors (or Python values) to print.
        message: a prefix (default none).
        first_n: print only the first `first_n` runs; None or negative: every run.
        summarize: elements printed per tensor (default 3; negative: all).
        name: accepted and ignored.

    Returns:
        `input_`.
    """
    del name
    data = [as_tensor(d) for d in data]
    limit = 3 if summarize is None else summarize
    runs = [0]

    def show(*arrays):
        runs[0] += 1
        if first_n is not None and first_n >= 0 and runs[0] > first_n:
            return
        sys.stderr.write((message or "") + "".join(summarize_tf1(a, limit) for a in arrays) + "\n")
        sys.stderr.flush()

    _host_print(show, data)
    return input_


def print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):  # noqa: A001
    """TF's `tf.print`: prints `inputs` when the step runs (see the module docstring).

    Args:
        *inputs: tensors, Python values, and lists, tuples or dicts of them.
        output_stream: `sys.stdout`, `sys.stderr` (default), or a
            `"file://path"` to append to.
        summarize: elements shown at each end of every axis (default 3;
            None or negative: all).
        sep, end: as Python's `print`.
        name: accepted and ignored.

    Returns:
        An op to give `tf1.control_dependencies` or `tf1.group`.
    """
    del name
    leaves, treedef = jax.tree.flatten(list(inputs), is_leaf=lambda x: isinstance(x, str))
    traced = [i for i, leaf in enumerate(leaves) if not isinstance(leaf, (str, bytes))
              and (isinstance(leaf, jax.Array) or hasattr(leaf, "shape"))]

    def text(value):
        if isinstance(value, np.ndarray):
            return summarize_tf2(value, summarize)
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k!r}: {text(v)}" for k, v in value.items()) + "}"
        if isinstance(value, (list, tuple)):
            inner = ", ".join(text(v) for v in value)
            return f"[{inner}]" if isinstance(value, list) else f"({inner})"
        return value if isinstance(value, str) else _number(value)

    def show(*arrays):
        filled = list(leaves)
        for i, array in zip(traced, arrays):
            filled[i] = array
        line = sep.join(text(v) for v in jax.tree.unflatten(treedef, filled)) + end
        if isinstance(output_stream, str) and output_stream.startswith("file://"):
            with open(output_stream[len("file://"):], "a") as stream:
                stream.write(line)
        else:
            stream = sys.stderr if output_stream is None else output_stream
            stream.write(line)
            stream.flush()

    _host_print(show, [as_tensor(leaves[i]) for i in traced])
    return no_op()


__all__ = ["Print", "print"]
