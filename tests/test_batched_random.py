"""Initial values drawn by one threefry call: bit for bit JAX's own draws."""

import jax
import jax.numpy as jnp
import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator._keras_internals import batched_random

SHAPES = [(), (1,), (7,), (3, 5), (2, 3, 4), (0, 3), (1000,)]


@pytest.mark.parametrize("seed", [0, 1, 2**31 + 5])
def test_segments_are_jax_random_bits_of_each_key_and_shape(seed):
    keys = [jax.random.key_data(jax.random.key(seed + i)) for i in range(len(SHAPES))]
    drawn = jax.jit(lambda: batched_random.segment_bits(np.stack(keys), SHAPES))()
    for key, shape, bits in zip(keys, SHAPES, drawn):
        expected = jax.random.bits(jax.random.wrap_key_data(key), shape)
        np.testing.assert_array_equal(bits, expected)


# Raw key data made before tracing, as Keras's seed generator makes its seeds.
KEYS = [jax.random.key_data(jax.random.key(i)) for i in range(5)]


def _initial_values():
    """Draws as Keras initializers make them: each from a constant key."""
    keys = [jax.random.wrap_key_data(k) for k in KEYS]
    return [
        jax.random.normal(keys[0], (4, 8)),
        jax.random.uniform(keys[1], (8,), minval=-1.0, maxval=1.0),
        jax.random.truncated_normal(keys[2], -2.0, 2.0, (3, 3, 2)),
        jax.random.bits(keys[3], (5,)),
        jnp.zeros((6,)) + jax.random.normal(keys[4], ()),
    ]


def _draw_count(fn):
    """The threefry hashes `fn` computes (`random_bits` draws and direct
    `threefry2x32` calls), its nested jaxprs included."""
    def count(jaxpr):
        return sum(
            (eqn.primitive.name in ("random_bits", "threefry2x32"))
            + sum(count(sub) for sub in jax.extend.core.jaxprs_in_params(eqn.params))
            for eqn in jaxpr.eqns)

    return count(jax.make_jaxpr(fn)().jaxpr)


def test_constant_key_draws_take_one_call_and_give_the_same_values():
    closed = jax.make_jaxpr(_initial_values)()
    batched = batched_random.batched_random_bits(closed)
    assert _draw_count(jax.extend.core.jaxpr_as_fun(closed)) == 5
    assert _draw_count(batched) == 1
    for value, expected in zip(jax.jit(batched)(), _initial_values()):
        np.testing.assert_array_equal(value, expected)


@pytest.mark.parametrize("limit, calls", [(10**6, 1), (40, 2), (1, 5)])
def test_draws_are_grouped_up_to_the_element_limit(limit, calls):
    # Draws of 32, 8, 18, 5 and 1 elements, in groups of at most `limit` (a larger one alone).
    closed = jax.make_jaxpr(_initial_values)()
    batched = batched_random.batched_random_bits(closed, group_elements=limit)
    assert _draw_count(batched) == calls
    for value, expected in zip(jax.jit(batched)(), _initial_values()):
        np.testing.assert_array_equal(value, expected)


TYPED_KEY = jax.random.key(9)  # A typed key array, captured as a constant.


def test_a_traced_key_a_typed_constant_or_a_draw_in_a_conditional_is_left_as_it_was():
    def values(seed):
        key, *keys = [jax.random.wrap_key_data(k) for k in KEYS[:3]]
        return [
            jax.random.normal(jax.random.fold_in(key, seed), (3,)),  # A traced key.
            jax.lax.cond(seed > 0, lambda: jax.random.normal(key, (2,)), lambda: jnp.ones(2)),
            jax.random.normal(TYPED_KEY, (2,)),
            jax.random.normal(keys[0], (4,)),
            jax.random.normal(keys[1], (4,)),
        ]

    closed = jax.make_jaxpr(lambda: values(jnp.int32(3)))()
    batched = batched_random.batched_random_bits(closed)
    assert _draw_count(batched) == 1 + 1 + 1 + 1  # Traced, cond's, typed key's; the batch.
    for value, expected in zip(jax.jit(batched)(), values(jnp.int32(3))):
        np.testing.assert_array_equal(value, expected)


def test_a_models_initial_values_are_those_of_one_draw_per_variable(monkeypatch):
    def model_fn(features, labels, mode):
        x = features
        for i in range(4):
            x = kte.get_or_create_layer(f"dense_{i}", lambda i=i: keras.layers.Dense(3 + i))(x)
        return kte.TPUEstimatorSpec(mode, loss=keras.ops.mean(x),
                                    train_op=keras.optimizers.SGD(0.1))

    def initial_weights():
        keras.utils.set_random_seed(7)
        model = kte.EstimatorModel(model_fn, train_batch_size=8)
        x = np.ones((8, 2), "float32")
        model.build_for(kte.ModeKeys.TRAIN, x, x[:, 0])
        return [np.asarray(v.value) for v in model.store.variables]

    batched = initial_weights()
    monkeypatch.setattr(batched_random, "_batched_keys", lambda closed: [])  # One per variable.
    for a, b in zip(batched, initial_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    assert all(np.abs(w).max() > 0 for w in batched[::2])  # The kernels are drawn.
