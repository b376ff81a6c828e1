"""`TPUEstimator`: the estimator API over `EstimatorModel`, with `model_dir`.

The facade keeps what estimator programs call — `train`, `evaluate`,
`predict`, `get_variable_names`, `latest_checkpoint`, ... — and the
estimator's contract that the checkpoints in `model_dir` are the model: every
call starts from the latest checkpoint (or the one given), and training
writes new ones. The steps themselves are `EstimatorModel`'s; this module only
decides what to run, from which checkpoint, and what to write. How far
training runs and its callbacks are `train_plan`'s; the shaping of
predictions is `predictions`'s; exporting a checkpoint is
`exporting.Exporting`'s (over `export.export_checkpoint`).

```python
est = kte.TPUEstimator(model_fn=model_fn, config=kte.RunConfig(
    model_dir="runs/mnist", save_checkpoints_steps=100,
    tpu_config=kte.TPUConfig(iterations_per_loop=50)),
    train_batch_size=256, eval_batch_size=256, predict_batch_size=256)
est.train(train_input_fn, max_steps=1000)   # resumes from model_dir
est.evaluate(eval_input_fn, steps=20)       # {'loss', 'global_step', ...}
for prediction in est.predict(predict_input_fn):
    ...
```
"""

import os
import tempfile

import keras
import numpy as np

from keras_tpu_estimator import checkpoint as checkpoint_lib
from keras_tpu_estimator import export as export_lib
from keras_tpu_estimator import hooks as hooks_lib
from keras_tpu_estimator import summary as summary_lib
from keras_tpu_estimator.config import RunConfig
from keras_tpu_estimator.estimator import args as estimator_args
from keras_tpu_estimator.estimator import predictions as predictions_lib
from keras_tpu_estimator.estimator import train_plan
from keras_tpu_estimator.estimator.exporting import Exporting
from keras_tpu_estimator.export import ExportSavedModelApiVersion
from keras_tpu_estimator.log_lines import logger as _log
from keras_tpu_estimator.model.estimator_model import EstimatorModel
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.model_fn.call import check_model_fn
from keras_tpu_estimator.model_fn.call import check_params
from keras_tpu_estimator.spec import ModeKeys


class TPUEstimator(Exporting):
    """Estimator with TPU support, on Keras 3 and JAX.

    Args:
        model_fn: `model_fn(features, labels, mode, params, config)` returning
            a `TPUEstimatorSpec` or `EstimatorSpec`.
        model_dir: where checkpoints and summaries go. If None, the config's
            `model_dir`; if both are set they must agree; if neither, a
            temporary directory.
        config: a `kte.RunConfig`. Cannot be None.
        params: hyper-parameters for `model_fn` and `input_fn`;
            `batch_size` and `context` are reserved.
        use_tpu: False runs everything on one host CPU device, with the
            batch sizes unmodified.
        train_batch_size: the global training batch size; required when
            `use_tpu` is True. Must divide by the number of replicas.
        eval_batch_size: the global evaluation batch size.
        predict_batch_size: the global prediction batch size.
        batch_axis: None, or zeros only: batches split along their major
            dimension. Other axes are not supported (transpose in
            `input_fn`).
        eval_on_tpu: False evaluates on the host CPU.
        export_to_tpu: with `use_tpu`, `export_saved_model` also compiles
            the serving program for the TPU.
        export_to_cpu: `export_saved_model` compiles the serving program for
            the CPU.
        warm_start_from: a checkpoint path (of this library or TensorFlow) or
            a `kte.WarmStartSettings`, used when `model_dir` has no
            checkpoint yet.
        embedding_config_spec: must be None: TPU embedding tables are not
            supported on this runtime (use `keras.layers.Embedding`).
        export_saved_model_api_version: `ExportSavedModelApiVersion.V1` or
            `V2`. Both export the same graph: `model_fn` is one XLA program
            for every platform, and `kte.export.inference_on_tpu` (V2) runs
            its computation in it.
        layout_map: not in TensorFlow: how variables are split over the
            cores of a replica with `TPUConfig(num_cores_per_replica=k)`,
            as `EstimatorModel`'s `layout_map` (partition rules
            `{regex: axes}` or a `keras.distribution.LayoutMap`). None: the
            default layouts.

    Raises:
        TypeError: for a `use_tpu` or `eval_on_tpu` that is not a bool.
        ValueError: for a missing `config`, disagreeing model dirs, a missing
            `train_batch_size` with `use_tpu`, reserved `params` keys, or an
            argument this runtime cannot honour.
    """

    def __init__(
        self,
        model_fn=None,
        model_dir=None,
        config=None,
        params=None,
        use_tpu=True,
        train_batch_size=None,
        eval_batch_size=None,
        predict_batch_size=None,
        batch_axis=None,
        eval_on_tpu=True,
        export_to_tpu=True,
        export_to_cpu=True,
        warm_start_from=None,
        embedding_config_spec=None,
        export_saved_model_api_version=ExportSavedModelApiVersion.V1,
        layout_map=None,
    ):
        if config is None or not isinstance(config, RunConfig):
            raise ValueError(
                "`config` must be provided with type `kte.RunConfig`. "
                f"Received: config={config!r}"
            )
        use_tpu = estimator_args.check_bool("use_tpu", use_tpu)
        eval_on_tpu = estimator_args.check_bool("eval_on_tpu", eval_on_tpu)
        check_model_fn(model_fn)
        params = check_params(params)
        if model_dir is not None and config.model_dir is not None:
            if os.path.abspath(os.fspath(model_dir)) != os.path.abspath(config.model_dir):
                raise ValueError(
                    "`model_dir` are set both in constructor and `RunConfig`, but "
                    f"with different values. In constructor: '{model_dir}', in "
                    f"`RunConfig`: '{config.model_dir}'."
                )
        model_dir = model_dir or config.model_dir
        if model_dir is None:
            model_dir = tempfile.mkdtemp(prefix="kte_model_dir_")
            _log.warning("Using temporary folder as model directory: %s", model_dir)
        self._config = config.replace(model_dir=os.fspath(model_dir))
        if use_tpu and train_batch_size is None:
            raise ValueError("`train_batch_size` cannot be `None` when `use_tpu` is True.")
        if batch_axis is not None and any(axis != 0 for axis in np.ravel(batch_axis)):
            raise ValueError(
                f"`batch_axis` {batch_axis!r} is not supported: batches are split "
                "along their major dimension. Transpose the tensors in input_fn."
            )
        if embedding_config_spec is not None:
            raise ValueError(
                "`embedding_config_spec` (TPU embedding tables) is not supported "
                "on this runtime. Use keras.layers.Embedding inside model_fn; "
                "with num_cores_per_replica its table can be sharded."
            )
        export_lib.check_api_version(export_saved_model_api_version)
        self._model_fn = model_fn
        self._params = params
        self._use_tpu = bool(use_tpu)
        self._eval_on_tpu = bool(eval_on_tpu)
        self._batch_sizes = dict(
            train_batch_size=train_batch_size,
            eval_batch_size=eval_batch_size,
            predict_batch_size=predict_batch_size,
        )
        self.export_to_tpu = export_to_tpu
        self.export_to_cpu = export_to_cpu
        self.export_saved_model_api_version = export_saved_model_api_version
        self._warm_start_from = estimator_args.check_warm_start_from(warm_start_from)
        self._layout_map = layout_map
        self._models = {}
        # The checkpoints of model_dir, and which one each model holds.
        self._checkpoints = checkpoint_lib.ModelDirCheckpoints(
            self.model_dir, max_to_keep=self._config.keep_checkpoint_max
        )
        # Fail now, not at the first train(), on indivisible batch sizes.
        self._model(ModeKeys.TRAIN)

    # ------------------------------------------------------------------
    # Properties of the reference.

    @property
    def model_dir(self):
        return self._config.model_dir

    @property
    def config(self):
        return self._config

    @property
    def params(self):
        return dict(self._params)

    @property
    def model_fn(self):
        """The `model_fn`, bound to `params`: `(features, labels, mode, config)`.

        Each call runs `model_fn` eagerly with fresh variables (as TensorFlow
        ran it in a new graph): nothing of the estimator's models changes.
        """
        model = self._model(ModeKeys.TRAIN)

        def bound_model_fn(features, labels, mode, config=None):
            return model.call_model_fn(features, labels, mode, 0, True,
                               store=store_lib.VariableStore(), config=config)

        return bound_model_fn

    def eval_dir(self, name=None):
        """The directory evaluation summaries go to: `eval` or `eval_<name>`."""
        return os.path.join(self.model_dir, "eval" if not name else "eval_" + name)

    def latest_checkpoint(self):
        """The path of the newest checkpoint in `model_dir`, or None."""
        return self._checkpoints.latest_checkpoint()

    def get_variable_names(self):
        """The names of the variables in the latest checkpoint.

        Raises:
            ValueError: if there is no checkpoint yet.
        """
        return [name for name, _ in checkpoint_lib.list_variables(self._require_checkpoint())]

    def get_variable_value(self, name):
        """The value of the variable `name` in the latest checkpoint.

        Raises:
            ValueError: if there is no checkpoint yet, or no such variable.
        """
        return checkpoint_lib.load_variable(self._require_checkpoint(), name)

    def _require_checkpoint(self):
        path = self.latest_checkpoint()
        if path is None:
            raise ValueError(
                f"Could not find trained model in model_dir: {self.model_dir}."
            )
        return self.model_dir  # Read as its latest then: a trainer may delete this one.

    # ------------------------------------------------------------------
    # The models: one for the accelerators, one on the host CPU when asked.

    def _model(self, mode):
        on_accelerator = self._use_tpu and (mode != ModeKeys.EVAL or self._eval_on_tpu)
        if on_accelerator not in self._models:
            model = EstimatorModel(
                self._model_fn,
                params=self._params,
                config=self._config,
                use_tpu=on_accelerator,
                layout_map=self._layout_map,
                **self._batch_sizes,
            )
            model.compile()
            self._models[on_accelerator] = model
        return self._models[on_accelerator]

    def _seed(self):
        """`RunConfig(tf_random_seed=S)` makes each call repeat, as TensorFlow's graph seed did.

        Initial weights, dropout masks and the input pipeline's shuffles all
        follow from it (`keras.utils.set_random_seed` seeds Python, numpy,
        TensorFlow and Keras).
        """
        if self._config.tf_random_seed is not None:
            keras.utils.set_random_seed(int(self._config.tf_random_seed))

    # ------------------------------------------------------------------
    # train / evaluate / predict.

    @summary_lib.keeps_writers  # One event file per directory per run, as TF1's graph.
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains from the latest checkpoint in `model_dir`.

        Args:
            input_fn: `input_fn(params)` returning a `tf.data.Dataset` (or
                arrays); `params['batch_size']` is the per-process batch.
            hooks: Keras callbacks or `SessionRunHook`s.
            steps: train this many more steps. None with `max_steps` None:
                until the input ends.
            max_steps: train until the global step reaches this. At or past
                it, returns at once without calling `input_fn`.
            saving_listeners: `CheckpointSaverListener`s called around saves.

        Returns:
            self.

        Raises:
            TypeError: for `hooks` that is not a list of hooks,
                `saving_listeners` that is not a list of
                `CheckpointSaverListener`s, or a step count that is not a
                whole number (checked before any work).
            ValueError: for both `steps` and `max_steps`, or either <= 0.
            kte.checkpoint.ModelDirInUseError: if another process trains
                into `model_dir` (checked first: a process's lock ends with
                it, killed or not).
            kte.NanLossDuringTrainingError: for a NaN loss (`NanTensorHook`),
                or NaN weights about to be saved (`NonFiniteWeightsError`:
                the latest checkpoint stays the last good one).
        """
        estimator_args.check_input_fn(input_fn)
        hooks, steps, max_steps, saving_listeners = estimator_args.train_args(
            hooks, steps, max_steps, saving_listeners)
        with checkpoint_lib.TrainerLock(self.model_dir):  # One trainer per model_dir.
            return self._train(input_fn, hooks, steps, max_steps, saving_listeners)

    def _train(self, input_fn, hooks, steps, max_steps, saving_listeners):
        """`train`, while this process holds the model_dir's `TrainerLock`."""
        self._seed()
        model = self._model(ModeKeys.TRAIN)
        # Weights trained without a checkpoint continue, unless a checkpoint is newer.
        start, from_memory = self._checkpoints.training_start(model)
        if max_steps is not None and start >= max_steps:
            _log.info("Skipping training since max_steps has already saved.")
            return self
        user_hooks = list(hooks or [])
        stop = train_plan.stop_step(user_hooks, start)
        if stop is not None and stop <= start:
            _log.info("Skipping training: a StopAtStepHook's last step is reached.")
            return self
        # As TF1's Scaffold, initializers run only for what no checkpoint gives.
        with model.restoring():
            source = model.build_for(ModeKeys.TRAIN, input_fn)
            loaded = from_memory or self._checkpoints.load(model) is not None
            if not loaded and self._warm_start_from is not None:
                checkpoint_lib.warm_start(model, self._warm_start_from)
        user_hooks += list(model.spec_hooks.get(ModeKeys.TRAIN) or [])
        remaining = train_plan.steps_to_run(
            start, steps, max_steps, stop=train_plan.stop_step(user_hooks, start),
            endless=getattr(source, "is_infinite", lambda: False)(),
        )
        user_hooks, saver_hooks = train_plan.saver_hooks(user_hooks, self.model_dir)
        saver = self._checkpoints.saver(
            model,
            save_steps=self._config.save_checkpoints_steps,
            save_secs=self._config.save_checkpoints_secs,
            listeners=saving_listeners or [],
        )
        callbacks = train_plan.training_callbacks(user_hooks, saver, self._config)
        at = callbacks.index(saver) + 1
        callbacks[at:at] = [
            self._checkpoints.saver(model, save_steps=h.save_steps, save_secs=h.save_secs,
                                    listeners=h.listeners)
            for h in saver_hooks
        ]
        model.align_loops_to = train_plan.loop_alignment(
            self._config.save_checkpoints_steps, saver_hooks)
        self._checkpoints.training_began(model)
        try:
            with summary_lib.record_summaries(self.model_dir, lambda: model.global_step):
                model.fit(source, epochs=1, steps_per_epoch=remaining, callbacks=callbacks,
                          shuffle=False, verbose=0)
        except BaseException:
            self._checkpoints.forget(model)  # Unsaved steps: reload next time.
            raise
        self._checkpoints.training_ended(model)
        return self

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates the given or latest checkpoint.

        Args:
            input_fn: `input_fn(params)` returning the evaluation input.
            steps: evaluate at most this many batches; None: to the end of
                the input, a final short batch counted exactly once.
            hooks: Keras callbacks or `SessionRunHook`s.
            checkpoint_path: a checkpoint to evaluate; default the latest.
                Its directory (`model_dir/<step>`, as `latest_checkpoint()`
                returns it) or its TensorFlow-style name
                (`model_dir/model.ckpt-<step>`, as
                `compat.v1.train.latest_checkpoint` and
                `checkpoints_iterator` give it); another `model_dir`'s
                checkpoints too.
            name: the evaluation's name: summaries go to `eval_dir(name)`.

        Returns:
            A dict with `loss`, `global_step` and every metric, typed as
            TensorFlow's: the loss and a float metric a `numpy.float32`,
            `global_step` a `numpy.int64`, a metric of another kind a numpy
            value of its kind (`.item()` gives the Python number).

        Raises:
            TypeError: for `steps` that is not a whole number, or `hooks`
                that is not a list of hooks.
            ValueError: with no checkpoint, `steps` <= 0, or a
                `checkpoint_path` that names no checkpoint.
        """
        estimator_args.check_input_fn(input_fn)
        steps, hooks = estimator_args.evaluate_args(steps, hooks)
        if checkpoint_path is None:
            self._require_checkpoint()  # Fails before input_fn; the latest is read below.
        self._seed()
        model = self._model(ModeKeys.EVAL)
        with model.restoring():
            source = model.build_for(ModeKeys.EVAL, input_fn)
            step = self._checkpoints.load(model, checkpoint_path)
        callbacks = hooks_lib.as_callbacks(
            list(hooks or []) + list(model.spec_hooks.get(ModeKeys.EVAL) or []), ModeKeys.EVAL
        ) + [hooks_lib.EvaluationLoggingCallback()]
        results = model.evaluate(source, steps=steps, callbacks=callbacks, return_dict=True, verbose=0)
        if len(callbacks) > 1:  # A hook may have assigned weights (TF1's LoadEMAHook).
            self._checkpoints.forget(model)
        results = {key: _as_tf_result(value) for key, value in results.items()}
        results["global_step"] = np.int64(step)
        with summary_lib.record_summaries(self.eval_dir(name), lambda: step):
            for key, value in results.items():
                if key != "global_step" and np.ndim(value) == 0:
                    summary_lib.scalar(key, value)
        return results

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields predictions of the given or latest checkpoint, lazily.

        Args:
            input_fn: `input_fn(params)` returning features (a finite input
                ends the generator).
            predict_keys: the prediction keys to keep; None keeps all.
            hooks: Keras callbacks or `SessionRunHook`s.
            checkpoint_path: a checkpoint to use, in either form `evaluate`
                takes; default the latest (with none, freshly initialized
                weights, as TensorFlow did).
            yield_single_examples: one dict per example (default), or one
                dict of batched arrays per batch.

        Yields:
            Dicts of predictions (or arrays, when `predictions` is a tensor).

        Raises:
            TypeError: for `predict_keys` that is not None, a str or a list
                of str, or `hooks` that is not a list of hooks (at the first
                `next`, before `input_fn` runs).
            ValueError: for an unknown key in `predict_keys`, or a
                `checkpoint_path` that names no checkpoint.
        """
        estimator_args.check_input_fn(input_fn)
        predict_keys, hooks = estimator_args.predict_args(predict_keys, hooks)
        self._seed()
        model = self._model(ModeKeys.PREDICT)
        with model.restoring():
            source = model.build_for(ModeKeys.PREDICT, input_fn)
            loaded = self._checkpoints.load(model, checkpoint_path) is not None
        if not loaded:
            _log.warning(
                "Could not find trained model in model_dir: %s, running "
                "initialization to predict.", self.model_dir,
            )
        callbacks = hooks_lib.as_callbacks(
            list(hooks or []) + list(model.spec_hooks.get(ModeKeys.PREDICT) or []), ModeKeys.PREDICT
        )
        for batch in model.predict_batches(source, callbacks=callbacks):
            batch = predictions_lib.select_keys(batch, predict_keys)
            if yield_single_examples:
                yield from predictions_lib.examples(batch)
            else:
                yield batch


def _as_tf_result(value):
    """An evaluation result typed as TensorFlow's estimator returned it.

    `EstimatorModel.evaluate` gives Keras's Python numbers; TensorFlow gave
    the numpy values of its float32 metrics (`numpy.float32`), and numpy
    values of their own kind for the others.
    """
    if isinstance(value, float):
        return np.float32(value)
    if isinstance(value, (bool, int)):
        return np.asarray(value)[()]
    return np.asarray(value)
