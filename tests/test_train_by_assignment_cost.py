"""Training by assignment costs what training by gradients costs.

A TF1 `train_op` (`MomentumOptimizer.minimize` under the batch-norm
UPDATE_OPS) runs `model_fn` twice in one step (`train_ops`); the compiled
step still holds one forward computation: as many convolutions and about
as many FLOPs as the same model trained by a Keras optimizer or by a
hand-written `jax.grad` step, and the same values after a few steps.
"""

import functools
import re

import jax
import jax.numpy as jnp
import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator._backend import lowering
from keras_tpu_estimator.engine import program as program_lib
from keras_tpu_estimator.engine import state as state_lib
from keras_tpu_estimator.engine import steps as steps_lib
from keras_tpu_estimator.engine.parts import ModelParts


@pytest.fixture(autouse=True)
def _xla_convolutions():
    """The costs compared are XLA's: its convolutions, counted in the compiled HLO."""
    with lowering.xla_only():
        yield

TRAIN = kte.ModeKeys.TRAIN
RATE, MOMENTUM = 0.1, 0.9


def conv_net(images, training, dropout):
    x = images
    for name in ("conv1", "conv2"):
        x = tf1.layers.conv2d(x, 8, 3, padding="same", use_bias=False, name=name)
        x = tf1.nn.relu(tf1.layers.batch_normalization(x, training=training, name=f"{name}_bn"))
    x = tf1.reduce_mean(x, [1, 2])
    if dropout:
        x = tf1.layers.dropout(x, rate=0.25, training=training)
    return tf1.layers.dense(x, 3, name="logits")


def model_fn_trained_by(optimizer, dropout=False):
    """A conv net with batch norm, trained by a TF1 or a Keras momentum optimizer."""

    def model_fn(features, labels, mode, params):
        logits = conv_net(features, mode == TRAIN, dropout)
        loss = tf1.losses.sparse_softmax_cross_entropy(labels, logits)
        if optimizer == "keras":
            train_op = keras.optimizers.SGD(RATE, momentum=MOMENTUM)
        else:
            with tf1.control_dependencies(tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)):
                train_op = tf1.train.MomentumOptimizer(RATE, MOMENTUM).minimize(
                    loss, global_step=tf1.train.get_or_create_global_step()
                )
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def batch(seed=0):
    rng = np.random.default_rng(seed)
    images = rng.normal(size=(8, 6, 6, 3)).astype("float32")
    return images, rng.integers(0, 3, 8).astype("int32")


def train_step(model_fn):
    """The model's jitted TRAIN step, its variables and their values before it."""
    keras.utils.set_random_seed(0)
    program = program_lib.ModelFnProgram(model_fn, {}, kte.RunConfig(), use_tpu=False)
    parts = ModelParts(program, keras.distribution.DataParallel(devices=jax.devices()[:1]))
    parts.build(TRAIN, batch())
    variables = parts.variables(TRAIN)
    return jax.jit(steps_lib.Steps(program, parts).train), variables, state_lib.read(variables)


def cost(compiled):
    """`(convolutions, flops)` of a compiled program."""
    analysis = compiled.cost_analysis()
    analysis = analysis[0] if isinstance(analysis, (list, tuple)) else analysis
    return len(re.findall(r" convolution\(", compiled.as_text())), analysis["flops"]


@functools.cache
def library_cost(optimizer):
    step, _, state = train_step(model_fn_trained_by(optimizer))
    return cost(step.lower(state, batch()).compile())


def hand_written_cost():
    """The same network and loss, one `jax.grad` step of momentum SGD."""

    def conv_bn_relu(x, kernel, gamma, beta):
        x = keras.ops.conv(x, kernel, padding="same")  # as the layers lower it
        mean, var = jnp.mean(x, (0, 1, 2)), jnp.var(x, (0, 1, 2))
        return jax.nn.relu((x - mean) * jax.lax.rsqrt(var + 1e-3) * gamma + beta), (mean, var)

    def loss_fn(params, images, labels):
        x, stats = images, []
        for kernel, gamma, beta in params["convs"]:
            x, moments = conv_bn_relu(x, kernel, gamma, beta)
            stats.append(moments)
        logits = jnp.mean(x, (1, 2)) @ params["w"] + params["b"]
        loss = -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], 1))
        return loss, stats

    def step(params, velocity, moving, images, labels):
        (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, images, labels)
        velocity = jax.tree.map(lambda v, g: MOMENTUM * v + g, velocity, grads)
        params = jax.tree.map(lambda p, v: p - RATE * v, params, velocity)
        moving = jax.tree.map(lambda m, s: 0.99 * m + 0.01 * s, moving, stats)
        return params, velocity, moving, loss

    shapes = [(3, 3, 3, 8), (3, 3, 8, 8)]
    params = {
        "convs": [(jnp.ones(k), jnp.ones(k[-1]), jnp.zeros(k[-1])) for k in shapes],
        "w": jnp.ones((8, 3)), "b": jnp.zeros(3),
    }
    moving = [(jnp.zeros(8), jnp.ones(8)) for _ in shapes]
    images, labels = batch()
    args = (params, jax.tree.map(jnp.zeros_like, params), moving, images, labels)
    return cost(jax.jit(step).lower(*args).compile())


def test_a_tf1_optimizer_step_costs_what_a_hand_written_grad_step_costs():
    convolutions, flops = library_cost("tf1")
    hand_convolutions, hand_flops = hand_written_cost()
    assert convolutions == hand_convolutions == 5  # 2 forward, 2 + 1 backward
    # The hand-written batch norm spends more elementwise FLOPs than Keras's.
    assert flops < 1.05 * hand_flops


def test_a_tf1_optimizer_step_costs_what_a_keras_optimizer_step_costs():
    tf1_convolutions, tf1_flops = library_cost("tf1")
    keras_convolutions, keras_flops = library_cost("keras")
    assert tf1_convolutions == keras_convolutions
    assert tf1_flops == pytest.approx(keras_flops, rel=0.03)


def values_after(model_fn, steps):
    """`{variable path: value}` after `steps` TRAIN steps on distinct batches."""
    step, variables, state = train_step(model_fn)
    losses = []
    for i in range(steps):
        state, outputs = step(state, batch(i))
        losses.append(float(outputs["loss"]))
    named = {}
    for group, values in zip(variables, state):
        named.update({v.path: np.asarray(value) for v, value in zip(group, values)})
    return named, losses


@pytest.mark.parametrize("dropout", [False, True], ids=["plain", "dropout"])
def test_a_tf1_optimizer_step_gives_the_values_of_a_keras_optimizer_step(dropout):
    # TF1's momentum (v = m v + g; w -= r v) is Keras's (v = m v - r g; w += v)
    # at a constant rate; batch-norm statistics come from the loss's forward.
    tf1_values, tf1_losses = values_after(model_fn_trained_by("tf1", dropout), 3)
    keras_values, keras_losses = values_after(model_fn_trained_by("keras", dropout), 3)
    np.testing.assert_allclose(tf1_losses, keras_losses, rtol=1e-5)
    compared = [p for p in keras_values if p.startswith(("conv", "logits"))]
    assert any("moving_mean" in p for p in compared) and any("kernel" in p for p in compared)
    for path in compared:
        np.testing.assert_allclose(tf1_values[path], keras_values[path], rtol=1e-5, atol=1e-6,
                                   err_msg=path)
    assert int(tf1_values["global_step"]) == 3


def counting_model_fn(features, labels, mode, params):
    """An assignment that reads no gradient (a counter) beside one that does (by hand)."""
    w = tf1.get_variable("w", [3, 1], initializer=tf1.zeros_initializer())
    counter = tf1.get_variable("counter", [], initializer=tf1.zeros_initializer(),
                               trainable=False)
    loss = tf1.reduce_mean(tf1.square(tf1.matmul(tf1.reduce_mean(features, [1, 2]), w) - 1.0))
    [grad] = tf1.gradients(loss, [w])
    train_op = tf1.group(tf1.assign_add(counter, 1.0), tf1.assign_sub(w, RATE * grad),
                         tf1.assign_add(tf1.train.get_or_create_global_step(), 1))
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def test_assignments_with_and_without_gradients_each_happen_once_per_step():
    values, losses = values_after(counting_model_fn, 4)
    assert values["counter"] == 4.0 and int(values["global_step"]) == 4
    w = np.zeros((3, 1), "float32")
    for i in range(4):
        x = batch(i)[0].mean((1, 2))
        w = w - RATE * jax.grad(lambda w: jnp.mean(jnp.square(x @ w - 1.0)))(w)
    np.testing.assert_allclose(values["w"], w, rtol=1e-5)
    assert losses[0] == pytest.approx(1.0)
