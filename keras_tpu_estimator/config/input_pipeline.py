"""`InputPipelineConfig`: how `input_fn` is deployed over hosts and replicas."""


class InputPipelineConfig:
    """How `input_fn` is deployed; see `TPUConfig.per_host_input_for_training`.

    Attributes:
        PER_SHARD_V1: `input_fn` runs once per replica (`False` in TF).
        PER_HOST_V1: `input_fn` runs once per host (`True` in TF).
        PER_HOST_V2: `input_fn` runs once per host, batch size per replica;
            required by `input_partition_dims`.
        BROADCAST: `input_fn` runs once, its batch goes to every replica.
        SLICED: `input_fn` runs once, each replica gets a slice (only for
            `eval_training_input_configuration`).

    Example:

    ```python
    kte.TPUConfig(per_host_input_for_training=kte.InputPipelineConfig.PER_HOST_V2)
    ```
    """

    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


# The name of each `InputPipelineConfig` constant, by value: `{1: "PER_SHARD_V1", ...}`.
PIPELINE_NAMES = {
    value: name
    for name, value in vars(InputPipelineConfig).items()
    if not name.startswith("_")
}
