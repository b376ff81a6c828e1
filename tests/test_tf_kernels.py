"""TensorFlow's CPU convolution kernels, called from JAX, compute what XLA computes."""

import jax
import keras
import numpy as np
import pytest
from jax import lax
from jax import numpy as jnp

import keras_tpu_estimator  # noqa: F401  (installs the routing)
from keras_tpu_estimator._backend import lowering
from keras_tpu_estimator._backend import tf_ffi
from keras_tpu_estimator._backend import tf_kernels
from keras_tpu_estimator._backend import warm_up
from keras_tpu_estimator._keras_internals import backend_nn

_SPEC = {1: ("NWC", "WIO", "NWC"), 2: ("NHWC", "HWIO", "NHWC")}

# (input spatial, in, kernel spatial, out, strides, padding, dilation)
CASES = [
    ((6, 7), 3, (3, 3), 4, 1, "same", 1),
    ((6, 7), 3, (3, 3), 4, 1, "valid", 1),
    ((7, 8), 2, (3, 3), 5, 2, "same", 1),
    ((8, 8), 2, (4, 4), 3, 2, "same", 1),  # even kernel: SAME pads more after
    ((9, 9), 3, (5, 5), 2, (2, 3), "valid", 1),
    ((9, 9), 2, (3, 3), 3, 1, "same", 2),
    ((9, 10), 2, (2, 3), 3, 1, "valid", (2, 1)),
    ((5, 6), 4, (1, 1), 3, 2, "valid", 1),
    ((10,), 3, (3,), 4, 2, "same", 1),
    ((11,), 2, (5,), 3, 1, "valid", 2),
]


def _operands(spatial, cin, kernel_spatial, cout, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, *spatial, cin)).astype(np.float32)
    k = rng.standard_normal((*kernel_spatial, cin, cout)).astype(np.float32)
    return jnp.asarray(x), jnp.asarray(k)


def _lax_conv(x, k, strides, padding, dilation):
    rank = x.ndim - 2
    return lax.conv_general_dilated(
        x, k, lowering.spatial_tuple(strides, rank, "strides"), padding.upper(),
        rhs_dilation=lowering.spatial_tuple(dilation, rank, "dilation_rate"),
        dimension_numbers=_SPEC[rank])


def _callbacks(fn, *args):
    """How many calls into TensorFlow the compiled `fn` makes (custom calls or host callbacks)."""
    text = jax.jit(fn).lower(*args).as_text()
    return text.count(f"@{tf_ffi.TARGET}(") + text.count("xla_buffer_python_cpu_callback")


def _value_and_grads(conv, x, k):
    cot = jnp.cos(jnp.arange(conv(x, k).size, dtype=jnp.float32)).reshape(conv(x, k).shape)
    return conv(x, k), jax.jit(jax.grad(lambda a, b: jnp.sum(conv(a, b) * cot), (0, 1)))(x, k)


def _assert_same_value_and_grads(ours, reference, x, k):
    """`ours(x, k)` and its gradients in both arguments equal `reference`'s."""
    got, got_grads = _value_and_grads(ours, x, k)
    want, want_grads = _value_and_grads(reference, x, k)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("spatial, cin, kspatial, cout, strides, padding, dilation", CASES)
def test_conv_value_and_both_gradients_match_lax(spatial, cin, kspatial, cout, strides,
                                                  padding, dilation):
    x, k = _operands(spatial, cin, kspatial, cout)
    args = (strides, padding, dilation)
    _assert_same_value_and_grads(
        lambda a, b: tf_kernels.conv(a, b, *args), lambda a, b: _lax_conv(a, b, *args), x, k)


def test_channels_first_matches_channels_last():
    x, k = _operands((6, 5), 3, (3, 3), 4)
    want = tf_kernels.conv(x, k, 1, "same", 1)
    got = tf_kernels.conv(jnp.moveaxis(x, -1, 1), k, 1, "same", 1, "channels_first")
    np.testing.assert_allclose(jnp.moveaxis(got, 1, -1), want, rtol=1e-5, atol=1e-5)


def test_kernel_gradient_alone_when_the_input_is_not_differentiated():
    x, k = _operands((6, 6), 3, (3, 3), 4)
    grad = jax.jit(jax.grad(lambda b: jnp.sum(tf_kernels.conv(x, b, 1, "same", 1) ** 2)))
    want = jax.grad(lambda b: jnp.sum(_lax_conv(x, b, 1, "same", 1) ** 2))(k)
    np.testing.assert_allclose(grad(k), want, rtol=1e-4, atol=1e-3)
    assert _callbacks(grad, k) == 2  # the forward and the kernel's gradient


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("strides", [1, 2, 3])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_conv_transpose_matches_keras_own(padding, strides, data_format):
    shape = (2, 10, 12, 6) if data_format == "channels_last" else (2, 6, 10, 12)
    x = jnp.asarray(np.random.default_rng(1).standard_normal(shape), jnp.float32)
    k = jnp.asarray(np.random.default_rng(2).standard_normal((4, 4, 3, 6)), jnp.float32)
    kwargs = {"strides": strides, "padding": padding, "data_format": data_format}
    ours = lambda a, b: keras.ops.conv_transpose(a, b, **kwargs)  # noqa: E731
    keras_own = lambda a, b: backend_nn.keras_function("conv_transpose")(a, b, **kwargs)  # noqa: E731
    assert _callbacks(ours, x, k) == 1
    _assert_same_value_and_grads(ours, keras_own, x, k)


@pytest.mark.parametrize("multiplier", [1, 2])
@pytest.mark.parametrize("strides, padding", [(1, "same"), (2, "same"), (2, "valid")])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_depthwise_conv_matches_keras_own(multiplier, strides, padding, data_format):
    shape = (2, 22, 21, 3) if data_format == "channels_last" else (2, 3, 22, 21)
    x = jnp.asarray(np.random.default_rng(3).standard_normal(shape), jnp.float32)
    k = jnp.asarray(np.random.default_rng(4).standard_normal((3, 3, 3, multiplier)), jnp.float32)
    kwargs = {"strides": strides, "padding": padding, "data_format": data_format}
    ours = lambda a, b: keras.ops.depthwise_conv(a, b, **kwargs)  # noqa: E731
    keras_own = lambda a, b: backend_nn.keras_function("depthwise_conv")(a, b, **kwargs)  # noqa: E731
    assert _callbacks(ours, x, k) == 1
    _assert_same_value_and_grads(ours, keras_own, x, k)


def test_separable_conv2d_layer_reaches_tf_kernels_for_both_halves():
    layer = keras.layers.SeparableConv2D(4, 3, padding="same")
    x = jnp.zeros((2, 12, 12, 3))
    layer.build(x.shape)
    assert _callbacks(lambda a: layer(a), x) == 2


def test_conv2d_transpose_layer_reaches_tf_kernels():
    layer = keras.layers.Conv2DTranspose(3, 4, strides=2, padding="same")
    x = jnp.zeros((2, 5, 5, 6))
    layer.build(x.shape)
    assert _callbacks(lambda a: layer(a), x) == 1
    assert layer(x).shape == (2, 10, 10, 3)


@pytest.mark.parametrize("case, expected", [
    ("plain", True),
    ("float16", False),
    ("3-D", False),
    ("groups", False),
    ("strides and dilation", False),
    ("causal padding", False),
    ("9x9 output", False),
])
def test_supports(case, expected):
    x, k = _operands((10, 10), 4, (3, 3), 2)
    strides, padding, dilation = 1, "same", 1
    if case == "float16":
        x, k = x.astype(jnp.float16), k.astype(jnp.float16)
    elif case == "3-D":
        x, k = jnp.zeros((1, 4, 4, 4, 4)), jnp.zeros((3, 3, 3, 4, 2))
    elif case == "groups":
        k = k[:, :, :2]
    elif case == "strides and dilation":
        strides, dilation = 2, 2
    elif case == "causal padding":
        padding = "causal"
    elif case == "9x9 output":  # Under MIN_OUTPUT_POSITIONS: XLA's own is faster.
        padding = "valid"
        x = x[:, :11, :11]
    assert tf_kernels.supports(x, k, strides, padding, dilation) is expected


def test_not_inside_xla_only_or_with_the_switch_off(monkeypatch):
    x, k = _operands((10, 10), 4, (3, 3), 2)
    with lowering.xla_only():
        assert not tf_kernels.supports(x, k, 1, "same", 1)
    assert tf_kernels.supports(x, k, 1, "same", 1)
    monkeypatch.setenv(lowering.ENV_VAR, "off")
    assert not tf_kernels.supports(x, k, 1, "same", 1)


def test_not_under_a_distribution_of_several_devices():
    x, k = _operands((10, 10), 4, (3, 3), 2)
    with keras.distribution.DataParallel(devices=jax.devices()[:2]).scope():
        assert not tf_kernels.supports(x, k, 1, "same", 1)
    with keras.distribution.DataParallel(devices=jax.devices()[:1]).scope():
        assert tf_kernels.supports(x, k, 1, "same", 1)


def test_conv2d_layer_uses_tf_kernels_above_im2col_sizes():
    layer = keras.layers.Conv2D(4, 3, padding="same")
    x = jnp.asarray(np.random.default_rng(4).standard_normal((2, 12, 12, 3)), jnp.float32)
    layer.build(x.shape)
    assert _callbacks(lambda a: layer(a), x) == 1
    assert "convolution" not in jax.jit(lambda a: layer(a)).lower(x).as_text()
    with lowering.xla_only():
        want = jax.jit(lambda a: layer(a))(x)
    np.testing.assert_allclose(jax.jit(lambda a: layer(a))(x), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("offset", [0, 1])
def test_arguments_reach_tensorflow_aliased_when_aligned_else_copied(offset):
    buffer = np.zeros(64 + 17, np.float32)
    start = (-buffer.ctypes.data % 64) // 4 + offset  # 64-byte aligned, then not
    array = buffer[start:start + 16]
    array[:] = np.arange(16)
    tensor = tf_kernels._tensor(array)
    array[0] = 42.0  # visible through an alias only
    assert float(tensor.numpy()[0]) == (42.0 if offset == 0 else 0.0)
    np.testing.assert_array_equal(tensor.numpy()[1:], np.arange(1, 16))


def test_a_convolution_traced_again_is_not_warmed_up_again(monkeypatch):
    x = jnp.ones((2, 12, 12, 3))
    k = jnp.ones((3, 3, 3, 5))

    def loss(a, b):
        return jnp.sum(tf_kernels.conv(a, b, padding="same") ** 2)

    jax.jit(jax.grad(loss, argnums=(0, 1))).lower(x, k)
    warmed = []
    monkeypatch.setattr(warm_up, "beside", lambda fn, *args: warmed.append((fn, args)))
    jax.jit(jax.grad(loss, argnums=(0, 1))).lower(x, k)  # Another trace, the same shapes.
    assert warmed == []


def _trace_new_conv(channels):
    x = jnp.ones((2, 13, 11, 3))  # Shapes no other test traces: new kernels.
    k = jnp.ones((3, 3, 3, channels))
    jax.jit(lambda a, b: tf_kernels.conv(a, b, padding="same")).lower(x, k)
    return x, k


def test_new_kernels_are_warmed_up_on_the_warm_up_thread_for_their_shapes(monkeypatch):
    warmed = []
    monkeypatch.setattr(warm_up, "beside", lambda fn, *args: warmed.append((fn, args)))
    x, k = _trace_new_conv(7)
    assert len(warmed) == 1
    fn, (run, shapes) = warmed[0]
    assert fn is tf_kernels._warm_up
    assert [shape for shape, _ in shapes] == [x.shape, k.shape]
    fn(run, shapes)  # Runs the kernels on zeros.


def test_the_kernels_run_eagerly_without_a_tf_function(monkeypatch):
    import tensorflow as tf  # noqa: PLC0415

    monkeypatch.setattr(tf, "function", lambda *a, **k: pytest.fail("traced a tf.function"))
    x = jnp.asarray(np.random.default_rng(3).standard_normal((2, 9, 9, 3)), jnp.float32)
    k = jnp.asarray(np.random.default_rng(4).standard_normal((3, 3, 3, 4)), jnp.float32)
    got = jax.jit(lambda a, b: tf_kernels.conv(a, b, padding="same"))(x, k)
    expected = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_kernels_of_larger_arguments_are_not_warmed_up(monkeypatch):
    warmed = []
    monkeypatch.setattr(warm_up, "beside", lambda fn, *args: warmed.append((fn, args)))
    monkeypatch.setattr(tf_kernels, "MAX_WARM_UP_BYTES", 2 * 13 * 11 * 3 * 4)
    _trace_new_conv(9)
    assert warmed == []


def test_xla_runs_independent_host_callbacks_one_after_the_other():
    # Why a gradient's two kernels share one callback: XLA:CPU's thunk executor
    # hands ready thunks to other threads only above 8 of them, and a host
    # callback blocks its thread, so two callbacks never overlap. If this
    # fails, XLA overlaps them: splitting the Python callback of a gradient may then pay.
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    from jax.experimental import buffer_callback  # noqa: PLC0415

    spans, lock = [], threading.Lock()

    def on_host(ctx, out, x):
        del ctx
        start = time.perf_counter()
        time.sleep(0.05)  # Releases the GIL, as TensorFlow's kernels do.
        np.asarray(out)[...] = np.asarray(x) + 1
        with lock:
            spans.append((start, time.perf_counter()))

    def two_callbacks(a, b):
        struct = jax.ShapeDtypeStruct(a.shape, a.dtype)
        first = buffer_callback.buffer_callback(on_host, struct)(jnp.tanh(a))
        second = buffer_callback.buffer_callback(on_host, struct)(jnp.sin(b))
        return first + second

    x = jnp.ones((256, 256))
    jax.block_until_ready(jax.jit(two_callbacks)(x, x))
    (start_a, end_a), (start_b, end_b) = sorted(spans)
    assert end_a <= start_b
