"""What building `model_fn`'s modes made: one model's parts.

`ModelParts` owns the variable store, the global step and what each mode's
build read from its spec (the training, the evaluation metrics, the hooks,
the `init_from_checkpoint` reports). `EstimatorModel` builds a mode once,
on its first batch; the steps and loops read the parts afterwards.
"""

import keras

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator import distribute
from keras_tpu_estimator.engine import learning_rate
from keras_tpu_estimator.engine import program as program_lib
from keras_tpu_estimator.engine import state as state_lib
from keras_tpu_estimator.hooks import fetches as hook_fetches
from keras_tpu_estimator.model_fn import initialization
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.model_fn import train_ops
from keras_tpu_estimator.spec import ModeKeys


class ModelParts:
    """The parts of one model, made by building its modes.

    Args:
        program: the `ModelFnProgram`.
        distribution: the `keras.distribution` the variables are laid out by.

    Attributes:
        distribution: as given.
        store: the `VariableStore` of the model's layers and variables.
        global_step: the `GlobalStep`.
        training: the `Training` read from the TRAIN spec, once built.
        metrics: `{name: keras.metrics.Metric}`: the loss's (`"loss"`), then
            one per metric value of the EVAL spec.
        hooks: `{mode: hooks}` of the specs built.
        hook_slots: `{mode: slots}` of the tensors those hooks hold
            (`hooks.fetches.register`): the steps output their values.
        restores: `{mode: [(variable, source)]}`: the variables EVAL and
            PREDICT read from another (the scaffold's saver, `spec.scaffold`).
        reports: the `init_from_checkpoint` reports of every build.
        xla_convolutions: `{mode: bool}`: whether the mode's `model_fn`
            holds a convolution XLA computes (one not routed to TensorFlow's
            kernels), as its build traced it.

    Example:

    ```python
    parts = ModelParts(program, distribution)
    parts.build(ModeKeys.PREDICT, (features, None))
    variables = parts.variables(ModeKeys.PREDICT)
    ```
    """

    def __init__(self, program, distribution):
        self._program = program
        self.distribution = distribution
        self.store = store_lib.VariableStore()
        self.global_step = state_lib.GlobalStep()
        self.training = None
        self.metrics = {"loss": keras.metrics.Mean(name="loss")}
        self.hooks = {}
        self.hook_slots = {}
        self.restores = {}
        self.reports = []
        self.xla_convolutions = {}
        self.built_modes = set()

    @property
    def optimizer(self):
        """The Keras optimizer training applies, or None."""
        return self.training.optimizer if self.training else None

    def build(self, mode, batch, compiled_optimizer=None):
        """Creates everything `model_fn` uses in `mode`, from a sample batch.

        Building a mode twice does nothing.

        Args:
            mode: a `ModeKeys` value.
            batch: `(features, labels)` of arrays or shape/dtype structs.
            compiled_optimizer: the optimizer of `compile`, for a TRAIN spec
                with `train_op=None`.

        Returns:
            Whether the mode was built now.
        """
        if mode in self.built_modes:
            return False
        with self.distribution.scope():
            def build():
                built = self._program.build(
                    self.store, mode, batch, program_lib.dtype_name(self.global_step.value),
                    compiled_optimizer, self.metrics,
                )
                if built.training is not None and self.training is None:
                    self._create_training_variables(
                        built.training, built.training.optimizer is not compiled_optimizer
                    )
                return built

            # The optimizer's variables are initialized with model_fn's, by one program.
            def inspect(closed):
                self.xla_convolutions[mode] = _keras_internals.uses_primitive(
                    closed, "conv_general_dilated")

            built = initialization.created_together(build, inspect)
            self.reports += built.reports
            self.hooks[mode] = built.hooks
            self.hook_slots[mode] = hook_fetches.register(built.hooks)
            self.restores[mode] = built.restores
            self.metrics.update(built.metrics)
            if built.training is not None and self.training is None:
                self._start_training(built.training)
        if not self.built_modes:
            distribute.warn_unmatched_rules(self.distribution, self.store.variables)
        self.built_modes.add(mode)
        return True

    def _create_training_variables(self, training, from_model_fn):
        """Creates what training needs: the optimizer's slots, TF1's step counter."""
        if training.by_assignment:
            train_ops.create_global_step(self.store)
            return
        if from_model_fn:  # Its rate may be computed in model_fn: callbacks read it.
            learning_rate.install_if_computed(training.optimizer)
        training.optimizer.build(training.variables)

    def _start_training(self, training):
        """Counts the global step with training's step variable from now on."""
        self.training = training
        if training.by_assignment:
            self.global_step.bind(train_ops.create_global_step(self.store))
        else:
            self.global_step.bind(training.optimizer.iterations)

    def variables(self, mode):
        """The variables a `mode` step reads, as that mode's state type."""
        return state_lib.variables_of(
            mode,
            self.store,
            self.training.variables if self.training else [],
            self.global_step,
            optimizer=self.optimizer,
            metrics=self.metrics.values(),
        )
