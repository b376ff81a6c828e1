"""fit, evaluate and predict of `EstimatorModel`: the one chunk loop that drives them.

Each call turns its input into chunks (`engine.feed`), builds the mode from
the first, and runs one compiled loop per chunk (`engine.loop.LoopRunner`),
with the mode's batch callbacks around each loop; what a loop tells the
callbacks is the logs contract of `engine.logs`.
"""

import collections
import time

import jax
import numpy as np

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator import distribute
from keras_tpu_estimator import summary as summary_lib
from keras_tpu_estimator.engine import feed as feed_lib
from keras_tpu_estimator.engine import learning_rate
from keras_tpu_estimator.engine import logs as logs_lib
from keras_tpu_estimator.engine.host_call import run_host_calls
from keras_tpu_estimator.engine.logs import LOOP_FIRST_STEP
from keras_tpu_estimator.engine.logs import LOOP_LOSSES
from keras_tpu_estimator.engine.logs import LOOP_RUNS
from keras_tpu_estimator.engine.loop import METRIC_RESULTS
from keras_tpu_estimator.engine.steps import HOOK_FETCHES
from keras_tpu_estimator.engine.steps import PREDICTIONS
from keras_tpu_estimator.hooks import fetches as hook_fetches
from keras_tpu_estimator.inputs import reader
from keras_tpu_estimator.inputs import sources
from keras_tpu_estimator.spec import ModeKeys

TRAIN, EVAL, PREDICT = ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT

_MAX_LOOPS_IN_FLIGHT = 2  # Loops dispatched ahead of the devices (see `_loops`).


class LoopTrainer:
    """`fit`, `evaluate` and `predict` of `EstimatorModel` (a mixin, as Keras's
    `Trainer` is of `Model`), over the model's feed, runner and schedule."""

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
        if mode == TRAIN:
            callbacks.rewind = self._runner.rewind  # A hook's stop mid-loop (`LOOP_STOP_RUN`).
        while chunk is not None:
            self._runner.compile(mode, chunk, resident)  # Before the callbacks' clocks start.
            begin(steps)
            started = time.perf_counter()
            keep_start = mode == TRAIN and self._runs(chunk) > 1 and callbacks.may_stop_mid_loop()
            outputs = self._runner.run(mode, chunk, resident, keep_start=keep_start)
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

    def _runs(self, chunk):
        """The `session.run`s a loop stands for (`LOOP_RUNS`): each of its
        steps with `use_tpu=False` (TensorFlow ran hooks and summaries
        around every step), the whole loop on a TPU."""
        return 1 if self._program.use_tpu else chunk.steps

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
        source, batch_size = self._reader.source(x, y, TRAIN, batch_size)
        self._reader.check_training_source(source, steps_per_epoch)
        epoch_steps = steps_per_epoch or reader.steps_of(source, batch_size, drop_remainder=True)
        callbacks = logs_lib.callback_list(
            callbacks, self, verbose, epoch_steps, add_history=True, epochs=epochs
        )
        # Seeded by `keras.utils.set_random_seed` through numpy's global seed.
        rng = np.random.default_rng(np.random.randint(2**31))
        examples_read = (epochs - initial_epoch) * epoch_steps * batch_size if (
            epoch_steps and batch_size) else None
        resident = self._feed.resident(source, examples_read)

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
            return {"loss": loss_sum / steps, LOOP_FIRST_STEP: first_step, LOOP_LOSSES: losses,
                    LOOP_RUNS: self._runs(chunk), **_hook_logs(chunk, outputs)}

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
        source, batch_size = self._reader.source(x, y, EVAL, batch_size)
        steps = steps or reader.steps_of(source, batch_size)
        callbacks = logs_lib.callback_list(callbacks, self, verbose, steps, epochs=1)
        self.stop_evaluating = False
        callbacks.on_test_begin()
        chunks = self._feed.chunks(
            source, EVAL, batch_size, self.steps_per_execution, sources.EXACT, max_steps=steps,
            pad_to=self._loop_length(steps),
        )
        last = {}

        def loop_logs(chunk, outputs, *_):
            last["results"] = outputs.get(METRIC_RESULTS)
            return {LOOP_RUNS: self._runs(chunk), **_hook_logs(chunk, outputs)}

        with chunks:
            first = self._first_chunk(chunks, EVAL)  # Builds the metrics, once.
            for metric in self._parts.metrics.values():
                metric.reset_state()
            for _ in self._loops(EVAL, chunks, callbacks, loop_logs, first=first):
                pass
        # The last loop computed the results: reading them compiles nothing.
        computed = last.get("results") or {
            name: m.result() for name, m in self._parts.metrics.items()
        }
        results = {name: _to_python(computed[name]) for name in self._parts.metrics}
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
        source, batch_size = self._reader.source(x, None, PREDICT, batch_size)
        steps = steps or reader.steps_of(source, batch_size)
        callbacks = logs_lib.callback_list(callbacks, self, verbose, steps, epochs=1)
        self.stop_predicting = False
        callbacks.on_predict_begin()
        chunks = self._feed.chunks(
            source, PREDICT, batch_size, self.steps_per_execution, sources.PAD, max_steps=steps,
            pad_to=self._loop_length(steps),
        )

        def loop_logs(chunk, outputs, steps, seconds):
            # One row per example: the steps' batches, padding dropped.
            return {"outputs": jax.tree.map(
                lambda a: distribute.host_local(a).reshape((-1,) + a.shape[2:])[: chunk.size],
                outputs[PREDICTIONS],
            ), LOOP_RUNS: self._runs(chunk), **_hook_logs(chunk, outputs)}

        with chunks:
            first = self._first_chunk(chunks, PREDICT)
            for logs in self._loops(PREDICT, chunks, callbacks, loop_logs, first=first):
                yield logs["outputs"]
        callbacks.on_predict_end()


_CALLBACK_NAMES = {
    TRAIN: ("train", "stop_training"),
    EVAL: ("test", "stop_evaluating"),
    PREDICT: ("predict", "stop_predicting"),
}


def _hook_logs(chunk, outputs):
    """The logs entry of the values the spec's hooks fetch, at the loop's last step."""
    return hook_fetches.loop_logs(outputs[HOOK_FETCHES], chunk.steps, chunk.stacked)


def _to_python(value):
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value
