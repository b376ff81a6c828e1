"""TF1's variables, prints and graph accessors in model_fn, against TensorFlow.

`tf.Variable` makes a new, uniquely named variable at every call, as in a
TF1 graph; `tf.Print`/`tf.print` print when the step runs, formatted as
TensorFlow's kernels print (the expected lines are TF 2.21's output in
graph mode); `tf.get_default_graph()` and `tf.moving_average_variables()`
answer with this call's collections.
"""

import io

import jax
import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib

X = np.arange(12, dtype=np.float32).reshape(3, 4)
K = np.array([1, 2], np.int32)


def in_model_fn(program):
    """Calls `program` as model_fn code (TRAIN, building)."""
    with store_lib.model_fn_call(store_lib.VariableStore(), kte.ModeKeys.TRAIN, True, 0, True):
        return program()


# -- tf.Variable ------------------------------------------------------------------

def _variables(ns):
    ns.Variable(0, name="seen", trainable=False)
    ns.Variable(np.ones([2, 3], np.float32))
    ns.Variable(lambda: ns.zeros([2]))
    ns.Variable([1, 2])
    ns.Variable(1, dtype=ns.float32, name="scaled")
    with ns.variable_scope("block", reuse=True):  # tf.Variable ignores reuse.
        ns.Variable(2.5, name="v")
        ns.Variable(2.5, name="v")
    return ([(v.name, v.dtype.name.replace("_ref", ""), tuple(v.shape))
             for v in ns.global_variables()],
            [v.name for v in ns.trainable_variables()])


def test_variable_names_dtypes_and_collections_are_tf1s():
    with tf.Graph().as_default():
        expected = _variables(tf.compat.v1)
    assert in_model_fn(lambda: _variables(tf1)) == expected


def test_variable_without_initial_value_is_tf1s_error():
    with pytest.raises(ValueError, match="initial_value must be specified"):
        in_model_fn(lambda: tf1.Variable(name="v"))


def test_a_variable_counts_across_training_steps(tmp_path):
    def model_fn(features, labels, mode):
        seen = tf1.Variable(0, trainable=False, name="seen")
        w = tf1.Variable(tf1.ones([4, 1]))
        loss = tf1.reduce_mean(tf1.matmul(features, w))
        train_op = tf1.group(
            tf1.train.GradientDescentOptimizer(0.1).minimize(
                loss, global_step=tf1.train.get_or_create_global_step()),
            tf1.assign_add(seen, tf1.shape(features)[0]))
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator = kte.TPUEstimator(model_fn, config=kte.RunConfig(model_dir=str(tmp_path)),
                                 use_tpu=False, train_batch_size=3)
    estimator.train(lambda params: np.tile(X, (4, 1)), max_steps=4)
    assert estimator.get_variable_value("seen") == 12
    np.testing.assert_allclose(estimator.get_variable_value("Variable"),
                               1 - 0.1 * 4 * X.mean(0)[:, None], rtol=1e-5)


# -- tf.Print and tf.print ---------------------------------------------------------

# (id, fn(x, k, ns), the lines TensorFlow 2.21 printed in graph mode)
PRINTS = [
    ("Print", lambda x, k, ns: ns.Print(x, [x, k, 7], message="vals: "),
     ["vals: [[0 1 2...]...][1 2][7]"]),
    ("Print-summarize", lambda x, k, ns: ns.Print(x, [x], summarize=20),
     ["[[0 1 2 3][4 5 6 7][8 9 10 11]]"]),
    ("Print-vector-cut", lambda x, k, ns: ns.Print(x, [ns.range(10)], message="r"),
     ["r[0 1 2...]"]),
    ("print", lambda x, k, ns: ns.print("tfprint", x, k, 3.5, {"a": k}),
     ["tfprint [[0 1 2 3]", " [4 5 6 7]", " [8 9 10 11]] [1 2] 3.5 {'a': [1 2]}"]),
    ("print-summarize", lambda x, k, ns: ns.print(ns.range(20), summarize=2),
     ["[0 1 ... 18 19]"]),
    ("print-sep-end", lambda x, k, ns: ns.print(k, k, sep="|", end="!\n"), ["[1 2]|[1 2]!"]),
]


@pytest.mark.parametrize("fn, lines", [(f, lines) for _, f, lines in PRINTS],
                         ids=[name for name, _, _ in PRINTS])
def test_prints_as_tensorflow_when_the_step_runs(capsys, fn, lines):
    step = jax.jit(lambda x, k: (fn(x, k, tf1), x)[1])
    step(X, K)
    jax.effects_barrier()
    assert capsys.readouterr().err.splitlines() == lines


def test_print_returns_its_input_and_stops_after_first_n(capsys):
    step = jax.jit(lambda x: tf1.Print(x * 2, [x[0, 0]], message="x=", first_n=2))
    for _ in range(3):
        np.testing.assert_array_equal(step(X), X * 2)
    jax.effects_barrier()
    assert capsys.readouterr().err.splitlines() == ["x=[0]", "x=[0]"]


def test_print_to_a_stream_and_inside_control_dependencies():
    stream = io.StringIO()

    def step(x):
        with tf1.control_dependencies([tf1.print("sum", tf1.reduce_sum(x), output_stream=stream)]):
            return tf1.identity(x)

    jax.jit(step)(K)
    jax.effects_barrier()
    assert stream.getvalue() == "sum 3\n"


# -- The default graph --------------------------------------------------------------

def test_the_default_graph_holds_this_calls_collections():
    def program():
        graph = tf1.get_default_graph()
        tf1.add_to_collection("aux", 1.0)
        graph.add_to_collection("aux", 2.0)
        with graph.as_default() as same:
            assert same is graph
        graph.finalize()
        return graph.get_collection("aux"), tf1.get_collection("aux")

    assert in_model_fn(program) == ([1.0, 2.0], [1.0, 2.0])


def test_tensors_have_no_graph_names_to_look_up():
    with pytest.raises(NotImplementedError, match="no graph names"):
        in_model_fn(lambda: tf1.get_default_graph().get_tensor_by_name("logits:0"))


def test_moving_average_variables_are_those_an_average_applies_to():
    def program():
        w = tf1.get_variable("w", [2])
        tf1.get_variable("b", [2])
        tf1.train.ExponentialMovingAverage(0.9).apply([w])
        return [v.name for v in tf1.moving_average_variables()]

    assert in_model_fn(program) == ["w:0"]


@pytest.fixture(autouse=True)
def _keras_session():
    yield
    keras.backend.clear_session()
