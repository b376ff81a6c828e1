"""The three ways `bench_models.py` trains a model, and how it times them.

A runner has `run(steps, on_loop_end)` (one fit of `steps` steps over one
epoch of its data; `on_loop_end(losses)` once each loop's losses are on the
host), `kind` (how its steps run: "host", "scan" or "keras") and `memory()`
(the `memory_analysis()` of its compiled training program).
"""

import contextlib
import time

import jax
import keras
import numpy as np

import keras_tpu_estimator as kte
from _models_jax import HandLoop

BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"


def shapes(tree):
    """`jax.ShapeDtypeStruct`s of arrays (with their sharding when placed)."""
    return jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(np.shape(a), jax.dtypes.canonicalize_dtype(a.dtype),
                                       sharding=getattr(a, "sharding", None)),
        tree)


def memory_bytes(stats):
    """The device bytes a compiled program needs, from its
    `CompiledMemoryStats`: arguments + outputs + temporaries - the outputs
    that alias (donated) arguments. (XLA:CPU's `peak_memory_in_bytes` counts
    the arguments only, so it is not used.)"""
    return (stats.argument_size_in_bytes + stats.output_size_in_bytes
            + stats.temp_size_in_bytes - stats.alias_size_in_bytes)


class CompileLog:
    """JAX's backend compile events, per runner and trial."""

    def __init__(self):
        self._events = {}
        self._into = None
        jax.monitoring.register_event_duration_secs_listener(self._listen)

    def _listen(self, event, seconds, **kwargs):
        if event == BACKEND_COMPILE and self._into is not None:
            self._into.append(seconds)

    @contextlib.contextmanager
    def into(self, name):
        """Records the compiles of the block as `name`'s next batch."""
        self._into = []
        self._events.setdefault(name, []).append(self._into)
        try:
            yield
        finally:
            self._into = None

    def seconds(self, name):
        return sum(sum(batch) for batch in self._events[name])

    def counts(self, name):
        """Compiles while building and in the first trial, then per trial."""
        batches = [len(batch) for batch in self._events[name]]
        return [batches[0] + batches[1]] + batches[2:]


def trial(runner, loop, steps):
    """One fit of one loop then `steps` steps: the first loop's seconds,
    the steps/s of the rest, the wall time and the first step's loss."""
    ends, losses = [], []

    def on_loop_end(loop_losses):
        ends.append(time.perf_counter())
        losses.append(np.ravel(loop_losses))

    start = time.perf_counter()
    runner.run(loop + steps, on_loop_end)
    wall = time.perf_counter() - start
    assert len(ends) == 1 + steps // loop, (len(ends), steps, loop)
    return {"first_loop_s": ends[0] - start, "steps_per_s": steps / (ends[-1] - ends[0]),
            "wall_s": wall, "first_loss": float(losses[0][0])}


def summary(trials):
    """Best steady speed; the first trial's first loop and loss; all walls."""
    return {"steps_per_s": max(t["steps_per_s"] for t in trials),
            "first_loop_s": trials[0]["first_loop_s"], "first_loss": trials[0]["first_loss"],
            "wall_s": sum(t["wall_s"] for t in trials)}


class LoopEnds(keras.callbacks.Callback):
    """Calls `on_loop_end(losses)` at each `on_train_batch_end` (once per
    loop): the library's per-step losses, or Keras's running mean."""

    def __init__(self, on_loop_end):
        super().__init__()
        self._on_loop_end = on_loop_end

    def on_train_batch_end(self, batch, logs=None):
        self._on_loop_end(np.asarray(logs.get("loop_losses", logs["loss"])))


def _record_library_programs():
    """Wraps the library's `LoopPrograms.get` so that each compiled loop
    program records the shapes of its first call, for `memory()`: the
    library gives no public handle on its compiled programs (private API)."""
    from keras_tpu_estimator.engine import loop

    calls = {}
    get = loop.LoopPrograms.get
    if getattr(get, "recording", None) is not None:
        return get.recording

    def recording_get(self, key, *args, **kwargs):
        program = get(self, key, *args, **kwargs)

        def call(*arrays):
            calls.setdefault(key, (program, shapes(arrays)))
            return program(*arrays)

        return call

    recording_get.recording = calls
    loop.LoopPrograms.get = recording_get
    return calls


class LibraryRunner:
    """(a) `kte.EstimatorModel(model_fn, ...).fit` on arrays."""

    def __init__(self, model_fn, params, data, batch, loop):
        self._programs = _record_library_programs()
        config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=loop))
        self.model = kte.EstimatorModel(model_fn, config=config, train_batch_size=batch,
                                        params=params)
        self.model.compile()
        self.x, self.y = data if isinstance(data, tuple) else (data, None)

    def run(self, steps, on_loop_end):
        self.model.fit(self.x, self.y, steps_per_epoch=steps, epochs=1, verbose=0,
                       callbacks=[LoopEnds(on_loop_end)])

    def _train_program(self):
        [key] = [key for key in self._programs if key[0] == kte.ModeKeys.TRAIN]
        return key, self._programs[key]

    @property
    def kind(self):
        kind = self._train_program()[0][1]  # the library's loop kinds
        return {"gathered": "host", "single": "host"}.get(kind, "scan")

    def memory(self):
        _, (program, specs) = self._train_program()
        return program.lower(*specs).compile().memory_analysis()


class HandRunner:
    """(b) the hand-written JAX loop (`_models_jax.HandLoop`)."""

    def __init__(self, model, data, batch, loop):
        self.loop = HandLoop(model, data, batch, loop)
        self.kind = self.loop.kind

    def run(self, steps, on_loop_end):
        self.loop.run(steps, on_loop_end)

    def memory(self):
        return self.loop.memory()


class KerasRunner:
    """(c) `keras.Model.fit` with `steps_per_execution` = the loop."""

    kind = "keras"

    def __init__(self, model_and_optimizer, data, batch, loop):
        self.model, optimizer = model_and_optimizer
        self.model.compile(optimizer=optimizer, steps_per_execution=loop,
                           loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        (self.x, self.y), self.batch = data, batch

    def run(self, steps, on_loop_end):
        self.model.fit(self.x, self.y, batch_size=self.batch, epochs=1, steps_per_epoch=steps,
                       verbose=0, callbacks=[LoopEnds(on_loop_end)])

    def memory(self):
        """Keras's jitted step is a local of its trainer: the same function
        (`train_step`, state donated) is compiled again to be analysed."""
        model = self.model
        state = tuple([v.value for v in variables] for variables in (
            model.trainable_variables, model.non_trainable_variables,
            model.optimizer.variables, model.metrics_variables))
        batch = (self.x[: self.batch], self.y[: self.batch])
        step = jax.jit(model.train_step, donate_argnums=0)
        return step.lower(shapes(state), shapes(batch)).compile().memory_analysis()
