"""`inference_on_tpu`: TPUEstimator's helper that put serving computations on the TPU.

Here every export is one XLA program compiled for the platforms asked for, so
the helper only checks its batching arguments and runs the computation.
"""

import numpy as np

from keras_tpu_estimator.spec import describe as _describe


def inference_on_tpu(
    computation,
    inputs_to_tpu,
    num_batch_threads,
    max_batch_size,
    batch_timeout_micros,
    allowed_batch_sizes=None,
    max_enqueued_batches=100,
):
    """Runs `computation` on the accelerator, as TPUEstimator's helper of API V2.

    TensorFlow needed this wrapper to move part of the serving graph onto
    the TPU (`tpu.rewrite`, `TPUPartitionedCall`) and batch requests
    (`batch_function`). Here the whole `model_fn` is one XLA program,
    compiled for every platform the export targets, so `computation` simply
    runs; the batching arguments are checked and kept for the server to
    configure (TensorFlow Serving's `--enable_batching`).

    Args:
        computation: a function of the tensors in `inputs_to_tpu`.
        inputs_to_tpu: a list of tensors, passed positionally.
        num_batch_threads: threads batching requests (a positive int).
        max_batch_size: the largest batch (a positive int).
        batch_timeout_micros: how long to wait to fill a batch (an int >= 0).
        allowed_batch_sizes: None, or increasing positive ints ending with
            `max_batch_size`.
        max_enqueued_batches: the queue length (a positive int).

    Returns:
        The outputs of `computation`, as a list of tensors.

    Raises:
        ValueError: if a batching argument is out of range, or
            `inputs_to_tpu` is not a list or tuple.

    Example:

    ```python
    if params["use_tpu"]:
        logits = kte.export.inference_on_tpu(
            computation, [x], num_batch_threads=1, max_batch_size=64,
            batch_timeout_micros=100)[0]
    ```
    """
    for name, value, least in (
        ("num_batch_threads", num_batch_threads, 1),
        ("max_batch_size", max_batch_size, 1),
        ("batch_timeout_micros", batch_timeout_micros, 0),
        ("max_enqueued_batches", max_enqueued_batches, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(
                f"Argument `{name}` of inference_on_tpu must be an int >= {least}. "
                f"Received: {name}={value!r}"
            )
    if allowed_batch_sizes is not None:
        sizes = list(allowed_batch_sizes)
        if (
            not sizes
            or any(b <= a for a, b in zip(sizes, sizes[1:]))
            or sizes[-1] != max_batch_size
            or sizes[0] <= 0
        ):
            raise ValueError(
                "Argument `allowed_batch_sizes` of inference_on_tpu must be "
                "increasing positive ints whose last entry equals "
                f"max_batch_size ({max_batch_size}). Received: "
                f"allowed_batch_sizes={allowed_batch_sizes!r}"
            )
    if not isinstance(inputs_to_tpu, (list, tuple)):
        raise ValueError(
            "Argument `inputs_to_tpu` of inference_on_tpu must be a list of "
            f"tensors. Received: inputs_to_tpu={_describe(inputs_to_tpu)}"
        )
    outputs = computation(*inputs_to_tpu)
    if outputs is None:
        return []
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
