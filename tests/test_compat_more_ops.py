"""compat.v1 array, math, check, control-flow, random and nn operations against numpy."""

import jax
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib

A = np.arange(12, dtype="float32").reshape(3, 4) - 5.0
IMAGES = np.random.default_rng(0).normal(size=(2, 6, 6, 3)).astype("float32")


def _run(program):
    """Runs `program` as model_fn code, in a TRAIN build call."""
    with store_lib.model_fn_call(store_lib.VariableStore(), kte.ModeKeys.TRAIN, True, 0, True):
        return program()


# ----------------------------------------------------------------------
# Array and math operations.


@pytest.mark.parametrize(
    "op, expected",
    [
        (lambda: tf1.broadcast_to(np.float32([1, 2]), [3, 2]), np.broadcast_to([1, 2], (3, 2))),
        (lambda: tf1.broadcast_to(np.float32([1, 2]), np.array([2, 2], "int32")), [[1, 2], [1, 2]]),
        (lambda: tf1.meshgrid(np.arange(3), np.arange(2))[0], np.meshgrid(np.arange(3), np.arange(2))[0]),
        (lambda: tf1.meshgrid(np.arange(3), np.arange(2), indexing="ij")[1],
         np.meshgrid(np.arange(3), np.arange(2), indexing="ij")[1]),
        (lambda: tf1.reverse(A, [1]), A[:, ::-1]),
        (lambda: tf1.reverse_v2(A, [0, 1]), A[::-1, ::-1]),
        (lambda: tf1.roll(A, 1, axis=1), np.roll(A, 1, axis=1)),
        (lambda: tf1.linspace(0.0, 1.0, 5), np.linspace(0, 1, 5)),
        (lambda: tf1.eye(2, 3), np.eye(2, 3)),
        (lambda: tf1.matrix_band_part(np.ones((3, 3)), 0, -1), np.triu(np.ones((3, 3)))),
        (lambda: tf1.matrix_band_part(np.ones((3, 3)), 1, 0), np.tril(np.triu(np.ones((3, 3)), -1))),
        (lambda: tf1.div_no_nan(np.float32([1, 0, 3]), np.float32([2, 0, 0])), [0.5, 0, 0]),
        (lambda: tf1.math.divide_no_nan(np.float32([4.0]), np.float32([2.0])), [2.0]),
        (lambda: tf1.reduce_std(A, axis=0), A.std(0)),
        (lambda: tf1.math.reduce_variance(A, axis=1, keepdims=True), A.var(1, keepdims=True)),
        (lambda: tf1.count_nonzero(np.float32([[0, 1], [2, 0]]), axis=1), [1, 1]),
        (lambda: tf1.cumprod(np.float32([1, 2, 3])), [1, 2, 6]),
        (lambda: tf1.cumprod(np.float32([1, 2, 3]), exclusive=True), [1, 1, 2]),
        (lambda: tf1.cumprod(np.float32([1, 2, 3]), reverse=True), [6, 6, 3]),
        (lambda: tf1.unsorted_segment_sum(A, np.array([1, 0, 1]), 3), [A[1], A[0] + A[2], 0 * A[0]]),
        (lambda: tf1.segment_sum(A, np.array([0, 0, 1])), [A[0] + A[1], A[2]]),
        (lambda: tf1.math.log_sigmoid(np.float32([0.0, -100.0])), [np.log(0.5), -100.0]),
        (lambda: tf1.sort(np.float32([2, 3, 1]), direction="DESCENDING"), [3, 2, 1]),
        (lambda: tf1.argsort(np.float32([2, 3, 1]), direction="DESCENDING"), [1, 0, 2]),
        (lambda: tf1.norm(A), np.linalg.norm(A)),
        (lambda: tf1.norm(A, axis=1), np.linalg.norm(A, axis=1)),
        (lambda: tf1.atan2(np.float32([1.0]), np.float32([-1.0])), np.arctan2([1.0], [-1.0])),
        (lambda: tf1.expm1(np.float32([1e-6])), np.expm1([1e-6])),
    ],
)
def test_operation_matches_numpy(op, expected):
    np.testing.assert_allclose(np.asarray(op()), np.asarray(expected, "float64"), rtol=1e-5, atol=1e-6)


def test_math_namespace_has_the_top_level_operations():
    for name in ("floor", "div_no_nan", "cumprod", "reduce_std", "unsorted_segment_sum"):
        assert getattr(tf1.math, name) is getattr(tf1, name)


@pytest.mark.parametrize("value, expected", [(3, 3), (None, None), (tf1.Dimension(5), 5)])
def test_dimension_value(value, expected):
    assert tf1.dimension_value(value) == expected
    assert tf1.Dimension(value).value == expected


# ----------------------------------------------------------------------
# Control flow.


@pytest.mark.parametrize("pred", [True, np.bool_(True), np.array(1) > 0])
def test_cond_with_a_known_predicate_calls_only_its_branch(pred):
    def false_fn():
        raise AssertionError("the other branch ran")

    assert tf1.cond(pred, lambda: "yes", false_fn) == "yes"


@pytest.mark.parametrize("x, expected", [(2.0, 4.0), (-2.0, 2.0)])
def test_cond_with_a_traced_predicate_selects_at_run_time(x, expected):
    step = jax.jit(lambda x: tf1.cond(x > 0, lambda: x * 2, lambda: -x))
    assert float(step(np.float32(x))) == expected


@pytest.mark.parametrize("x, expected", [(-1.0, 10.0), (0.5, 20.0), (5.0, 30.0)])
def test_case_takes_the_first_true_predicate(x, expected):
    def program(x):
        return tf1.case([(x < 0, lambda: np.float32(10)), (x < 1, lambda: np.float32(20))],
                        default=lambda: np.float32(30))

    assert float(jax.jit(program)(np.float32(x))) == expected
    assert float(program(np.float32(x))) == expected


def test_while_loop_returns_the_final_variables():
    def program(limit):
        i, total = tf1.while_loop(lambda i, t: i < limit, lambda i, t: [i + 1, t + i], [0, 0])
        return i, total

    i, total = jax.jit(program)(5)
    assert (int(i), int(total)) == (5, 10)
    assert int(tf1.while_loop(lambda i: i < 3, lambda i: i + 1, [0])) == 3


def test_map_fn_stacks_the_results():
    np.testing.assert_allclose(np.asarray(tf1.map_fn(lambda row: tf1.reduce_sum(row), A)), A.sum(1))


# ----------------------------------------------------------------------
# Assertions.


@pytest.mark.parametrize(
    "check",
    [
        lambda: tf1.assert_equal(3, 4),
        lambda: tf1.assert_none_equal(3, 3),
        lambda: tf1.assert_less_equal(5, 4),
        lambda: tf1.assert_positive(np.float32([1, 0])),
        lambda: tf1.assert_non_negative(np.float32([-1])),
        lambda: tf1.assert_negative(np.float32([0])),
        lambda: tf1.assert_near(np.float32(1.0), np.float32(1.1)),
        lambda: tf1.assert_rank(A, 3),
        lambda: tf1.assert_rank_at_least(A, 3),
        lambda: tf1.assert_scalar(A),
        lambda: tf1.check_numerics(np.float32([1, np.nan]), "bad logits"),
    ],
)
def test_assertion_on_known_values_raises(check):
    with pytest.raises(ValueError):
        check()


@pytest.mark.parametrize(
    "check",
    [
        lambda: tf1.assert_type(A, tf1.int32),
        lambda: tf1.assert_integer(A),
    ],
)
def test_dtype_assertion_raises_type_error(check):
    with pytest.raises(TypeError):
        check()


def test_assertions_pass_and_leave_traced_values_alone():
    def program(x):
        checks = [tf1.assert_positive(x), tf1.assert_equal(x, x + 1), tf1.assert_rank(x, 1),
                  tf1.assert_less_equal(tf1.size(x), 4), tf1.assert_integer(tf1.cast(x, tf1.int32))]
        with tf1.control_dependencies([c for c in checks if c is not None]):
            return tf1.check_numerics(x, "x") * 2

    np.testing.assert_allclose(np.asarray(jax.jit(program)(np.float32([-1.0, 2.0]))), [-2.0, 4.0])


# ----------------------------------------------------------------------
# Random tensors and initializers.


@pytest.mark.parametrize(
    "op, dtype, low, high",
    [
        (lambda: tf1.random_uniform([2000], 2.0, 3.0), "float32", 2.0, 3.0),
        (lambda: tf1.random.uniform([2000], maxval=5, dtype=tf1.int32), "int32", 0, 4),
        (lambda: tf1.truncated_normal([2000], stddev=0.5), "float32", -1.0, 1.0),
        (lambda: tf1.random_normal([2000], mean=10.0), "float32", 4.0, 16.0),
        (lambda: tf1.random.categorical(np.zeros((2, 3), "float32"), 50), "int32", 0, 2),
    ],
)
def test_random_tensor_has_its_dtype_and_range(op, dtype, low, high):
    values = np.asarray(_run(op))
    assert str(values.dtype) == dtype
    assert values.min() >= low and values.max() <= high
    assert len(np.unique(values)) > 1


def test_random_uniform_of_integers_needs_maxval():
    with pytest.raises(ValueError, match="maxval"):
        _run(lambda: tf1.random_uniform([2], dtype=tf1.int32))


@pytest.mark.parametrize(
    "short, initializer",
    [
        ("ones", tf1.ones_initializer), ("zeros", tf1.zeros_initializer),
        ("constant", tf1.constant_initializer), ("truncated_normal", tf1.truncated_normal_initializer),
        ("random_normal", tf1.random_normal_initializer),
        ("random_uniform", tf1.random_uniform_initializer),
        ("variance_scaling", tf1.variance_scaling_initializer),
        ("glorot_uniform", tf1.glorot_uniform_initializer),
    ],
)
def test_initializers_namespace_has_tf1_short_names(short, initializer):
    assert getattr(tf1.initializers, short) is initializer


def test_initializers_ones_initializes_a_variable():
    def program():
        return np.asarray(tf1.get_variable("gamma", [3], initializer=tf1.initializers.ones()))

    np.testing.assert_array_equal(_run(program), np.ones(3))


KERNEL = (3, 3, 16, 32)  # A conv kernel: fan_in 144, fan_out 288.


@pytest.mark.parametrize(
    "initializer, limit",
    [
        (tf1.contrib.layers.xavier_initializer_conv2d(), np.sqrt(6 / (144 + 288))),
        (tf1.contrib.layers.xavier_initializer(), np.sqrt(6 / (144 + 288))),
        (tf1.uniform_unit_scaling_initializer(1.5), 1.5 * np.sqrt(3 / 144)),
        (tf1.initializers.uniform_unit_scaling(), np.sqrt(3 / 144)),
    ],
)
def test_tf1_uniform_initializer_aliases_fill_their_range(initializer, limit):
    values = np.asarray(initializer(KERNEL, "float32"))
    assert np.abs(values).max() <= limit
    assert np.abs(values).max() > 0.95 * limit


def test_identity_initializer_is_gain_times_the_identity():
    values = np.asarray(tf1.initializers.identity(gain=2.0)((3, 3), "float32"))
    np.testing.assert_array_equal(values, 2 * np.eye(3))


def test_contrib_l1_l2_and_sum_regularizers_add_their_terms():
    w = np.array([1.0, -2.0, 3.0], "float32")
    l1, l2 = 0.5 * np.abs(w).sum(), 0.25 * (w**2).sum() / 2
    layers = tf1.contrib.layers
    np.testing.assert_allclose(float(layers.l1_l2_regularizer(0.5, 0.25)(w)), l1 + l2, rtol=1e-6)
    summed = layers.sum_regularizer([layers.l1_regularizer(0.5), None, layers.l2_regularizer(0.25)])
    np.testing.assert_allclose(float(summed(w)), l1 + l2, rtol=1e-6)


# ----------------------------------------------------------------------
# nn.


def test_depthwise_conv2d_convolves_each_channel_with_its_filters():
    kernel = np.random.default_rng(1).normal(size=(3, 3, 3, 2)).astype("float32")
    out = np.asarray(tf1.nn.depthwise_conv2d(IMAGES, kernel, [1, 1, 1, 1], "VALID"))
    expected = np.zeros((2, 4, 4, 6), "float64")
    for c in range(3):
        for m in range(2):
            for i in range(4):
                for j in range(4):
                    expected[:, i, j, c * 2 + m] = np.sum(IMAGES[:, i:i + 3, j:j + 3, c] * kernel[:, :, c, m], (1, 2))
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("pool, reference", [
    (tf1.nn.max_pool2d, lambda x: x.max((2, 4))), (tf1.nn.avg_pool2d, lambda x: x.mean((2, 4))),
])
def test_pool2d_takes_the_window_statistic(pool, reference):
    out = np.asarray(pool(IMAGES, ksize=2, strides=2, padding="VALID"))
    np.testing.assert_allclose(out, reference(IMAGES.reshape(2, 3, 2, 3, 2, 3)), rtol=1e-6)


def test_conv1d_matches_numpy():
    x = IMAGES[:, 0]  # [2, 6, 3]
    kernel = np.random.default_rng(2).normal(size=(2, 3, 4)).astype("float32")
    out = np.asarray(tf1.nn.conv1d(x, kernel, stride=1, padding="VALID"))
    expected = np.stack([np.einsum("bkc,kco->bo", x[:, i:i + 2], kernel) for i in range(5)], 1)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_fused_batch_norm_returns_the_unbiased_batch_variance():
    y, mean, variance = tf1.nn.fused_batch_norm(IMAGES, np.ones(3, "float32"), np.zeros(3, "float32"))
    np.testing.assert_allclose(np.asarray(variance), IMAGES.var((0, 1, 2), ddof=1), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(mean), IMAGES.mean((0, 1, 2)), atol=1e-6)
    expected = (IMAGES - IMAGES.mean((0, 1, 2))) / np.sqrt(IMAGES.var((0, 1, 2)) + 1e-3)
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op, expected", [
    (lambda: tf1.nn.softsign(np.float32([-3.0, 1.0])), [-0.75, 0.5]),
    (lambda: tf1.nn.xw_plus_b(np.float32([[1, 2]]), np.float32([[1], [1]]), np.float32([0.5])), [[3.5]]),
    (lambda: tf1.nn.relu_layer(np.float32([[1, 2]]), np.float32([[-1], [-1]]), np.float32([0.5])), [[0.0]]),
])
def test_nn_operation_matches_numpy(op, expected):
    np.testing.assert_allclose(np.asarray(op()), expected, rtol=1e-6)
