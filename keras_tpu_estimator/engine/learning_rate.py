"""The learning rate a `model_fn` computes, as Keras callbacks see it.

TF1 programs compute their learning rate from the global step inside
`model_fn` and hand it to the optimizer as a callable
(`keras.optimizers.Adam(lambda: rate)`). The engine evaluates that callable in
every compiled step. Callbacks, though, read and set
`model.optimizer.learning_rate` on the host (`TensorBoard`,
`ReduceLROnPlateau`, `LearningRateScheduler`): `ComputedLearningRate` takes the
callable's place on the optimizer so that they can.

- Reading gives the rate of the last training step run.
- Setting a value scales every later rate: `model_fn`'s schedule goes on,
  multiplied so that the rate now is the value set (a reduction by
  `ReduceLROnPlateau` halves the whole remaining schedule, say). The scale is
  an optimizer variable (`learning_rate_scale`), so it is checkpointed with
  the optimizer and restored with it.
"""

import keras
import numpy as np

from keras_tpu_estimator import _keras_internals

SCALE_NAME = "learning_rate_scale"
OUTPUT_KEY = "learning_rate"  # A training loop's rates, unscaled, one per step.


class ComputedLearningRate:
    """Stands for `model_fn`'s callable learning rate on the kept optimizer.

    Args:
        function: the callable `model_fn` gave the optimizer.
        scale: the optimizer variable (a float scalar, initially 1) every
            computed rate is multiplied by.
    """

    def __init__(self, function, scale):
        self.function = function
        self.scale = scale
        self.last = None  # model_fn's rate at the last step run, unscaled.

    def __call__(self):
        """The rate the last training step used (what `optimizer.learning_rate` reads)."""
        return np.float32(self._last() * float(np.asarray(self.scale.value)))

    def assign(self, value):
        """Scales later rates so that the rate now is `value` (`optimizer.learning_rate = value`)."""
        last = self._last()
        if last == 0:
            raise ValueError(
                "Cannot set the learning rate: the rate model_fn computed at the "
                "last step is 0, so no scale of it gives the value "
                f"{value!r}."
            )
        self.scale.assign(float(value) / last)

    def observe(self, rates):
        """Records the unscaled rates of a loop's steps (the last one counts)."""
        rates = np.asarray(rates)
        if rates.size:
            self.last = float(rates.reshape(-1)[-1])

    def _last(self):
        if self.last is None:
            raise ValueError(
                "The learning rate is computed by model_fn from the global step: "
                "it is known once a training step has run. Read or set "
                "`optimizer.learning_rate` after the first step (e.g. in "
                "`on_train_batch_end` or `on_epoch_end`)."
            )
        return self.last


def install_if_computed(optimizer):
    """Puts a `ComputedLearningRate` on an unbuilt `optimizer` given a callable rate.

    Returns:
        The `ComputedLearningRate`, or None for a float rate or a schedule.
    """
    function = _keras_internals.raw_learning_rate(optimizer)
    if not callable(function) or isinstance(
        function, (keras.Variable, keras.optimizers.schedules.LearningRateSchedule)
    ):
        return None
    scale = optimizer.add_variable((), initializer="ones", dtype="float32", name=SCALE_NAME)
    rate = ComputedLearningRate(function, scale)
    optimizer.learning_rate = rate  # Keras keeps a callable as it is.
    return rate


def computed_rate(optimizer):
    """The `ComputedLearningRate` installed on `optimizer`, or None."""
    rate = _keras_internals.raw_learning_rate(optimizer)
    return rate if isinstance(rate, ComputedLearningRate) else None


def step_rate(optimizer):
    """The rate `model_fn` computes for this step (in a trace), or None.

    None for a float rate or a schedule, which the optimizer applies itself.
    """
    rate = computed_rate(optimizer)
    if rate is not None:  # model_fn returned the optimizer it made first.
        return rate.function()
    return _keras_internals.traced_learning_rate(optimizer)
