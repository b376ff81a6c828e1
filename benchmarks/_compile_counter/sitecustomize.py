"""Counts a benchmarked program's XLA compilations (bench_corpus.py).

Put on the program's `PYTHONPATH` with `$KTE_BENCH_COMPILE_COUNTS` naming a
file: when the program exits, `PROGRAMS HITS XLA_S TRACE_S` is written
there: the XLA programs its process compiled or loaded (JAX's backend
compile events); of those, the ones the persistent compilation cache
served; the seconds XLA spent compiling or loading them; and the seconds
JAX spent tracing and lowering them (jaxpr and MLIR). Imports nothing heavy until JAX is imported
by the program itself.
"""

import atexit
import os
import sys

_PATH = os.environ.get("KTE_BENCH_COMPILE_COUNTS")


class _WhenJaxImports:
    """Registers the listener once `jax.monitoring` exists."""

    programs = 0
    hits = 0
    xla_seconds = 0.0
    trace_seconds = 0.0

    def find_spec(self, name, path=None, target=None):
        if name == "jax.monitoring":
            sys.meta_path.remove(self)
            import importlib

            monitoring = importlib.import_module("jax.monitoring")
            monitoring.register_event_duration_secs_listener(self._program)
            monitoring.register_event_listener(self._hit)
        return None

    def _program(self, event, seconds, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            type(self).programs += 1
            type(self).xla_seconds += seconds
        elif event in ("/jax/core/compile/jaxpr_trace_duration",
                       "/jax/core/compile/jaxpr_to_mlir_module_duration"):
            type(self).trace_seconds += seconds

    def _hit(self, event, **kwargs):
        if event == "/jax/compilation_cache/cache_hits":
            type(self).hits += 1


def _write():
    with open(_PATH, "w") as f:
        counter = _WhenJaxImports
        f.write(f"{counter.programs} {counter.hits} {counter.xla_seconds:.3f} "
                f"{counter.trace_seconds:.3f}")


if _PATH:
    sys.meta_path.insert(0, _WhenJaxImports())
    atexit.register(_write)
