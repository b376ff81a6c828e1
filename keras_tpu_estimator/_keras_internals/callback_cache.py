"""Persistent compilation cache entries for programs calling the library's host callbacks.

JAX writes no persistent cache entry for a program with host callbacks
(`jax._src.compiler._cache_write`), from the time a callback was a pointer
compiled into the program. On the CPU a `buffer_callback` is now an FFI
call naming its index in the list of callbacks the executable is loaded
with, so the executable serializes whole and can be loaded again with the
callbacks of the same lowering in the new process: what a callback computes
comes from the live lowering, never from the cache.

The library's TensorFlow kernels (`_backend/tf_kernels.py`) are such
callbacks. Without this, every program calling them (a convolutional
model's training and evaluation loops) was compiled again on every run,
0.2-1 s each on a 2-core CPU. `install()` wraps JAX's
`compiler.compile_or_get_cached`: a program whose host callbacks are all
`buffer_callback`s of functions marked by `mark`, on a single-process CPU
backend with the persistent cache on, is read from and written to the cache
(under its own key: JAX's reader would load it without its callbacks).
Every other program goes through JAX unchanged.

Example:

```python
@callback_cache.mark
def on_host(ctx, out, x): ...

jax.jit(lambda x: buffer_callback.buffer_callback(on_host, spec)(x))
```
"""

import functools
import logging
import time

import jax
from jax._src import compilation_cache
from jax._src import compiler
from jax._src import monitoring

CACHEABLE = "persistent_cache_safe"
KEY_SUFFIX = "-with-buffer-callbacks"
CACHE_HITS = "/jax/compilation_cache/cache_hits"

_log = logging.getLogger(__name__)


def mark(function):
    """Marks `function`, a `buffer_callback`'s, as safe to load from the cache; returns it.

    Safe: it reads only its arguments and writes only its results (what it
    computes is the live function's, whatever the cache holds).
    """
    setattr(function, CACHEABLE, True)
    return function


def buffer_callback_function(host_callback):
    """The function `jax.experimental.buffer_callback` wrapped into `host_callback`, or None.

    JAX's lowering adds a closure over the user's function (`callback`) to
    the module's host callbacks; any other callback gives None.
    """
    code = getattr(host_callback, "__code__", None)
    closure = getattr(host_callback, "__closure__", None)
    if code is None or closure is None or "callback" not in code.co_freevars:
        return None
    return closure[code.co_freevars.index("callback")].cell_contents


def cacheable(backend, host_callbacks):
    """Whether a program with `host_callbacks` is cached here (see the module)."""
    return (
        bool(host_callbacks)
        and backend.platform == "cpu"
        and jax.process_count() == 1
        and all(getattr(buffer_callback_function(c), CACHEABLE, False) for c in host_callbacks)
        and compilation_cache.is_cache_used(backend)
    )


def install():
    """Wraps JAX's `compile_or_get_cached` (once)."""
    original = compiler.compile_or_get_cached
    if getattr(original, "wraps_for_callbacks", False):
        return

    @functools.wraps(original)
    def compile_or_get_cached(backend, computation, devices, compile_options, host_callbacks,
                              executable_devices, *args, **kwargs):
        if not cacheable(backend, host_callbacks):
            return original(backend, computation, devices, compile_options, host_callbacks,
                            executable_devices, *args, **kwargs)
        return _compile_or_load(backend, computation, devices, compile_options,
                                list(host_callbacks), executable_devices)

    compile_or_get_cached.wraps_for_callbacks = True
    compiler.compile_or_get_cached = compile_or_get_cached


def _compile_or_load(backend, computation, devices, compile_options, host_callbacks,
                     executable_devices):
    from jax._src import cache_key

    key = cache_key.get(computation, devices, compile_options, backend) + KEY_SUFFIX
    cache = compilation_cache._get_cache(backend)
    entry = cache.get(key) if cache is not None else None
    if entry is not None:
        try:
            serialized, _ = compilation_cache.extract_executable_and_time(
                compilation_cache.decompress_executable(entry))
            executable = backend.deserialize_executable(
                serialized, executable_devices, compile_options, host_callbacks=host_callbacks)
        except Exception as error:  # A damaged entry is compiled again, and rewritten.
            _log.warning("Persistent cache entry %s not loaded (%s): compiling.", key, error)
        else:
            monitoring.record_event(CACHE_HITS)
            return executable
    start = time.monotonic()
    executable = compiler.backend_compile_and_load(
        backend, computation, executable_devices, compile_options, host_callbacks)
    seconds = time.monotonic() - start
    if seconds >= jax.config.jax_persistent_cache_min_compile_time_secs:
        name = str(computation.operation.attributes["sym_name"]).strip('"')
        try:
            compilation_cache.put_executable_and_time(key, name, executable, backend,
                                                      int(seconds))
        except Exception as error:  # As JAX's own writes: the program still runs.
            _log.warning("Persistent cache entry %s not written (%s).", key, error)
    return executable
