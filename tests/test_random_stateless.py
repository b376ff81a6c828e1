"""Stateless random ops and set_seed: TF's contract (same seed, same numbers), TF's distributions.

The numbers are JAX's, not TensorFlow's Philox numbers (TF itself drew
others on TPU, through XLA's generator): the tests check what TF promises —
determinism by seed, in and out of compiled code — and that the samples
follow the same distribution as TF 2.21's `tf.random.stateless_*` for the
same shape, bounds and dtype.
"""

import jax
import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib

N = 20000

CASES = [
    ("uniform", dict(minval=-2.0, maxval=3.0)),
    ("uniform", dict()),
    ("uniform", dict(minval=-5, maxval=7, dtype=tf.int32)),
    ("normal", dict(mean=1.5, stddev=0.5)),
    ("truncated_normal", dict(mean=-1.0, stddev=2.0)),
]


def _ours(kind, shape, seed, kwargs):
    kwargs = dict(kwargs)
    if "dtype" in kwargs:
        kwargs["dtype"] = kwargs["dtype"].name
    return np.asarray(getattr(tf1.random, f"stateless_{kind}")(shape, seed=seed, **kwargs))


@pytest.mark.parametrize("kind, kwargs", CASES)
def test_samples_follow_tensorflows_distribution(kind, kwargs):
    ours = _ours(kind, (N,), (2, 3), kwargs)
    theirs = getattr(tf.random, f"stateless_{kind}")((N,), seed=(2, 3), **kwargs).numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    spread = theirs.std()
    assert abs(ours.mean() - theirs.mean()) < 0.05 * spread
    assert abs(ours.std() - spread) < 0.05 * spread
    quantiles = [1, 10, 50, 90, 99]
    if ours.dtype.kind == "i":  # every integer of [minval, maxval) as often as in TF's
        values = np.arange(kwargs["minval"], kwargs["maxval"])
        frequencies = [np.mean(ours == v) for v in values], [np.mean(theirs == v) for v in values]
        np.testing.assert_allclose(*frequencies, atol=0.01)
    else:
        np.testing.assert_allclose(np.percentile(ours, quantiles), np.percentile(theirs, quantiles),
                                   atol=0.05 * spread)
    if kind == "truncated_normal":  # within two standard deviations, as TF's
        assert np.abs(ours - kwargs["mean"]).max() <= 2 * kwargs["stddev"]
    if kind == "uniform":
        assert ours.max() < kwargs.get("maxval", 1.0)
        assert ours.min() >= kwargs.get("minval", 0.0)


@pytest.mark.parametrize("kind, kwargs", CASES)
def test_same_seed_same_numbers_other_seed_others(kind, kwargs):
    first = _ours(kind, (64,), (2, 3), kwargs)
    np.testing.assert_array_equal(first, _ours(kind, (64,), [2, 3], kwargs))
    assert not np.array_equal(first, _ours(kind, (64,), (3, 2), kwargs))
    assert not np.array_equal(first, _ours(kind, (64,), (2, 4), kwargs))


def test_compiled_with_a_traced_seed_gives_the_eager_numbers():
    eager = tf1.contrib.stateless.stateless_random_normal([5], seed=np.array([0, 7], "int32"))
    compiled = jax.jit(lambda s: tf1.contrib.stateless.stateless_random_normal(
        [5], seed=tf1.stack([0, s])))(np.int32(7))
    np.testing.assert_array_equal(np.asarray(compiled), np.asarray(eager))


def test_every_training_step_draws_the_same_numbers():
    def model_fn(features, labels, mode, params):
        noise = tf1.random.stateless_uniform([3], seed=(2, 3))
        w = tf1.get_variable("w", shape=(1,), initializer=tf1.zeros_initializer())
        loss = tf1.reduce_sum(tf1.square(w - noise))
        spec = kte.TPUEstimatorSpec(
            mode, loss=loss,
            train_op=tf1.train.GradientDescentOptimizer(0.1).minimize(loss))
        return spec

    model = kte.EstimatorModel(model_fn, train_batch_size=8)
    model.compile()
    model.fit(({"x": np.zeros((16, 1), "float32")}, np.zeros((16, 1), "float32")),
              epochs=1, verbose=0)
    # Gradient descent on sum((w - c)^2) from 0, c the same 3 numbers in both
    # steps: w_t = mean(c) (1 - 0.4^t).
    c = _ours("uniform", (3,), (2, 3), {})
    w = np.asarray(model.store.variables_by_name()["w"].value)
    np.testing.assert_allclose(w, [np.mean(c) * (1 - 0.4 ** 2)], rtol=1e-5)


def test_symbolic_seed_builds_its_shape():
    out = tf1.random.stateless_uniform([4, 2], seed=keras.KerasTensor((2,), dtype="int32"))
    assert tuple(out.shape) == (4, 2)


@pytest.mark.parametrize("call, match", [
    (lambda: tf1.random.stateless_uniform([2], seed=3), "`seed`.*two integers"),
    (lambda: tf1.random.stateless_uniform([2], seed=(1, 2, 3)), "`seed`"),
    (lambda: tf1.random.stateless_uniform([2], seed=(1, 2), dtype="int32"), "`maxval`"),
    (lambda: tf1.random.set_seed(1.5), "`seed`.*1.5"),
])
def test_bad_argument_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_set_seed_makes_initial_values_repeat():
    def initial(seed):
        tf1.random.set_seed(seed)
        store = store_lib.VariableStore()
        with store_lib.model_fn_call(store, kte.ModeKeys.TRAIN, True, 0, True):
            return np.asarray(tf1.layers.dense(np.ones((1, 4), "float32"), 3, use_bias=False))

    np.testing.assert_array_equal(initial(0), initial(0))
    assert not np.array_equal(initial(0), initial(1))
