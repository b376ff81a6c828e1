"""`tf.tpu.outside_compilation` runs its computation as part of the step, as TF does off a TPU."""

import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator import convert


def _postprocess(a, b):
    return {"sum": a * 2.0 + b, "max": tf1.reduce_max(a)}


def test_outputs_equal_tensorflows():
    a = np.array([1.0, -2.0, 3.0], np.float32)
    ours = tf1.tpu.outside_compilation(_postprocess, a, b=1.0)
    theirs = tf.compat.v1.tpu.outside_compilation(
        lambda x, b: {"sum": x * 2.0 + b, "max": tf.reduce_max(x)}, tf.constant(a), b=1.0)
    for key in theirs:
        np.testing.assert_allclose(np.asarray(ours[key]), theirs[key].numpy())


def test_runs_under_jit():
    import jax

    result = jax.jit(lambda a: tf1.tpu.outside_compilation(_postprocess, a, 1.0)["sum"])(
        np.ones(2, np.float32))
    np.testing.assert_allclose(np.asarray(result), [3.0, 3.0])


def test_a_computation_that_is_not_callable_is_refused():
    with pytest.raises(TypeError, match="computation=5"):
        tf1.tpu.outside_compilation(5)


def test_converter_maps_it_to_compat_v1():
    source = ("import tensorflow as tf\n\n"
              "def model_fn(features, labels, mode, params):\n"
              "    return tf.contrib.tpu.outside_compilation(f, features)\n")
    result = convert.convert_source(source)
    assert not result.errors
    assert "tf1.tpu.outside_compilation(f, features)" in result.source
