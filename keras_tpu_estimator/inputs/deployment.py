"""Where `input_fn` runs: how often per process, with which batch size.

TPUEstimator deployed `input_fn` by `TPUConfig.per_host_input_for_training`
(training) and `eval_training_input_configuration` (evaluation). Here a
"host" is a JAX process and a "replica" a group of `num_cores_per_replica`
devices; `model_fn` always sees the whole global batch. Per process:

| deployment      | `input_fn` calls         | `params['batch_size']` | a step's rows       |
|-----------------|--------------------------|------------------------|---------------------|
| `PER_HOST_V1`   | 1                        | global // hosts        | one batch           |
| `PER_HOST_V2`   | 1                        | global // replicas     | replicas/host batches, in order |
| `PER_SHARD_V1`  | replicas/host            | global // replicas     | one batch of each call |
| `BROADCAST`     | 1 (process 0 only)       | global                 | one batch           |
| `SLICED` (eval) | 1 (process 0 only)       | global                 | one batch           |

`PER_SHARD_V1` is a training deployment: evaluation and prediction run it
as `PER_HOST_V1`. `eval_training_input_configuration=SLICED` applies to
evaluation. `BROADCAST` fed every replica a whole copy of the batch; in the
global view the mean over those copies is the mean over the batch, so it
runs as one global batch split over the replicas, like `SLICED`. With
`use_tpu=False`, `input_fn` is called once with the global batch size.
"""

import collections

import jax

from keras_tpu_estimator.config import InputPipelineConfig
from keras_tpu_estimator.config import PIPELINE_NAMES as _NAMES
from keras_tpu_estimator.spec import ModeKeys


class TPUContext:
    """What an `input_fn` invocation knows, as `params['context']`.

    The counterpart of TPUEstimator's `TPUContext`: hosts are JAX processes,
    replicas the groups of `num_cores_per_replica` devices of the mesh.

    Attributes:
        mode: the `ModeKeys` value of the call.
        num_replicas: model replicas in sync (all processes).
        num_hosts: the number of processes.
        current_host: this process's index.
        num_of_replicas_per_host: replicas fed by each process.
        num_cores_per_replica: devices per replica.
        input_deployment: the `InputPipelineConfig` constant this call
            follows (`PER_HOST_V1`, `PER_HOST_V2`, `PER_SHARD_V1`,
            `BROADCAST` or `SLICED`).
        invocation_index: which call of `input_fn` this is, over all
            processes, from 0.
        total_invocations: how many calls feed one step, over all processes.
        replicas_per_invocation: how many replicas this call's data feeds.
        batch_size: the `params['batch_size']` of this call.

    Example:

    ```python
    def input_fn(params):
        context = params["context"]
        dataset = tf.data.Dataset.from_tensor_slices(data)
        dataset = dataset.shard(context.total_invocations, context.invocation_index)
        return dataset.batch(params["batch_size"], drop_remainder=True)
    ```
    """

    def __init__(self, mode, num_replicas, num_hosts, current_host, num_cores_per_replica,
                 input_deployment, invocation_index, total_invocations,
                 replicas_per_invocation, batch_size):
        self.mode = mode
        self.num_replicas = num_replicas
        self.num_hosts = num_hosts
        self.current_host = current_host
        self.num_of_replicas_per_host = max(1, num_replicas // num_hosts)
        self.num_cores_per_replica = num_cores_per_replica
        self.input_deployment = input_deployment
        self.invocation_index = invocation_index
        self.total_invocations = total_invocations
        self.replicas_per_invocation = replicas_per_invocation
        self.batch_size = batch_size

    def current_input_fn_deployment(self):
        """`(host_device, invocation_index, total_invocations, replicas_per_invocation)`.

        As TPUEstimator's: the host device is this process's CPU.
        """
        return (
            "/device:CPU:0",
            self.invocation_index,
            self.total_invocations,
            self.replicas_per_invocation,
        )

    def __repr__(self):
        return (
            f"TPUContext(mode={self.mode!r}, num_replicas={self.num_replicas}, "
            f"num_hosts={self.num_hosts}, current_host={self.current_host}, "
            f"input_deployment={_NAMES[self.input_deployment]}, "
            f"invocation_index={self.invocation_index}, "
            f"total_invocations={self.total_invocations}, batch_size={self.batch_size})"
        )


class InputPlan(collections.namedtuple("InputPlan", ["contexts", "group"])):
    """How this process calls `input_fn` for one mode.

    Attributes:
        contexts: one `TPUContext` per call this process makes (none on a
            process other than 0 under `BROADCAST`/`SLICED`).
        group: consecutive batches of one call that make up this process's
            rows of a step (`PER_HOST_V2`); with several calls, one batch of
            each call does.
    """


def deployment_for(tpu_config, mode, use_tpu=True):
    """The `InputPipelineConfig` constant `input_fn` follows in `mode`."""
    if not use_tpu:
        return InputPipelineConfig.PER_HOST_V1
    deployment = tpu_config.per_host_input_for_training
    if mode == ModeKeys.EVAL and (
        tpu_config.eval_training_input_configuration == InputPipelineConfig.SLICED
    ):
        return InputPipelineConfig.SLICED
    if mode != ModeKeys.TRAIN and deployment == InputPipelineConfig.PER_SHARD_V1:
        return InputPipelineConfig.PER_HOST_V1
    return deployment


def plan_input(tpu_config, mode, batch_size, num_replicas, cores_per_replica=1,
               use_tpu=True, process_index=None, process_count=None):
    """How this process calls `input_fn` in `mode`; see the module table.

    Args:
        tpu_config: the `TPUConfig`.
        mode: a `ModeKeys` value.
        batch_size: the global batch size, or None (then `input_fn` gets no
            `batch_size` and batches as it likes).
        num_replicas: model replicas in sync.
        cores_per_replica: devices per replica.
        use_tpu: False calls `input_fn` once with the global batch size.
        process_index: this process; defaults to `jax.process_index()`.
        process_count: the processes; defaults to `jax.process_count()`.

    Returns:
        An `InputPlan`.

    Raises:
        ValueError: if the global batch size does not divide as the
            deployment needs, or `BROADCAST`/`SLICED` runs on several
            processes.
    """
    hosts = jax.process_count() if process_count is None else process_count
    host = jax.process_index() if process_index is None else process_index
    deployment = deployment_for(tpu_config, mode, use_tpu)
    name = _NAMES[deployment]
    per_host = max(1, num_replicas // hosts)
    if deployment in (InputPipelineConfig.BROADCAST, InputPipelineConfig.SLICED):
        if hosts > 1:
            raise ValueError(
                f"input deployment {name} runs input_fn on process 0 only, which "
                f"needs a transfer of every batch to the other {hosts - 1} "
                "process(es); with several processes use per_host_input_for_"
                "training=PER_HOST_V1 or PER_HOST_V2, where each process reads "
                "its own shard."
            )
        calls, each, group = 1, batch_size, 1
    elif deployment == InputPipelineConfig.PER_HOST_V1:
        calls, each, group = 1, _divide(batch_size, hosts, name, "hosts"), 1
    elif deployment == InputPipelineConfig.PER_HOST_V2:
        calls, each, group = 1, _divide(batch_size, num_replicas, name, "replicas"), per_host
    else:  # PER_SHARD_V1
        calls, each, group = per_host, _divide(batch_size, num_replicas, name, "replicas"), 1
    if not use_tpu:
        each = batch_size  # As TPUEstimator: the batch size unmodified.
    total = 1 if hosts == 1 and calls == 1 else calls * hosts
    replicas_per_call = max(1, num_replicas // total)
    contexts = [
        TPUContext(
            mode=mode,
            num_replicas=num_replicas,
            num_hosts=hosts,
            current_host=host,
            num_cores_per_replica=cores_per_replica,
            input_deployment=deployment,
            invocation_index=host * calls + i,
            total_invocations=total,
            replicas_per_invocation=replicas_per_call,
            batch_size=each,
        )
        for i in range(calls)
    ]
    return InputPlan(contexts, group)


def _divide(batch_size, parts, deployment, what):
    if batch_size is None:
        return None
    if batch_size % parts:
        raise ValueError(
            f"The global batch size ({batch_size}) must divide by the number of "
            f"{what} ({parts}) with input deployment {deployment}."
        )
    return batch_size // parts
