"""`EstimatorModel`: a TPUEstimator `model_fn` as a Keras model.

`model_fn(features, labels, mode, params, config)` returns a
`TPUEstimatorSpec`; the engine (`keras_tpu_estimator.engine`) reads it as a
pure JAX step per mode, and `iterations_per_loop` (`steps_per_execution`)
steps run as one compiled program. This module is the Keras face: the
model's parts, compile, building and export; `fit`/`evaluate`/`predict` are
`trainer.LoopTrainer`'s, the one-batch methods `batches`', saving
`saving`'s and `summary()` `summary`'s.
"""

import keras

from keras_tpu_estimator import distribute
from keras_tpu_estimator import inputs
from keras_tpu_estimator import strategy as strategy_lib
from keras_tpu_estimator.config import RunConfig
from keras_tpu_estimator.engine import feed as feed_lib
from keras_tpu_estimator.engine import loop as loop_lib
from keras_tpu_estimator.engine import steps as steps_lib
from keras_tpu_estimator.engine.parts import ModelParts
from keras_tpu_estimator.engine.program import ModelFnProgram
from keras_tpu_estimator.inputs import checks as input_checks
from keras_tpu_estimator.model import saving as model_saving
from keras_tpu_estimator.model.batches import OneBatch
from keras_tpu_estimator.model.saving import Saving
from keras_tpu_estimator.model.summary import Summary
from keras_tpu_estimator.model.trainer import LoopTrainer
from keras_tpu_estimator.model_fn import initialization
from keras_tpu_estimator.model_fn.call import check_model_fn
from keras_tpu_estimator.model_fn.call import check_params
from keras_tpu_estimator.spec import ModeKeys

TRAIN, EVAL, PREDICT = ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT


_DEFAULT_LOOP_BYTES = 1 << 30
_DEFAULT_RESIDENT_BYTES = 1 << 29


@keras.saving.register_keras_serializable(package="keras_tpu_estimator")
class EstimatorModel(LoopTrainer, Saving, OneBatch, Summary, keras.Model):
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
            On CPU devices, only for a `fit` that reads the arrays at
            least twice (one pass costs less than the copy).
            Defaults to 512 MiB; 0 turns it off.
        layout_map: how variables are split over the cores of a replica
            (`TPUConfig(num_cores_per_replica=k)`): partition rules
            `{regex: axes}` matched against whole variable paths, e.g.
            `{".*dense.*/kernel": (None, "model")}`, or a
            `keras.distribution.LayoutMap`. None shards the output axis of
            Dense/Conv kernels and Embedding tables (see
            `kte.distribute.default_layout`). Rules that match no variable
            are reported with a warning.
        device_loop: how the steps of a loop run: `"scan"` (one compiled
            program per loop), `"host"` (one compiled step, called once per
            step) or `"auto"` (the default: `"host"` on CPU for a model with
            convolutions, which XLA:CPU runs slowly inside a loop, else
            `"scan"`). See `kte.engine.loop.LoopRunner`.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Raises:
        ValueError: for a `model_fn` with unexpected arguments, reserved
            `params` keys, a batch size that does not divide over the
            replicas, or another `device_loop`.

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
        device_loop="auto",
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_model_fn(model_fn)
        self._arguments = dict(  # For `get_config`.
            train_batch_size=train_batch_size, eval_batch_size=eval_batch_size,
            predict_batch_size=predict_batch_size, use_tpu=use_tpu,
            max_loop_bytes=max_loop_bytes, max_resident_bytes=max_resident_bytes,
            layout_map=layout_map, device_loop=device_loop,
        )
        self._built_batches = []  # [(mode, batch spec)]: `get_build_config`.
        self._compiled_optimizer = None
        if config is None:
            config = RunConfig()
        if not isinstance(config, RunConfig):
            raise ValueError(
                f"`config` must be a kte.RunConfig. Received: {config!r}"
            )
        self._program = ModelFnProgram(model_fn, check_params(params), config, bool(use_tpu))
        self.distribution = distribute.distribution_for(config, use_tpu, layout_map)
        self.num_replicas = distribute.num_replicas(self.distribution)
        self._reader = inputs.InputReader(
            self.distribution, config, self._program.params, bool(use_tpu),
            {TRAIN: train_batch_size, EVAL: eval_batch_size, PREDICT: predict_batch_size},
        )
        self._feed = feed_lib.Feed(
            self.distribution, config.tpu_config.input_partition_dims,
            max_loop_bytes, max_resident_bytes,
        )
        self._parts = ModelParts(self._program, self.distribution)
        # Tracked by Keras: `model.variables`, `save_weights` and export see them.
        self.store = self._parts.store
        self._eval_metrics = dict(self._parts.metrics)
        self._runner = loop_lib.LoopRunner(
            steps_lib.Steps(self._program, self._parts), self._parts, self._feed.gather,
            self.distribution, device_loop,
        )
        self._schedule = loop_lib.LoopSchedule()
        self.steps_per_execution = self._schedule.set_iterations_per_loop(
            config.tpu_config.iterations_per_loop, 1
        )

    # ------------------------------------------------------------------
    # Configuration.

    @property
    def model_fn(self):
        """The user's `model_fn`."""
        return self._program.model_fn

    @property
    def params(self):
        """A copy of the user's `params`."""
        return dict(self._program.params)

    @property
    def config(self):
        """The `RunConfig`."""
        return self._program.config

    @property
    def distribution(self):
        """The `keras.distribution` the variables and batches are laid out by.

        Derived from the config (`distribute.distribution_for`); another may
        be set before the model is built.
        """
        return self._distribution

    @distribution.setter
    def distribution(self, distribution):
        self._distribution = distribution
        for part in ("_reader", "_feed", "_parts", "_runner"):
            if hasattr(self, part):
                getattr(self, part).distribution = distribution

    @property
    def train_optimizer(self):
        """The Keras optimizer training applies (None before training is
        built, or when `model_fn` trains by assignment)."""
        return self._parts.optimizer

    @property
    def spec_hooks(self):
        """`{mode: hooks}` of the specs `model_fn` returned when each mode was built."""
        return dict(self._parts.hooks)

    @property
    def scaffold_restores(self):
        """`{mode: [(variable, source)]}`: the variables a mode reads from others
        (its scaffold's saver, e.g. exponential moving averages)."""
        return dict(self._parts.restores)

    @property
    def init_from_checkpoint_reports(self):
        """The reports of `compat.v1.train.init_from_checkpoint` calls, in order."""
        return list(self._parts.reports)

    @property
    def align_loops_to(self):
        """When set, no training loop crosses a multiple of this many steps."""
        return self._schedule.align_to

    @align_loops_to.setter
    def align_loops_to(self, steps):
        self._schedule.align_to = steps

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
        steps = self.steps_per_execution
        if steps_per_execution is not None:
            steps = self._schedule.set_iterations_per_loop(steps_per_execution, steps)
        super().compile(optimizer=optimizer, jit_compile=True)
        self._compiled_optimizer = self.optimizer
        if self._parts.optimizer is not None:  # Training is built: its optimizer stays.
            self.optimizer = self._parts.optimizer
        self.steps_per_execution = steps

    # ------------------------------------------------------------------
    # Running and building model_fn.

    def call_model_fn(self, features, labels, mode, global_step, building=False, store=None,
                      config=None):
        """Calls `model_fn` once, with its variables in `store`.

        Args:
            features: the features (arrays, tensors or symbolic tensors).
            labels: the labels, or None.
            mode: a `ModeKeys` value.
            global_step: the step `model_fn` sees.
            building: whether this call creates the variables (a build pass).
            store: the `VariableStore` to use; defaults to the model's own.
            config: the `RunConfig` passed; defaults to the model's.

        Returns:
            The spec `model_fn` returned.
        """
        return self._program.call(
            store or self.store, features, labels, mode, global_step, building, config
        )

    def model_fn_graph(self, mode):
        """A block in which TF1 code sees what `model_fn` built for `mode`.

        Its variables (`tf1.trainable_variables()`, `ema.variables_to_restore()`)
        and collections, as a TF1 `SessionRunHook.begin()` saw the graph
        after `model_fn` (`kte.hooks.HookCallback` runs `begin` in it).

        Example:

        ```python
        with model.model_fn_graph(kte.ModeKeys.EVAL):
            names = [v.name for v in tf1.trainable_variables()]
        ```
        """
        return self._program.built_graph(self.store, mode)

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
        source, batch_size = self._reader.source(x, y, mode, batch_size)
        self.build_from_batch(mode, source.sample(
            batch_size, self.steps_per_execution, self._feed.max_loop_bytes))
        return source

    def restoring(self):
        """A block that builds modes and restores them: what it restores is never initialized.

        TF1 ran no initializer of a variable it restored from a checkpoint.
        Modes built inside the block compute no initial value: their new
        variables hold zeros until the block ends, when those the block did
        not assign (the checkpoint lacks them, or none was loaded) get their
        initial values, by one program, as a build outside the block gives.
        A mode restored whole compiles no initializer.

        Example:

        ```python
        with model.restoring():
            source = model.build_for(kte.ModeKeys.EVAL, input_fn)
            kte.checkpoint.restore_model(checkpoints, model)
        model.evaluate(source)
        ```
        """
        return initialization.restore_pending()

    def build_from_batch(self, mode, batch):
        """Creates everything `model_fn` uses in `mode`, from a sample batch.

        `model_fn` runs once on abstract values shaped like `batch` (arrays
        or `jax.ShapeDtypeStruct`s of `(features, labels)`); building a mode
        twice does nothing.
        """
        input_checks.refuse_strings(batch)
        if self._parts.build(mode, batch, self._compiled_optimizer):
            self._built_batches.append((mode, model_saving.batch_spec(batch)))
            self._eval_metrics = dict(self._parts.metrics)  # Tracked by Keras.
            if self._parts.optimizer is not None:
                # Keras callbacks (LearningRateScheduler, ...) use `model.optimizer`.
                self.optimizer = self._parts.optimizer
            self.built = True

    @property
    def global_step(self):
        """The number of training steps taken (the optimizer's iterations).

        A model that has not been built for training (evaluation or
        prediction only) reports the step it was set to, e.g. by
        `kte.checkpoint.restore_model`; `model_fn` sees that step too.
        """
        return int(self._parts.global_step.value)

    @global_step.setter
    def global_step(self, step):
        self._parts.global_step.assign(step)

    def export(self, filepath, format="tf_saved_model", verbose=None, input_signature=None,
               **kwargs):
        """Exports `model_fn`'s PREDICT mode as a SavedModel, like `keras.Model.export`.

        Args:
            filepath: the SavedModel directory; replaced atomically.
            format: only `"tf_saved_model"`.
            verbose: print the signatures written (default True, as Keras).
            input_signature: the features: a dict of name to
                `keras.InputSpec` / `tf.TensorSpec`, or one spec; may be
                wrapped in a one-element list, as in Keras.
            **kwargs: `serving_input_receiver_fn` (instead of
                `input_signature`), `assets_extra`, `as_text`, `platforms`;
                see `kte.export.export_model`.

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
