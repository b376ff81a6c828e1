"""`EstimatorModel`: a TPUEstimator `model_fn` as a Keras model.

`model_fn(features, labels, mode, params, config)` returns a
`TPUEstimatorSpec`; the engine (`keras_tpu_estimator.engine`) reads it as a
pure JAX step per mode, and `iterations_per_loop` (`steps_per_execution`)
steps run as one compiled program. This module is the Keras face: compile,
fit, evaluate, predict, export, and the one chunk loop that drives them.
"""

import collections
import time

import jax
import keras
import numpy as np

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator import distribute
from keras_tpu_estimator import inputs as inputs_lib
from keras_tpu_estimator import model_saving
from keras_tpu_estimator import strategy as strategy_lib
from keras_tpu_estimator import summary as summary_lib
from keras_tpu_estimator.config import RunConfig
from keras_tpu_estimator.engine import feed as feed_lib
from keras_tpu_estimator.engine import learning_rate
from keras_tpu_estimator.engine import logs as logs_lib
from keras_tpu_estimator.engine import loop as loop_lib
from keras_tpu_estimator.engine import steps as steps_lib
from keras_tpu_estimator.engine.host_call import run_host_calls
from keras_tpu_estimator.engine.logs import LOOP_FIRST_STEP
from keras_tpu_estimator.engine.logs import LOOP_LOSSES
from keras_tpu_estimator.engine.parts import ModelParts
from keras_tpu_estimator.engine.program import ModelFnProgram
from keras_tpu_estimator.model_fn import check_model_fn
from keras_tpu_estimator.model_fn import check_params
from keras_tpu_estimator.model_batches import OneBatch
from keras_tpu_estimator.model_saving import Saving
from keras_tpu_estimator.model_summary import Summary
from keras_tpu_estimator.spec import ModeKeys

TRAIN, EVAL, PREDICT = ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT


_DEFAULT_LOOP_BYTES = 1 << 30
_DEFAULT_RESIDENT_BYTES = 1 << 29
_MAX_LOOPS_IN_FLIGHT = 2  # Loops dispatched ahead of the devices (see `_loops`).


@keras.saving.register_keras_serializable(package="keras_tpu_estimator")
class EstimatorModel(Saving, OneBatch, Summary, keras.Model):
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
        self._feed = feed_lib.Feed(
            self.distribution, config, self._program.params, bool(use_tpu),
            {TRAIN: train_batch_size, EVAL: eval_batch_size, PREDICT: predict_batch_size},
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
        for part in ("_feed", "_parts", "_runner"):
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
        source, batch_size = self._feed.source(x, y, mode, batch_size)
        self.build_from_batch(mode, source.sample(batch_size))
        return source

    def build_from_batch(self, mode, batch):
        """Creates everything `model_fn` uses in `mode`, from a sample batch.

        `model_fn` runs once on symbolic tensors shaped like `batch` (arrays
        or `jax.ShapeDtypeStruct`s of `(features, labels)`); building a mode
        twice does nothing.
        """
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

    # ------------------------------------------------------------------
    # Running loops.

    def _loops(self, mode, chunks, callbacks, loop_logs, resident=None, first=None):
        """The chunk loop of fit, evaluate and predict: one compiled loop per chunk.

        Around each loop, the mode's batch callbacks; after it,
        `loop_logs(chunk, outputs, steps, seconds)` gives the logs of
        `on_*_batch_end`, which are also yielded. Stops after a loop when a
        callback set the mode's `stop_*` flag.

        At most `_MAX_LOOPS_IN_FLIGHT` loops are dispatched and not done:
        JAX dispatches asynchronously, and a host that never reads a loop's
        results (evaluation) would queue loops without bound (on 8 CPU
        devices, tens of thousands of them make XLA abort on a collective's
        timeout). Waiting on the loop before last keeps the next chunk's
        preparation overlapping the current loop.
        """
        hook, stop = _CALLBACK_NAMES[mode]
        begin = getattr(callbacks, f"on_{hook}_batch_begin")
        end = getattr(callbacks, f"on_{hook}_batch_end")
        steps = 0
        in_flight = collections.deque()
        chunk = first if first is not None else next(chunks, None)
        while chunk is not None:
            begin(steps)
            started = time.perf_counter()
            outputs = self._runner.run(mode, chunk, resident)
            in_flight.append(self._runner.done_marker(mode, outputs))
            if len(in_flight) > _MAX_LOOPS_IN_FLIGHT:
                jax.block_until_ready(in_flight.popleft())
            steps += chunk.steps
            logs = loop_logs(chunk, outputs, steps, time.perf_counter() - started)
            end(steps - 1, logs)
            yield logs
            if getattr(self, stop, False):
                break
            chunk = next(chunks, None)

    def _loop_length(self, steps):
        """The length of a call's loop program: shorter loops are padded to it."""
        return min(self.steps_per_execution, steps) if steps else self.steps_per_execution

    def _first_chunk(self, chunks, mode, resident=None):
        """Peeks the first chunk and builds `mode` from it (None if empty)."""
        first = next(chunks, None)
        if first is not None:
            self.build_from_batch(mode, feed_lib.sample_of(first, resident))
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
        source, batch_size = self._feed.source(x, y, TRAIN, batch_size)
        self._feed.check_training_source(source, steps_per_epoch)
        epoch_steps = steps_per_epoch or feed_lib.steps_of(source, batch_size, drop_remainder=True)
        callbacks = logs_lib.callback_list(
            callbacks, self, verbose, epoch_steps, add_history=True, epochs=epochs
        )
        # Seeded by `keras.utils.set_random_seed` through numpy's global seed.
        rng = np.random.default_rng(np.random.randint(2**31))
        resident = self._feed.resident(source)

        def epoch_chunks():
            start = self.global_step
            return self._feed.training_chunks(
                source, batch_size,
                lambda position: self._schedule.length(self.steps_per_execution, start + position),
                shuffle=shuffle, max_steps=steps_per_epoch, rng=rng, resident=resident,
                pad_to=self._loop_length(epoch_steps),
            )

        # Build before any callback runs: callbacks see `model.optimizer`.
        chunks = epoch_chunks()
        try:
            first = self._first_chunk(chunks, TRAIN, resident)
        except BaseException:
            chunks.close()
            raise
        self.stop_training = False
        callbacks.on_train_begin()
        # `BackupAndRestore` sets the epoch to resume at, as Keras's fit reads it.
        initial_epoch = _keras_internals.take_initial_epoch(self) or initial_epoch
        logs = {}
        for epoch in range(initial_epoch, epochs):
            if epoch > initial_epoch:
                chunks, first = epoch_chunks(), None
            callbacks.on_epoch_begin(epoch)
            logs = {}
            with chunks:
                for logs in self._loops(
                    TRAIN, chunks, callbacks, self._train_logs(), resident, first
                ):
                    pass
            if not logs:
                raise ValueError(
                    "The training input produced no full batch of "
                    f"{batch_size} examples."
                )
            epoch_logs = logs_lib.without_loop_keys(logs)
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

    def _train_logs(self):
        """`loop_logs` for one epoch of `_loops`: the epoch's mean loss so
        far, the loop's first step and losses. Runs the loop's host calls
        and, with a time-based `iterations_per_loop`, sizes the loops."""
        loss_sum = 0.0

        def loop_logs(chunk, outputs, steps, seconds):
            nonlocal loss_sum
            losses = np.asarray(outputs["loss"])
            first_step = self.global_step - chunk.steps
            tuned = self._schedule.record(chunk.steps, seconds)
            if tuned:
                self.steps_per_execution = tuned
            run_host_calls(
                self._parts.training.host_call_fn, outputs["host_call"], first_step, chunk.steps,
                self.config.tpu_config.experimental_host_call_every_n_steps,
            )
            if learning_rate.OUTPUT_KEY in outputs:
                learning_rate.computed_rate(self.optimizer).observe(outputs[learning_rate.OUTPUT_KEY])
            loss_sum += float(losses.sum())
            return {"loss": loss_sum / steps, LOOP_FIRST_STEP: first_step, LOOP_LOSSES: losses}

        return loop_logs

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
        source, batch_size = self._feed.source(x, y, EVAL, batch_size)
        steps = steps or feed_lib.steps_of(source, batch_size)
        callbacks = logs_lib.callback_list(callbacks, self, verbose, steps, epochs=1)
        self.stop_evaluating = False
        callbacks.on_test_begin()
        chunks = self._feed.chunks(
            source, EVAL, batch_size, self.steps_per_execution, inputs_lib.EXACT, max_steps=steps,
            pad_to=self._loop_length(steps),
        )
        with chunks:
            first = self._first_chunk(chunks, EVAL)  # Builds the metrics, once.
            for metric in self._parts.metrics.values():
                metric.reset_state()
            for _ in self._loops(EVAL, chunks, callbacks, lambda *_: {}, first=first):
                pass
        results = {name: _to_python(m.result()) for name, m in self._parts.metrics.items()}
        callbacks.on_test_end(results)
        if return_dict:
            return results
        values = list(results.values())
        return values[0] if len(values) == 1 else values

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
        source, batch_size = self._feed.source(x, None, PREDICT, batch_size)
        steps = steps or feed_lib.steps_of(source, batch_size)
        callbacks = logs_lib.callback_list(callbacks, self, verbose, steps, epochs=1)
        self.stop_predicting = False
        callbacks.on_predict_begin()
        chunks = self._feed.chunks(
            source, PREDICT, batch_size, self.steps_per_execution, inputs_lib.PAD, max_steps=steps,
            pad_to=self._loop_length(steps),
        )

        def loop_logs(chunk, outputs, steps, seconds):
            # One row per example: the steps' batches, padding dropped.
            return {"outputs": jax.tree.map(
                lambda a: distribute.host_local(a).reshape((-1,) + a.shape[2:])[: chunk.size],
                outputs,
            )}

        with chunks:
            first = self._first_chunk(chunks, PREDICT)
            for logs in self._loops(PREDICT, chunks, callbacks, loop_logs, first=first):
                yield logs["outputs"]
        callbacks.on_predict_end()

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

_CALLBACK_NAMES = {
    TRAIN: ("train", "stop_training"),
    EVAL: ("test", "stop_evaluating"),
    PREDICT: ("predict", "stop_predicting"),
}


def _to_python(value):
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value
