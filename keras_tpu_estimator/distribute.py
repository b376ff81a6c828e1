"""From `TPUConfig` to a `keras.distribution` layout, and data placement.

By default every device is a replica: a `keras.distribution.DataParallel`
over all devices, variables replicated and batches split along the `batch`
axis of the mesh. `TPUConfig(num_cores_per_replica=k)` groups the `n`
devices into `n // k` replicas of `k` cores: a `ModelParallel` over a
`DeviceMesh((n // k, k), ('batch', 'model'))`, whose variable layouts come
from partition rules (`{regex: axes}`) or, when none are given, from
defaults that shard the output axis of Dense and Conv kernels and of
Embedding tables over `model`. The model's variables are created inside
`distribution.scope()`, so Keras lays them out; this module also places the
input batches, split over `batch` and, with `input_partition_dims`, over the
cores of each replica.

Multi-process: every process holds its own rows of each global batch
(`jax.make_array_from_process_local_data`); the mesh spans the devices of
all processes, as `keras.distribution.list_devices()` reports them once
`keras.distribution.initialize` (or `jax.distributed.initialize`) ran.
"""

import re

import jax
import keras
import numpy as np
from jax.sharding import Mesh
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec

BATCH, MODEL = "batch", "model"


def distribution_for(config, use_tpu=True, layout_map=None):
    """Returns the `keras.distribution.Distribution` `config` asks for.

    Args:
        config: a `RunConfig`.
        use_tpu: False runs on one host CPU device, as TPUEstimator's
            `use_tpu=False` ran on the host.
        layout_map: partition rules for the variables: a dict
            `{regex: axes}` (`axes` a tuple of `'batch'`, `'model'` or None
            per variable dimension; a regex must match a whole variable path,
            e.g. `'.*dense.*/kernel'`) or a `keras.distribution.LayoutMap`.
            None uses the defaults of `default_layout`.

    Returns:
        A `DataParallel` over every device (or the one CPU) when
        `num_cores_per_replica` is unset or 1 and no `layout_map` is given,
        else a `ModelParallel` over a `('batch', 'model')` mesh.

    Raises:
        ValueError: if `num_cores_per_replica` does not divide the number of
            devices, or a partition rule is malformed.

    Example:

    ```python
    config = kte.RunConfig(tpu_config=kte.TPUConfig(num_cores_per_replica=2))
    distribution = distribution_for(config, layout_map={".*kernel": (None, "model")})
    distribution.device_mesh.shape  # (4, 2) on 8 devices
    ```
    """
    if not use_tpu:
        devices = keras.distribution.list_devices("cpu")[:1]
    else:
        devices = keras.distribution.list_devices()
    cores = config.tpu_config.num_cores_per_replica or 1
    if len(devices) % cores:
        raise ValueError(
            f"num_cores_per_replica ({cores}) must divide the number of "
            f"devices ({len(devices)}): each replica spans "
            "num_cores_per_replica devices."
        )
    if cores == 1 and layout_map is None:
        return keras.distribution.DataParallel(devices=devices, auto_shard_dataset=False)
    mesh = keras.distribution.DeviceMesh(
        (len(devices) // cores, cores), (BATCH, MODEL), devices
    )
    return PartitionedModelParallel(mesh, layout_map)


class PartitionedModelParallel(keras.distribution.ModelParallel):
    """A `ModelParallel` whose variable layouts come from partition rules.

    Each variable takes the layout of the one rule whose regex matches its
    whole path (`re.fullmatch`, as `keras.distribution.LayoutMap`); a path
    matching two rules is an error. Variables no rule matches are
    replicated. Without rules, `default_layout` decides. Which rules have
    matched is recorded, so that rules matching nothing can be reported
    (a mistyped rule otherwise leaves weights silently replicated).

    Args:
        device_mesh: a `keras.distribution.DeviceMesh` with axes
            `('batch', 'model')`.
        rules: `{regex: axes}`, a `keras.distribution.LayoutMap`, or None
            for the defaults.

    Raises:
        ValueError: if a rule's axes are not a tuple of mesh axis names and
            None.
    """

    def __init__(self, device_mesh, rules=None):
        self.rules = _check_rules(rules, device_mesh)
        self.matched_rules = set()
        layout_map = keras.distribution.LayoutMap(device_mesh)
        for pattern, axes in (self.rules or {}).items():
            layout_map[pattern] = axes
        super().__init__(layout_map=layout_map, batch_dim_name=BATCH, auto_shard_dataset=False)

    def get_variable_layout(self, variable):
        if getattr(variable, "_layout", None) is not None:
            return variable._layout
        shape = tuple(variable.shape)
        if self.rules is None:
            axes = default_layout(variable.path, shape, cores_per_replica(self))
        else:
            axes = self._rule_axes(variable.path, shape)
        _check_divisible(variable.path, shape, axes, self.device_mesh)
        return keras.distribution.TensorLayout(axes, self.device_mesh)

    def _rule_axes(self, path, shape):
        matches = [p for p in self.rules if p == path or re.fullmatch(p, path)]
        if len(matches) > 1:
            raise ValueError(
                f"Variable '{path}' matches several partition rules: {matches}. "
                "Each variable path may match at most one rule."
            )
        if not matches:
            return (None,) * len(shape)
        self.matched_rules.add(matches[0])
        axes = self.rules[matches[0]]
        if len(axes) != len(shape):
            raise ValueError(
                f"Partition rule {matches[0]!r}: {axes} has {len(axes)} axes, but "
                f"it matches variable '{path}' of shape {shape} "
                f"({len(shape)} dimensions)."
            )
        return axes

    def unmatched_rules(self):
        """The rules (regexes) no variable has matched so far, in order."""
        return [p for p in self.rules or () if p not in self.matched_rules]


def default_layout(path, shape, model_size):
    """The layout a variable gets when no partition rules are given.

    The last (output) axis of a Dense or Conv `kernel` (rank >= 2) and of an
    Embedding table (`embeddings`) is split over `model`, when it divides by
    the `model` axis size: each core of a replica holds a slice of the
    output features. Everything else (biases, normalization statistics,
    small or odd-sized kernels) is replicated.

    Args:
        path: the variable's path, e.g. `"dense/kernel"`.
        shape: the variable's shape.
        model_size: the size of the `model` mesh axis.

    Returns:
        A tuple with one entry per dimension: `'model'` or None.
    """
    axes = [None] * len(shape)
    name = path.rsplit("/", 1)[-1]
    if (
        name in ("kernel", "embeddings")
        and len(shape) >= 2
        and shape[-1] % model_size == 0
    ):
        axes[-1] = MODEL
    return tuple(axes)


def _check_rules(rules, device_mesh):
    """`rules` as `{regex: axes tuple}`, validated; None stays None."""
    if rules is None:
        return None
    if isinstance(rules, keras.distribution.LayoutMap):
        rules = {key: tuple(rules[key].axes) for key in rules}
    if not isinstance(rules, dict):
        raise ValueError(
            "`layout_map` must be a dict {regex: axes} or a "
            f"keras.distribution.LayoutMap. Received: layout_map={rules!r}"
        )
    allowed = tuple(device_mesh.axis_names)
    checked = {}
    for pattern, axes in rules.items():
        if not isinstance(pattern, str):
            raise ValueError(
                f"layout_map keys must be regex strings. Received: {pattern!r}"
            )
        try:
            re.compile(pattern)
        except re.error as error:
            raise ValueError(
                f"layout_map key {pattern!r} is not a valid regex: {error}"
            ) from None
        if not isinstance(axes, (tuple, list)) or any(
            a is not None and a not in allowed for a in axes
        ):
            raise ValueError(
                f"layout_map[{pattern!r}] must be a tuple of mesh axis names "
                f"{list(allowed)} or None, one per variable dimension. "
                f"Received: {axes!r}"
            )
        checked[pattern] = tuple(axes)
    return checked


def _check_divisible(name, shape, axes, device_mesh):
    sizes = dict(zip(device_mesh.axis_names, device_mesh.shape))
    for dim, (size, axis) in enumerate(zip(shape, axes)):
        if axis is not None and size % sizes[axis]:
            raise ValueError(
                f"Cannot split dimension {dim} (size {size}) of '{name}' "
                f"{tuple(shape)} over mesh axis '{axis}' of size {sizes[axis]}: "
                "the size must divide evenly."
            )


def num_replicas(distribution):
    """How many model replicas `distribution` runs: the `batch` axis size."""
    mesh = distribution.device_mesh
    return mesh.shape[mesh.axis_names.index(distribution.batch_dim_name)]


def cores_per_replica(distribution):
    """How many devices each replica spans: the `model` axis size, or 1."""
    mesh = distribution.device_mesh
    if MODEL not in mesh.axis_names:
        return 1
    return mesh.shape[mesh.axis_names.index(MODEL)]


def check_batch_size(name, batch_size, replicas):
    """Checks a global batch size divides over `replicas`.

    Raises:
        ValueError: naming the argument, the value and the replica count.
    """
    if batch_size is None:
        return
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise ValueError(f"`{name}` must be a positive int. Received: {batch_size!r}")
    if batch_size <= 0:
        raise ValueError(f"`{name}` must be a positive int. Received: {batch_size}")
    if batch_size % replicas:
        raise ValueError(
            f"`{name}` ({batch_size}) must be divisible by the number of "
            f"replicas ({replicas})."
        )


def batch_sharding(distribution, ndim, stacked, divisible=True, partition=None):
    """The sharding of one input leaf of rank `ndim`.

    Args:
        distribution: the model's distribution.
        ndim: the rank of the leaf as fed (including the stacking axis).
        stacked: whether axis 0 stacks the steps of an on-device loop (then
            the batch is axis 1).
        divisible: whether the batch divides over the `batch` axis; a short
            last batch that does not is replicated instead.
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
        divisible: whether the batch divides over the `batch` axis.
        partition_dims: `TPUConfig.input_partition_dims`, or None.

    Returns:
        A tree of `NamedSharding`s with the structure of `tree`.

    Raises:
        ValueError: if `partition_dims` does not match the structure of
            `(features, labels)`, or a partitioned dimension does not divide.
    """
    if partition_dims is None:
        return jax.tree.map(
            lambda a: batch_sharding(distribution, np.ndim(a), stacked, divisible), tree
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
        return batch_sharding(distribution, np.ndim(leaf), stacked, divisible, entry)

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


def _describe(entry):
    if hasattr(entry, "keys"):
        return "{" + ", ".join(f"{k!r}: {entry[k]!r}" for k in entry) + "}"
    return repr(entry)


def put_batches(tree, distribution, stacked, divisible=True, partition_dims=None):
    """Places a tree of host arrays on the devices, split along the batch.

    With several processes, `tree` holds this process's rows: the global
    batch is the processes' rows in process order.
    """
    shardings = input_shardings(tree, distribution, stacked, divisible, partition_dims)
    if jax.process_count() == 1:
        return jax.tree.map(jax.device_put, tree, shardings)
    axis = 1 if stacked else 0

    def global_array(local, sharding):
        shape = list(np.shape(local))
        if divisible:
            shape[axis] *= jax.process_count()
        return jax.make_array_from_process_local_data(sharding, np.asarray(local), tuple(shape))

    return jax.tree.map(global_array, tree, shardings)


def put_replicated(tree, distribution):
    """Places a tree of host arrays, whole, on every device of the mesh."""
    sharding = NamedSharding(distribution.device_mesh.backend_mesh, PartitionSpec())
    return jax.tree.map(lambda a: jax.device_put(a, sharding), tree)

