"""JAX's persistent compilation cache, on by default: a program compiles once per machine.

TensorFlow ran a TPUEstimator program's graph without compiling it; under
JAX every step program is compiled by XLA, which for a BERT step on a
2-core CPU takes longer than training it. With JAX's persistent cache the
second run of a program (another seed, a restarted job, an evaluation job
beside the trainer) loads the compiled programs instead: on the tiny BERT
of the corpus this takes the wall time of a run from about 2x TensorFlow's
to about TensorFlow's (`docs/benchmarks.md`).

The cache is JAX's own (`jax_compilation_cache_dir`), keyed on the program,
the devices and the flags, with least-recently-used eviction under a file
lock (the `filelock` package), so concurrent processes share it safely and
an entry cut short by a killed process is recompiled, not loaded.

Settings, read when `keras_tpu_estimator` is imported:

- `KTE_COMPILATION_CACHE=0` turns it off;
- `KTE_COMPILATION_CACHE_DIR` moves it (default:
  `$XDG_CACHE_HOME/keras_tpu_estimator/jax`, else
  `~/.cache/keras_tpu_estimator/jax`);
- a `jax_compilation_cache_dir` the user configured wins: it is left alone.

Example:

```python
import keras_tpu_estimator as kte

kte.compilation_cache.directory()  # where programs are cached, or None
```
"""

import os
import pathlib

import jax

MAX_BYTES = 2 * 1024**3
_OFF = ("0", "false", "off", "no")


def default_directory():
    """The cache directory used when neither JAX nor the environment names one."""
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "keras_tpu_estimator" / "jax"


def enable_default():
    """Turns the cache on as the module docstring says; returns its directory or None."""
    if os.environ.get("KTE_COMPILATION_CACHE", "1").strip().lower() in _OFF:
        return None
    if jax.config.jax_compilation_cache_dir:
        return jax.config.jax_compilation_cache_dir  # The user's own.
    path = pathlib.Path(os.environ.get("KTE_COMPILATION_CACHE_DIR") or default_directory())
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # A read-only home: run without the cache.
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)
    # Small programs too: a model's build compiles ~100 of them (initializers,
    # eager updates), together seconds.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    return str(path)


def directory():
    """The directory of the persistent compilation cache in use, or None."""
    return jax.config.jax_compilation_cache_dir
