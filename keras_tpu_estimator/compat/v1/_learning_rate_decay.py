"""TF1 learning-rate schedules of the global step (`tf.compat.v1.train.exponential_decay`, ...).

Each is Keras's schedule of the same rule, evaluated at the global step now:
the result is a tensor, recomputed every step. Exported as `tf1.train.*`.

```python
lr = tf1.train.exponential_decay(0.1, tf1.train.get_global_step(), 1000, 0.96)
```
"""

import keras
from keras import ops

from keras_tpu_estimator.compat.v1._variable_views import keras_variable


def _schedule(schedule, global_step, function):
    if global_step is None:
        raise ValueError(f"global_step is required for {function}.")
    return schedule(ops.convert_to_tensor(keras_variable(global_step)))


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """`learning_rate * decay_rate ^ (global_step / decay_steps)`, floored with `staircase`.

    Raises:
        ValueError: if `global_step` is None.

    Example:

    ```python
    lr = tf1.train.exponential_decay(0.1, tf1.train.get_global_step(), 1000, 0.96)
    ```
    """
    del name
    return _schedule(
        keras.optimizers.schedules.ExponentialDecay(
            learning_rate, decay_steps, decay_rate, staircase=staircase
        ),
        global_step, "exponential_decay",
    )


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    """Decays from `learning_rate` to `end_learning_rate` over `decay_steps`, as TF1.

    `(lr - end) * (1 - min(step, decay_steps) / decay_steps) ^ power + end`;
    with `cycle`, `decay_steps` grows to the next multiple past the step.

    Raises:
        ValueError: if `global_step` is None.
    """
    del name
    return _schedule(
        keras.optimizers.schedules.PolynomialDecay(
            learning_rate, decay_steps, end_learning_rate=end_learning_rate, power=power,
            cycle=cycle,
        ),
        global_step, "polynomial_decay",
    )


def piecewise_constant(x, boundaries, values, name=None):
    """`values[i]` for `boundaries[i-1] < x <= boundaries[i]`, as TF1.

    Raises:
        ValueError: if `x` is None or `len(values) != len(boundaries) + 1`.
    """
    del name
    if len(values) != len(boundaries) + 1:
        raise ValueError(
            "The length of `values` must be one more than the length of "
            f"`boundaries`. Received: boundaries={boundaries!r}, values={values!r}"
        )
    return _schedule(
        keras.optimizers.schedules.PiecewiseConstantDecay(list(boundaries), list(values)),
        x, "piecewise_constant",
    )


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """Cosine decay to `alpha * learning_rate` over `decay_steps`, as TF1.

    Raises:
        ValueError: if `global_step` is None.
    """
    del name
    return _schedule(
        keras.optimizers.schedules.CosineDecay(learning_rate, decay_steps, alpha=alpha),
        global_step, "cosine_decay",
    )


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """`learning_rate / (1 + decay_rate * global_step / decay_steps)`, as TF1.

    Raises:
        ValueError: if `global_step` is None.
    """
    del name
    return _schedule(
        keras.optimizers.schedules.InverseTimeDecay(
            learning_rate, decay_steps, decay_rate, staircase=staircase
        ),
        global_step, "inverse_time_decay",
    )
