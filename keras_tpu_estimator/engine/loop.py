"""On-device loops: compiled programs of many steps, and how long each loop is.

A loop program runs a step `(state, batch) -> (state, outputs)` over a
chunk of batches as one compiled loop (`masked_scan`), and returns the
final state and the per-step outputs stacked. Kinds:

- `STACKED`: a scan over batches stacked on a leading axis;
- `INDEXED`: a scan over example indices into data resident on the devices;
  each step gathers its rows (`gather(data, rows)`);
- `SINGLE`: one step on one batch;
- `GATHERED`: one step on the rows of resident data.

A scan program takes the number of steps to run, `count`, as an argument:
it skips the steps of the chunk from `count` on. A short loop (the last of
a run, or one cut at a checkpoint step) runs its chunk padded to the loop's
length through the program already compiled, instead of compiling another.

`LoopPrograms` compiles each program once per key and keeps it;
`LoopRunner` runs a chunk of a model's steps over its variables;
`LoopSchedule` decides the steps of each loop (`iterations_per_loop`).
"""

import jax
import jax.extend.core
import jax.numpy as jnp
import keras
import numpy as np

from keras_tpu_estimator import distribute
from keras_tpu_estimator._backend import compiler_options
from keras_tpu_estimator._backend import host_memory
from keras_tpu_estimator._backend import warm_up
from keras_tpu_estimator.config import parse_iterations_per_loop
from keras_tpu_estimator.engine import placement
from keras_tpu_estimator.engine import state as state_lib
from keras_tpu_estimator.spec import ModeKeys
from keras_tpu_estimator.summary import traced as traced_summaries

STACKED, INDEXED, SINGLE, GATHERED = "stacked", "indexed", "single", "gathered"
# An EVAL loop's outputs: the metrics' results after it (`{name: value}`).
METRIC_RESULTS = "metric_results"
_KINDS = (STACKED, INDEXED, SINGLE, GATHERED)

# How a chunk's steps run: one compiled scan over them, or a host loop
# calling a compiled single step once per step; AUTO picks per mode.
SCAN, HOST, AUTO = "scan", "host", "auto"
DEVICE_LOOPS = (AUTO, SCAN, HOST)


def loop_program(step, kind, gather=None):
    """The (uncompiled) loop program of `step`.

    Args:
        step: `(state, batch) -> (state, outputs)`.
        kind: `STACKED`, `INDEXED` or `SINGLE`.
        gather: for `INDEXED`, `gather(data, rows) -> batch`.

    Returns:
        `program(state, chunk, count)` (`program(state, data, indices,
        count)` for `INDEXED`; `program(state, batch)` for `SINGLE`)
        returning `(state, outputs)`; a scan skips its steps from `count` on.
    """
    if kind == STACKED:
        return lambda state, chunk, count: masked_scan(step, state, chunk, count)
    if kind == INDEXED:
        def program(state, data, indices, count):
            return masked_scan(lambda s, rows: step(s, gather(data, rows)), state, indices, count)

        return program
    if kind == SINGLE:
        return step
    if kind == GATHERED:
        return lambda state, data, rows: step(state, gather(data, rows))
    raise ValueError(f"`kind` must be one of {list(_KINDS)}. Received: {kind!r}")


def _abstract(array):
    return jax.ShapeDtypeStruct(array.shape, array.dtype)


def _abstract_step(array):
    """One step's slice of an array stacked on a leading axis, abstractly."""
    return jax.ShapeDtypeStruct(array.shape[1:], array.dtype)


def masked_scan(step, state, xs, count):
    """`jax.lax.scan(step, state, xs)`, skipping the steps from `count` on.

    A skipped step leaves the state as it is and outputs zeros. `step` is
    traced once: the step of the loop's body is its jaxpr.

    The loop runs `min(count, len(xs))` times (a `while` loop with a dynamic
    trip count), so a step pays no branch: a `lax.cond` per step, skipping
    steps inside a fixed-length scan, cost 1.05-1.12x per step on the CPU
    (`benchmarks/bench_masked_loop.py`).

    Args:
        step: `(state, x) -> (state, outputs)`.
        state: the initial state.
        xs: the steps' inputs, stacked on a leading axis.
        count: how many of the steps run (a traced scalar).

    Returns:
        `(state, outputs)`, the outputs stacked.
    """
    length = jax.tree.leaves(xs)[0].shape[0]
    x = jax.tree.map(_abstract_step, xs)
    jaxpr, shapes = jax.make_jaxpr(step, return_shape=True)(jax.tree.map(_abstract, state), x)
    traced = jax.extend.core.jaxpr_as_fun(jaxpr)
    structure = jax.tree.structure(shapes)

    def body(index, carry):
        state, outputs = carry
        x = jax.tree.map(lambda a: jax.lax.dynamic_index_in_dim(a, index, keepdims=False), xs)
        state, output = jax.tree.unflatten(structure, traced(*jax.tree.leaves((state, x))))
        outputs = jax.tree.map(
            lambda all_, one: jax.lax.dynamic_update_index_in_dim(all_, one, index, 0),
            outputs, output)
        return state, outputs

    outputs = jax.tree.map(lambda a: jnp.zeros((length,) + a.shape, a.dtype), shapes[1])
    trips = jnp.minimum(jnp.asarray(count, jnp.int32), length)
    return jax.lax.fori_loop(0, trips, body, (state, outputs))


def _outputs_after(program, after):
    """`program` whose outputs also hold `after(final state)`."""

    def run(state, *args):
        state, outputs = program(state, *args)
        return state, {**outputs, **after(state)}

    return run


# One program copies a whole state (`jnp.copy` per array compiled one per shape).
_copy = jax.jit(lambda tree: jax.tree.map(jnp.copy, tree))


class LoopPrograms:
    """Compiled loop programs, each compiled once per key.

    Args:
        options: XLA compiler options every program compiles with (see
            `_backend.compiler_options`), or None.

    Example:

    ```python
    programs = LoopPrograms()
    run = programs.get(("train", STACKED), train_step, STACKED, donate=True)
    state, outputs = run(state, stacked_batches)
    ```
    """

    def __init__(self, options=None):
        self._compiled = {}
        self._options = options

    def get(self, key, step, kind, gather=None, donate=False, after=None):
        """The compiled program of `step` under `key`, compiled on first use.

        Args:
            key: what identifies the program (the same key, the same program).
            step: the step function.
            kind: `STACKED`, `INDEXED` or `SINGLE`.
            gather: for `INDEXED` (see `loop_program`).
            donate: donate the input state's buffers to the output state.
            after: `after(state) -> dict`, more outputs computed in the
                program from its final state (a `SINGLE` program's final
                state is its one step's).
        """
        if key not in self._compiled:
            program = loop_program(step, kind, gather)
            if after is not None:
                program = _outputs_after(program, after)
            self._compiled[key] = jax.jit(program, donate_argnums=(0,) if donate else (),
                                          compiler_options=self._options)
        return self._compiled[key]

    def clear(self):
        """Drops every compiled program (after the steps changed)."""
        self._compiled.clear()


class LoopRunner:
    """Runs a model's steps, one compiled loop per chunk, over its variables.

    The state is read from the variables before the loop and written back
    after it (not after PREDICT, which changes none); a TRAIN loop donates
    its input state.

    How the steps of a chunk run (`device_loop`):

    - `SCAN`: one compiled `lax.scan` over the chunk's steps, the fastest on
      TPU and GPU: the host waits once per loop.
    - `HOST`: a Python loop calling one compiled step per step. XLA:CPU runs
      convolutions inside a loop body several times slower than in a plain
      program (jax-ml/jax#12868); on CPU a convolutional model is about 7x
      faster this way (`benchmarks/`), a dense one about 4% slower.
    - `AUTO` (the default): `HOST` on CPU devices for a step that holds a
      convolution, else `SCAN`; decided once per mode, from the step's jaxpr.

    Args:
        steps: the model's `Steps`.
        parts: the model's `ModelParts` (the variables of each mode).
        gather: `gather(data, rows)` for chunks of indices into resident data.
        distribution: the model's `keras.distribution`.
        device_loop: `"auto"`, `"scan"` or `"host"`.

    Raises:
        ValueError: for another `device_loop`.
    """

    def __init__(self, steps, parts, gather, distribution, device_loop=AUTO):
        if device_loop not in DEVICE_LOOPS:
            raise ValueError(
                f"`device_loop` must be one of {list(DEVICE_LOOPS)}. Received: "
                f"device_loop={device_loop!r}"
            )
        self._steps = steps
        self._parts = parts
        self._gather = gather
        self.distribution = distribution
        self.device_loop = device_loop
        self._chosen = {}
        self._programs = LoopPrograms(compiler_options.for_devices(self._mesh.devices.flat))
        self._compiled_for = set()  # The (mode, kind)s `compile` compiled.
        self._start = None  # (mode, chunk, resident, state) of a loop kept for `rewind`.

    @property
    def _mesh(self):
        return self.distribution.device_mesh.backend_mesh

    def loop_kind(self, mode, chunk, resident=None):
        """`SCAN` or `HOST`: how `mode`'s chunks run (see the class)."""
        if self.device_loop != AUTO:
            return self.device_loop
        if mode not in self._chosen:
            self._chosen[mode] = HOST if (distribute.on_cpu(self.distribution)
                                          and self._convolves(mode, chunk, resident)) else SCAN
        return self._chosen[mode]

    def _convolves(self, mode, chunk, resident):
        """Whether `mode`'s step holds an XLA convolution (traced, not compiled)."""
        if self._parts.xla_convolutions.get(mode) is False:
            # Its build traced none. (One that did may have been an export's,
            # traced with XLA's convolutions only: the step is traced.)
            return False
        step = self._steps.for_mode(mode)
        state = jax.tree.map(_abstract, state_lib.read(self._parts.variables(mode)))
        if resident is not None:
            args = (jax.tree.map(_abstract, resident), _abstract_step(chunk.data))
            step = loop_program(step, GATHERED, self._gather)
        elif chunk.stacked:
            args = (jax.tree.map(_abstract_step, chunk.data),)
        else:
            args = (jax.tree.map(_abstract, chunk.data),)
        with self.distribution.scope():
            jaxpr = jax.make_jaxpr(step)(state, *args)
        return "conv_general_dilated" in str(jaxpr)

    def run(self, mode, chunk, resident=None, keep_start=False):
        """Runs `chunk` (an `inputs.sources.Chunk`) in `mode`; returns the per-step outputs.

        With `resident` data, the chunk holds example indices into it. With
        `keep_start`, a copy of the state before the loop is kept for
        `rewind`.
        """
        host_memory.keep_freed_memory(self._mesh.devices.flat)  # Once per process.
        self._start = None
        if keep_start:
            with self.distribution.scope():
                state = state_lib.read(self._parts.variables(mode))
                self._start = (mode, chunk, resident, _copy(state))
        if chunk.stacked and self.loop_kind(mode, chunk, resident) == HOST:
            return self._run_on_host(mode, chunk, resident)
        kind, args = self._call(mode, chunk, resident)
        program = self._program(mode, kind)
        outputs = self._over_state(mode, lambda state: program(state, *args))
        results = outputs.pop(METRIC_RESULTS, None) if isinstance(outputs, dict) else None
        if kind != SINGLE and chunk.steps < len(jax.tree.leaves(chunk.data)[0]):
            # Padded: the skipped steps' outputs are dropped, on the host (a
            # slice on the devices would compile a program per length).
            outputs = jax.tree.map(lambda a: distribute.host_local(a)[: chunk.steps], outputs)
        if results is not None:
            outputs[METRIC_RESULTS] = results
        return outputs

    def _call(self, mode, chunk, resident):
        """`(kind, args)`: the program that runs `chunk`, and its arguments after the state."""
        if chunk.stacked and self.loop_kind(mode, chunk, resident) == HOST:
            kind = SINGLE if resident is None else GATHERED
            step = jax.tree.map(lambda a: np.asarray(a)[0], chunk.data)
            return kind, (step,) if resident is None else (resident, step)
        if resident is not None:
            return INDEXED, (resident, chunk.data, np.int32(chunk.steps))
        if chunk.stacked:
            return STACKED, (chunk.data, np.int32(chunk.steps))
        return SINGLE, (chunk.data,)

    def compile(self, mode, chunk, resident=None):
        """Compiles the program `run` runs `chunk` with, unless compiled already.

        The trainer calls it before a loop's callbacks start their clocks, so
        that a loop's time is its steps' (as TensorFlow's step rate excluded
        its first run, which built the graph). The compiled program is the
        one `run` calls (JAX's caches hold it).
        """
        kind, args = self._call(mode, chunk, resident)
        if (mode, kind) in self._compiled_for:
            return
        program = self._program(mode, kind)
        with self.distribution.scope(), warm_up.xla_cpu_runtime(self._mesh.devices.flat):
            state = state_lib.read(self._parts.variables(mode))
            program.lower(placement.canonical_shardings(state, self._mesh), *args).compile()
        self._compiled_for.add((mode, kind))

    def rewind(self, steps):
        """Winds the variables back to the end of step `steps` of the last loop.

        The loop (run with `keep_start`) is run again from its starting
        state for its first `steps` steps, through the program it compiled;
        the summaries `model_fn` makes are not written again.
        """
        mode, chunk, resident, state = self._start
        self._start = None
        with self.distribution.scope():
            state_lib.write(self._parts.variables(mode), state)
        with traced_summaries.muted():
            jax.block_until_ready(self.run(mode, chunk._replace(steps=steps), resident))

    def done_marker(self, mode, outputs):
        """What is ready once the loop that returned `outputs` has run.

        Its outputs, or, for a loop without outputs (evaluation), the state
        it wrote to `mode`'s variables (not donated: only training donates,
        and training loops have outputs). For `jax.block_until_ready`.
        """
        if jax.tree.leaves(outputs):
            return outputs
        return state_lib.read(self._parts.variables(mode))

    def _run_on_host(self, mode, chunk, resident):
        """Runs the chunk's steps one compiled step at a time (see `HOST`)."""
        program = self._program(mode, SINGLE if resident is None else GATHERED)
        first = () if resident is None else (resident,)
        # The step's batch is sliced on the host: a compiled step taking the
        # whole chunk and an index aborted XLA:CPU on some host loops.
        data = jax.tree.map(np.asarray, chunk.data)

        def loop(state):
            outputs = []
            for i in range(chunk.steps):
                state, out = program(state, *first, jax.tree.map(lambda a: a[i], data))
                outputs.append(out)
            return state, outputs

        outputs = self._over_state(mode, loop)
        results = outputs[-1].pop(METRIC_RESULTS, None) if isinstance(outputs[-1], dict) else None
        for out in outputs[:-1]:
            if isinstance(out, dict):
                out.pop(METRIC_RESULTS, None)
        stacked = jax.tree.map(
            lambda *xs: np.stack([distribute.host_local(x) for x in xs]), *outputs
        )
        if results is not None:
            stacked[METRIC_RESULTS] = results
        return stacked

    def _program(self, mode, kind):
        return self._programs.get(
            (mode, kind), self._steps.for_mode(mode), kind, gather=self._gather,
            donate=mode == ModeKeys.TRAIN,
            after=self._metric_results() if mode == ModeKeys.EVAL else None,
        )

    def _metric_results(self):
        """`state -> {METRIC_RESULTS: results}`: the EVAL loop's metrics' results.

        Computed in the loop's program from its final state, so that reading
        them compiles nothing more. A scan computes them once, after its
        steps; a host loop's step, at every step (the last one's are kept).
        """
        metrics = dict(self._parts.metrics)

        def results(state):
            values, start = {}, 0
            for name, metric in metrics.items():
                count = len(metric.variables)
                # As `stateless_result`, but a result that is one of the
                # metric's variables is read inside the scope, as its value.
                mapping = zip(metric.variables, state.metrics[start:start + count])
                try:
                    with keras.StatelessScope(state_mapping=mapping):
                        values[name] = jax.tree.map(jnp.asarray, metric.result())
                except jax.errors.JAXTypeError:
                    # A result computed on the host (numpy over streamed
                    # values): `evaluate` reads every result after the loop.
                    return {METRIC_RESULTS: {}}
                start += count
            return {METRIC_RESULTS: values}

        return results

    def _over_state(self, mode, loop):
        """Runs `loop(state) -> (state, outputs)` over `mode`'s variables.

        The state is read from the variables, laid out as loops return it,
        and written back after the loop (not after PREDICT, which changes
        none). Returns the outputs.
        """
        with self.distribution.scope():
            variables = self._parts.variables(mode)
            state, outputs = loop(placement.canonical_shardings(state_lib.read(variables), self._mesh))
            if mode != ModeKeys.PREDICT:
                state_lib.write(variables, state)
        return outputs


class LoopSchedule:
    """How many steps each training loop runs, from `steps_per_execution`.

    Args:
        seconds: a time per loop (`iterations_per_loop="30s"`): the first
            loop compiles, the second is timed, and from then on a loop runs
            as many steps as fit in `seconds`. None keeps the given steps.

    Attributes:
        align_to: when set, no loop crosses a multiple of this many global
            steps, so that loops end exactly on the steps checkpoints are
            saved at.

    Example:

    ```python
    schedule = LoopSchedule()
    schedule.align_to = 1000
    schedule.length(steps=300, global_step=900)  # 100
    ```
    """

    def __init__(self, seconds=None):
        self.seconds = seconds
        self.align_to = None
        self._timed_once = False

    def set_iterations_per_loop(self, value, steps):
        """Applies an `iterations_per_loop`: a step count, or a time (`"30s"`).

        Args:
            value: the `iterations_per_loop` (or `steps_per_execution`).
            steps: the steps per loop until then.

        Returns:
            The steps per loop: `value`'s count, or `steps` for a time (the
            loops are then sized from the second loop's time).
        """
        parsed = parse_iterations_per_loop(value)
        if parsed.unit == "seconds":
            self.seconds = parsed.value
            return steps
        self.seconds = None
        return parsed.value

    def length(self, steps, global_step):
        """The steps of the loop starting at `global_step`, at most `steps`."""
        if self.align_to:
            steps = min(steps, self.align_to - global_step % self.align_to)
        return steps

    def record(self, steps, seconds):
        """Records that a loop of `steps` took `seconds`.

        Returns:
            The steps per loop from now on, once a time-based length is
            known (once); else None.
        """
        if self.seconds is None:
            return None
        if not self._timed_once:
            self._timed_once = True
            return None
        per_step = seconds / steps
        tuned = max(1, int(self.seconds / max(per_step, 1e-9)))
        self.seconds = None
        return tuned
