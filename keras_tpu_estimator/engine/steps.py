"""The pure per-mode steps: `(state, batch) -> (state, outputs)`.

Each step binds the variables to the values of its state, runs `model_fn`
(traced), and returns the new values: nothing is assigned while tracing.
The states are those of `engine.state`; `batch` is `(features, labels)`.

- `train`: the spec's `loss`, differentiated with respect to the trained
  variables and applied by the Keras optimizer; or, for a TF1 `train_op`,
  trained by assignment (`train_ops`). Outputs `{"loss", "host_call",
  HOOK_FETCHES}`.
- `evaluate`: updates the loss and metric accumulators. Outputs
  `{HOOK_FETCHES}`.
- `predict`: outputs `{PREDICTIONS: the spec's predictions, HOOK_FETCHES}`.

`HOOK_FETCHES` holds the tensors the spec's hooks hold (`hooks.fetches`),
`{slot: value}`, empty when they hold none.
"""

import contextlib

import jax
import jax.numpy as jnp
import keras

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.engine import learning_rate
from keras_tpu_estimator.engine import program as program_lib
from keras_tpu_estimator.engine import state as state_lib
from keras_tpu_estimator.hooks import fetches as hook_fetches
from keras_tpu_estimator.metrics import MetricUpdate
from keras_tpu_estimator.model_fn import train_ops
from keras_tpu_estimator.spec import ModeKeys
from keras_tpu_estimator.spec import scaffold as scaffold_lib

TRAIN, EVAL, PREDICT = ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT
HOOK_FETCHES, PREDICTIONS = "hook_fetches", "predictions"


class Steps:
    """The steps of one model: its program and its parts.

    Args:
        program: the `ModelFnProgram`.
        parts: the model's `ModelParts` (store, training, metrics), read
            when a step is traced.

    Example:

    ```python
    steps = Steps(program, parts)
    state = state_lib.read(parts.variables(PREDICT))
    jax.jit(steps.predict)(state, (features, None))
    ```
    """

    def __init__(self, program, parts):
        self._program = program
        self._parts = parts

    def for_mode(self, mode):
        """The step function of `mode`."""
        return {TRAIN: self.train, EVAL: self.evaluate, PREDICT: self.predict}[mode]

    def _hook_fetches(self, spec, mode):
        """The values of the tensors `spec`'s hooks hold, at the slots the build gave them."""
        slots = self._parts.hook_slots.get(mode, [])
        return hook_fetches.traced_values(program_lib.hooks_of(spec, mode), slots)

    def _trained(self):
        return self._parts.training.variables if self._parts.training else []

    def _run(self, mode, values, batch, step):
        """Runs `model_fn` with the variables bound to `values` (traced).

        Returns the spec and the new values of the non-trainable variables
        (layer updates such as BatchNormalization statistics).
        """
        first, rest = state_lib.model_variables(self._parts.store, mode, self._trained())
        trainable, non_trainable = values
        features, labels = batch
        with _keras_internals.bound_values(first + rest, list(trainable) + list(non_trainable)):
            # EVAL and PREDICT may read some variables from others (a scaffold's saver).
            with scaffold_lib.restored(self._parts.restores.get(mode)):
                spec = self._program.call(
                    self._parts.store, features, labels, mode, step, building=False
                )
            new_rest = _keras_internals.current_values(rest)
        return spec, new_rest

    def train(self, state, batch):
        """One training step: `(TrainState, batch) -> (TrainState, outputs)`."""
        if self._parts.training.by_assignment:
            return self._train_by_assignment(state, batch)
        optimizer = self._parts.training.optimizer
        step = state.optimizer[_index(optimizer.variables, optimizer.iterations)]

        def loss_fn(trainable):
            spec, non_trainable = self._run(TRAIN, (trainable, state.non_trainable), batch, step)
            rate = None
            if isinstance(spec.train_op, keras.optimizers.Optimizer):
                rate = learning_rate.step_rate(spec.train_op)
            aux = (non_trainable, rate, _host_call_tensors(spec), self._hook_fetches(spec, TRAIN))
            return jnp.reshape(spec.loss, ()), aux

        (loss, (non_trainable, rate, host, fetched)), grads = jax.value_and_grad(
            loss_fn, has_aux=True
        )(state.trainable)
        outputs = {"loss": loss, "host_call": host, HOOK_FETCHES: fetched}
        computed = learning_rate.computed_rate(optimizer)
        if rate is not None and computed is not None:
            # Callbacks read the rate of the last step, and may scale later ones.
            outputs[learning_rate.OUTPUT_KEY] = jnp.asarray(rate, "float32")
            rate = rate * state.optimizer[_index(optimizer.variables, computed.scale)]
        # A rate given as a callable is computed from this step's global step.
        with _keras_internals.learning_rate_override(optimizer, rate) if (
            rate is not None
        ) else contextlib.nullcontext():
            trainable, optimizer_values = optimizer.stateless_apply(
                state.optimizer, grads, state.trainable
            )
        new = state_lib.TrainState(trainable, non_trainable, optimizer_values)
        return new, outputs

    def _train_by_assignment(self, state, batch):
        """`train` for a TF1 `train_op`: `model_fn` runs twice (see `train_ops`)."""
        first, rest = state_lib.model_variables(self._parts.store, TRAIN, self._trained())
        step_index = _index(rest, train_ops.global_step_variable(self._parts.store))
        step = state.non_trainable[step_index]
        features, labels = batch

        def run(trainable, non_trainable):
            with _keras_internals.bound_values(first + rest, list(trainable) + list(non_trainable)):
                spec = self._program.call(self._parts.store, features, labels, TRAIN, step, False)
                values = _keras_internals.current_values(first + rest)
            outputs = {
                "loss": jnp.reshape(spec.loss, ()), "host_call": _host_call_tensors(spec),
                HOOK_FETCHES: self._hook_fetches(spec, TRAIN),
            }
            return outputs, values

        trainable, non_trainable, outputs = train_ops.train_by_assignment(
            run, first, state.trainable, state.non_trainable, step_index
        )
        return state_lib.TrainState(trainable, non_trainable, []), outputs

    def evaluate(self, state, batch):
        """One evaluation step: updates the accumulators of `EvalState.metrics`."""
        [step] = state.step
        spec, _ = self._run(EVAL, (state.trainable, state.non_trainable), batch, step)
        count = jnp.asarray(program_lib.leading_dim(batch[0]), "float32")
        values = dict(program_lib.metric_values(spec), loss=jnp.reshape(spec.loss, ()))
        new_values, start = [], 0
        for name, metric in self._parts.metrics.items():
            value = values[name]
            if isinstance(value, MetricUpdate):
                args, kwargs = value.args, value.kwargs
            else:
                args, kwargs = (value,), {"sample_weight": count}
            n = len(metric.variables)
            new_values += metric.stateless_update_state(
                state.metrics[start : start + n], *args, **kwargs
            )
            start += n
        return state._replace(metrics=new_values), {HOOK_FETCHES: self._hook_fetches(spec, EVAL)}

    def predict(self, state, batch):
        """One prediction step: outputs the spec's `predictions`."""
        [step] = state.step
        spec, _ = self._run(PREDICT, (state.trainable, state.non_trainable), batch, step)
        return state, {PREDICTIONS: spec.predictions, HOOK_FETCHES: self._hook_fetches(spec, PREDICT)}


def _host_call_tensors(spec):
    """The tensors of the spec's `host_call` (None without one)."""
    return None if spec.host_call is None else spec.host_call[1]


def _index(variables, variable):
    for i, v in enumerate(variables):
        if v is variable:
            return i
    raise ValueError(f"{variable.path} is not one of the step's variables.")
