"""TensorFlow's kernels as an XLA FFI custom call: built once, switched, checked."""

import jax
import numpy as np
import pytest
from jax import numpy as jnp

import keras_tpu_estimator  # noqa: F401  (installs the routing)
from keras_tpu_estimator._backend import tf_ffi
from keras_tpu_estimator._backend import tf_kernels

pytestmark = pytest.mark.skipif(not tf_ffi.available(), reason="no C++ compiler here")

_GEOMETRY = {"strides": (1, 1, 1, 1), "padding": "SAME", "dilations": (1, 1, 1, 1)}


def _operands():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((2, 9, 9, 3)), jnp.float32)
    k = jnp.asarray(rng.standard_normal((3, 3, 3, 4)), jnp.float32)
    return x, k


def test_a_convolution_is_one_custom_call_and_no_host_callback():
    x, k = _operands()
    text = jax.jit(lambda a, b: tf_kernels.conv(a, b, padding="same")).lower(x, k).as_text()
    assert text.count(f"@{tf_ffi.TARGET}(") == 1
    assert "xla_buffer_python_cpu_callback" not in text


def test_the_custom_call_computes_tensorflows_op():
    x, k = _operands()
    got = jax.jit(lambda a, b: tf_ffi.call("Conv2D", a, b, (2, 9, 9, 4), **_GEOMETRY))(x, k)
    want = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_backprop_op_takes_its_sizes_where_told():
    x, k = _operands()
    g = jnp.ones((2, 9, 9, 4), jnp.float32)
    dk = jax.jit(lambda a, c: tf_ffi.call("Conv2DBackpropFilter", a, c, k.shape,
                                          sizes_at=1, **_GEOMETRY))(x, g)
    _, vjp = jax.vjp(lambda b: jax.lax.conv_general_dilated(
        x, b, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), k)
    np.testing.assert_allclose(dk, vjp(g)[0], rtol=1e-4, atol=1e-4)


def test_a_tensorflow_error_is_raised_not_a_crash():
    x, k = _operands()
    wrong = jax.jit(lambda a, b: tf_ffi.call("Conv2D", a, b, (2, 9, 9, 5), **_GEOMETRY))
    with pytest.raises(Exception, match="result size differs"):
        jax.block_until_ready(wrong(x, k))


@pytest.mark.parametrize("value", ["0", "off", "false", "no"])
def test_the_switch_turns_it_off_for_python_callbacks(monkeypatch, value):
    monkeypatch.setenv(tf_ffi.ENV_VAR, value)
    assert not tf_ffi.available()
    x, k = _operands()
    fn = jax.jit(lambda a, b: tf_kernels.conv(a, b, padding="same"))
    assert "xla_buffer_python_cpu_callback" in fn.lower(x, k).as_text()
    want = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(fn(x, k), want, rtol=1e-5, atol=1e-5)


def test_a_failed_load_is_logged_once_and_not_retried(monkeypatch, caplog):
    attempts = []

    def failing_load():
        attempts.append(1)
        raise OSError("no compiler here")

    monkeypatch.setattr(tf_ffi, "_load", failing_load)
    tf_ffi._loaded.cache_clear()
    try:
        assert [tf_ffi.available() for _ in range(3)] == [False] * 3
    finally:
        tf_ffi._loaded.cache_clear()
    assert attempts == [1]
    assert [r.message for r in caplog.records].count(
        "TensorFlow's kernels go through Python callbacks: no compiler here ") == 1
