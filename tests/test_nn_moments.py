"""tf1.nn.convolution, sufficient_statistics and normalize_moments against TF 2.21's."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator.compat.v1 as tf1

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("x_shape, k_shape, kwargs", [
    ((2, 9, 3), (3, 3, 4), dict(padding="VALID")),
    ((2, 9, 3), (2, 3, 4), dict(padding="SAME", strides=[2])),
    ((2, 8, 7, 3), (3, 3, 3, 5), dict(padding="SAME", strides=[2, 1])),
    ((2, 8, 7, 3), (3, 2, 3, 5), dict(padding="VALID", dilation_rate=[2, 1])),
    ((2, 8, 7, 3), (3, 3, 3, 5), dict(padding="SAME", dilations=2)),
    ((1, 5, 6, 6, 2), (2, 3, 3, 2, 3), dict(padding="SAME", strides=[1, 2, 2])),
    ((1, 5, 6, 6, 2), (2, 2, 2, 2, 3), dict(padding="VALID", data_format="NDHWC")),
])
def test_convolution_matches_tf(x_shape, k_shape, kwargs):
    x = RNG.normal(size=x_shape).astype("float32")
    kernel = RNG.normal(size=k_shape).astype("float32")
    expected = tf.compat.v1.nn.convolution(x, kernel, **kwargs).numpy()
    got = np.asarray(tf1.nn.convolution(x, kernel, **kwargs))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_convolution_channels_first_is_the_transposed_channels_last():
    # TF's CPU kernels lack NCHW convolutions: compared through NHWC.
    x = RNG.normal(size=(2, 6, 6, 3)).astype("float32")
    kernel = RNG.normal(size=(3, 3, 3, 4)).astype("float32")
    expected = tf.compat.v1.nn.convolution(x, kernel, "SAME", strides=[2, 2]).numpy()
    got = tf1.nn.convolution(np.transpose(x, (0, 3, 1, 2)), kernel, "SAME", strides=[2, 2],
                             data_format="NCHW")
    np.testing.assert_allclose(np.transpose(np.asarray(got), (0, 2, 3, 1)), expected,
                               rtol=1e-4, atol=1e-4)


def test_convolution_builds_symbolically():
    out = tf1.nn.convolution(keras.KerasTensor((2, 8, 8, 3)), np.ones((3, 3, 3, 4), "float32"),
                             "SAME", strides=[2, 2])
    assert tuple(out.shape) == (2, 4, 4, 4)


@pytest.mark.parametrize("argument, value, match", [
    ("padding", "FULL", "`padding`"),
    ("strides", [1, 2, 2, 1], "`strides` of convolution needs 2 values"),
    ("data_format", "HWCN", "`data_format`"),
])
def test_convolution_bad_argument_is_named(argument, value, match):
    kwargs = {"padding": "SAME", argument: value}
    with pytest.raises(ValueError, match=match):
        tf1.nn.convolution(np.ones((1, 4, 4, 2), "float32"), np.ones((2, 2, 2, 1), "float32"),
                           **kwargs)


@pytest.mark.parametrize("axes, shift, keep_dims", [
    ([0, 1, 2], None, False),  # AmoebaNet's distributed batch norm
    ([0, 2], 0.5, True),
    ([0], np.linspace(-1, 1, 60, dtype="float32").reshape(3, 4, 5), False),  # per element
])
def test_sufficient_statistics_and_normalize_moments_match_tf(axes, shift, keep_dims):
    x = RNG.normal(2.0, 3.0, size=(2, 3, 4, 5)).astype("float32")
    tf_stats = tf.compat.v1.nn.sufficient_statistics(x, axes, shift=shift, keep_dims=keep_dims)
    stats = tf1.nn.sufficient_statistics(x, axes, shift=shift, keep_dims=keep_dims)
    for got, expected in zip(stats[:3], tf_stats[:3]):
        np.testing.assert_allclose(np.asarray(got), expected.numpy(), rtol=1e-5, atol=1e-4)
    assert np.asarray(stats[0]).dtype == np.float32
    assert (stats[3] is None) == (tf_stats[3] is None)
    tf_moments = tf.compat.v1.nn.normalize_moments(*tf_stats)
    moments = tf1.nn.normalize_moments(*stats)
    for got, expected in zip(moments, tf_moments):
        np.testing.assert_allclose(np.asarray(got), expected.numpy(), rtol=1e-5, atol=1e-4)


def test_normalize_moments_of_sufficient_statistics_is_moments():
    x = RNG.normal(size=(4, 3, 3, 2)).astype("float32")
    mean, variance = tf1.nn.normalize_moments(
        *tf1.nn.sufficient_statistics(x, [0, 1, 2]))
    np.testing.assert_allclose(np.asarray(mean), x.mean(axis=(0, 1, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(variance), x.var(axis=(0, 1, 2)), rtol=1e-4)
