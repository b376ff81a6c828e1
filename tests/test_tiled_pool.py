"""The CPU tiled max pool computes what `lax.reduce_window` computes (gradients too), and Keras uses it."""

import jax
import keras
import numpy as np
import pytest
from jax import lax
from jax import numpy as jnp

import keras_tpu_estimator  # noqa: F401  (installs the lowering)
from keras_tpu_estimator._backend import lowering
from keras_tpu_estimator._backend import routing
from keras_tpu_estimator._backend import tiled_pool as _tiled_pool
from keras_tpu_estimator._keras_internals import backend_nn

# (input shape, pool size, padding, data format)
CASES = [
    ((2, 4, 4, 3), (2, 2), "valid", "channels_last"),
    ((2, 4, 4, 3), (2, 2), "same", "channels_last"),
    ((2, 5, 7, 3), (2, 2), "same", "channels_last"),
    ((2, 5, 7, 3), (2, 3), "valid", "channels_last"),
    ((2, 3, 6, 6), (3, 3), "same", "channels_first"),
    ((2, 3, 5, 4), (2, 2), "valid", "channels_first"),
    ((2, 8, 3), (2,), "same", "channels_last"),
    ((1, 4, 5, 6, 2), (2, 2, 3), "same", "channels_last"),
]


def _reduce_window(x, pool, padding, data_format):
    window = (1, *pool, 1) if data_format == "channels_last" else (1, 1, *pool)
    return lax.reduce_window(x, -jnp.inf, lax.max, window, window, padding.upper())


def _ties(shape):
    # Small integers: most windows hold their maximum more than once.
    return jnp.asarray(np.random.default_rng(0).integers(0, 3, shape).astype(np.float32))


@pytest.mark.parametrize("shape,pool,padding,data_format", CASES)
def test_tiled_max_pool_equals_reduce_window(shape, pool, padding, data_format):
    x = _ties(shape)
    expected = _reduce_window(x, pool, padding, data_format)
    got = _tiled_pool.tiled_max_pool(x, pool, padding, data_format)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("shape,pool,padding,data_format", CASES)
def test_tiled_max_pool_gradient_goes_to_the_first_maximum_like_reduce_window(
        shape, pool, padding, data_format):
    x = _ties(shape)
    cot = jnp.asarray(np.random.default_rng(1).standard_normal(
        _reduce_window(x, pool, padding, data_format).shape), jnp.float32)
    expected = jax.grad(lambda a: jnp.sum(_reduce_window(a, pool, padding, data_format) * cot))(x)
    got = jax.grad(lambda a: jnp.sum(
        _tiled_pool.tiled_max_pool(a, pool, padding, data_format) * cot))(x)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kwargs,message", [
    ({"padding": "full"}, "`padding`"),
    ({"data_format": "nhwc"}, "`data_format`"),
    ({"pool_size": (2, 2, 2)}, "`pool_size`"),
    ({"pool_size": (0, 2)}, "`pool_size`"),
])
def test_tiled_max_pool_rejects_bad_arguments(kwargs, message):
    arguments = {"pool_size": (2, 2), **kwargs}
    with pytest.raises(ValueError, match=message):
        _tiled_pool.tiled_max_pool(jnp.zeros((1, 4, 4, 1)), **arguments)


# (pool size, strides, padding, dtype, uses the tiled pool)
RULE = [
    ((2, 2), None, "same", jnp.float32, True),
    ((2, 2), (2, 2), "valid", jnp.float32, True),
    ((3, 3), (2, 2), "same", jnp.float32, False),  # overlapping windows
    ((2, 2), (1, 1), "valid", jnp.float32, False),
    ((2, 2), None, "same", jnp.int32, False),
]


@pytest.mark.parametrize("pool,strides,padding,dtype,expected", RULE)
def test_use_tiled_rule(pool, strides, padding, dtype, expected):
    x = jnp.zeros((2, 4, 4, 3), dtype)
    assert _tiled_pool.use_tiled(x, pool, strides, padding) is expected


def test_environment_variable_turns_the_tiled_pool_off(monkeypatch):
    monkeypatch.setenv(lowering.ENV_VAR, "0")
    assert not _tiled_pool.use_tiled(jnp.zeros((2, 4, 4, 3)), (2, 2), None, "same")


def _jaxpr_text(fn, *args):
    return str(jax.make_jaxpr(lambda *a: fn(*a))(*args))


def test_importing_the_library_installs_the_backend_max_pool():
    assert backend_nn.installed("max_pool")


def test_keras_ops_max_pool_reaches_the_backend_module_attribute():
    # Pins the reach into Keras: `keras.ops.max_pool` looks up
    # `keras.src.backend.jax.nn.max_pool` at call time.
    x = _ties((2, 4, 4, 3))
    assert "reduce_window" not in _jaxpr_text(lambda a: keras.ops.max_pool(a, 2, 2, "same"), x)
    backend_nn.uninstall("max_pool")
    try:
        assert "reduce_window" in _jaxpr_text(lambda a: keras.ops.max_pool(a, 2, 2, "same"), x)
    finally:
        routing.install()


def test_max_pooling2d_layer_uses_the_tiled_pool_and_matches_reduce_window(monkeypatch):
    layer = keras.layers.MaxPooling2D(2, 2, padding="same")
    x = _ties((2, 5, 5, 3))
    assert "reduce_window" not in _jaxpr_text(layer, x)
    got = layer(x)
    monkeypatch.setenv(lowering.ENV_VAR, "0")
    assert "reduce_window" in _jaxpr_text(layer, x)
    np.testing.assert_array_equal(got, layer(x))


def test_overlapping_max_pooling_keeps_reduce_window():
    layer = keras.layers.MaxPooling2D(3, 2, padding="same")
    assert "reduce_window" in _jaxpr_text(layer, jnp.zeros((2, 8, 8, 3)))


def test_backend_nn_rejects_other_function_names():
    with pytest.raises(ValueError, match="`name`"):
        backend_nn.installed("average_pool")
