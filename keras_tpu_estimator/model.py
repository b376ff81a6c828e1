"""`EstimatorModel`: a TPUEstimator `model_fn` as a Keras model.

`model_fn(features, labels, mode, params, config)` returns a
`TPUEstimatorSpec`; this model reads it as Keras's three steps:

- `train_step`: the spec's `loss`, differentiated with respect to every
  trainable variable the `model_fn` created, applied by the spec's
  `train_op` (a Keras optimizer) or the compiled optimizer; or, for a TF1
  `train_op` (`compat.v1` optimizers, `tf1.gradients` + `assign`), trained
  by assignment (see `train_ops`);
- `test_step`: the spec's `loss` and the metrics of `eval_metrics`;
- `predict_step`: the spec's `predictions`.

Each step is a pure JAX function of the variables' values, and
`iterations_per_loop` (`steps_per_execution`) steps run as one compiled
program, a `jax.lax.scan` over that many stacked batches.
"""

import collections
import contextlib
import time
import warnings

import jax
import jax.numpy as jnp
import keras
import numpy as np

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator import context as context_lib
from keras_tpu_estimator import distribute
from keras_tpu_estimator import initialization
from keras_tpu_estimator import inputs as inputs_lib
from keras_tpu_estimator import scope
from keras_tpu_estimator import strategy as strategy_lib
from keras_tpu_estimator import summary as summary_lib
from keras_tpu_estimator import train_ops
from keras_tpu_estimator.config import RunConfig
from keras_tpu_estimator.metrics import MetricUpdate
from keras_tpu_estimator.model_fn import call_model_fn
from keras_tpu_estimator.model_fn import check_model_fn
from keras_tpu_estimator.model_fn import check_params
from keras_tpu_estimator.spec import ModeKeys

TRAIN, EVAL, PREDICT = ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT

# Keys of the logs of `on_train_batch_end` (one call per loop) beside `loss`:
# the global step before the loop, and the loss of each of its steps.
LOOP_FIRST_STEP = "loop_first_step"
LOOP_LOSSES = "loop_losses"

_DEFAULT_LOOP_BYTES = 1 << 30
_DEFAULT_RESIDENT_BYTES = 1 << 29


class EstimatorModel(keras.Model):
    """A Keras model whose steps are given by a TPUEstimator `model_fn`.

    Args:
        model_fn: `model_fn(features, labels, mode, params, config)` (any
            subset of these argument names, `features` required) returning a
            `TPUEstimatorSpec` or `EstimatorSpec`. It creates its layers and
            variables with `kte.get_or_create_layer` / `kte.get_variable`.
        params: a dict of hyper-parameters passed to `model_fn` and
            `input_fn`; `batch_size` and `context` are reserved.
        config: a `kte.RunConfig`; its `tpu_config.iterations_per_loop` sets
            `steps_per_execution`. Defaults to `RunConfig()`.
        train_batch_size: the global training batch size; must divide by the
            number of replicas.
        eval_batch_size: the global evaluation batch size.
        predict_batch_size: the global prediction batch size.
        use_tpu: passed to `model_fn` as `params['use_tpu']`. With False,
            the model runs on one host CPU device (TPUEstimator's
            `use_tpu=False`); with True (the default), on every accelerator.
        max_loop_bytes: the most input bytes one on-device loop may stack;
            longer loops are split into shorter ones. Defaults to 1 GiB.
        max_resident_bytes: training arrays up to this size are copied to
            every device once per `fit`, and each loop receives only the
            shuffled example indices: batches are gathered on the devices.
            Defaults to 512 MiB; 0 turns it off.
        layout_map: how variables are split over the cores of a replica
            (`TPUConfig(num_cores_per_replica=k)`): partition rules
            `{regex: axes}` matched against whole variable paths, e.g.
            `{".*dense.*/kernel": (None, "model")}`, or a
            `keras.distribution.LayoutMap`. None shards the output axis of
            Dense/Conv kernels and Embedding tables (see
            `kte.distribute.default_layout`). Rules that match no variable
            are reported with a warning.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Raises:
        ValueError: for a `model_fn` with unexpected arguments, reserved
            `params` keys, or a batch size that does not divide over the
            replicas.

    Example:

    ```python
    def model_fn(features, labels, mode, params):
        logits = kte.get_or_create_layer(
            "logits", lambda: keras.layers.Dense(10))(features["x"])
        if mode == kte.ModeKeys.PREDICT:
            return kte.TPUEstimatorSpec(mode, predictions={"logits": logits})
        loss = keras.ops.mean(keras.losses.sparse_categorical_crossentropy(
            labels, logits, from_logits=True))
        return kte.TPUEstimatorSpec(mode, loss=loss,
                                    train_op=keras.optimizers.Adam(1e-3))

    model = kte.EstimatorModel(model_fn, train_batch_size=64)
    model.compile()
    model.fit((x_train, y_train), epochs=2)
    ```
    """

    def __init__(
        self,
        model_fn,
        params=None,
        config=None,
        train_batch_size=None,
        eval_batch_size=None,
        predict_batch_size=None,
        use_tpu=True,
        max_loop_bytes=_DEFAULT_LOOP_BYTES,
        max_resident_bytes=_DEFAULT_RESIDENT_BYTES,
        layout_map=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_model_fn(model_fn)
        if config is None:
            config = RunConfig()
        if not isinstance(config, RunConfig):
            raise ValueError(
                f"`config` must be a kte.RunConfig. Received: {config!r}"
            )
        self._model_fn = model_fn
        self._params = check_params(params)
        self._config = config
        self._use_tpu = bool(use_tpu)
        self.distribution = distribute.distribution_for(config, use_tpu, layout_map)
        self.num_replicas = distribute.num_replicas(self.distribution)
        self._batch_sizes = {}
        for mode, name, value in (
            (TRAIN, "train_batch_size", train_batch_size),
            (EVAL, "eval_batch_size", eval_batch_size),
            (PREDICT, "predict_batch_size", predict_batch_size),
        ):
            distribute.check_batch_size(name, value, self.num_replicas)
            self._batch_sizes[mode] = value
        self.max_loop_bytes = max_loop_bytes
        self.max_resident_bytes = max_resident_bytes
        self.store = scope.VariableStore()
        self._built_modes = set()
        self.train_optimizer = None
        self._host_call_fn = None
        self.host_call_step = None
        self._inference_step = _InferenceStep()
        self.spec_hooks = {}
        self.align_loops_to = None
        self.last_loop = None
        self._trained_variables = []
        # Set when model_fn's train_op trains by assignment (TF1 ops).
        self._assignment_training = False
        self.init_from_checkpoint_reports = []
        self._eval_metrics = {}
        self._eval_loss = keras.metrics.Mean(name="loss")
        self._jitted = {}
        self.steps_per_execution = 1
        self._loop_seconds = None
        self._loop_timed_once = False
        self._set_iterations_per_loop(config.tpu_config.iterations_per_loop)

    # ------------------------------------------------------------------
    # Configuration.

    @property
    def model_fn(self):
        """The user's `model_fn`."""
        return self._model_fn

    @property
    def params(self):
        """A copy of the user's `params`."""
        return dict(self._params)

    @property
    def config(self):
        """The `RunConfig`."""
        return self._config

    def _set_iterations_per_loop(self, value):
        from keras_tpu_estimator.config import parse_iterations_per_loop

        parsed = parse_iterations_per_loop(value)
        if parsed.unit == "seconds":
            self._loop_seconds = parsed.value
        else:
            self.steps_per_execution = parsed.value

    def compile(self, optimizer=None, steps_per_execution=None, **kwargs):
        """Configures training.

        Args:
            optimizer: the optimizer used when `model_fn` returns
                `train_op=None`. Ignored when it returns a Keras optimizer.
            steps_per_execution: steps per on-device loop; defaults to the
                `steps_per_run` of the `kte.TPUStrategy` whose `scope()` is
                active, else the config's `iterations_per_loop`.
            **kwargs: `jit_compile` is accepted; `loss` and `metrics` are
                not, since `model_fn` computes them.

        Raises:
            ValueError: if `loss`, `metrics` or another argument is given.
        """
        if kwargs.get("run_eagerly"):
            raise ValueError(
                "EstimatorModel always compiles its steps (on-device loops); "
                "`run_eagerly=True` is not supported."
            )
        if kwargs.get("jit_compile") is False:
            raise ValueError(
                "EstimatorModel always compiles its steps; `jit_compile=False` "
                "is not supported."
            )
        unsupported = sorted(set(kwargs) - {"jit_compile", "run_eagerly"})
        if unsupported:
            raise ValueError(
                f"EstimatorModel.compile does not take {unsupported}: model_fn "
                "returns the loss and eval_metrics. Only `optimizer` and "
                "`steps_per_execution` are configured here."
            )
        if steps_per_execution is None and strategy_lib.current_strategy() is not None:
            # Compiled under `TPUStrategy.scope()`: its `steps_per_run`.
            steps_per_execution = strategy_lib.current_strategy().steps_per_run
        if steps_per_execution is not None:
            self._loop_seconds = None
            self._set_iterations_per_loop(steps_per_execution)
        steps = self.steps_per_execution
        super().compile(optimizer=optimizer, jit_compile=True)
        self.steps_per_execution = steps

    # ------------------------------------------------------------------
    # Running model_fn.

    def _model_fn_params(self, batch_size):
        params = dict(self._params, use_tpu=self._use_tpu)
        if batch_size is not None:
            params["batch_size"] = batch_size
        return params

    def _input_fn_params(self, context):
        params = dict(self._params, context=context)
        if context.batch_size is not None:
            params["batch_size"] = context.batch_size
        return params

    def call_model_fn(self, features, labels, mode, global_step, building, store=None, config=None):
        """Calls `model_fn` against `store` (default: the model's own)."""
        batch = _leading_dim(features)
        with scope.model_fn_context(
            store or self.store, mode, building, global_step, training=mode == TRAIN
        ):
            return call_model_fn(
                self._model_fn,
                features,
                labels,
                mode,
                self._model_fn_params(batch),
                config or self._config,
            )

    def build_for(self, mode, x, y=None, batch_size=None):
        """Creates everything `model_fn` uses in `mode`, from the input `x`.

        `fit`, `evaluate` and `predict` build on their first batch; building
        first lets a caller restore a checkpoint before any step runs (as
        `TPUEstimator` does). An `input_fn` is called here, once: pass the
        returned source on to `fit`/`evaluate`/`predict`.

        Args:
            mode: a `ModeKeys` value.
            x: an `input_fn`, a dataset or arrays (see `fit`).
            y: labels, when `x` holds features as arrays.
            batch_size: the global batch size; defaults to this mode's.

        Returns:
            The input as a source that `fit`/`evaluate`/`predict` accept.
        """
        source = self._source(x, y, mode, batch_size or self._batch_sizes[mode])
        batch_size = self._batch_size(mode, batch_size, source)
        self.build_from_batch(mode, source.sample(batch_size))
        return source

    def build_from_batch(self, mode, batch):
        """Creates everything `model_fn` uses in `mode`, from a sample batch.

        `model_fn` runs once on symbolic tensors shaped like `batch`: layers
        and variables are created with real values, and no layer update (a
        BatchNormalization moving average) happens.
        """
        if mode in self._built_modes:
            return
        features, labels = jax.tree.map(
            lambda a: keras.KerasTensor(a.shape, dtype=_dtype_name(a)), batch
        )
        if mode == PREDICT:
            labels = None
        with self.distribution.scope():
            # The step is symbolic too; constants (arrays) mix with symbolic
            # tensors on either side of an operator.
            step = keras.KerasTensor((), dtype=_dtype_name(self._global_step_value()))
            # Assignments (TF1 train ops) change nothing here; init_from_checkpoint
            # and scaffold_fn initialize what this pass created, after it.
            with initialization.build_pass(self.store) as build:
                with _keras_internals.symbolic_operands():
                    spec = self.call_model_fn(features, labels, mode, step, True)
                initialization.run_scaffold(spec)
            self.init_from_checkpoint_reports += build.reports
            self.spec_hooks[mode] = {
                TRAIN: spec.training_hooks, EVAL: spec.evaluation_hooks, PREDICT: spec.prediction_hooks
            }[mode]
            if mode == TRAIN:
                self._build_training(spec)
            elif mode == EVAL:
                self._build_evaluation(spec)
        if not self._built_modes:
            _warn_unmatched_rules(self.distribution, self.store)
        self._built_modes.add(mode)
        self.built = True

    def _build_training(self, spec):
        if tuple(spec.loss.shape) not in ((), (1,)):
            raise ValueError(
                f"The loss returned by model_fn must be a scalar. Received "
                f"shape: {tuple(spec.loss.shape)}"
            )
        optimizer = spec.train_op
        if optimizer is not None and train_ops.is_train_op(optimizer):
            return self._build_assignment_training()
        if train_ops.global_step_variable(self.store) is not None:
            raise ValueError(
                "model_fn created the TF1 `global_step` variable "
                "(compat.v1.train.get_or_create_global_step) but trains with a "
                "Keras optimizer, which counts steps itself: read the step with "
                "kte.get_global_step(), or train with a compat.v1.train optimizer."
            )
        if optimizer is None:
            optimizer = self._compiled_optimizer()
            if optimizer is None:
                raise ValueError(
                    "model_fn returned train_op=None and the model has no "
                    "optimizer: return a keras optimizer as `train_op`, or "
                    "call `compile(optimizer=...)`."
                )
        elif not isinstance(optimizer, keras.optimizers.Optimizer):
            raise TypeError(
                "`train_op` must be None, a keras.optimizers.Optimizer, or what "
                "a compat.v1 training op returns (minimize, apply_gradients, "
                f"group, assign). Received: {optimizer!r}"
            )
        if self.train_optimizer is None:
            self.train_optimizer = optimizer
            self._trained_variables = list(self.store.trainable_variables)
            optimizer.build(self._trained_variables)
            # Keras callbacks (LearningRateScheduler, ...) use `model.optimizer`.
            self.optimizer = optimizer

    def _build_assignment_training(self):
        """Trains by assignment (`train_ops`): a TF1 `train_op`, no Keras optimizer."""
        if not self._assignment_training:
            self._assignment_training = True
            self._trained_variables = list(self.store.trainable_variables)
            train_ops.create_global_step(self.store)

    def _build_evaluation(self, spec):
        for name, value in self._metric_values(spec).items():
            if name in self._eval_metrics:
                continue
            if name == "loss":
                raise ValueError(
                    "eval_metrics must not define 'loss': it is always "
                    "reported from the spec's loss."
                )
            if isinstance(value, MetricUpdate):
                metric = value.factory()
                if not isinstance(metric, keras.metrics.Metric):
                    raise TypeError(
                        f"The factory of metric '{name}' must return a "
                        f"keras.metrics.Metric. It returned: {metric!r}"
                    )
            elif tuple(getattr(value, "shape", ())) == ():
                metric = keras.metrics.Mean(name=name)
            else:
                raise ValueError(
                    f"metric_fn returned '{name}' with shape "
                    f"{tuple(value.shape)}: a metric value must be a scalar "
                    "or a kte.metrics function."
                )
            self._eval_metrics[name] = metric

    def _metric_values(self, spec):
        if spec.eval_metrics is None:
            return {}
        metric_fn, tensors = spec.eval_metrics
        values = metric_fn(**tensors) if isinstance(tensors, dict) else metric_fn(*tensors)
        if not isinstance(values, dict):
            raise ValueError(
                "metric_fn must return a dict of metric name to value. "
                f"Received: {values!r}"
            )
        return values

    def _compiled_optimizer(self):
        # Keras sets `optimizer` in `compile`; evaluate/predict need none.
        return getattr(self, "optimizer", None)

    def _global_step_holder(self):
        """What holds the global step: TF1's `global_step` variable (training
        by assignment), the optimizer's iterations, or, before any optimizer
        is built, the step restored for evaluation and prediction."""
        step_variable = train_ops.global_step_variable(self.store)
        if step_variable is not None:
            return step_variable
        optimizer = self.train_optimizer or self._compiled_optimizer()
        if optimizer is None or not optimizer.built:
            return self._inference_step
        return optimizer.iterations

    def _global_step_value(self):
        return self._global_step_holder().value

    # ------------------------------------------------------------------
    # The steps: pure functions of the variables' values.

    def _model_variables(self, mode):
        """The store's variables in two groups: those differentiated, the rest.

        A TRAIN step differentiates the variables its optimizer was built
        with; any created later (by another mode) are carried unchanged.
        """
        first = self._trained_variables if mode == TRAIN else self.store.trainable_variables
        ids = {id(v) for v in first}
        return list(first), [v for v in self.store.variables if id(v) not in ids]

    def _run(self, trainable, non_trainable, features, labels, mode, step):
        """Runs `model_fn` with the given variable values (traced).

        Returns the spec and the new values of the second group (layer
        updates such as BatchNormalization statistics).
        """
        first, rest = self._model_variables(mode)
        with _keras_internals.bound_values(first + rest, list(trainable) + list(non_trainable)):
            spec = self.call_model_fn(features, labels, mode, step, building=False)
            new_rest = _keras_internals.current_values(rest)
        return spec, new_rest

    def train_step(self, state, data):
        """One training step: `(state, (features, labels)) -> (state, outputs)`.

        `outputs` holds the `loss` and the tensors of the spec's `host_call`.
        """
        if self._assignment_training:
            return self._assignment_train_step(state, data)
        trainable, non_trainable, optimizer_values = state
        features, labels = data
        optimizer = self.train_optimizer
        step = optimizer_values[_index(optimizer.variables, optimizer.iterations)]

        def loss_fn(trainable):
            spec, new_non_trainable = self._run(
                trainable, non_trainable, features, labels, TRAIN, step
            )
            rate = None
            if isinstance(spec.train_op, keras.optimizers.Optimizer):
                rate = _keras_internals.traced_learning_rate(spec.train_op)
            host = self._host_call_tensors(spec)
            return jnp.reshape(spec.loss, ()), (new_non_trainable, rate, host)

        (loss, (non_trainable, learning_rate, host)), grads = jax.value_and_grad(
            loss_fn, has_aux=True
        )(trainable)
        # A rate given as a callable is computed from this step's global step.
        with _keras_internals.learning_rate_override(optimizer, learning_rate) if (
            learning_rate is not None
        ) else contextlib.nullcontext():
            trainable, optimizer_values = optimizer.stateless_apply(
                optimizer_values, grads, trainable
            )
        return (trainable, non_trainable, optimizer_values), {"loss": loss, "host_call": host}

    def _host_call_tensors(self, spec):
        """The tensors of the spec's `host_call` (None without one).

        Its function runs on the host after the loop (`_host_calls`).
        """
        if spec.host_call is None:
            return None
        self._host_call_fn, tensors = spec.host_call
        return tensors

    def _assignment_train_step(self, state, data):
        """`train_step` for a TF1 `train_op`: `model_fn` runs twice (see `train_ops`)."""
        trainable, non_trainable, _ = state
        features, labels = data
        first, rest = self._model_variables(TRAIN)
        step_index = _index(rest, train_ops.global_step_variable(self.store))
        step = non_trainable[step_index]

        def run(trainable, non_trainable):
            with _keras_internals.bound_values(first + rest, list(trainable) + list(non_trainable)):
                spec = self.call_model_fn(features, labels, TRAIN, step, building=False)
                values = _keras_internals.current_values(first + rest)
            host = self._host_call_tensors(spec)
            return {"loss": jnp.reshape(spec.loss, ()), "host_call": host}, values

        trainable, non_trainable, outputs = train_ops.train_by_assignment(
            run, first, trainable, non_trainable, step_index
        )
        return (trainable, non_trainable, []), outputs

    def test_step(self, state, data):
        """One evaluation step: updates the loss and metric accumulators."""
        trainable, non_trainable, metric_values, step = state
        features, labels = data
        spec, _ = self._run(trainable, non_trainable, features, labels, EVAL, _step_of(step))
        count = jnp.asarray(_leading_dim(features), "float32")
        values = self._metric_values(spec)
        metrics = [self._eval_loss] + list(self._eval_metrics.values())
        updates = [((jnp.reshape(spec.loss, ()),), {"sample_weight": count})]
        for name in self._eval_metrics:
            value = values[name]
            if isinstance(value, MetricUpdate):
                updates.append((value.args, value.kwargs))
            else:
                updates.append(((value,), {"sample_weight": count}))
        new_values, start = [], 0
        for metric, (args, kwargs) in zip(metrics, updates):
            n = len(metric.variables)
            new_values += metric.stateless_update_state(
                metric_values[start : start + n], *args, **kwargs
            )
            start += n
        return (trainable, non_trainable, new_values, step), None

    def predict_step(self, state, data):
        """One prediction step: returns the spec's `predictions`."""
        trainable, non_trainable, step = state
        features, labels = data
        spec, _ = self._run(trainable, non_trainable, features, labels, PREDICT, _step_of(step))
        return state, spec.predictions

    # ------------------------------------------------------------------
    # Compiled loops.

    def _loop(self, mode, kind):
        """The compiled program for `mode`.

        `kind` is `"stacked"` (a scan over stacked batches), `"indexed"` (a
        scan over example indices into data resident on the devices) or
        `"single"` (one step on one batch).
        """
        key = (mode, kind)
        if key not in self._jitted:
            step = {TRAIN: self.train_step, EVAL: self.test_step, PREDICT: self.predict_step}[mode]
            if kind == "stacked":
                def program(state, chunk):
                    return jax.lax.scan(step, state, chunk)
            elif kind == "indexed":
                def program(state, data, index):
                    def gathered_step(state, rows):
                        return step(state, self._gather(data, rows))

                    return jax.lax.scan(gathered_step, state, index)
            else:
                program = step
            donate = (0,) if mode == TRAIN else ()
            self._jitted[key] = jax.jit(program, donate_argnums=donate)
        return self._jitted[key]

    def _gather(self, data, rows):
        batch = jax.tree.map(lambda a: a[rows], data)
        shardings = distribute.input_shardings(
            batch, self.distribution, stacked=False,
            partition_dims=self._config.tpu_config.input_partition_dims,
        )
        return jax.tree.map(jax.lax.with_sharding_constraint, batch, shardings)

    def _state_variables(self, mode):
        """The variables a `mode` step reads, in groups: its `state`."""
        groups = list(self._model_variables(mode))
        if mode == TRAIN:
            if self._assignment_training:
                return groups + [[]]
            return groups + [self.train_optimizer.variables]
        if mode == EVAL:
            groups.append(self._eval_metric_variables())
        # The global step, an input (not a constant) of the compiled program.
        return groups + [[self._global_step_holder()]]

    def _read_state(self, mode):
        return tuple([v.value for v in group] for group in self._state_variables(mode))

    def _write_state(self, mode, state):
        for group, values in zip(self._state_variables(mode), state):
            for variable, value in zip(group, values):
                variable.assign(value)

    def _eval_metric_variables(self):
        metrics = [self._eval_loss] + list(self._eval_metrics.values())
        return [v for m in metrics for v in m.variables]

    def _run_chunk(self, mode, chunk, resident=None):
        """Runs one chunk; returns the per-step outputs (stacked).

        With `resident` data, the chunk holds example indices into it.
        """
        with self.distribution.scope():
            state = self._read_state(mode)
            if resident is not None:
                state, outputs = self._loop(mode, "indexed")(state, resident, chunk.data)
            else:
                kind = "stacked" if chunk.stacked else "single"
                state, outputs = self._loop(mode, kind)(state, chunk.data)
            if mode != PREDICT:
                self._write_state(mode, state)
        return outputs

    def _chunks(self, source, mode, batch_size, steps, remainder, **kwargs):
        """Chunks of `source` placed on the devices, prefetched."""
        per_process = None if batch_size is None else batch_size // jax.process_count()
        chunks = source.chunks(
            per_process, steps, remainder=remainder, max_bytes=self.max_loop_bytes, **kwargs
        )

        def place(chunk):
            data = chunk.data
            if mode == PREDICT and isinstance(data, tuple):
                data = (data[0], None)  # As Estimator: labels are not predicted from.
            global_size = chunk.size * jax.process_count()
            divisible = chunk.stacked or global_size % self.num_replicas == 0
            # Resident training data arrives as example indices: not partitioned.
            partition_dims = self._config.tpu_config.input_partition_dims
            data = distribute.put_batches(
                data, self.distribution, chunk.stacked, divisible,
                partition_dims if isinstance(data, tuple) else None,
            )
            return chunk._replace(data=data)

        return inputs_lib.prefetch(chunks, place)

    def _source(self, x, y, mode, batch_size):
        """The input as a source of this process's rows of each batch.

        An `input_fn` is called as `per_host_input_for_training` (and
        `eval_training_input_configuration`) deploy it: see `kte.context`.
        """
        if not callable(x) or inputs_lib._is_dataset(x):
            return inputs_lib.as_source(x, y, mode=mode, config=self._config)
        plan = context_lib.plan_input(
            self._config.tpu_config,
            mode,
            batch_size,
            self.num_replicas,
            distribute.cores_per_replica(self.distribution),
            use_tpu=self._use_tpu,
        )
        sources = [
            inputs_lib.as_source(
                x, y, params=self._input_fn_params(c), mode=mode, config=self._config
            )
            for c in plan.contexts
        ]
        if len(sources) == 1 and plan.group == 1:
            return sources[0]
        return inputs_lib.GroupedSource(sources, plan.group, plan.contexts[0].batch_size)

    def _batch_size(self, mode, batch_size, source):
        batch_size = batch_size or self._batch_sizes[mode]
        name = {TRAIN: "train_batch_size", EVAL: "eval_batch_size", PREDICT: "predict_batch_size"}[mode]
        if batch_size is None and isinstance(source, inputs_lib.ArraySource):
            raise ValueError(
                f"A batch size is required to batch arrays: give `{name}` to "
                "EstimatorModel or `batch_size` to this call."
            )
        distribute.check_batch_size(name, batch_size, self.num_replicas)
        return batch_size

    def _first_chunk(self, chunks, mode, resident=None):
        """Peeks the first chunk and builds `mode` from it."""
        try:
            first = next(chunks)
        except StopIteration:
            return None
        if resident is not None:
            rows = first.data.shape[1]
            sample = jax.tree.map(
                lambda a: jax.ShapeDtypeStruct((rows,) + a.shape[1:], a.dtype), resident
            )
        else:
            sample = jax.tree.map(
                lambda a: jax.ShapeDtypeStruct(a.shape[1:] if first.stacked else a.shape, a.dtype),
                first.data,
            )
        self.build_from_batch(mode, sample)
        return first

    # ------------------------------------------------------------------
    # fit / evaluate / predict.

    @summary_lib.keeps_writers  # A host call's event file lasts the whole run.
    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        verbose="auto",
        callbacks=None,
        validation_data=None,
        shuffle=True,
        initial_epoch=0,
        steps_per_epoch=None,
        validation_steps=None,
        validation_freq=1,
    ):
        """Trains with `model_fn`'s TRAIN spec, like `keras.Model.fit`.

        Args:
            x: an `input_fn(params)` returning a `tf.data.Dataset` (or
                arrays), a dataset, or arrays: `(features, labels)`, or
                features with `y` the labels.
            y: labels, when `x` holds features as arrays.
            batch_size: the global batch size for arrays and the
                `params['batch_size']` of an `input_fn`; defaults to
                `train_batch_size`.
            epochs: number of passes over the input.
            verbose: 0, 1, 2 or "auto", as in Keras.
            callbacks: Keras callbacks.
            validation_data: input for `evaluate` at the end of epochs.
            shuffle: shuffle arrays before each epoch.
            initial_epoch: epoch to start from.
            steps_per_epoch: steps per epoch; an epoch otherwise ends with
                the input. Required for an endless dataset.
            validation_steps: `steps` of the validation `evaluate`.
            validation_freq: run validation every this many epochs.

        Returns:
            A `keras.callbacks.History`.
        """
        if not self.compiled:
            raise ValueError("You must call `compile()` before `fit()`.")
        source = self._source(x, y, TRAIN, batch_size or self._batch_sizes[TRAIN])
        batch_size = self._batch_size(TRAIN, batch_size, source)
        endless = isinstance(source, inputs_lib.BatchSource) and source.is_infinite()
        if endless and steps_per_epoch is None:
            raise ValueError(
                "The training input is endless (repeated): give `steps_per_epoch`."
            )
        resume = (
            {"resume": steps_per_epoch is not None}
            if isinstance(source, inputs_lib.BatchSource)
            else {}
        )
        verbose = 1 if verbose == "auto" else verbose
        callbacks = list(callbacks or [])
        if verbose != 0:
            callbacks.append(_LoopProgbarLogger())
        callbacks = keras.callbacks.CallbackList(
            callbacks,
            add_history=True,
            verbose=verbose,
            epochs=epochs,
            steps=steps_per_epoch or _steps_of(source, batch_size, drop_remainder=True),
            model=self,
        )
        # Seeded by `keras.utils.set_random_seed` through numpy's global seed.
        rng = np.random.default_rng(np.random.randint(2**31))
        resident = self._resident_data(source)
        if resident is not None:
            resume["indices"] = True

        def epoch_chunks():
            start = self.global_step
            return self._chunks(
                source,
                TRAIN,
                batch_size,
                lambda position: self._loop_length(start + position),
                inputs_lib.DROP,
                shuffle=shuffle,
                max_steps=steps_per_epoch,
                rng=rng,
                **resume,
            )

        # Build before any callback runs: callbacks see `model.optimizer`.
        chunks = epoch_chunks()
        try:
            chunk = self._first_chunk(chunks, TRAIN, resident)
        except BaseException:
            chunks.close()
            raise
        self.stop_training = False
        callbacks.on_train_begin()
        logs = {}
        for epoch in range(initial_epoch, epochs):
            if epoch > initial_epoch:
                chunks = epoch_chunks()
                chunk = next(chunks, None)
            callbacks.on_epoch_begin(epoch)
            step, loss_sum = 0, 0.0
            with chunks:
                while chunk is not None:
                    callbacks.on_train_batch_begin(step)
                    started, first_step = time.perf_counter(), self.global_step
                    outputs = self._run_chunk(TRAIN, chunk, resident)
                    losses = np.asarray(outputs["loss"])
                    self._tune_loop_steps(chunk.steps, time.perf_counter() - started)
                    self.last_loop = LoopResult(first_step, losses)
                    self._host_calls(first_step, outputs["host_call"])
                    step += chunk.steps
                    loss_sum += float(losses.sum())
                    logs = {
                        "loss": loss_sum / step,
                        LOOP_FIRST_STEP: first_step,
                        LOOP_LOSSES: losses,
                    }
                    callbacks.on_train_batch_end(step - 1, logs)
                    if self.stop_training:
                        break
                    chunk = next(chunks, None)
            if step == 0:
                raise ValueError(
                    "The training input produced no full batch of "
                    f"{batch_size} examples."
                )
            epoch_logs = _without_loop_keys(logs)
            if validation_data is not None and (epoch + 1) % validation_freq == 0:
                val_logs = self.evaluate(
                    validation_data, steps=validation_steps, verbose=0, return_dict=True
                )
                epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
            callbacks.on_epoch_end(epoch, epoch_logs)
            if self.stop_training:
                break
        callbacks.on_train_end(logs)
        return self.history

    @property
    def global_step(self):
        """The number of training steps taken (the optimizer's iterations).

        A model that has not been built for training (evaluation or
        prediction only) reports the step it was set to, e.g. by
        `kte.checkpoint.restore_model`; `model_fn` sees that step too.
        """
        return int(self._global_step_value())

    @global_step.setter
    def global_step(self, step):
        self._global_step_holder().assign(step)

    def _loop_length(self, global_step):
        """Steps in the loop starting at `global_step`.

        `steps_per_execution`, shortened so that no loop crosses a multiple
        of `align_loops_to` (checkpoints land exactly on those steps).
        """
        steps = self.steps_per_execution
        if self.align_loops_to:
            steps = min(steps, self.align_loops_to - global_step % self.align_loops_to)
        return steps

    def _host_calls(self, first_step, tensors):
        """Runs the spec's `host_call` on the host for this loop's steps.

        Every `experimental_host_call_every_n_steps`-th step (by global step)
        gets the function called with that step's tensors, as numpy arrays.
        While it runs, `host_call_step` is the global step after that step:
        the step a summary written without `step=` is recorded at.
        """
        if self._host_call_fn is None or tensors is None:
            return
        every = self._config.tpu_config.experimental_host_call_every_n_steps
        tensors = jax.tree.map(np.asarray, tensors)
        with summary_lib.host_call_writers():
            for i in range(len(self.last_loop.losses)):
                if (first_step + i) % every == 0:
                    values = jax.tree.map(lambda a: a[i], tensors)
                    self.host_call_step = first_step + i + 1
                    try:
                        if isinstance(values, dict):
                            self._host_call_fn(**values)
                        else:
                            self._host_call_fn(*values)
                    finally:
                        self.host_call_step = None

    def _resident_data(self, source):
        """Training arrays placed on every device once, or None."""
        if (
            not isinstance(source, inputs_lib.ArraySource)
            or jax.process_count() > 1
            or source.nbytes > self.max_resident_bytes
        ):
            return None
        return distribute.put_replicated(source.data, self.distribution)

    def _tune_loop_steps(self, steps, seconds):
        """With a time-based `iterations_per_loop`, sizes loops from step time.

        The first loop compiles; the second is timed and sets the loop length
        so one loop lasts about the requested seconds.
        """
        if self._loop_seconds is None:
            return
        if not self._loop_timed_once:
            self._loop_timed_once = True
            return
        per_step = seconds / steps
        self.steps_per_execution = max(1, int(self._loop_seconds / max(per_step, 1e-9)))
        self._loop_seconds = None

    def evaluate(
        self,
        x=None,
        y=None,
        batch_size=None,
        verbose="auto",
        steps=None,
        callbacks=None,
        return_dict=False,
    ):
        """Evaluates `model_fn`'s EVAL spec: `loss` and every metric.

        Every example counts exactly once: a final short batch runs at its
        own size.

        Args:
            x: an `input_fn`, a dataset, or arrays (see `fit`).
            y: labels, when `x` holds features as arrays.
            batch_size: defaults to `eval_batch_size`.
            verbose: 0, 1 or "auto".
            steps: evaluate at most this many batches.
            callbacks: Keras callbacks.
            return_dict: return `{'loss': ..., name: value}`.

        Returns:
            The loss and metrics: a dict with `return_dict`, else a list
            (`loss` first) or the loss alone when there are no metrics.
        """
        source, batch_size, callbacks = self._inference_setup(
            x, y, EVAL, batch_size, verbose, steps, callbacks
        )
        self.stop_evaluating = False
        callbacks.on_test_begin()
        chunks = self._chunks(
            source, EVAL, batch_size, self.steps_per_execution, inputs_lib.EXACT, max_steps=steps
        )
        step = 0
        with chunks:
            chunk = self._first_chunk(chunks, EVAL)  # Builds the metrics, once.
            for metric in [self._eval_loss] + list(self._eval_metrics.values()):
                metric.reset_state()
            while chunk is not None:
                callbacks.on_test_batch_begin(step)
                self._run_chunk(EVAL, chunk)
                step += chunk.steps
                callbacks.on_test_batch_end(step - 1, {})
                if self.stop_evaluating:
                    break
                chunk = next(chunks, None)
        results = {"loss": _to_python(self._eval_loss.result())}
        for name, metric in self._eval_metrics.items():
            results[name] = _to_python(metric.result())
        callbacks.on_test_end(results)
        if return_dict:
            return results
        values = list(results.values())
        return values[0] if len(values) == 1 else values

    def _inference_setup(self, x, y, mode, batch_size, verbose, steps, callbacks):
        """The source, batch size and callbacks of an evaluate or predict call."""
        source = self._source(x, y, mode, batch_size or self._batch_sizes[mode])
        batch_size = self._batch_size(mode, batch_size, source)
        verbose = 1 if verbose == "auto" else verbose
        callbacks = keras.callbacks.CallbackList(
            callbacks,
            add_progbar=verbose != 0,
            verbose=verbose,
            epochs=1,
            steps=steps or _steps_of(source, batch_size),
            model=self,
        )
        return source, batch_size, callbacks

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """Returns `model_fn`'s PREDICT `predictions` for every example.

        Args:
            x: an `input_fn`, a dataset, or feature arrays.
            batch_size: defaults to `predict_batch_size`.
            verbose: 0, 1 or "auto".
            steps: predict at most this many batches.
            callbacks: Keras callbacks.

        Returns:
            The `predictions` (a dict of arrays, or an array), one row per
            input example, in input order.
        """
        batches = list(self.predict_batches(x, batch_size, verbose, steps, callbacks))
        if not batches:
            raise ValueError("The prediction input is empty.")
        return jax.tree.map(lambda *xs: np.concatenate(xs), *batches)

    def predict_batches(self, x, batch_size=None, verbose=0, steps=None, callbacks=None):
        """Like `predict`, but yields the predictions of one loop at a time."""
        source, batch_size, callbacks = self._inference_setup(
            x, None, PREDICT, batch_size, verbose, steps, callbacks
        )
        self.stop_predicting = False
        callbacks.on_predict_begin()
        chunks = self._chunks(
            source, PREDICT, batch_size, self.steps_per_execution, inputs_lib.PAD, max_steps=steps
        )
        step = 0
        with chunks:
            chunk = self._first_chunk(chunks, PREDICT)
            while chunk is not None:
                callbacks.on_predict_batch_begin(step)
                outputs = self._run_chunk(PREDICT, chunk)
                outputs = jax.tree.map(
                    lambda a: np.asarray(a).reshape((-1,) + a.shape[2:])[: chunk.size], outputs
                )
                step += chunk.steps
                callbacks.on_predict_batch_end(step - 1, {"outputs": outputs})
                yield outputs
                if self.stop_predicting:
                    break
                chunk = next(chunks, None)
        callbacks.on_predict_end()

    def export(self, filepath, format="tf_saved_model", verbose=None, input_signature=None,
               **kwargs):
        """Exports `model_fn`'s PREDICT mode as a SavedModel, like `keras.Model.export`.

        The serving inputs come from `input_signature` (the features, as
        Keras describes a model's inputs) or from a
        `serving_input_receiver_fn`; see `kte.export`.

        Args:
            filepath: the SavedModel directory; replaced atomically.
            format: only `"tf_saved_model"`.
            verbose: print the signatures written (default True, as Keras).
            input_signature: the features: a dict of name to
                `keras.InputSpec` / `tf.TensorSpec`, or one spec for a
                `model_fn` taking a tensor; may be wrapped in a one-element
                list, as in Keras.
            **kwargs: `serving_input_receiver_fn` (instead of
                `input_signature`), `assets_extra`, `as_text`, `platforms`
                (default `("cpu",)`); see `kte.export.export_saved_model`.

        Raises:
            ValueError: for another `format`, neither or both of
                `input_signature` and `serving_input_receiver_fn`, or an
                unknown keyword argument.

        Example:

        ```python
        model.export("serving/model", input_signature=[
            {"x": keras.InputSpec(shape=(None, 4), dtype="float32")}])
        ```
        """
        from keras_tpu_estimator import export as export_lib

        export_lib.export_model(self, filepath, format, verbose, input_signature, **kwargs)


def _warn_unmatched_rules(distribution, store):
    """Warns of `layout_map` rules that match no variable of the model."""
    unmatched = getattr(distribution, "unmatched_rules", lambda: [])()
    if unmatched:
        paths = sorted(v.path for v in store.variables)
        warnings.warn(
            f"layout_map rules {unmatched} match no variable: nothing is "
            "sharded by them. Rules match whole variable paths (re.fullmatch); "
            f"the model's variables are: {paths}",
            stacklevel=3,
        )


def _without_loop_keys(logs):
    return {k: v for k, v in logs.items() if k not in (LOOP_FIRST_STEP, LOOP_LOSSES)}


class _LoopProgbarLogger(keras.callbacks.ProgbarLogger):
    """Keras's progress bar, showing the epoch's loss but not the loop's arrays."""

    def on_train_batch_end(self, batch, logs=None):
        super().on_train_batch_end(batch, _without_loop_keys(logs or {}))


class LoopResult(collections.namedtuple("LoopResult", ["first_step", "losses"])):
    """What the last training loop did: its first global step, its losses."""


def _index(variables, variable):
    for i, v in enumerate(variables):
        if v is variable:
            return i
    raise ValueError(f"{variable.path} is not one of the optimizer's variables.")


def _step_of(step_values):
    """The global step from its state group: `[iterations]` or `[inference step]`."""
    return step_values[0]


class _InferenceStep:
    """The global step of a model without a training optimizer.

    It stands in the state like a variable (`value`, `assign`), so that
    `model_fn` run for evaluation or prediction sees the restored step.
    """

    def __init__(self):
        self.value = jnp.zeros((), "int32")

    def assign(self, value):
        self.value = jnp.asarray(value, "int32")


def _leading_dim(tree):
    leaves = jax.tree.leaves(tree)
    return leaves[0].shape[0] if leaves else None


def _dtype_name(a):
    return np.dtype(a.dtype).name if np.dtype(a.dtype).kind != "O" else "string"


def _steps_of(source, batch_size, drop_remainder=False):
    """Batches in one pass over `source`, when it is known."""
    if not isinstance(source, inputs_lib.ArraySource) or not batch_size:
        return None
    if drop_remainder:
        return source.num_examples // batch_size
    return -(-source.num_examples // batch_size)


def _to_python(value):
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value
