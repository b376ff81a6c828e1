"""`SessionRunHook`s as Keras callbacks.

TensorFlow 1 programs pass hooks to `train`/`evaluate`/`predict` and return
them from `model_fn` (`training_hooks`, ...). A hook is an object with
`begin()`, `after_create_session(session, coord)`, `before_run(run_context)`,
`after_run(run_context, run_values)` and `end(session)`; `MonitoredSession`
called them around every `session.run`: every step with `use_tpu=False`, and
so it is here (each step's values are carried out of the compiled loop and
the hook is called once per step after it); on a TPU, one `session.run` was
one on-device loop of `iterations_per_loop` steps, and so it is here.
`HookCallback` adapts a hook to a Keras callback whose batch methods
`EstimatorModel` calls once per loop.

A hook fetches what a TF1 hook fetches (`hooks.fetches`):

- the tensors of `model_fn` it holds: a hook built inside `model_fn` with
  them and returned in the spec's hooks (`LoggingTensorHook(tensors={"loss":
  loss})`); `after_run` gets their values at the run's step (on a TPU,
  the loop's last step, as a `session.run` of a TPU loop gave the last
  iteration's);
- the global step: `tf1.train.get_or_create_global_step()` called in the
  hook's `begin()` returns the handle it is fetched with (also through
  `run_context.session.run`); variables give their value after the loop;
- names of the values this runtime has after each run:

| name | value | modes |
| --- | --- | --- |
| `"loss"` | the loss of the run's (last) step (a numpy scalar) | TRAIN |
| `"losses"` | the loss of every step of the run (a 1-D numpy array) | TRAIN |
| `"global_step"` | the global step the run's (last) step read, before its increment (an int); in `session.run`, the step after the run | all |

```python
class PrintLoss(kte.SessionRunHook):  # Built in model_fn, with its loss.
    def __init__(self, loss):
        self._loss = loss

    def begin(self):
        self._step = tf1.train.get_or_create_global_step()

    def before_run(self, run_context):
        return kte.SessionRunArgs({"loss": self._loss, "step": self._step})

    def after_run(self, run_context, run_values):
        print(run_values.results)  # {'loss': 0.31, 'step': 100}
        if run_values.results["loss"] < 0.01:
            run_context.request_stop()

# model_fn: return kte.TPUEstimatorSpec(..., training_hooks=[PrintLoss(loss)])
```

The hooks TensorFlow users reach for most are provided: `StopAtStepHook`,
`LoggingTensorHook` and `NanTensorHook`; `CheckpointSaverListener` is the
base of `TPUEstimator.train(saving_listeners=...)`, and `LoggingCallback`
logs the loss and steps per second as the estimator did every
`RunConfig.log_step_count_steps` steps (`EvaluationLoggingCallback` an
evaluation's results). Their lines follow TensorFlow's and absl's verbosity
(see `kte.log_lines`).

The modules: `session` (the hook emulation: `SessionRunHook`, the
session-run records, `HookCallback`, `as_callback(s)`), `fetches` (the
tensors hooks hold, the global step handle), `stock` (the
provided hooks and `CheckpointSaverListener`) and `logging_callback`
(`LoggingCallback`, `EvaluationLoggingCallback`). The loss values come from the `logs` that
`EstimatorModel.fit` gives `on_train_batch_end` after each loop.

Layering: may import `engine.logs` (hooks learn from the loop logs) and the
shared modules; never `model` or `estimator`.
"""

from keras_tpu_estimator.hooks.logging_callback import EvaluationLoggingCallback
from keras_tpu_estimator.hooks.logging_callback import LoggingCallback
from keras_tpu_estimator.hooks.session import FETCHABLE
from keras_tpu_estimator.hooks.session import HookCallback
from keras_tpu_estimator.hooks.session import HostSession
from keras_tpu_estimator.hooks.session import SessionRunArgs
from keras_tpu_estimator.hooks.session import SessionRunContext
from keras_tpu_estimator.hooks.session import SessionRunHook
from keras_tpu_estimator.hooks.session import SessionRunValues
from keras_tpu_estimator.hooks.session import as_callback
from keras_tpu_estimator.hooks.session import as_callbacks
from keras_tpu_estimator.hooks.stock import CheckpointSaverHook
from keras_tpu_estimator.hooks.stock import CheckpointSaverListener
from keras_tpu_estimator.hooks.stock import LoggingTensorHook
from keras_tpu_estimator.hooks.stock import NanLossDuringTrainingError
from keras_tpu_estimator.hooks.stock import NanTensorHook
from keras_tpu_estimator.hooks.stock import StopAtStepHook

__all__ = [
    "CheckpointSaverHook",
    "FETCHABLE",
    "CheckpointSaverListener",
    "EvaluationLoggingCallback",
    "HookCallback",
    "HostSession",
    "LoggingCallback",
    "LoggingTensorHook",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunHook",
    "SessionRunValues",
    "StopAtStepHook",
    "as_callback",
    "as_callbacks",
]
