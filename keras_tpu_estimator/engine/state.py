"""What a compiled step reads and writes: named per-mode states, one global step.

A step is a pure function `(state, batch) -> (state, outputs)`. Its state is
a NamedTuple of lists of variable values, one state type per mode:

- `TrainState(trainable, non_trainable, optimizer)`;
- `EvalState(trainable, non_trainable, metrics, step)`;
- `PredictState(trainable, non_trainable, step)`.

`variables_of` gives the same NamedTuple holding the variables themselves;
`read` and `write` move values between the two. NamedTuples are JAX
pytrees, so states go in and out of `jax.jit` and `jax.lax.scan` as they are.
"""

from typing import NamedTuple

import numpy as np

from keras_tpu_estimator.spec import ModeKeys


class TrainState(NamedTuple):
    """A training step's state.

    Attributes:
        trainable: the values of the variables differentiated.
        non_trainable: the values of the store's other variables (batch norm
            statistics; the TF1 `global_step` when training by assignment).
        optimizer: the values of the Keras optimizer's variables (its
            `iterations` is the global step); empty when training by
            assignment.
    """

    trainable: list
    non_trainable: list
    optimizer: list


class EvalState(NamedTuple):
    """An evaluation step's state: the model's values, the metric
    accumulators (the loss's first) and the global step, `[step]`."""

    trainable: list
    non_trainable: list
    metrics: list
    step: list


class PredictState(NamedTuple):
    """A prediction step's state: the model's values and the global step, `[step]`."""

    trainable: list
    non_trainable: list
    step: list


class GlobalStep:
    """The one holder of the global step.

    Before training is built, the step is a plain value: what evaluation
    and prediction show `model_fn` (a restored step, 0 otherwise). Building
    training `bind`s the variable that counts steps from then on (the Keras
    optimizer's `iterations`, or TF1's `global_step` variable), carrying the
    value over. The holder changes only there, never per call.

    Example:

    ```python
    step = GlobalStep()
    step.assign(100)          # e.g. restored for evaluation
    step.bind(optimizer.iterations)
    int(step.value)           # 100, now counted by the optimizer
    ```
    """

    def __init__(self):
        self._value = np.zeros((), np.int32)  # Host values: no program compiled for them.
        self.variable = None

    @property
    def value(self):
        """The step, a scalar int array."""
        return self.variable.value if self.variable is not None else self._value

    def assign(self, step):
        """Sets the step."""
        if self.variable is not None:
            self.variable.assign(step)
        else:
            self._value = np.asarray(step, np.int32)

    def bind(self, variable):
        """Counts the step with `variable` from now on, starting at the current step."""
        if variable is self.variable:
            return
        variable.assign(np.asarray(self.value, variable.dtype))
        self.variable = variable


class _Slot:
    """The global step as a state entry: `value` in, `assign` out."""

    def __init__(self, global_step):
        self._global_step = global_step

    @property
    def value(self):
        return self._global_step.value

    def assign(self, value):
        self._global_step.assign(value)


def model_variables(store, mode, trained_variables):
    """The store's variables in two lists: those differentiated, the rest.

    A TRAIN step differentiates `trained_variables` (those its optimizer was
    built with); variables created later, by another mode, are carried
    unchanged.
    """
    first = trained_variables if mode == ModeKeys.TRAIN else store.trainable_variables
    ids = {id(v) for v in first}
    return list(first), [v for v in store.variables if id(v) not in ids]


def variables_of(mode, store, trained_variables, global_step, optimizer=None, metrics=()):
    """The variables a `mode` step reads, as that mode's state type.

    Args:
        mode: a `ModeKeys` value.
        store: the model's `VariableStore`.
        trained_variables: the variables training differentiates.
        global_step: the model's `GlobalStep`.
        optimizer: TRAIN: the Keras optimizer, or None when training by
            assignment.
        metrics: EVAL: the metrics, the loss's first.

    Returns:
        A `TrainState`, `EvalState` or `PredictState` of variable lists.
    """
    trainable, non_trainable = model_variables(store, mode, trained_variables)
    if mode == ModeKeys.TRAIN:
        return TrainState(trainable, non_trainable, list(optimizer.variables) if optimizer else [])
    step = [_Slot(global_step)]
    if mode == ModeKeys.EVAL:
        return EvalState(trainable, non_trainable, [v for m in metrics for v in m.variables], step)
    return PredictState(trainable, non_trainable, step)


def read(variables):
    """The values of a state of variables (see `variables_of`)."""
    return type(variables)(*([v.value for v in group] for group in variables))


def write(variables, values):
    """Assigns a state of values to the state of variables it came from."""
    for group, group_values in zip(variables, values):
        for variable, value in zip(group, group_values):
            variable.assign(value)
