"""Placing input batches on the devices of a `keras.distribution` layout.

Batches are split along the mesh's `batch` axis and, with
`TPUConfig.input_partition_dims`, over the cores of each replica (the
`model` axis, factored into one mesh axis per split dimension). Each leaf
is split along its own leading dimension (features and labels may differ
there); a leaf of a short last batch that does not divide over the
replicas is replicated.

Multi-process: every process holds its own rows of each global batch
(`jax.make_array_from_process_local_data`).
"""

import jax
import numpy as np
from jax.sharding import Mesh
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec

from keras_tpu_estimator import distribute
from keras_tpu_estimator.distribute import MODEL


def batch_sharding(distribution, ndim, stacked, divisible=True, partition=None):
    """The sharding of one input leaf of rank `ndim`.

    Args:
        distribution: the model's distribution.
        ndim: the rank of the leaf as fed (including the stacking axis).
        stacked: whether axis 0 stacks the steps of an on-device loop (then
            the batch is axis 1).
        divisible: whether the leaf's leading dimension divides over the
            `batch` axis; a leaf of a short last batch that does not is
            replicated instead.
        partition: this leaf's `input_partition_dims` entry (one count per
            dimension of an example batch, their product the cores per
            replica), or None to replicate it over the cores of a replica.
    """
    mesh = distribution.device_mesh.backend_mesh
    offset = 1 if stacked else 0
    spec = [None] * ndim
    spec[offset] = distribution.batch_dim_name if divisible else None
    split = [(dim, count) for dim, count in enumerate(partition or ()) if count > 1]
    if split:
        # The `model` axis, factored into one mesh axis per split dimension
        # (same devices, same order): [1, 2, 2, 1] splits H and W in two.
        counts = tuple(count for _, count in split)
        names = tuple(f"{MODEL}_{i}" for i in range(len(split)))
        devices = mesh.devices.reshape(mesh.devices.shape[:1] + counts)
        mesh = Mesh(devices, (mesh.axis_names[0],) + names)
        for (dim, _), name in zip(split, names):
            spec[dim + offset] = name
    return NamedSharding(mesh, PartitionSpec(*spec))


def input_shardings(tree, distribution, stacked, divisible=True, partition_dims=None):
    """The sharding of every leaf of `(features, labels)`.

    Args:
        tree: `(features, labels)` of arrays (or shape/dtype structs).
        distribution: the model's distribution.
        stacked: whether axis 0 stacks the steps of an on-device loop.
        divisible: whether the batch divides over the `batch` axis, or
            None to ask each leaf (`divides`): leaves may differ.
        partition_dims: `TPUConfig.input_partition_dims`, or None.

    Returns:
        A tree of `NamedSharding`s with the structure of `tree`.

    Raises:
        ValueError: if `partition_dims` does not match the structure of
            `(features, labels)`, or a partitioned dimension does not divide.
    """
    def leaf_divides(leaf):
        return divides(leaf, distribution, stacked) if divisible is None else divisible

    if partition_dims is None:
        return jax.tree.map(
            lambda a: batch_sharding(distribution, np.ndim(a), stacked, leaf_divides(a)), tree
        )
    features, labels = tree
    dims = tuple(partition_dims) + (None,) * (2 - len(partition_dims))
    offset = 1 if stacked else 0

    def one(leaf, entry, where):
        rank = np.ndim(leaf) - offset
        if entry is not None:
            if len(entry) != rank:
                raise ValueError(
                    f"{where}={list(entry)} has {len(entry)} dims, but the input "
                    f"tensor has rank {rank} (shape {tuple(leaf.shape[offset:])})."
                )
            for dim, count in enumerate(entry):
                size = leaf.shape[dim + offset]
                if size % count:
                    raise ValueError(
                        f"{where}={list(entry)} splits dimension {dim} (size "
                        f"{size}) in {count}, which does not divide it."
                    )
        return batch_sharding(distribution, np.ndim(leaf), stacked, leaf_divides(leaf), entry)

    def part(data, entry, where):
        if data is None:
            return None
        if isinstance(data, dict):
            if entry is None:
                return {k: one(v, None, where) for k, v in data.items()}
            if not hasattr(entry, "keys") or set(entry.keys()) != set(data):
                raise ValueError(
                    f"The structure of {where} must match the input: features "
                    f"are a dict with keys {sorted(data)}, but {where}="
                    f"{_describe(entry)}."
                )
            return {k: one(v, entry[k], f"{where}[{k!r}]") for k, v in data.items()}
        if entry is not None and hasattr(entry, "keys"):
            raise ValueError(
                f"The structure of {where} must match the input: {where} is a "
                f"dict ({_describe(entry)}), but the input is a single tensor."
            )
        if not hasattr(data, "shape"):
            raise ValueError(
                "input_partition_dims supports features and labels given as a "
                f"tensor or a dict of tensors. Received: {type(data).__name__}"
            )
        return one(data, entry, where)

    return (
        part(features, dims[0], "input_partition_dims[0]"),
        part(labels, dims[1], "input_partition_dims[1]"),
    )


def divides(leaf, distribution, stacked):
    """Whether a leaf's leading dimension (global: times the processes)
    divides over the distribution's replicas."""
    rows = np.shape(leaf)[1 if stacked else 0] * jax.process_count()
    return rows % distribute.num_replicas(distribution) == 0


def _describe(entry):
    if hasattr(entry, "keys"):
        return "{" + ", ".join(f"{k!r}: {entry[k]!r}" for k in entry) + "}"
    return repr(entry)


def put_batches(tree, distribution, stacked, divisible=True, partition_dims=None):
    """Places a tree of host arrays on the devices, split along the batch.

    Each leaf is split along its own leading dimension; with `divisible`
    None, a leaf that does not divide over the replicas is replicated.
    With several processes, `tree` holds this process's rows: the global
    batch is the processes' rows in process order.
    """
    shardings = input_shardings(tree, distribution, stacked, divisible, partition_dims)
    if jax.process_count() == 1:
        return jax.tree.map(jax.device_put, tree, shardings)
    axis = 1 if stacked else 0

    def global_array(local, sharding):
        shape = list(np.shape(local))
        shape[axis] *= jax.process_count()
        leaf_divisible = divides(local, distribution, stacked) if divisible is None else divisible
        if not leaf_divisible:
            # A short batch that divides over no replicas: each process's rows
            # stay on its own devices (replicated was each process's rows alone).
            sharding = distribute.process_split_sharding(sharding.mesh, len(shape), axis)
        return jax.make_array_from_process_local_data(sharding, np.asarray(local), tuple(shape))

    return jax.tree.map(global_array, tree, shardings)


def put_replicated(tree, distribution):
    """Places a tree of host arrays, whole, on every device of the mesh."""
    sharding = NamedSharding(distribution.device_mesh.backend_mesh, PartitionSpec())
    return jax.tree.map(lambda a: jax.device_put(a, sharding), tree)



def canonical_shardings(tree, mesh=None):
    """`tree` with each layout spelled one way, as a loop's outputs spell it.

    `P(None,)` and `P()` lay an array out alike, and so does another kind
    of sharding replicated over the same devices, but a compiled program
    keyed on one recompiles for the other; outputs come back as a
    `NamedSharding` with no trailing `None`s, so inputs are given so too.

    Args:
        tree: arrays.
        mesh: the `jax.sharding.Mesh` whose replicated layout is
            `NamedSharding(mesh, P())`; None leaves other shardings as they are.
    """

    def one(array):
        sharding = getattr(array, "sharding", None)
        if not isinstance(sharding, NamedSharding):
            if mesh is not None and (sharding is None or sharding.is_fully_replicated):
                return jax.device_put(array, NamedSharding(mesh, PartitionSpec()))
            return array
        spec = tuple(sharding.spec)
        while spec and spec[-1] is None:
            spec = spec[:-1]
        if spec == tuple(sharding.spec):
            return array
        return jax.device_put(array, NamedSharding(sharding.mesh, PartitionSpec(*spec)))

    return jax.tree.map(one, tree)
