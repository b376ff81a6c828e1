"""Checks of the batches read from an input, with errors that say what is wrong.

Every batch of an input must look like its first: the same feature keys,
dtypes and shapes but for the leading dimension. Each feature and label has
its own leading dimension, split over the replicas, as TensorFlow's
TPUEstimator split each tensor (an unlabeled batch `k` times the labeled
one: `{"x": [16, ...], "u": [48, ...]}`); the batch's own dimension (what
`params['batch_size']` counts) is the smallest of them (`batch_rows`). In a
batch that divides over the replicas, every tensor must divide
(`check_divisible`). In training a batch may be short only at the end
of the input (TPUs need static shapes, as TensorFlow's TPUEstimator
requires). Each error names the batch by its position in the input
(counted from 0) and says what changed.

Example:

```python
check = BatchCheck()
check(({"x": np.zeros((8, 4), "float32")}, np.zeros(8)), position=0)
check(({"x": np.zeros((8, 4), "float64")}, np.zeros(8)), position=1)
# ValueError: The input's batch 1 (counted from 0) differs from its first
# batch: features['x'] changed dtype from float32 to float64. ...
```
"""

import jax
import numpy as np

_SAME = (
    "Every batch must have the keys, dtypes and shapes of the first (only "
    "the batch dimension of a short batch may differ)."
)


def _where(position):
    return f"The input's batch {position} (counted from 0)"


def leaves(batch):
    """`[(name, leaf)]` of a batch `(features, labels)`: `features['x']`, `labels`."""
    named = []
    for root, tree in zip(("features", "labels"), batch):
        for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
            named.append((root + jax.tree_util.keystr(path), leaf))
    return named


def _keys(tree):
    return {"/".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path)
            for path, _ in jax.tree_util.tree_flatten_with_path(tree)[0]}


def batch_rows(batch, position):
    """The examples of a batch `(features, labels)`: its batch dimension.

    Each leaf has its own leading dimension (TPUEstimator split each tensor
    along its own); the batch's is the smallest of them (`smallest_rows`):
    the labeled batch of a semi-supervised input, whose unlabeled batch is
    `k` times larger.

    Args:
        batch: `(features, labels)` of arrays.
        position: the batch's position in the input (for errors).

    Returns:
        The batch's rows, an int.

    Raises:
        ValueError: if the batch holds no arrays, or a leaf is not an array
            with a leading dimension.
    """
    named = leaves(batch)
    if not named:
        raise ValueError(f"{_where(position)} holds no arrays: {batch!r:.200}")
    for name, leaf in named:
        if not np.shape(leaf):
            raise ValueError(
                f"{_where(position)}: {name} is {leaf!r:.80} of shape (); input batches "
                "must be arrays with a leading batch dimension."
            )
    return smallest_rows(np.shape(leaf)[0] for _, leaf in named)


def smallest_rows(rows):
    """The batch dimension of leaves of leading dimensions `rows`: the smallest.

    One rule wherever a batch's size is asked (`params['batch_size']` of
    `model_fn`, a short last batch, the examples an evaluation counts).
    """
    return min(int(r) for r in rows)


def check_divisible(batch, replicas, offset=0, scale=1):
    """Refuses a leaf whose leading dimension does not divide over the replicas.

    TensorFlow's TPUEstimator split each tensor over the shards along its
    own leading dimension, and refused one that did not divide.

    Args:
        batch: `(features, labels)` of arrays (or shape/dtype structs).
        replicas: the replicas each leaf is split over.
        offset: the axis of the leading dimension (1 for stacked steps).
        scale: what a leaf's rows are multiplied by (the processes, each
            holding its own rows of the global batch).

    Raises:
        ValueError: naming the first leaf that does not divide, its leading
            dimension and the number of replicas.
    """
    for name, leaf in leaves(batch):
        rows = np.shape(leaf)[offset] * scale
        if rows % replicas:
            raise ValueError(
                f"{name} has a leading dimension of {rows}, which does not divide over "
                f"the {replicas} replicas: each feature and label is split over the "
                "replicas along its own leading dimension, which must be a multiple of "
                f"the number of replicas ({replicas})."
            )


def refuse_strings(batch):
    """Refuses a batch `(features, labels)` holding strings: they cannot enter a step.

    Called on the sample batch each mode is built from and on the batches
    placed on the devices, both after the host transforms of the input
    (`transforms`: feature columns replace the strings they consume
    by ids), so only strings that would reach the compiled step are refused.

    Args:
        batch: `(features, labels)` of arrays or shape/dtype structs.

    Raises:
        TypeError: naming the first string feature (or `labels`), its shape
            and dtype, and where strings are turned into numbers.

    Example:

    ```python
    refuse_strings(({"x": np.array(["a", "b"])}, None))
    # TypeError: features['x'] is a string tensor (shape (2,), dtype <U1): ...
    ```
    """
    for name, leaf in leaves(batch):
        dtype = getattr(leaf, "dtype", None)
        if dtype is None or np.dtype(dtype).kind not in "OSU":
            continue
        raise TypeError(
            f"{name} is a string tensor (shape {tuple(np.shape(leaf))}, dtype "
            f"{np.dtype(dtype)}): model_fn runs in JAX, which has no strings. Strings "
            "belong in input_fn: turn them into numbers there (parse them: "
            "tf.io.parse_example, tf.strings.to_number; look them up: tf.lookup; hash "
            "them: tf.strings.to_hash_bucket_fast), or drop the feature there. A "
            "tf1.feature_column vocabulary, hash or crossed column does it for you if "
            "it is created before train, evaluate or predict reads the input (in main "
            "or params, not in model_fn)."
        )


class BatchCheck:
    """Checks that each batch `(features, labels)` looks like the first one.

    Call it on every batch, in order, with its position in the input.

    Raises:
        ValueError: naming the batch and what changed: keys removed or
            added, a dtype or a shape (but for the batch dimension).
    """

    def __init__(self):
        self._first = None

    def __call__(self, batch, position):
        batch = tuple(batch)
        if self._first is None:
            self._first = batch
            return
        changes = []
        for root, was, now in zip(("features", "labels"), self._first, batch):
            if jax.tree.structure(was) != jax.tree.structure(now):
                removed, added = sorted(_keys(was) - _keys(now)), sorted(_keys(now) - _keys(was))
                changes.append(
                    f"{root} keys changed (removed: {removed}, added: {added}; was "
                    f"{jax.tree.structure(was)}, now {jax.tree.structure(now)})"
                )
        if not changes:
            for (name, was), (_, now) in zip(leaves(self._first), leaves(batch)):
                was_dtype, now_dtype = np.asarray(was).dtype, np.asarray(now).dtype
                if was_dtype != now_dtype:
                    changes.append(f"{name} changed dtype from {was_dtype} to {now_dtype}")
                if np.shape(was)[1:] != np.shape(now)[1:]:
                    changes.append(
                        f"{name} changed shape from {np.shape(was)} to {np.shape(now)}"
                    )
        if changes:
            raise ValueError(
                f"{_where(position)} differs from its first batch: {'; '.join(changes)}. "
                + _SAME
            )


def short_training_batch(position, rows, batch_size, named_rows=()):
    """The error for a short batch in the middle of a training input.

    Args:
        position: the batch's position in the input.
        rows: its batch dimension.
        batch_size: the batch size.
        named_rows: `[(name, rows)]` of its leaves, said when they differ.
    """
    said = ""
    if len({r for _, r in named_rows}) > 1:
        said = " (" + ", ".join(f"{name} has {r}" for name, r in named_rows) + ")"
    return ValueError(
        f"The training input's batch {position} (counted from 0) has {rows} examples{said}, "
        f"but the batch size is {batch_size}, and more batches follow it. TPUs need "
        "static shapes: only the last batch of a training input may be short (it is "
        "dropped). Batch with drop_remainder=True (dataset.batch(batch_size, "
        "drop_remainder=True)), or repeat the dataset before batching it."
    )


def one_batch_trained_longer(examples, batch_size, full, steps):
    """The error for arrays of at most one batch trained for more steps.

    TensorFlow 1 ran an `input_fn`'s tensors at every step; arrays are the
    whole input here, read once. Arrays of one batch most likely meant a
    batch per step: which, the library cannot tell.
    """
    return ValueError(
        f"The training input is arrays of {examples} examples: it holds {full} "
        f"batch{'' if full == 1 else 'es'} of {batch_size}, and training asks for {steps} "
        "steps (`steps`/`max_steps` of train, `steps_per_epoch` of fit). Arrays (numpy, "
        "or tensors that never change) are the whole input, read once, not one batch a "
        "step. For a batch at every step, return a tf.data.Dataset batched with "
        "params['batch_size'] (`.repeat()` it to read it again), or the tensors of an "
        "iterator (`tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()`)."
    )
