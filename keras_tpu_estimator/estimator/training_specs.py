"""`train_and_evaluate`, `TrainSpec`, `EvalSpec`, `Exporter`: `tf.estimator`'s local training loop.

`tf.estimator.train_and_evaluate` run without a cluster (`TF_CONFIG` unset)
trains once, up to `TrainSpec.max_steps`, and evaluates after checkpoint
saves: the first save of the call (the starting point) is skipped, a later
one is evaluated when `EvalSpec.throttle_secs` have passed since the last
evaluation, and the last checkpoint is always evaluated. After each
evaluation every exporter runs. This module does the same in this process:
the evaluation runs from a `CheckpointSaverListener` of `train`, so how
often it happens follows `RunConfig(save_checkpoints_steps=...)` or
`save_checkpoints_secs`.

```python
kte.train_and_evaluate(
    estimator,
    kte.TrainSpec(train_input_fn, max_steps=10000),
    kte.EvalSpec(eval_input_fn, steps=100, throttle_secs=600))
```

`EvalSpec.start_delay_secs` only delayed a separate evaluator task in
TensorFlow; here evaluation happens in the training process and it is
checked but not used. Distributed runs (`TF_CONFIG` with chief/worker/ps
tasks) are not supported: one process drives all local devices.
"""

import collections
import numbers
import os
import time

from keras_tpu_estimator.estimator.tpu_estimator import TPUEstimator
from keras_tpu_estimator.hooks import CheckpointSaverListener
from keras_tpu_estimator.hooks import _common as hook_checks
from keras_tpu_estimator.log_lines import logger as _log


def _check_count(name, value, minimum, allow_none):
    if value is None and allow_none:
        return None
    whole = isinstance(value, numbers.Real) and not isinstance(value, bool) and (
        float(value).is_integer())
    if not whole or value < minimum:
        relation = "> 0" if minimum == 1 else ">= 0"
        raise ValueError(f"Must specify {name} {relation}, given: {value!r}")
    return int(value)


class Exporter:
    """What `EvalSpec(exporters=...)` runs after each evaluation, as `tf.estimator.Exporter`.

    Subclasses define `name` (the export goes to `model_dir/export/<name>`)
    and `export`.

    Example:

    ```python
    class BestLoss(kte.Exporter):
        name = "best"
        def export(self, estimator, export_path, checkpoint_path, eval_result,
                   is_the_final_export):
            ...
    ```
    """

    @property
    def name(self):
        raise NotImplementedError("An Exporter subclass must define `name`.")

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        """Exports; returns the export's path (or None).

        Args:
            estimator: the estimator being trained.
            export_path: `model_dir/export/<name>`.
            checkpoint_path: the checkpoint just evaluated.
            eval_result: the dict `evaluate` returned.
            is_the_final_export: whether training reached `max_steps`.
        """
        raise NotImplementedError("An Exporter subclass must define `export`.")


class TrainSpec(collections.namedtuple(
        "TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):
    """How `train_and_evaluate` trains: as `tf.estimator.TrainSpec`.

    Args:
        input_fn: the training `input_fn`.
        max_steps: train until the global step reaches this; None: until
            the input ends.
        hooks: `SessionRunHook`s (or Keras callbacks) for training.
        saving_listeners: `CheckpointSaverListener`s.

    Raises:
        TypeError: for an `input_fn` that is not callable.
        ValueError: for `max_steps` <= 0.
    """

    def __new__(cls, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn!r}")
        max_steps = _check_count("max_steps", max_steps, 1, allow_none=True)
        hooks = tuple(hook_checks.check_hooks(list(hooks or [])) or ())
        listeners = tuple(hook_checks.check_saving_listeners(list(saving_listeners or [])) or ())
        return super().__new__(cls, input_fn, max_steps, hooks, listeners)


class EvalSpec(collections.namedtuple("EvalSpec", [
        "input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs",
        "throttle_secs"])):
    """How `train_and_evaluate` evaluates: as `tf.estimator.EvalSpec`.

    Args:
        input_fn: the evaluation `input_fn`.
        steps: evaluate this many batches; None: the whole input.
        name: the evaluation's name (summaries go to `eval_<name>`).
        hooks: `SessionRunHook`s for evaluation.
        exporters: an `Exporter` or a list of them (unique names).
        start_delay_secs: checked (>= 0) and not used: see the module.
        throttle_secs: the fewest seconds between two evaluations.

    Raises:
        TypeError: for an `input_fn` that is not callable, a `name` that is
            not a string, or an exporter without `name` and `export`.
        ValueError: for `steps` <= 0, negative seconds, or exporters with
            the same name.
    """

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn!r}")
        steps = _check_count("steps", steps, 1, allow_none=True)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be string, given: {name!r}")
        hooks = tuple(hook_checks.check_hooks(list(hooks or [])) or ())
        if exporters is None:
            exporters = ()
        elif not isinstance(exporters, (list, tuple)):
            exporters = (exporters,)
        for exporter in exporters:
            if not callable(getattr(exporter, "export", None)) or not hasattr(exporter, "name"):
                raise TypeError(
                    "`exporters` must be Exporters (with `name` and `export`), "
                    f"given: {exporter!r}"
                )
        names = [exporter.name for exporter in exporters]
        if any(not isinstance(n, str) or not n for n in names) or len(set(names)) != len(names):
            raise ValueError(
                f"`exporters` must have unique, non-empty string names. Given names: {names}"
            )
        start_delay_secs = _check_count("start_delay_secs", start_delay_secs, 0, False)
        throttle_secs = _check_count("throttle_secs", throttle_secs, 0, False)
        return super().__new__(cls, input_fn, steps, name, hooks, tuple(exporters),
                               start_delay_secs, throttle_secs)


class _EvaluateAfterSave(CheckpointSaverListener):
    """Evaluates (and exports) after checkpoint saves, as TensorFlow's local loop did."""

    def __init__(self, estimator, eval_spec, max_steps):
        self._estimator = estimator
        self._spec = eval_spec
        self._max_steps = max_steps
        self.eval_result = None
        self.export_results = []
        self._evaluated_checkpoint = None

    def begin(self):
        self._first_save = True
        self._last_time = None
        self._last_step = None

    def after_save(self, session, global_step_value):
        if self._first_save:  # The starting point: nothing trained yet.
            self._first_save = False
            return None
        due = self._last_time is None or (
            time.time() - self._last_time >= self._spec.throttle_secs)
        if due and self._last_step != global_step_value:
            self._evaluate(global_step_value)
        elif not due:
            _log.info("Skip the current checkpoint eval due to throttle secs (%s secs).",
                      self._spec.throttle_secs)
        return None

    def end(self, session, global_step_value):
        if global_step_value != self._last_step:
            self._evaluate(global_step_value)

    def _evaluate(self, global_step_value):
        self._last_time, self._last_step = time.time(), global_step_value
        checkpoint = self._estimator.latest_checkpoint()
        if checkpoint is None or checkpoint == self._evaluated_checkpoint:
            _log.info("Skipping evaluation: no new checkpoint.")
            return
        self._evaluated_checkpoint = checkpoint
        spec = self._spec
        self.eval_result = self._estimator.evaluate(
            spec.input_fn, steps=spec.steps, hooks=list(spec.hooks), checkpoint_path=checkpoint,
            name=spec.name)
        final = bool(self._max_steps) and self.eval_result["global_step"] >= self._max_steps
        for exporter in spec.exporters:
            path = os.path.join(self._estimator.model_dir, "export", exporter.name)
            self.export_results.append(exporter.export(
                self._estimator, path, checkpoint, self.eval_result, final))


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains `estimator` and evaluates it after checkpoints, as `tf.estimator.train_and_evaluate`.

    Args:
        estimator: a `kte.Estimator` or `kte.TPUEstimator`.
        train_spec: a `TrainSpec`.
        eval_spec: an `EvalSpec`.

    Returns:
        `(eval_result, export_results)`: the last evaluation's dict (None if
        none ran) and the list of what the exporters returned.

    Raises:
        TypeError: for arguments of other types.

    Example:

    ```python
    metrics, exports = kte.train_and_evaluate(
        est, kte.TrainSpec(train_input_fn, max_steps=1000),
        kte.EvalSpec(eval_input_fn, steps=None, throttle_secs=0))
    ```
    """
    if not isinstance(estimator, TPUEstimator):
        raise TypeError(
            "`estimator` must be a kte.Estimator or kte.TPUEstimator, given "
            f"{type(estimator).__name__}: {estimator!r}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must be a kte.TrainSpec, given: {train_spec!r}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must be a kte.EvalSpec, given: {eval_spec!r}")
    config = estimator.config
    _log.info(
        "Start train and evaluate loop. The evaluate will happen after every checkpoint. "
        "Checkpoint frequency is determined based on RunConfig arguments: "
        "save_checkpoints_steps %s or save_checkpoints_secs %s.",
        config.save_checkpoints_steps, config.save_checkpoints_secs)
    listener = _EvaluateAfterSave(estimator, eval_spec, train_spec.max_steps)
    estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks),
                    max_steps=train_spec.max_steps,
                    saving_listeners=list(train_spec.saving_listeners) + [listener])
    return listener.eval_result, listener.export_results
