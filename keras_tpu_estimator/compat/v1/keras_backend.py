"""`tf.keras.backend`'s TF1 learning phase: `set_learning_phase`, `learning_phase`.

Keras 3 has no learning phase: layers take `training` from their call, and
inside `model_fn` from the mode (True in TRAIN). TF1 kept one learning phase
per graph, and every mode built its own graph, so
`tf.keras.backend.set_learning_phase(1)` inside `model_fn` set it for the
layers called after it in that mode; called outside `model_fn` it set it on
a graph `model_fn` never saw. Here it does the same: inside `model_fn` it
sets the `training` flag Keras layers called afterwards in this call see,
and outside `model_fn` it does nothing.

```python
def model_fn(features, labels, mode, params):
    tf.keras.backend.set_learning_phase(mode == tf.estimator.ModeKeys.TRAIN)
    x = tf.keras.layers.BatchNormalization()(features["x"])
```
"""

import numpy as np

from keras_tpu_estimator import _keras_internals


def set_learning_phase(value):
    """Sets the learning phase (`training`) of the Keras layers called next.

    Args:
        value: 0 or 1 (or a Python bool): inference or training.

    Raises:
        ValueError: if `value` is not 0, 1, True or False.
    """
    if isinstance(value, (bool, np.bool_)) or (
        isinstance(value, (int, np.integer)) and value in (0, 1)
    ):
        _keras_internals.set_training(bool(value))
        return
    raise ValueError(
        "Argument `value` of set_learning_phase must be 0 or 1 (or a Python "
        f"bool). Received: value={value!r}"
    )


def learning_phase():
    """The learning phase Keras layers called now see: 1 (training) or 0."""
    return int(bool(_keras_internals.current_training()))
