"""From `TPUConfig` to a `keras.distribution` layout, and data placement.

By default every device is a replica: a `keras.distribution.DataParallel`
over all devices, variables replicated and batches split along the `batch`
axis of the mesh. The model's variables are created inside
`distribution.scope()`, so Keras lays them out; this module only places the
input batches.
"""

import jax
import keras
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec


def distribution_for(config, use_tpu=True):
    """Returns the `keras.distribution.Distribution` `config` asks for.

    Args:
        config: a `RunConfig`.
        use_tpu: False runs on one host CPU device, as TPUEstimator's
            `use_tpu=False` ran on the host.

    Returns:
        A `DataParallel` distribution over every device (or the one CPU).
    """
    del config  # Model parallelism (num_cores_per_replica) builds on this.
    if not use_tpu:
        return keras.distribution.DataParallel(devices=keras.distribution.list_devices("cpu")[:1])
    return keras.distribution.DataParallel(devices=keras.distribution.list_devices())


def num_replicas(distribution):
    """How many model replicas `distribution` runs: the `batch` axis size."""
    mesh = distribution.device_mesh
    return mesh.shape[mesh.axis_names.index(distribution.batch_dim_name)]


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


def batch_sharding(distribution, ndim, stacked, divisible=True):
    """The sharding of one input leaf of rank `ndim`.

    Args:
        distribution: the model's distribution.
        ndim: the rank of the leaf as fed (including the stacking axis).
        stacked: whether axis 0 stacks the steps of an on-device loop (then
            the batch is axis 1).
        divisible: whether the batch divides over the `batch` axis; a short
            last batch that does not is replicated instead.
    """
    mesh = distribution.device_mesh.backend_mesh
    batch_axis = distribution.batch_dim_name if divisible else None
    spec = [None] * ndim
    spec[1 if stacked else 0] = batch_axis
    return NamedSharding(mesh, PartitionSpec(*spec))


def put_batches(tree, distribution, stacked, divisible=True):
    """Places a tree of host arrays on the devices, split along the batch."""
    return jax.tree.map(
        lambda a: jax.device_put(
            a, batch_sharding(distribution, np.ndim(a), stacked, divisible)
        ),
        tree,
    )


def put_replicated(tree, distribution):
    """Places a tree of host arrays, whole, on every device of the mesh."""
    sharding = NamedSharding(distribution.device_mesh.backend_mesh, PartitionSpec())
    return jax.tree.map(lambda a: jax.device_put(a, sharding), tree)
