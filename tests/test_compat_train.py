"""compat.v1.train / tpu: TF1 optimizers, gradients, global step, schedules, EMA in EstimatorModel."""

import re

import jax
import jax.numpy as jnp
import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1

TRUE_W = np.array([[1.0], [-2.0], [0.5]], "float32")
STEPS = 3


def _data(n=32):
    x = np.random.default_rng(0).normal(size=(n, 3)).astype("float32")
    return x, x @ TRUE_W


def _fit(model_fn, steps=STEPS, use_tpu=True, iterations_per_loop=STEPS, batch=32):
    x, y = _data(batch)
    config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=iterations_per_loop))
    model = kte.EstimatorModel(
        model_fn, config=config, train_batch_size=batch, use_tpu=use_tpu
    )
    model.compile()
    model.fit(({"x": x}, y), epochs=steps, shuffle=False, verbose=0)
    return model


def _values(model):
    return {path: np.asarray(v.value) for path, v in model.store.variables_by_name().items()}


def _linear_loss(features, labels):
    w = tf1.get_variable("w", shape=(3, 1), initializer=tf1.zeros_initializer())
    pred = tf1.matmul(features["x"], w)
    return tf1.reduce_mean(tf1.square(pred - labels))


def _numpy_grad(w):
    x, y = _data()
    return 2.0 * x.T @ (x @ w - y) / len(x)


# ----------------------------------------------------------------------
# Update rules against numpy references, with TF1's slot names.


def _reference(rule, steps=STEPS):
    """The weights after `steps` full-batch steps of `rule(w, g, state, t)`."""
    w, state = np.zeros((3, 1), "float64"), {}
    for t in range(1, steps + 1):
        w = rule(w, _numpy_grad(w), state, t)
    return w


def _gd(w, g, state, t):
    return w - 0.1 * g


def _momentum(nesterov):
    def rule(w, g, state, t):
        accum = state.get("a", 0.0) * 0.9 + g
        state["a"] = accum
        return w - 0.05 * (g + 0.9 * accum if nesterov else accum)

    return rule


def _adam(w, g, state, t):
    m = 0.9 * state.get("m", 0.0) + 0.1 * g
    v = 0.999 * state.get("v", 0.0) + 0.001 * g * g
    state["m"], state["v"] = m, v
    lr = 0.1 * np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
    return w - lr * m / (np.sqrt(v) + 1e-8)


def _rmsprop(centered):
    def rule(w, g, state, t):
        ms = state.get("ms", 1.0) + (g * g - state.get("ms", 1.0)) * 0.1
        denominator = ms
        if centered:
            mg = state.get("mg", 0.0) + (g - state.get("mg", 0.0)) * 0.1
            state["mg"] = mg
            denominator = ms - mg * mg
        mom = state.get("mom", 0.0) * 0.5 + 0.01 * g / np.sqrt(denominator + 1e-10)
        state["ms"], state["mom"] = ms, mom
        return w - mom

    return rule


def _adagrad(w, g, state, t):
    accum = state.get("acc", 0.1) + g * g
    state["acc"] = accum
    return w - 0.5 * g / np.sqrt(accum)


OPTIMIZERS = [
    (lambda: tf1.train.GradientDescentOptimizer(0.1), _gd, []),
    (lambda: tf1.train.MomentumOptimizer(0.05, 0.9), _momentum(False), ["w/Momentum"]),
    (
        lambda: tf1.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
        _momentum(True),
        ["w/Momentum"],
    ),
    (
        lambda: tf1.train.AdamOptimizer(0.1),
        _adam,
        ["beta1_power", "beta2_power", "w/Adam", "w/Adam_1"],
    ),
    (
        lambda: tf1.train.RMSPropOptimizer(0.01, momentum=0.5),
        _rmsprop(False),
        ["w/RMSProp", "w/RMSProp_1"],
    ),
    (
        lambda: tf1.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
        _rmsprop(True),
        ["w/RMSProp", "w/RMSProp_1", "w/RMSProp_2"],
    ),
    (lambda: tf1.train.AdagradOptimizer(0.5), _adagrad, ["w/Adagrad"]),
]


@pytest.mark.parametrize(
    "make_optimizer, rule, slots",
    OPTIMIZERS,
    ids=["sgd", "momentum", "nesterov", "adam", "rmsprop", "rmsprop_centered", "adagrad"],
)
def test_optimizer_follows_tf1_update_rule_and_names(make_optimizer, rule, slots):
    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        train_op = make_optimizer().minimize(loss)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    values = _values(_fit(model_fn))
    np.testing.assert_allclose(values["w"], _reference(rule), rtol=2e-4, atol=1e-6)
    assert sorted(set(values) - {"w", "global_step"}) == slots


def test_optimizer_lists_its_slots_and_variables():
    seen = {}

    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        optimizer = tf1.train.AdamOptimizer(0.1)
        train_op = optimizer.minimize(loss)
        seen["slot_names"] = optimizer.get_slot_names()
        seen["m"] = optimizer.get_slot(tf1.trainable_variables()[0], "m").name
        seen["variables"] = [v.name for v in optimizer.variables()]
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    _fit(model_fn, steps=1)
    assert seen == {
        "slot_names": ["m", "v"],
        "m": "w/Adam:0",
        "variables": ["beta1_power:0", "beta2_power:0", "w/Adam:0", "w/Adam_1:0"],
    }


# ----------------------------------------------------------------------
# The global step.


@pytest.mark.parametrize(
    "increments",
    ["none", "minimize", "by_hand", "minimize_and_by_hand"],
)
def test_global_step_advances_exactly_once_per_step(increments):
    seen_steps = []

    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        global_step = tf1.train.get_or_create_global_step()
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=global_step if "minimize" in increments else None
        )
        if "by_hand" in increments:
            train_op = tf1.group(train_op, [global_step.assign(global_step + 1)])
        seen_steps.append(kte.get_global_step())
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    model = _fit(model_fn, steps=5, iterations_per_loop=2)
    assert model.global_step == 5
    assert int(np.asarray(model.store.created_variables["global_step"].value)) == 5


def test_each_step_sees_its_own_global_step():
    seen = []

    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        step = tf1.train.get_global_step()
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss)
        host_call = (lambda step: seen.append(int(step[0])), [tf1.reshape(step, [1])])
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, host_call=host_call)

    model = _fit(model_fn, steps=4, iterations_per_loop=4)
    assert seen == [0, 1, 2, 3]
    assert model.global_step == 4


@pytest.mark.parametrize(
    "schedule, formula",
    [
        (lambda s: tf1.train.exponential_decay(0.1, s, 10, 0.5), lambda t: 0.1 * 0.5 ** (t / 10)),
        (
            lambda s: tf1.train.exponential_decay(0.1, s, 10, 0.5, staircase=True),
            lambda t: 0.1 * 0.5 ** (t // 10),
        ),
        (
            lambda s: tf1.train.polynomial_decay(0.1, s, 20, end_learning_rate=0.0, power=1.0),
            lambda t: 0.1 * (1 - min(t, 20) / 20),
        ),
        (
            lambda s: tf1.train.piecewise_constant(s, [5, 15], [1.0, 0.5, 0.1]),
            lambda t: 1.0 if t <= 5 else 0.5 if t <= 15 else 0.1,
        ),
        (
            lambda s: tf1.train.cosine_decay(0.1, s, 20),
            lambda t: 0.1 * 0.5 * (1 + np.cos(np.pi * min(t, 20) / 20)),
        ),
        (
            lambda s: tf1.train.inverse_time_decay(0.1, s, 10, 0.5),
            lambda t: 0.1 / (1 + 0.5 * t / 10),
        ),
    ],
    ids=["exponential", "exponential_staircase", "polynomial", "piecewise", "cosine", "inverse_time"],
)
@pytest.mark.parametrize("step", [0, 5, 12, 30])
def test_learning_rate_schedule_matches_tf1_formula(schedule, formula, step):
    rate = schedule(np.int32(step))
    np.testing.assert_allclose(float(rate), formula(step), rtol=1e-5)


def test_schedule_without_global_step_is_an_error():
    with pytest.raises(ValueError, match="global_step is required for exponential_decay"):
        tf1.train.exponential_decay(0.1, None, 10, 0.5)


def test_learning_rate_from_global_step_takes_effect_every_step_of_a_loop():
    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        rate = tf1.train.exponential_decay(0.1, tf1.train.get_global_step(), 1, 0.5)
        train_op = tf1.train.GradientDescentOptimizer(rate).minimize(loss)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    model = _fit(model_fn, steps=4, iterations_per_loop=4)  # One loop of 4 steps.
    w = np.zeros((3, 1))
    for t in range(4):
        w = w - 0.1 * 0.5**t * _numpy_grad(w)
    np.testing.assert_allclose(_values(model)["w"], w, rtol=1e-4)


# ----------------------------------------------------------------------
# gradients, clipping, apply_gradients.


def test_compute_clip_apply_matches_numpy():
    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        optimizer = tf1.train.GradientDescentOptimizer(0.1)
        grads_and_vars = optimizer.compute_gradients(loss)
        grads, variables = zip(*grads_and_vars)
        grads, _ = tf1.clip_by_global_norm(list(grads), clip_norm=0.5)
        train_op = optimizer.apply_gradients(
            zip(grads, variables), global_step=tf1.train.get_global_step()
        )
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    w = np.zeros((3, 1))
    for _ in range(STEPS):
        g = _numpy_grad(w)
        w = w - 0.1 * g * 0.5 / max(np.linalg.norm(g), 0.5)
    model = _fit(model_fn)
    np.testing.assert_allclose(_values(model)["w"], w, rtol=1e-4)
    assert model.global_step == STEPS


def test_clip_by_global_norm_keeps_none_and_reports_the_norm():
    clipped, norm = tf1.clip_by_global_norm([np.array([3.0, 4.0], "float32"), None], 1.0)
    np.testing.assert_allclose(float(norm), 5.0)
    np.testing.assert_allclose(np.asarray(clipped[0]), [0.6, 0.8], rtol=1e-6)
    assert clipped[1] is None


def test_gradients_of_a_non_trainable_variable_is_an_error():
    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        frozen = tf1.get_variable("frozen", shape=(), trainable=False)
        tf1.gradients(loss, [frozen])
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=tf1.no_op())

    with pytest.raises(ValueError, match=r"Cannot take gradients with respect to \['frozen'\]"):
        _fit(model_fn, steps=1)


def _scoped_model_fn_minimizing(var_list):
    """A DCGAN-style model_fn: `minimize` over a scope's GLOBAL_VARIABLES (a frozen one included)."""

    def model_fn(features, labels, mode, params):
        with tf1.variable_scope("net"):
            loss = _linear_loss(features, labels)
            tf1.get_variable("moving_mean", shape=(), initializer=tf1.ones_initializer(),
                             trainable=False)
        variables = var_list()
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=variables)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def test_minimize_skips_the_non_trainable_variables_of_var_list():
    model = _fit(_scoped_model_fn_minimizing(
        lambda: tf1.get_collection(tf1.GraphKeys.GLOBAL_VARIABLES, scope="net")), steps=1)
    values = _values(model)
    np.testing.assert_allclose(values["net/w"], -0.1 * _numpy_grad(np.zeros((3, 1))), rtol=1e-5)
    assert values["net/moving_mean"] == 1.0


def test_compute_gradients_gives_a_non_trainable_variable_none():
    pairs = {}

    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        frozen = tf1.get_variable("frozen", shape=(), trainable=False)
        grads_and_vars = tf1.train.AdamOptimizer().compute_gradients(
            loss, var_list=tf1.global_variables())
        pairs.update((v.name.split(":")[0], g) for g, v in grads_and_vars)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=tf1.group(
            [frozen.assign(frozen + 1.0)]))

    _fit(model_fn, steps=1)
    assert pairs["frozen"] is None and pairs["w"] is not None


def test_minimize_of_only_non_trainable_variables_has_no_gradients():
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        _fit(_scoped_model_fn_minimizing(
            lambda: [v for v in tf1.global_variables() if "moving_mean" in v.name]), steps=1)


@pytest.mark.parametrize("mode", ["eval", "infer"])
def test_minimize_built_in_eval_and_predict_is_ignored(mode):
    def model_fn(features, labels, mode, params):
        w = tf1.get_variable("w", shape=(3, 1), initializer=tf1.ones_initializer())
        pred = tf1.matmul(features["x"], w)
        loss = tf1.reduce_mean(tf1.square(pred - (0.0 if labels is None else labels)))
        # As cifar_keras: the train op built in every mode.
        train_op = tf1.train.AdamOptimizer().minimize(
            loss, global_step=tf1.train.get_or_create_global_step())
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                    predictions={"pred": pred})

    x, y = _data()
    model = kte.EstimatorModel(model_fn, eval_batch_size=32, predict_batch_size=32)
    model.compile()
    if mode == "eval":
        model.evaluate(({"x": x}, y), verbose=0)
    else:
        outputs = model.predict({"x": x}, verbose=0)
        np.testing.assert_allclose(np.asarray(outputs["pred"]), x @ np.ones((3, 1)), rtol=1e-5)
    assert sorted(model.store.variables_by_name()) == ["w"]


def test_a_train_op_of_another_kind_is_an_error():
    def model_fn(features, labels, mode, params):
        return kte.TPUEstimatorSpec(mode, loss=_linear_loss(features, labels), train_op="sgd")

    with pytest.raises(TypeError, match="`train_op` must be None, a keras.optimizers.Optimizer"):
        _fit(model_fn, steps=1)


def test_tf1_global_step_with_a_keras_optimizer_is_an_error():
    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        tf1.train.get_or_create_global_step()
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1))

    with pytest.raises(ValueError, match="counts steps itself: read the step with"):
        _fit(model_fn, steps=1)


# ----------------------------------------------------------------------
# BERT's AdamWeightDecayOptimizer, written as BERT writes it.


class AdamWeightDecayOptimizer(tf1.train.Optimizer):
    """A basic Adam optimizer that includes "correct" L2 weight decay (BERT's)."""

    def __init__(self, learning_rate, weight_decay_rate=0.0, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-6, exclude_from_weight_decay=None, name="AdamWeightDecayOptimizer"):
        super().__init__(False, name)
        self.learning_rate = learning_rate
        self.weight_decay_rate = weight_decay_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.exclude_from_weight_decay = exclude_from_weight_decay

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        assignments = []
        for (grad, param) in grads_and_vars:
            if grad is None or param is None:
                continue
            param_name = self._get_variable_name(param.name)
            m = tf1.get_variable(name=param_name + "/adam_m", shape=param.shape.as_list(),
                                 dtype=tf1.float32, trainable=False,
                                 initializer=tf1.zeros_initializer())
            v = tf1.get_variable(name=param_name + "/adam_v", shape=param.shape.as_list(),
                                 dtype=tf1.float32, trainable=False,
                                 initializer=tf1.zeros_initializer())
            next_m = tf1.multiply(self.beta_1, m) + tf1.multiply(1.0 - self.beta_1, grad)
            next_v = tf1.multiply(self.beta_2, v) + tf1.multiply(1.0 - self.beta_2,
                                                                  tf1.square(grad))
            update = next_m / (tf1.sqrt(next_v) + self.epsilon)
            if self._do_use_weight_decay(param_name):
                update += self.weight_decay_rate * param
            update_with_lr = self.learning_rate * update
            next_param = param - update_with_lr
            assignments.extend([param.assign(next_param), m.assign(next_m), v.assign(next_v)])
        return tf1.group(*assignments, name=name)

    def _do_use_weight_decay(self, param_name):
        if not self.weight_decay_rate:
            return False
        if self.exclude_from_weight_decay:
            for r in self.exclude_from_weight_decay:
                if re.search(r, param_name) is not None:
                    return False
        return True

    def _get_variable_name(self, param_name):
        m = re.match("^(.*):\\d+$", param_name)
        if m is not None:
            param_name = m.group(1)
        return param_name


def _bert_style_model_fn(features, labels, mode, params):
    with tf1.variable_scope("dense"):
        kernel = tf1.get_variable("kernel", [3, 1], initializer=tf1.constant_initializer(0.5))
        bias = tf1.get_variable("bias", [1], initializer=tf1.constant_initializer(0.1))
    with tf1.variable_scope("LayerNorm"):
        gamma = tf1.get_variable("gamma", [1], initializer=tf1.ones_initializer())
    pred = (tf1.matmul(features["x"], kernel) + bias) * gamma
    loss = tf1.reduce_mean(tf1.square(pred - labels))
    global_step = tf1.train.get_or_create_global_step()
    learning_rate = tf1.train.polynomial_decay(
        tf1.constant(0.05), global_step, 10, end_learning_rate=0.0, power=1.0
    )
    optimizer = AdamWeightDecayOptimizer(
        learning_rate, weight_decay_rate=0.1, exclude_from_weight_decay=["LayerNorm", "bias"]
    )
    tvars = tf1.trainable_variables()
    grads = tf1.gradients(loss, tvars)
    (grads, _) = tf1.clip_by_global_norm(grads, clip_norm=1.0)
    train_op = optimizer.apply_gradients(zip(grads, tvars), global_step=global_step)
    new_global_step = global_step + 1
    train_op = tf1.group(train_op, [global_step.assign(new_global_step)])
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def _bert_reference(steps):
    """The same training in plain JAX: jax.grad, clipping, BERT's update rule."""
    x, y = _data()
    params = {"dense/kernel": jnp.full((3, 1), 0.5), "dense/bias": jnp.full((1,), 0.1),
              "LayerNorm/gamma": jnp.ones((1,))}

    def loss_fn(p):
        pred = (x @ p["dense/kernel"] + p["dense/bias"]) * p["LayerNorm/gamma"]
        return jnp.mean((pred - y) ** 2)

    m = {k: jnp.zeros_like(v) for k, v in params.items()}
    v = {k: jnp.zeros_like(v) for k, v in params.items()}
    for t in range(steps):
        grads = jax.grad(loss_fn)(params)
        norm = jnp.sqrt(sum(jnp.sum(g**2) for g in grads.values()))
        grads = {k: g * 1.0 / jnp.maximum(norm, 1.0) for k, g in grads.items()}
        lr = 0.05 * (1 - min(t, 10) / 10)
        for k in params:
            m[k] = 0.9 * m[k] + 0.1 * grads[k]
            v[k] = 0.999 * v[k] + 0.001 * grads[k] ** 2
            update = m[k] / (jnp.sqrt(v[k]) + 1e-6)
            if not re.search("LayerNorm|bias", k):
                update = update + 0.1 * params[k]
            params[k] = params[k] - lr * update
    return params


def test_bert_style_optimizer_trains_with_weight_decay_exclusions():
    model = _fit(_bert_style_model_fn, steps=4, iterations_per_loop=2)
    values = _values(model)
    for name, expected in _bert_reference(4).items():
        np.testing.assert_allclose(values[name], expected, rtol=1e-4, atol=1e-6, err_msg=name)
    assert {"dense/kernel/adam_m", "dense/kernel/adam_v", "LayerNorm/gamma/adam_v"} <= set(values)
    assert model.global_step == 4  # Incremented by hand, and still exactly once per step.


# ----------------------------------------------------------------------
# ExponentialMovingAverage.


def test_exponential_moving_average_follows_the_trained_weights():
    names = {}

    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss)
        ema = tf1.train.ExponentialMovingAverage(0.5)
        with tf1.control_dependencies([train_op]):
            train_op = ema.apply(tf1.trainable_variables())
        (w,) = tf1.trainable_variables()
        names.update(average=ema.average(w).name, average_name=ema.average_name(w),
                     restore=sorted(ema.variables_to_restore()))
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    model = _fit(model_fn)
    w, shadow = np.zeros((3, 1)), np.zeros((3, 1))
    for _ in range(STEPS):
        w = w - 0.1 * _numpy_grad(w)
        shadow = shadow - 0.5 * (shadow - w)
    values = _values(model)
    np.testing.assert_allclose(values["w/ExponentialMovingAverage"], shadow, rtol=1e-4)
    assert names == {
        "average": "w/ExponentialMovingAverage:0",
        "average_name": "w/ExponentialMovingAverage",
        "restore": ["w/ExponentialMovingAverage"],
    }


# ----------------------------------------------------------------------
# tpu: CrossShardOptimizer and cross_replica_sum in the global view.


def _cross_shard_model_fn(wrapped):
    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        optimizer = tf1.train.MomentumOptimizer(0.05, 0.9)
        if wrapped:
            optimizer = tf1.tpu.CrossShardOptimizer(optimizer)
        train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def test_cross_shard_optimizer_on_8_devices_equals_one_device():
    assert jax.device_count() == 8
    on_8 = _fit(_cross_shard_model_fn(True), use_tpu=True)
    assert on_8.num_replicas == 8
    on_1 = _fit(_cross_shard_model_fn(True), use_tpu=False)
    plain = _fit(_cross_shard_model_fn(False), use_tpu=True)
    np.testing.assert_allclose(_values(on_8)["w"], _values(on_1)["w"], rtol=1e-5)
    np.testing.assert_allclose(_values(on_8)["w"], _values(plain)["w"], rtol=1e-5)
    np.testing.assert_allclose(_values(on_8)["w"], _reference(_momentum(False)), rtol=2e-4)


def test_cross_shard_optimizer_rejects_other_reductions():
    with pytest.raises(ValueError, match="Unsupported reduction: 'none'"):
        tf1.tpu.CrossShardOptimizer(tf1.train.AdamOptimizer(), reduction="none")


def test_cross_replica_sum_is_the_identity_in_the_global_view():
    x = np.arange(4.0)
    assert tf1.tpu.cross_replica_sum(x) is x


# ----------------------------------------------------------------------
# The build pass.


def test_the_build_pass_changes_no_variable_and_each_step_assigns_once():
    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        (w,) = tf1.trainable_variables()
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=tf1.group(w.assign(w + 1.0)))

    x, y = _data()
    model = kte.EstimatorModel(model_fn, train_batch_size=32)
    model.compile()
    source = model.build_for(kte.ModeKeys.TRAIN, {"x": x}, y)
    np.testing.assert_array_equal(_values(model)["w"], np.zeros((3, 1)))
    model.fit(source, epochs=2, verbose=0)
    np.testing.assert_array_equal(_values(model)["w"], np.full((3, 1), 2.0))


@pytest.mark.parametrize("read", ["before_minimize", "after_minimize"])
def test_global_step_reads_the_steps_before_this_one_all_through_model_fn(read):
    seen = []

    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        global_step = tf1.train.get_or_create_global_step()
        before = tf1.reshape(global_step, [1])
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step)
        after = tf1.reshape(global_step, [1])  # resnet_main's host_call tensor.
        tensor = before if read == "before_minimize" else after
        host_call = (lambda step: seen.append(int(step[0])), [tensor])
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, host_call=host_call)

    model = _fit(model_fn, steps=4, iterations_per_loop=2)
    assert seen == [0, 1, 2, 3]
    assert model.global_step == 4



def test_ema_num_updates_of_the_global_step_counts_the_current_step():
    def model_fn(features, labels, mode, params):
        loss = _linear_loss(features, labels)
        global_step = tf1.train.get_or_create_global_step()
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step)
        ema = tf1.train.ExponentialMovingAverage(0.99, num_updates=global_step)
        with tf1.control_dependencies([train_op]):
            train_op = ema.apply(tf1.trainable_variables())
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    model = _fit(model_fn)
    w, shadow = np.zeros((3, 1)), np.zeros((3, 1))
    for step in range(STEPS):
        w = w - 0.1 * _numpy_grad(w)
        updates = step + 1  # TF1 reads it after minimize's increment.
        decay = min(0.99, (1 + updates) / (10 + updates))
        shadow = shadow - (1 - decay) * (shadow - w)
    np.testing.assert_allclose(_values(model)["w/ExponentialMovingAverage"], shadow, rtol=1e-4)
