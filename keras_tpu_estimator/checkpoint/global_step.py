"""The global step of a `model_dir`'s latest checkpoint.

TPUEstimator programs that alternate `train` and `evaluate` (DCGAN,
EfficientNet) read where training stands before each round with the
estimator's private helper `estimator._load_global_step_from_checkpoint_dir`;
the converter maps it here.
"""

from keras_tpu_estimator.checkpoint.model_state import GLOBAL_STEP
from keras_tpu_estimator.checkpoint.paths import read_latest
from keras_tpu_estimator.checkpoint.readers import TensorFlowReader


def load_global_step_from_checkpoint_dir(model_dir):
    """Returns the global step of the latest checkpoint in `model_dir`.

    As TensorFlow's `estimator._load_global_step_from_checkpoint_dir`: 0 when
    `model_dir` holds no checkpoint (or does not exist), or when that
    checkpoint has no `global_step`. While a trainer in another process
    deletes old checkpoints, the newest left is read.

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
        return read_latest(model_dir, _global_step, argument="model_dir")
    except ValueError:  # no checkpoint there (yet)
        return 0


def _global_step(prefix):
    reader = TensorFlowReader(prefix)
    if GLOBAL_STEP not in reader.names():
        return 0
    return int(reader.read(GLOBAL_STEP))
