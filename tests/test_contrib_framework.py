"""tf.contrib.framework (slim's variables): TF1 names and collections, checked against tf_slim
in a TF graph; assign_from_checkpoint_fn as a warm start from a TensorFlow checkpoint."""

import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib

from model_fns import estimator_config
from model_fns import store_value
from model_fns import write_tf1_checkpoint

framework = tf1.contrib.framework
TRAIN = kte.ModeKeys.TRAIN
W = np.arange(6, dtype="float32").reshape(3, 2) / 10
B = np.array([0.5, -0.5], "float32")


def in_model_fn(program, store=None):
    """Calls `program` as model_fn code (TRAIN, building)."""
    store = store_lib.VariableStore() if store is None else store
    with store_lib.model_fn_call(store, TRAIN, True, 0, True):
        return program()


def names(variables):
    return [v.op.name for v in variables]


def batch_norm_variables(fw, tf):
    """A hand-written batch norm as AmoebaNet writes it, on framework module `fw`."""
    with tf.compat.v1.variable_scope("cell_0"):
        with tf.compat.v1.variable_scope("bn"):
            fw.variable("beta", [4], initializer=tf.compat.v1.zeros_initializer(),
                        collections=["model_variables", "variables"])
            fw.model_variable("gamma", [4], initializer=tf.compat.v1.ones_initializer())
            for name in ("moving_mean", "moving_variance"):
                fw.model_variable(name, [4], initializer=tf.compat.v1.zeros_initializer(),
                                  trainable=False,
                                  collections=["moving_vars", "moving_average_variables"])
        fw.model_variable("weights", [3, 4], regularizer=REGULARIZER(fw))
    fw.variable("logits/weights", [4, 2])


def REGULARIZER(fw):  # noqa: N802  (a table entry)
    return (tf1.contrib.layers if fw is framework else _slim()).l2_regularizer(0.5)


def _slim():
    import tf_slim

    return tf_slim


QUERIES = {
    "global": lambda fw: fw.get_variables(),
    "trainable": lambda fw: fw.get_trainable_variables(),
    "scope": lambda fw: fw.get_variables("cell_0/bn"),
    "suffix": lambda fw: fw.get_variables(suffix="weights"),
    "by_name": lambda fw: fw.get_variables_by_name("weights"),
    "by_suffix": lambda fw: fw.get_variables_by_suffix("moving_mean"),
    "to_restore_exclude": lambda fw: fw.get_variables_to_restore(exclude=["cell_0/bn/moving"]),
    "to_restore_include": lambda fw: fw.get_variables_to_restore(include=["logits", "cell_0/bn"],
                                                                 exclude=["cell_0/bn/gamma"]),
    "unique": lambda fw: [fw.get_unique_variable("cell_0/bn/gamma")],
}


@pytest.fixture(scope="module")
def tf_slim_answers():
    """tf_slim's answers to QUERIES, the moving_vars collection and the penalties."""
    import tensorflow as tf
    import tf_slim

    graph = tf.Graph()
    with graph.as_default():
        batch_norm_variables(tf_slim, tf)
        answers = {key: names(query(tf_slim)) for key, query in QUERIES.items()}
        answers["moving_vars"] = names(tf.compat.v1.get_collection("moving_vars"))
        answers["moving_average_variables"] = names(
            tf.compat.v1.get_collection("moving_average_variables"))
        answers["losses"] = len(tf.compat.v1.get_collection("regularization_losses"))
    return answers


@pytest.fixture(scope="module")
def our_answers():
    def program():
        batch_norm_variables(framework, _TfOnOurs)
        answers = {key: names(query(framework)) for key, query in QUERIES.items()}
        answers["moving_vars"] = names(tf1.get_collection("moving_vars"))
        answers["moving_average_variables"] = names(
            tf1.get_collection(tf1.GraphKeys.MOVING_AVERAGE_VARIABLES))
        answers["losses"] = len(tf1.get_collection(tf1.GraphKeys.REGULARIZATION_LOSSES))
        return answers

    return in_model_fn(program)


class _TfOnOurs:
    """`tf.compat.v1` spelled as this library's `tf1` (the same program on both)."""

    class compat:  # noqa: N801
        v1 = tf1


@pytest.mark.parametrize("key", [*QUERIES, "moving_vars", "moving_average_variables", "losses"])
def test_variable_names_and_collections_equal_tf_slims(tf_slim_answers, our_answers, key):
    assert our_answers[key] == tf_slim_answers[key]


def test_model_variables_of_a_slim_program_equal_tf_slims():
    """Here MODEL_VARIABLES lists every variable; a slim program's are all model variables."""
    import tensorflow as tf
    import tf_slim

    def build(fw, tf_):
        with tf_.compat.v1.variable_scope("conv1"):
            fw.model_variable("weights", [3, 3, 1, 8])
            fw.model_variable("biases", [8], initializer=tf_.compat.v1.zeros_initializer())
        return names(fw.get_model_variables()), names(fw.get_model_variables(suffix="biases"))

    with tf.Graph().as_default():
        expected = build(tf_slim, tf)
    assert in_model_fn(lambda: build(framework, _TfOnOurs)) == expected


def test_arg_scope_sets_defaults_of_model_variable():
    def program():
        with framework.arg_scope([framework.model_variable],
                                 initializer=tf1.ones_initializer(), trainable=False):
            v = framework.model_variable("v", [2])
            w = framework.model_variable("w", [2], trainable=True)
        return np.asarray(v), [x.op.name for x in framework.get_trainable_variables()]

    value, trainable = in_model_fn(program)
    np.testing.assert_array_equal(value, [1.0, 1.0])
    assert trainable == ["w"]


def test_variable_with_reuse_joins_its_collections_once():
    def program():
        for reuse in (False, True):
            with tf1.variable_scope("s", reuse=reuse):
                first = framework.variable("v", [2], collections=["mine"])
        return first, names(tf1.get_collection("mine"))

    _, collected = in_model_fn(program)
    assert collected == ["s/v"]


def test_model_variable_regularizer_penalty_equals_tf_slims():
    import tensorflow as tf
    import tf_slim

    graph = tf.Graph()
    with graph.as_default():
        tf_slim.model_variable("w", initializer=tf.constant(W),
                               regularizer=tf_slim.l2_regularizer(0.3))
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer())
            expected = session.run(tf.compat.v1.get_collection("regularization_losses"))

    def program():
        framework.model_variable("w", W.shape, initializer=tf1.constant_initializer(W),
                                 regularizer=tf1.contrib.layers.l2_regularizer(0.3))
        return [np.asarray(p) for p in tf1.get_collection(tf1.GraphKeys.REGULARIZATION_LOSSES)]

    np.testing.assert_allclose(in_model_fn(program), expected, rtol=1e-6)


@pytest.mark.parametrize("call, error, message", [
    (lambda: framework.get_variables_to_restore(include="logits"), TypeError, "include"),
    (lambda: framework.get_variables_to_restore(exclude="logits"), TypeError, "exclude"),
    (lambda: framework.variable("v", [1], collections=3), ValueError, "collections"),
    (lambda: framework.get_unique_variable("nothing"), ValueError, "no variable"),
], ids=["include", "exclude", "collections", "unique"])
def test_bad_arguments_raise(call, error, message):
    with pytest.raises(error, match=message):
        in_model_fn(call)


def test_global_step_functions_are_compat_v1s():
    assert framework.get_or_create_global_step is tf1.train.get_or_create_global_step
    assert framework.get_global_step is tf1.train.get_global_step


# -- assign_from_checkpoint_fn: a warm start from a TensorFlow checkpoint. -----------


@pytest.fixture(scope="module")
def tf_checkpoint(tmp_path_factory):
    """Written by tf.compat.v1.train.Saver: pretrained/w, pretrained/b, other/big."""
    return write_tf1_checkpoint(str(tmp_path_factory.mktemp("tf")), {
        "pretrained/w": W, "pretrained/b": B, "other/big": np.ones((5, 5), "float32")})


def linear_fn_of(load, learning_rate=0.0, where="scaffold_fn"):
    """net/w (3x2), net/b (2): a model_fn calling `load()` in its scaffold_fn (or itself)."""

    def model_fn(features, labels, mode, params):
        with tf1.variable_scope("net"):
            w = framework.model_variable("w", [3, 2])
            b = framework.model_variable("b", [2], initializer=tf1.zeros_initializer())
        if where == "model_fn":
            load()
        predictions = tf1.matmul(features["x"], w) + b
        loss = tf1.reduce_mean(tf1.square(predictions - labels))
        train_op = tf1.train.GradientDescentOptimizer(learning_rate).minimize(
            loss, global_step=tf1.train.get_or_create_global_step())

        def scaffold_fn():
            init_fn = load()
            return tf1.train.Scaffold(init_fn=lambda scaffold, session: init_fn(session))

        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                    scaffold_fn=scaffold_fn if where == "scaffold_fn" else None)

    return model_fn


def data():
    x = np.random.default_rng(0).normal(size=(16, 3)).astype("float32")
    return {"x": x}, np.stack([x[:, 0], -x[:, 1]], axis=1)


def input_fn(params):
    import tensorflow as tf

    return tf.data.Dataset.from_tensor_slices(data()).repeat().batch(params["batch_size"])


def fitted(model_fn, epochs=1):
    model = kte.EstimatorModel(model_fn, train_batch_size=16)
    model.compile()
    model.fit(data(), epochs=epochs, verbose=0)
    return model


def test_assign_from_checkpoint_fn_warm_starts_a_tpu_estimator_from_a_tf_checkpoint(
        tf_checkpoint, tmp_path):
    def load():
        return framework.assign_from_checkpoint_fn(tf_checkpoint, {
            "pretrained/w": framework.get_unique_variable("net/w"),
            "pretrained/b": framework.get_unique_variable("net/b")})

    estimator = kte.TPUEstimator(
        linear_fn_of(load), config=estimator_config(tmp_path / "model", save_every=100),
        train_batch_size=16, use_tpu=False)
    estimator.train(input_fn, max_steps=1)
    np.testing.assert_array_equal(estimator.get_variable_value("net/w"), W)
    np.testing.assert_array_equal(estimator.get_variable_value("net/b"), B)


def test_assign_from_checkpoint_fn_with_a_list_loads_each_variable_by_its_own_name(tmp_path):
    prefix = write_tf1_checkpoint(str(tmp_path), {"net/w": W})
    model = fitted(linear_fn_of(lambda: framework.assign_from_checkpoint_fn(
        prefix, framework.get_variables_to_restore(include=["net/w"]))))
    np.testing.assert_array_equal(store_value(model, "net/w"), W)
    assert model.init_from_checkpoint_reports[0].matched == ["net/w"]


def test_assign_from_checkpoint_fn_in_model_fn_loads_once_and_returns_a_callback_each_trace(
        tf_checkpoint):
    callbacks = []

    def load():
        callbacks.append(framework.assign_from_checkpoint_fn(
            tf_checkpoint, {"pretrained/b": framework.get_unique_variable("net/b")}))
        return callbacks[-1]

    model = fitted(linear_fn_of(load, where="model_fn"))
    np.testing.assert_array_equal(store_value(model, "net/b"), B)
    assert len(callbacks) >= 2 and all(callable(c) and c(None) is None for c in callbacks)
    assert [r.matched for r in model.init_from_checkpoint_reports] == [["net/b"]]


def test_assign_from_checkpoint_fn_sets_initial_values_only(tf_checkpoint):
    model = fitted(linear_fn_of(lambda: framework.assign_from_checkpoint_fn(
        tf_checkpoint, {"pretrained/w": framework.get_unique_variable("net/w")}),
        learning_rate=0.1), epochs=2)
    trained = store_value(model, "net/w")
    assert not np.allclose(trained, W)
    model.evaluate(data(), batch_size=16, verbose=0)  # Builds EVAL: scaffold_fn asks again.
    np.testing.assert_array_equal(store_value(model, "net/w"), trained)


def test_assign_from_checkpoint_fn_skips_missing_names_when_asked(tf_checkpoint):
    import tensorflow as tf
    import tf_slim

    with tf.Graph().as_default():  # tf_slim: None when nothing is left to load.
        tf_result = tf_slim.assign_from_checkpoint_fn(
            tf_checkpoint, {"absent": tf.compat.v1.get_variable("v", [2])},
            ignore_missing_vars=True)
    results = []

    def load():
        v = framework.get_unique_variable("net/w")
        results.append(framework.assign_from_checkpoint_fn(
            tf_checkpoint, {"absent": v}, ignore_missing_vars=True))
        return framework.assign_from_checkpoint_fn(
            tf_checkpoint, {"absent": v, "pretrained/b": framework.get_unique_variable("net/b")},
            ignore_missing_vars=True)

    model = fitted(linear_fn_of(load))
    assert tf_result is None and results[0] is None
    np.testing.assert_array_equal(store_value(model, "net/b"), B)


@pytest.mark.parametrize("var_list, message", [
    (lambda: {"absent": framework.get_unique_variable("net/w")}, "missing variable"),
    (lambda: {"other/big": framework.get_unique_variable("net/w")}, "has shape"),
    (lambda: [], "cannot be empty"),
], ids=["missing", "shape", "empty"])
def test_assign_from_checkpoint_fn_errors(tf_checkpoint, var_list, message):
    def program():
        framework.model_variable("net/w", [3, 2])
        framework.assign_from_checkpoint_fn(tf_checkpoint, var_list())

    from keras_tpu_estimator.model_fn import initialization

    store = store_lib.VariableStore()
    with pytest.raises(ValueError, match=message):
        with initialization.build_pass(store):
            in_model_fn(program, store)


def test_assign_from_checkpoint_fn_outside_model_fn_says_where_to_call_it(tf_checkpoint):
    with pytest.raises(RuntimeError, match="model_fn or scaffold_fn"):
        framework.assign_from_checkpoint_fn(tf_checkpoint, {"pretrained/w": object()})
