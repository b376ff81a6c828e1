"""The JAX side of `EstimatorModel`: from `model_fn` to compiled loops.

- `program`: calls and builds `model_fn`; reads each spec into plain values.
- `parts`: what building the modes made (store, global step, training, metrics).
- `state`: the named per-mode states and the one global-step holder.
- `steps`: the pure steps `(state, batch) -> (state, outputs)`.
- `loop`: loop programs, compiled once per key; the runner; the schedule.
- `feed`, `ahead` and `placement`: a source's batches stacked into chunks,
  placed on the devices ahead of the loop.
- `host_call`: the spec's `host_call`, run on the host after each loop.
- `logs`: what callbacks are told after each loop.

May import `model_fn` (what steps call), `inputs.sources` and `inputs.checks`
(the chunks it places), `metrics`, `hooks.fetches`, `summary`, `distribute`,
`spec`, `config`, and of `_backend` the CPU runtimes' `warm_up` and
`host_memory` and the programs' `compiler_options`; never `model` or `estimator`.
"""
