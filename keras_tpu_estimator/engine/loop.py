"""On-device loops: compiled programs of many steps, and how long each loop is.

A loop program runs a step `(state, batch) -> (state, outputs)` over a
chunk of batches as one `jax.lax.scan`, and returns the final state and the
per-step outputs stacked. Three kinds:

- `STACKED`: a scan over batches stacked on a leading axis;
- `INDEXED`: a scan over example indices into data resident on the devices;
  each step gathers its rows (`gather(data, rows)`);
- `SINGLE`: one step on one batch.

`LoopPrograms` compiles each program once per key and keeps it;
`LoopRunner` runs a chunk of a model's steps over its variables;
`LoopSchedule` decides the steps of each loop (`iterations_per_loop`).
"""

import jax

from keras_tpu_estimator.config import parse_iterations_per_loop
from keras_tpu_estimator.engine import state as state_lib
from keras_tpu_estimator.spec import ModeKeys

STACKED, INDEXED, SINGLE = "stacked", "indexed", "single"


def loop_program(step, kind, gather=None):
    """The (uncompiled) loop program of `step`.

    Args:
        step: `(state, batch) -> (state, outputs)`.
        kind: `STACKED`, `INDEXED` or `SINGLE`.
        gather: for `INDEXED`, `gather(data, rows) -> batch`.

    Returns:
        `program(state, chunk)` (`program(state, data, indices)` for
        `INDEXED`) returning `(state, outputs)`.
    """
    if kind == STACKED:
        return lambda state, chunk: jax.lax.scan(step, state, chunk)
    if kind == INDEXED:
        def program(state, data, indices):
            return jax.lax.scan(lambda s, rows: step(s, gather(data, rows)), state, indices)

        return program
    if kind == SINGLE:
        return step
    raise ValueError(f"`kind` must be one of {STACKED!r}, {INDEXED!r}, {SINGLE!r}. Received: {kind!r}")


class LoopPrograms:
    """Compiled loop programs, each compiled once per key.

    Example:

    ```python
    programs = LoopPrograms()
    run = programs.get(("train", STACKED), train_step, STACKED, donate=True)
    state, outputs = run(state, stacked_batches)
    ```
    """

    def __init__(self):
        self._compiled = {}

    def get(self, key, step, kind, gather=None, donate=False):
        """The compiled program of `step` under `key`, compiled on first use.

        Args:
            key: what identifies the program (the same key, the same program).
            step: the step function.
            kind: `STACKED`, `INDEXED` or `SINGLE`.
            gather: for `INDEXED` (see `loop_program`).
            donate: donate the input state's buffers to the output state.
        """
        if key not in self._compiled:
            program = loop_program(step, kind, gather)
            self._compiled[key] = jax.jit(program, donate_argnums=(0,) if donate else ())
        return self._compiled[key]

    def clear(self):
        """Drops every compiled program (after the steps changed)."""
        self._compiled.clear()


class LoopRunner:
    """Runs a model's steps, one compiled loop per chunk, over its variables.

    The state is read from the variables before the loop and written back
    after it (not after PREDICT, which changes none); a TRAIN loop donates
    its input state.

    Args:
        steps: the model's `Steps`.
        parts: the model's `ModelParts` (the variables of each mode).
        gather: `gather(data, rows)` for chunks of indices into resident data.
        distribution: the model's `keras.distribution`.
    """

    def __init__(self, steps, parts, gather, distribution):
        self._steps = steps
        self._parts = parts
        self._gather = gather
        self.distribution = distribution
        self._programs = LoopPrograms()

    def run(self, mode, chunk, resident=None):
        """Runs `chunk` (an `inputs.Chunk`) in `mode`; returns the per-step outputs.

        With `resident` data, the chunk holds example indices into it.
        """
        if resident is not None:
            kind = INDEXED
        else:
            kind = STACKED if chunk.stacked else SINGLE
        program = self._programs.get(
            (mode, kind), self._steps.for_mode(mode), kind,
            gather=self._gather, donate=mode == ModeKeys.TRAIN,
        )
        with self.distribution.scope():
            variables = self._parts.variables(mode)
            state = state_lib.read(variables)
            if resident is not None:
                state, outputs = program(state, resident, chunk.data)
            else:
                state, outputs = program(state, chunk.data)
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
