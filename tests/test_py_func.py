"""`tf1.py_func` / `numpy_function` / `py_function`: host Python from `model_fn`, against TensorFlow.

The reference is TF 2.21's `tf.compat.v1.py_func` (and `py_function`) run in
a `tf.Graph` on the same inputs: results, result lists, gradients (none
through the call), dtype errors. The library's call runs directly on arrays,
inside `jax.jit` (as a host callback), and inside `model_fn` through the
build pass and a training step.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
from keras_tpu_estimator import convert
from keras_tpu_estimator.compat import v1 as tf1

X = np.arange(12, dtype=np.float32).reshape(3, 4) / 7.0
K = np.array([2, 0, 1], np.int32)


def top_rows(x, k):
    """numpy post-processing of the kind RetinaNet's detections do: fixed-size results."""
    order = np.argsort(-x.sum(axis=1), kind="stable")
    return x[order].astype(np.float32), (order + k).astype(np.int32)


def scale(x):
    return (x * np.float32(3.0) - 1).astype(np.float32)


def tensorflow_py_func(func, inputs, Tout, kind="py_func"):
    with tf.Graph().as_default():
        placeholders = [tf.constant(v) for v in inputs]
        call = tf.compat.v1.py_func if kind == "py_func" else tf.py_function
        out = call(func, placeholders, Tout)
        with tf.compat.v1.Session() as session:
            return session.run(out)


@pytest.mark.parametrize("run", ["eager", "jit"])
def test_one_result_as_tensorflow(run):
    call = lambda x: tf1.py_func(scale, [x], tf1.float32)  # noqa: E731
    ours = jax.jit(call)(X) if run == "jit" else call(X)
    np.testing.assert_allclose(ours, tensorflow_py_func(scale, [X], tf.float32), rtol=1e-6)


@pytest.mark.parametrize("run", ["eager", "jit"])
def test_a_list_of_results_as_tensorflow(run):
    call = lambda x, k: tf1.py_func(top_rows, [x, k], [tf1.float32, tf1.int32])  # noqa: E731
    ours = jax.jit(call)(X, K) if run == "jit" else call(X, K)
    theirs = tensorflow_py_func(top_rows, [X, K], [tf.float32, tf.int32])
    assert isinstance(ours, list) and len(ours) == 2
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(np.asarray(a), b)
        assert np.asarray(a).dtype == b.dtype


def test_numpy_function_is_py_func():
    ours = jax.jit(lambda x: tf1.numpy_function(scale, [x], tf1.float32))(X)
    theirs = tensorflow_py_func(scale, [X], tf.float32)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_py_function_hands_func_tensorflow_tensors():
    def tf_code(x):  # TensorFlow ops and .numpy() on eager tensors, as in TF 2.
        return tf.reduce_sum(x, axis=1) * 2.0 + float(x.numpy().max())

    ours = jax.jit(lambda x: tf1.py_function(tf_code, [x], tf1.float32))(X)
    np.testing.assert_allclose(ours, tensorflow_py_func(tf_code, [X], tf.float32, "py_function"),
                               rtol=1e-6)


def test_no_gradient_flows_through_the_call_as_in_tensorflow():
    w = np.array([0.5, -1.0, 2.0, 0.25], np.float32)
    with tf.Graph().as_default():
        tw = tf.constant(w)
        y = tf.compat.v1.py_func(scale, [tw * X], tf.float32)
        loss = tf.reduce_sum(tw * X * y)
        [grad] = tf.compat.v1.gradients(loss, [tw])
        with tf.compat.v1.Session() as session:
            theirs = session.run(grad)

    def loss_fn(w):
        y = tf1.py_func(scale, [w * X], tf1.float32)
        return jnp.sum(w * X * y)

    np.testing.assert_allclose(jax.jit(jax.grad(loss_fn))(w), theirs, rtol=1e-5)


def test_a_call_without_results_runs_for_its_side_effect_every_step():
    seen = []

    @jax.jit
    def step(x):
        assert tf1.py_func(lambda v: seen.append(v.sum()), [x], []) == []
        return x + 1

    step(X)
    step(X)
    assert seen == pytest.approx([X.sum(), X.sum()])


def test_model_fn_with_py_func_trains_through_the_build_pass_and_steps(tmp_path):
    calls = []

    def postprocess(logits):
        calls.append(logits.shape)
        return np.sort(logits, axis=1).astype(np.float32)

    def model_fn(features, labels, mode, params):
        logits = tf1.layers.dense(features["x"], 4, name="dense")
        ranked = tf1.py_func(postprocess, [logits], tf1.float32)
        if mode == kte.ModeKeys.PREDICT:
            return kte.EstimatorSpec(mode, predictions={"ranked": ranked})
        loss = tf1.reduce_mean(tf1.square(logits - labels)) + 0.0 * tf1.reduce_sum(ranked)
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf1.train.get_global_step())
        return kte.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, X)).repeat().batch(3)

    estimator = kte.Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(input_fn, steps=3)
    assert calls and all(shape == (3, 4) for shape in calls)
    [first] = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(
        {"x": X}).batch(3), yield_single_examples=False))
    assert np.all(np.diff(first["ranked"], axis=1) >= 0)


def test_a_result_dtype_other_than_tout_fails_as_in_tensorflow():
    as_float64 = lambda x: x.astype(np.float64)  # noqa: E731
    with pytest.raises(tf.errors.InvalidArgumentError, match="double, but expects float"):
        tensorflow_py_func(as_float64, [X], tf.float32)
    with pytest.raises(ValueError, match="the 0-th value returned by .* is float64, but Tout "
                                         "expects float32"):
        tf1.py_func(as_float64, [X], tf1.float32)


def test_constant_inputs_keep_their_values_when_shapes_are_found():
    def per_class(x, num_classes):  # RetinaNet passes its class count as an input
        return np.tile(x.sum(axis=0, keepdims=True), (int(num_classes), 1)).astype(np.float32)

    ours = jax.jit(lambda x: tf1.py_func(per_class, [x, 3], tf1.float32))(X)
    theirs = tensorflow_py_func(per_class, [X, 3], tf.float32)
    assert ours.shape == theirs.shape == (3, 4)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_shapes_that_zeros_cannot_find_are_asked_for_by_name():
    def needs_data(x):
        if not x.any():
            raise RuntimeError("empty input")
        return x[:2].astype(np.float32)

    call = jax.jit(lambda x: tf1.py_func(needs_data, [x], tf1.float32))
    with pytest.raises(ValueError, match="calling it once on zeros .* failed: RuntimeError: "
                                         "empty input. Give them with .*output_shapes="):
        call(X)
    given = jax.jit(lambda x: tf1.py_func(needs_data, [x], tf1.float32, output_shapes=[(2, 4)]))
    np.testing.assert_allclose(given(X), X[:2])


def test_a_result_whose_shape_changes_with_the_values_is_refused():
    def variable_length(x):
        return np.unique(x).astype(np.float32)  # (1,) on zeros, (12,) on X

    with pytest.raises(Exception, match="has shape .* but .* when first called"):
        jax.block_until_ready(jax.jit(lambda x: tf1.py_func(variable_length, [x], tf1.float32))(X))


@pytest.mark.parametrize("func, Tout, error, message", [
    ("scale", tf1.float32, TypeError, "`func` must be callable"),
    (scale, "text?", TypeError, "`Tout` must be a dtype or a list of dtypes"),
    (scale, [tf1.float32, tf1.float32], ValueError, "returned 1 values, but Tout lists 2"),
])
def test_bad_arguments_are_named(func, Tout, error, message):
    with pytest.raises(error, match=message):
        tf1.py_func(func, [X], Tout)


def test_the_converter_runs_py_func_in_model_fn_and_leaves_input_fn_on_tensorflow():
    source = (
        "import tensorflow as tf\n"
        "def input_fn(params):\n"
        "    return tf.data.Dataset.range(3).map(lambda x: tf.py_func(f, [x], tf.int64))\n"
        "def model_fn(features, labels, mode, params):\n"
        "    return tf.py_func(g, [features], tf.float32)\n"
    )
    result = convert.convert_source(source)
    assert "tf.compat.v1.py_func(f, [x], tf.int64)" in result.source
    assert "return tf1.py_func(g, [features], tf1.float32)" in result.source
    assert result.errors == []
