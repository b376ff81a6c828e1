"""The global step of a `model_dir`'s latest checkpoint.

TPUEstimator programs that alternate `train` and `evaluate` (DCGAN,
EfficientNet) read where training stands before each round with the
estimator's private helper `estimator._load_global_step_from_checkpoint_dir`;
the converter maps it here.
"""

from keras_tpu_estimator.checkpoint.model_state import GLOBAL_STEP
from keras_tpu_estimator.checkpoint.readers import checkpoint_reader


def load_global_step_from_checkpoint_dir(model_dir):
    """Returns the global step of the latest checkpoint in `model_dir`.

    As TensorFlow's `estimator._load_global_step_from_checkpoint_dir`: 0 when
    `model_dir` holds no checkpoint (or does not exist), or when that
    checkpoint has no `global_step`.

    Args:
        model_dir: a directory of checkpoints, written by this library or by
            TensorFlow.

    Returns:
        The step, a Python int.

    Example:

    ```python
    current_step = load_global_step_from_checkpoint_dir(FLAGS.model_dir)
    while current_step < FLAGS.train_steps:
        ...
    ```
    """
    try:
        reader = checkpoint_reader(model_dir)
    except ValueError:  # no checkpoint there (yet)
        return 0
    if GLOBAL_STEP not in reader.names():
        return 0
    return int(reader.read(GLOBAL_STEP))
