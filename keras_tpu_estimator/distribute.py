"""From `TPUConfig` to a `keras.distribution` layout.

By default every device is a replica: a `keras.distribution.DataParallel`
over all devices, variables replicated and batches split along the `batch`
axis of the mesh. `TPUConfig(num_cores_per_replica=k)` groups the `n`
devices into `n // k` replicas of `k` cores: a `ModelParallel` over a
`DeviceMesh((n // k, k), ('batch', 'model'))`, whose variable layouts come
from partition rules (`{regex: axes}`) or, when none are given, from
defaults that shard the output axis of Dense and Conv kernels and of
Embedding tables over `model`. The model's variables are created inside
`distribution.scope()`, so Keras lays them out. (`engine.placement` places
the input batches on the same mesh.)

Multi-process: `initialize` joins the processes into one cluster (with
timeouts that end a job soon after a process dies); the mesh spans the
devices of all processes, as `keras.distribution.list_devices()` reports
them. A few helpers keep what several processes compute consistent:
`host_local` (this process's rows of a result), `process_split_sharding`
(a short batch split over the processes only), `first_process_value`,
`is_first_process` and `wait_for_every_process` (what is written once).
"""

import os
import re
import warnings

import jax
import keras
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec

from keras_tpu_estimator import _keras_internals

BATCH, MODEL = "batch", "model"

# A process that stops sending heartbeats for this long is dead: the others
# end with an error naming it. JAX's default (100 s) leaves them hanging in
# their collectives for over a minute; heartbeats come from a thread of their
# own, so compilation or a long step does not delay them.
HEARTBEAT_TIMEOUT_SECONDS = 8


def initialize(
    job_addresses=None,
    num_processes=None,
    process_id=None,
    *,
    heartbeat_timeout_seconds=HEARTBEAT_TIMEOUT_SECONDS,
    initialization_timeout=300,
    shutdown_timeout_seconds=300,
):
    """Joins this process to a multi-process (multi-host) cluster.

    `keras.distribution.initialize` with the failure timeouts set: it reads
    the same arguments and `KERAS_DISTRIBUTION_JOB_ADDRESSES`,
    `KERAS_DISTRIBUTION_NUM_PROCESSES`, `KERAS_DISTRIBUTION_PROCESS_ID`
    environment variables (on a TPU pod slice, under SLURM or Open MPI, JAX
    finds them all), calls `jax.distributed.initialize`, and makes Keras's
    random seed the same on every process. When a process dies (killed, out
    of memory, its host lost), the others end (`SIGABRT`) about
    `heartbeat_timeout_seconds` later with `Task <i> heartbeat timeout` and
    `The following tasks are unhealthy (stopped sending heartbeats)` naming
    it, instead of waiting in a collective for JAX's default of 100 s. Call
    it first, before any JAX work.

    Args:
        job_addresses: the coordinator's `host:port` (process 0), or all the
            processes' addresses comma-separated (the first is used).
        num_processes: how many processes form the cluster.
        process_id: this process's index, `0 <= process_id < num_processes`.
        heartbeat_timeout_seconds: seconds without a heartbeat after which a
            process counts as dead and every process ends with an error.
            Raise it on overloaded hosts or networks that pause for longer.
        initialization_timeout: seconds to wait for every process to join.
        shutdown_timeout_seconds: seconds a process that finished waits, at
            exit, for the others to finish too.

    Raises:
        ValueError: if a timeout is not a positive int.
        RuntimeError: if JAX already ran or the cluster was initialized.

    Example (on each of two hosts, `i` its index):

    ```python
    kte.distribute.initialize("10.0.0.1:1234", num_processes=2, process_id=i,
                              heartbeat_timeout_seconds=30)
    ```
    """
    timeouts = {
        "heartbeat_timeout_seconds": heartbeat_timeout_seconds,
        "initialization_timeout": initialization_timeout,
        "shutdown_timeout_seconds": shutdown_timeout_seconds,
    }
    for name, value in timeouts.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
            raise ValueError(
                f"`{name}` must be a positive int (seconds). Received: {name}={value!r}"
            )
    environ = os.environ
    if job_addresses is None:
        job_addresses = environ.get("KERAS_DISTRIBUTION_JOB_ADDRESSES")
    if num_processes is None and "KERAS_DISTRIBUTION_NUM_PROCESSES" in environ:
        num_processes = int(environ["KERAS_DISTRIBUTION_NUM_PROCESSES"])
    if process_id is None and "KERAS_DISTRIBUTION_PROCESS_ID" in environ:
        process_id = int(environ["KERAS_DISTRIBUTION_PROCESS_ID"])
    coordinator = job_addresses.split(",")[0] if job_addresses else None
    jax.distributed.initialize(
        coordinator,
        num_processes=num_processes,
        process_id=process_id,
        **{name: int(value) for name, value in timeouts.items()},
    )
    _keras_internals.initialize_random_seed_across_processes()


def host_local(array):
    """The part of a global array this process holds, as a numpy array.

    With several processes, a batch is the processes' rows in process order
    (`engine.placement.put_batches`); what is computed from it comes back
    split the same way. This process gets its own rows (as each TPU host
    dequeued its own outfeed), converted by JAX's
    `multihost_utils.global_array_to_host_local_array`; a replicated axis
    comes back whole.

    Args:
        array: a `jax.Array` laid out by a `NamedSharding`, or any array.

    Returns:
        A numpy array: `array` itself with one process.
    """
    sharding = getattr(array, "sharding", None)
    if jax.process_count() == 1 or getattr(array, "is_fully_addressable", True):
        return np.asarray(array)
    local = multihost_utils.global_array_to_host_local_array(
        array, sharding.mesh, sharding.spec
    )
    return np.asarray(local)


def process_split_sharding(mesh, ndim, axis):
    """A sharding that splits `axis` over the processes only.

    Each process's part lies whole on every device of that process. For a
    short batch with the same number of rows on every process that does not
    divide over the replicas: the global batch (the processes' rows in
    process order) still divides over the processes.

    Args:
        mesh: a `jax.sharding.Mesh` (the model's): its devices are used.
        ndim: the rank of the array.
        axis: the axis split over the processes.

    Returns:
        A `NamedSharding` on a `('process', 'local')` mesh of the same devices.
    """
    devices = sorted(np.asarray(mesh.devices).flat, key=lambda d: (d.process_index, d.id))
    grid = np.array(devices).reshape(jax.process_count(), -1)
    spec = [None] * ndim
    spec[axis] = "process"
    return NamedSharding(Mesh(grid, ("process", "local")), PartitionSpec(*spec))


def first_process_value(text):
    """`text` as process 0 has it, on every process.

    For names that every process must agree on, such as the timestamped
    directory of an export. A broadcast (`multihost_utils.broadcast_one_to_all`)
    on the devices of every process: call it from the main thread of each
    process at the same point of the program.

    Args:
        text: a string.

    Returns:
        Process 0's `text`; `text` itself with one process.
    """
    if jax.process_count() == 1:
        return text
    data = np.frombuffer(text.encode(), np.uint8)
    size = int(multihost_utils.broadcast_one_to_all(np.int32(data.size)))
    padded = np.zeros(size, np.uint8)
    padded[: min(size, data.size)] = data[:size]
    return bytes(np.asarray(multihost_utils.broadcast_one_to_all(padded))).decode()


def is_first_process():
    """Whether this is process 0, the one that writes what is written once."""
    return jax.process_index() == 0


def wait_for_every_process(name):
    """Returns once every process has reached the `wait_for_every_process(name)` call."""
    if jax.process_count() > 1:
        multihost_utils.sync_global_devices(name)


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


def on_cpu(distribution):
    """Whether every device of `distribution` is a CPU."""
    devices = distribution.device_mesh.backend_mesh.devices.flat
    return all(device.platform == "cpu" for device in devices)


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


def warn_unmatched_rules(distribution, variables):
    """Warns of `layout_map` rules that match none of `variables`."""
    unmatched = getattr(distribution, "unmatched_rules", lambda: [])()
    if unmatched:
        paths = sorted(v.path for v in variables)
        warnings.warn(
            f"layout_map rules {unmatched} match no variable: nothing is "
            "sharded by them. Rules match whole variable paths (re.fullmatch); "
            f"the model's variables are: {paths}",
            stacklevel=4,
        )
