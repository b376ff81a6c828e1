"""The CPU im2col convolution computes what `lax.conv_general_dilated` computes, and Keras uses it."""

import jax
import keras
import numpy as np
import pytest
from jax import lax
from jax import numpy as jnp

import keras_tpu_estimator  # noqa: F401  (installs the lowering)
from keras_tpu_estimator._backend import im2col as _im2col
from keras_tpu_estimator._backend import lowering
from keras_tpu_estimator._backend import routing
from keras_tpu_estimator._keras_internals import backend_nn

_SPEC = {1: ("NWC", "WIO", "NWC"), 2: ("NHWC", "HWIO", "NHWC"), 3: ("NDHWC", "DHWIO", "NDHWC")}

# (input spatial, in, kernel spatial, out, strides, padding, dilation)
CASES = [
    ((5, 6), 3, (3, 3), 4, 1, "same", 1),
    ((5, 6), 3, (3, 3), 4, 1, "valid", 1),
    ((1, 1), 8, (3, 3), 5, 1, "same", 1),  # only the centre tap reads input
    ((2, 2), 4, (3, 3), 5, 1, "same", 1),
    ((6, 6), 3, (3, 3), 5, 2, "valid", 1),
    ((3, 3), 3, (3, 3), 5, 2, "valid", 1),
    ((7, 8), 3, (3, 3), 5, 2, "same", 1),
    ((9, 9), 2, (3, 3), 3, 1, "same", 2),
    ((2, 3), 2, (5, 5), 3, 1, "same", 2),
    ((4, 4), 3, (5, 5), 2, 3, "same", 1),
    ((16, 16), 3, (7, 7), 8, 2, "same", 1),
    ((4, 5), 6, (1, 1), 7, 2, "valid", 1),
    ((5, 7), 3, (2, 3), 4, (1, 2), "same", (2, 1)),
    ((8,), 3, (3,), 4, 2, "same", 1),
    ((3, 4, 5), 2, (3, 2, 3), 3, 1, "same", 1),
]


def _lax_conv(x, k, strides, padding, dilation):
    rank = x.ndim - 2
    strides = (strides,) * rank if isinstance(strides, int) else strides
    dilation = (dilation,) * rank if isinstance(dilation, int) else dilation
    return lax.conv_general_dilated(x, k, strides, padding.upper(), rhs_dilation=dilation,
                                    dimension_numbers=_SPEC[rank])


def _operands(spatial, cin, kspatial, cout):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((2, *spatial, cin)), jnp.float32)
    k = jnp.asarray(rng.standard_normal((*kspatial, cin, cout)), jnp.float32)
    return x, k


@pytest.mark.parametrize("spatial,cin,kspatial,cout,strides,padding,dilation", CASES)
def test_im2col_forward_equals_lax_conv(spatial, cin, kspatial, cout, strides, padding, dilation):
    x, k = _operands(spatial, cin, kspatial, cout)
    expected = _lax_conv(x, k, strides, padding, dilation)
    # Compiled, as in a step (op by op, each of its ops would compile alone).
    got = jax.jit(lambda a, b: _im2col.im2col_conv(a, b, strides, padding, dilation))(x, k)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("spatial,cin,kspatial,cout,strides,padding,dilation", CASES)
def test_im2col_gradients_equal_lax_conv(spatial, cin, kspatial, cout, strides, padding,
                                         dilation):
    x, k = _operands(spatial, cin, kspatial, cout)
    cot = jnp.asarray(np.random.default_rng(1).standard_normal(
        _lax_conv(x, k, strides, padding, dilation).shape), jnp.float32)

    def grads(conv):
        return jax.jit(jax.grad(lambda x_, k_: jnp.sum(conv(x_, k_) * cot), argnums=(0, 1)))(x, k)

    expected = grads(lambda x_, k_: _lax_conv(x_, k_, strides, padding, dilation))
    got = grads(lambda x_, k_: _im2col.im2col_conv(x_, k_, strides, padding, dilation))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-4)


def test_im2col_channels_first_equals_lax_conv():
    x, k = _operands((3, 3), 4, (3, 3), 5)
    expected = _lax_conv(x, k, 1, "same", 1)
    got = _im2col.im2col_conv(jnp.moveaxis(x, -1, 1), k, 1, "same", 1, "channels_first")
    np.testing.assert_allclose(jnp.moveaxis(got, 1, -1), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kwargs,message", [
    ({"padding": "full"}, "`padding`"),
    ({"data_format": "nhwc"}, "`data_format`"),
    ({"strides": (1, 2, 3)}, "`strides`"),
    ({"dilation_rate": (1,)}, "`dilation_rate`"),
])
def test_im2col_rejects_bad_arguments(kwargs, message):
    x, k = _operands((3, 3), 2, (3, 3), 2)
    with pytest.raises(ValueError, match=message):
        _im2col.im2col_conv(x, k, **kwargs)


def test_im2col_rejects_a_kernel_with_other_input_channels():
    x, _ = _operands((3, 3), 2, (3, 3), 2)
    with pytest.raises(ValueError, match="`kernel`"):
        _im2col.im2col_conv(x, jnp.ones((3, 3, 4, 2)))


# (input shape, kernel shape, strides, padding, uses im2col)
RULE = [
    ((32, 1, 1, 512), (3, 3, 512, 512), 1, "same", True),     # ResNet-18 at 16x16: layer 4
    ((32, 4, 4, 128), (3, 3, 128, 256), 2, "same", True),     # 2x2 output
    ((32, 4, 4, 64), (3, 3, 64, 64), 1, "same", False),       # 4x4 output: lax.conv is faster
    ((64, 14, 14, 32), (5, 5, 32, 32), 1, "same", False),     # mnist
    ((32, 2, 2, 8), (3, 3, 4, 8), 1, "same", False),          # feature groups
]


@pytest.mark.parametrize("x_shape,k_shape,strides,padding,expected", RULE)
def test_use_im2col_rule(x_shape, k_shape, strides, padding, expected):
    x, k = jnp.zeros(x_shape), jnp.zeros(k_shape)
    assert _im2col.use_im2col(x, k, strides, padding, 1, "channels_last") is expected


def test_use_im2col_declines_integer_convolutions():
    x, k = jnp.zeros((2, 1, 1, 3), jnp.int32), jnp.zeros((3, 3, 3, 4), jnp.int32)
    assert not _im2col.use_im2col(x, k, 1, "same", 1, "channels_last")


@pytest.mark.parametrize("value", ["0", "off", "false", "OFF"])
def test_environment_variable_turns_im2col_off(monkeypatch, value):
    monkeypatch.setenv(lowering.ENV_VAR, value)
    x, k = jnp.zeros((32, 1, 1, 512)), jnp.zeros((3, 3, 512, 512))
    assert not _im2col.use_im2col(x, k, 1, "same", 1, "channels_last")


def _jaxpr_text(fn, *args):
    # A new function each time: JAX caches traces per function.
    return str(jax.make_jaxpr(lambda *a: fn(*a))(*args))


def test_importing_the_library_installs_the_backend_conv():
    assert backend_nn.installed("conv")


def test_keras_ops_conv_reaches_the_backend_conv_module_attribute():
    # Pins the reach into Keras: `keras.ops.conv` looks up
    # `keras.src.backend.jax.nn.conv` at call time.
    x, k = _operands((1, 1), 8, (3, 3), 4)
    assert "conv_general_dilated" not in _jaxpr_text(
        lambda a, b: keras.ops.conv(a, b, padding="same"), x, k)
    backend_nn.uninstall("conv")
    try:
        assert "conv_general_dilated" in _jaxpr_text(
            lambda a, b: keras.ops.conv(a, b, padding="same"), x, k)
    finally:
        routing.install()


def test_conv2d_layer_uses_im2col_at_small_sizes_and_matches_lax(monkeypatch):
    layer = keras.layers.Conv2D(6, 3, padding="same")
    x = jnp.asarray(np.random.default_rng(2).standard_normal((4, 2, 2, 5)), jnp.float32)
    layer.build(x.shape)
    assert "conv_general_dilated" not in _jaxpr_text(layer, x)
    got = layer(x)
    monkeypatch.setenv(lowering.ENV_VAR, "0")
    assert "conv_general_dilated" in _jaxpr_text(layer, x)
    np.testing.assert_allclose(got, layer(x), rtol=1e-5, atol=1e-5)


def test_grouped_conv_keeps_lax_conv_and_its_result():
    layer = keras.layers.Conv2D(4, 3, padding="same", groups=2)
    x = jnp.asarray(np.random.default_rng(3).standard_normal((2, 2, 2, 4)), jnp.float32)
    layer.build(x.shape)
    assert "conv_general_dilated" in _jaxpr_text(layer, x)


def test_installing_twice_wraps_keras_conv_once():
    routing.install()
    routing.install()
    assert not hasattr(backend_nn.keras_function("conv"), "keras_original")
