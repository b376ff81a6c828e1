"""Programs calling the library's host callbacks (TensorFlow's kernels) are persistently cached."""

import jax
import jax.numpy as jnp
import keras
import numpy as np
import pytest
from jax._src import compilation_cache
from jax.experimental import buffer_callback

import keras_tpu_estimator  # noqa: F401  (installs the cache of callback programs)
from keras_tpu_estimator._keras_internals import callback_cache

CACHE_HITS = "/jax/compilation_cache/cache_hits"


@pytest.fixture
def persistent_cache(tmp_path):
    """JAX's persistent cache in `tmp_path` (the suite runs without one); yields a hit counter."""
    hits = []

    def listener(event, **kwargs):
        if event == CACHE_HITS:
            hits.append(event)

    previous = (jax.config.jax_compilation_cache_dir,
                jax.config.jax_persistent_cache_min_compile_time_secs)
    jax.config.update("jax_compilation_cache_dir", str(tmp_path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)  # As the library sets it.
    compilation_cache.reset_cache()
    jax.monitoring.register_event_listener(listener)
    try:
        yield hits
    finally:
        jax.monitoring.unregister_event_listener(listener)
        jax.config.update("jax_compilation_cache_dir", previous[0])
        jax.config.update("jax_persistent_cache_min_compile_time_secs", previous[1])
        compilation_cache.reset_cache()
        jax.clear_caches()


def doubling(calls):
    def on_host(ctx, out, x):
        calls.append(1)
        np.asarray(out)[...] = 2 * np.asarray(x)

    return on_host


def program(on_host):
    spec = jax.ShapeDtypeStruct((4,), jnp.float32)
    return jax.jit(lambda x: jnp.sin(buffer_callback.buffer_callback(on_host, spec)(x)) + 1)


def test_a_program_of_marked_callbacks_is_loaded_with_the_live_callbacks(persistent_cache):
    x = jnp.arange(4.0)
    first_calls, second_calls = [], []
    first = program(callback_cache.mark(doubling(first_calls)))(x)
    jax.clear_caches()  # As a new process: only the persistent cache is left.
    second = program(callback_cache.mark(doubling(second_calls)))(x)
    assert len(persistent_cache) == 1
    assert (len(first_calls), len(second_calls)) == (1, 1)
    np.testing.assert_array_equal(second, first)
    np.testing.assert_allclose(second, np.sin(2 * np.arange(4.0)) + 1, rtol=1e-6)


def test_a_program_with_an_unmarked_callback_is_left_to_jax(persistent_cache):
    x = jnp.arange(4.0)
    program(doubling([]))(x)
    jax.clear_caches()
    program(doubling([]))(x)
    assert persistent_cache == []  # JAX caches no program with host callbacks.


def test_a_convolution_on_tensorflows_kernels_is_loaded_from_the_cache(persistent_cache):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 16, 16, 3)).astype("float32")
    k = rng.standard_normal((3, 3, 3, 4)).astype("float32")

    def loss(x, k):
        return jnp.sum(keras.ops.conv(x, k, padding="same") ** 2)

    step = lambda: jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))(x, k)  # noqa: E731
    first = step()
    jax.clear_caches()
    second = step()
    assert len(persistent_cache) == 1
    for a, b in zip(jax.tree.leaves(first), jax.tree.leaves(second)):
        np.testing.assert_array_equal(a, b)


def as_lowered(callback):
    """A host callback as JAX's `buffer_callback` lowering registers it: a closure over it."""
    return lambda *args: callback(*args)


@pytest.mark.parametrize("platform, marked, cache, cached", [
    ("cpu", True, True, True),
    ("gpu", True, True, False),
    ("cpu", False, True, False),
    ("cpu", True, False, False),
])
def test_only_marked_callbacks_on_the_cpu_with_a_cache_are_cached_here(
        persistent_cache, monkeypatch, platform, marked, cache, cached):
    class Backend:
        pass

    backend = Backend()
    backend.platform = platform
    monkeypatch.setattr(compilation_cache, "is_cache_used", lambda backend: cache)
    on_host = doubling([])
    callbacks = [as_lowered(callback_cache.mark(on_host) if marked else on_host)]
    assert callback_cache.cacheable(backend, callbacks) is cached
    assert callback_cache.cacheable(backend, []) is False
