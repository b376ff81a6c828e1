"""compat.v1 functions shared by input_fn and model_fn run where they are called.

Each case is a function of a TF1 namespace `ns` and an image `x`. Called with
`ns = tf1` inside a `Dataset.map` function, it gives what the same function
gives with `ns = tf.compat.v1` (TensorFlow's op ran, with TensorFlow's seeds);
called with `ns = tf1` on JAX values inside a model_fn, the library's op runs
(a JAX array comes back; for deterministic ops, TensorFlow's numbers).
"""

import jax
import jax.numpy as jnp
import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.compat.v1 import _sides
from keras_tpu_estimator.model_fn import store as store_lib

IMAGE = np.random.default_rng(0).uniform(size=(4, 6, 3)).astype("float32")
V1 = tf.compat.v1

# name -> (function of (ns, x), deterministic)
CASES = {
    # Random ops: TensorFlow's seeds in the input pipeline.
    "random_uniform": (lambda ns, x: x + ns.random_uniform([3], seed=7), False),
    "random_uniform_int": (lambda ns, x: ns.random_uniform([5], 0, 9, ns.int32, seed=2), False),
    "random_normal": (lambda ns, x: x * ns.random_normal([6, 1], seed=3), False),
    "truncated_normal": (lambda ns, x: ns.truncated_normal([2, 3], stddev=0.5, seed=4), False),
    "random_shuffle": (lambda ns, x: ns.random_shuffle(x, seed=5), False),
    "multinomial": (lambda ns, x: ns.multinomial(ns.log(x[0]), 4, seed=6), False),
    "random_crop": (lambda ns, x: ns.random_crop(x, [2, 3, 3], seed=8), False),
    "random.uniform": (lambda ns, x: ns.random.uniform([2], seed=9), False),
    "random.normal": (lambda ns, x: ns.random.normal([2], seed=10), False),
    # Image ops.
    "image.flip_left_right": (lambda ns, x: ns.image.flip_left_right(x), True),
    "image.flip_up_down": (lambda ns, x: ns.image.flip_up_down(x), True),
    "image.transpose_image": (lambda ns, x: ns.image.transpose_image(x), True),
    "image.rot90": (lambda ns, x: ns.image.rot90(x, 3), True),
    "image.random_flip_left_right": (
        lambda ns, x: ns.image.random_flip_left_right(x, seed=11), False),
    "image.random_flip_up_down": (lambda ns, x: ns.image.random_flip_up_down(x, seed=12), False),
    "image.central_crop": (lambda ns, x: ns.image.central_crop(x, 0.5), True),
    "image.crop_to_bounding_box": (lambda ns, x: ns.image.crop_to_bounding_box(x, 1, 2, 2, 3),
                                   True),
    "image.pad_to_bounding_box": (lambda ns, x: ns.image.pad_to_bounding_box(x, 1, 2, 7, 9),
                                  True),
    "image.resize_image_with_crop_or_pad": (
        lambda ns, x: ns.image.resize_image_with_crop_or_pad(x, 6, 4), True),
    "image.resize_images": (lambda ns, x: ns.image.resize_images(x, [7, 3]), True),
    "image.resize_nearest": (lambda ns, x: ns.image.resize_images(
        x, [8, 4], ns.image.ResizeMethod.NEAREST_NEIGHBOR), True),
    "image.resize_bilinear_aligned": (
        lambda ns, x: ns.image.resize_bilinear(x[None], [7, 9], align_corners=True), True),
    "image.random_crop": (lambda ns, x: ns.image.random_crop(x, [3, 3, 3], seed=13), False),
    "image.adjust_brightness": (lambda ns, x: ns.image.adjust_brightness(x, 0.2), True),
    "image.adjust_contrast": (lambda ns, x: ns.image.adjust_contrast(x, 1.5), True),
    "image.random_brightness": (lambda ns, x: ns.image.random_brightness(x, 0.3, seed=14),
                                False),
    "image.random_contrast": (lambda ns, x: ns.image.random_contrast(x, 0.5, 1.5, seed=15),
                              False),
    "image.per_image_standardization": (
        lambda ns, x: ns.image.per_image_standardization(x), True),
    "image.convert_image_dtype": (lambda ns, x: ns.image.convert_image_dtype(
        ns.image.convert_image_dtype(x, ns.uint8), ns.float32), True),
    "image.uint8_brightness": (lambda ns, x: ns.image.adjust_brightness(
        ns.image.convert_image_dtype(x, ns.uint8, saturate=True), 0.5), True),
    "image.rgb_to_grayscale": (lambda ns, x: ns.image.rgb_to_grayscale(x), True),
    # Math, nn, control flow, shapes.
    "reduce_mean": (lambda ns, x: ns.reduce_mean(ns.square(x), axis=[0, 1]), True),
    "math.rsqrt": (lambda ns, x: ns.math.rsqrt(ns.math.reduce_sum(x, -1)), True),
    "nn.softmax": (lambda ns, x: ns.nn.softmax(ns.nn.relu(x - 0.5)), True),
    "cond": (lambda ns, x: ns.cond(ns.reduce_sum(x) > 1.0, lambda: x * 2.0, lambda: x), True),
    "while_loop": (lambda ns, x: ns.while_loop(
        lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0), [0, x])[1], True),
    "shapes": (lambda ns, x: ns.concat([ns.reshape(x, [-1, 3]), ns.tile(
        ns.expand_dims(ns.reduce_max(x, [0, 1]), 0), [2, 1])], axis=0), True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_dataset_map_runs_tensorflow(name):
    case, _ = CASES[name]
    # Both in one map function: ops of equal seeds in one graph draw the same numbers.
    tf.random.set_seed(1)
    dataset = tf.data.Dataset.from_tensors(IMAGE).map(lambda x: (case(tf1, x), case(V1, x)))
    got, expected = next(iter(dataset))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_model_fn_runs_the_library(name):
    case, deterministic = CASES[name]
    with store_lib.model_fn_call(store_lib.VariableStore(), kte.ModeKeys.TRAIN, True, 0, True):
        result = jax.jit(lambda x: case(tf1, x))(jnp.asarray(IMAGE))
    expected = case(V1, tf.constant(IMAGE)).numpy()
    assert isinstance(result, jax.Array)
    assert result.shape == expected.shape
    if deterministic:
        np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-5, atol=1e-6)


def test_keras_tensors_run_the_library():
    with store_lib.model_fn_call(store_lib.VariableStore(), kte.ModeKeys.TRAIN, True, 0, True):
        flipped = tf1.image.random_flip_left_right(keras.KerasTensor((2, 6, 4, 3)))
        resized = tf1.image.resize_images(keras.KerasTensor((6, 4, 3)), [3, 2])
    assert isinstance(flipped, keras.KerasTensor) and flipped.shape == (2, 6, 4, 3)
    assert isinstance(resized, keras.KerasTensor) and resized.shape == (3, 2, 3)


def test_python_values_decide_by_context():
    # In a map function with no tensor argument: TensorFlow's op, TensorFlow's seeds.
    def draw(_):
        return tf1.random_uniform([2], seed=3)

    tf.random.set_seed(2)
    got = next(iter(tf.data.Dataset.range(1).map(draw))).numpy()
    tf.random.set_seed(2)
    want = next(iter(tf.data.Dataset.range(1).map(lambda _: V1.random_uniform([2], seed=3))))
    np.testing.assert_array_equal(got, want.numpy())
    # Outside model_fn and tf.function: the library's op, unless it needs model_fn.
    assert isinstance(tf1.constant([1, 2]), jax.Array)
    assert isinstance(tf1.random_uniform([2]), tf.Tensor)  # the seed generator needs model_fn
    with pytest.raises(RuntimeError, match="inside a model_fn"):
        tf1.get_variable("w", [1])  # variables outside model_fn stay an error
    # In model_fn on Python values: the library's op.
    with store_lib.model_fn_call(store_lib.VariableStore(), kte.ModeKeys.TRAIN, True, 0, True):
        assert isinstance(tf1.random_uniform([2]), jax.Array)
        assert isinstance(tf1.zeros([2]), jax.Array)


def test_eager_tensors_and_nested_arguments_run_tensorflow():
    assert _sides.side_of_call(([tf.constant(1.0), 2.0],), {}) == _sides.TENSORFLOW
    assert _sides.side_of_call((), {"x": {"y": tf.ragged.constant([[1], []])}}) == "tensorflow"
    assert _sides.side_of_call((jnp.ones(2),), {}) == _sides.LIBRARY
    assert isinstance(tf1.image.flip_up_down(tf.constant(IMAGE)), tf.Tensor)
    assert tf1.image.flip_up_down.tensorflow_paths == ["image.flip_up_down"]
    assert tf1.random.uniform is tf1.random_uniform  # one function, as in TensorFlow
    assert set(tf1.random_uniform.tensorflow_paths) == {"random.uniform", "random_uniform"}


def _augment(image):
    """Shared by the input pipeline and model_fn, as converted code has it."""
    image = tf1.image.random_flip_left_right(image)
    return image + tf1.random_uniform(tf1.shape(image), 0.0, 0.01)


def test_shared_augmentation_trains_through_tpu_estimator(tmp_path):
    rng = np.random.default_rng(1)
    images = rng.uniform(size=(32, 4, 4, 1)).astype("float32")
    labels = images.mean(axis=(1, 2, 3))

    def input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices((images, labels))
        dataset = dataset.map(lambda x, y: (_augment(x), y))
        return dataset.repeat().batch(params["batch_size"], drop_remainder=True)

    def model_fn(features, labels, mode, params):
        features = _augment(features)
        predictions = tf1.layers.dense(tf1.layers.flatten(features), 1)[:, 0]
        loss = tf1.reduce_mean(tf1.square(predictions - labels))
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf1.train.get_global_step())
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    config = kte.RunConfig(model_dir=str(tmp_path), log_step_count_steps=None,
                           tpu_config=kte.TPUConfig(iterations_per_loop=2))
    estimator = kte.TPUEstimator(model_fn=model_fn, config=config, train_batch_size=8)
    estimator.train(input_fn, max_steps=2)
    assert estimator.get_variable_value("global_step") == 2


def test_converter_names_the_functions_both_sides_call():
    from keras_tpu_estimator import convert

    source = (
        "import tensorflow as tf\n\n"
        "def augment(image):\n"
        "    return tf.image.random_flip_left_right(image)\n\n"
        "def input_fn(params):\n"
        "    return tf.data.Dataset.range(4).map(augment)\n\n"
        "def model_fn(features, labels, mode, params):\n"
        "    return augment(features)\n"
    )
    result = convert.convert_source(source)
    assert "tf1.image.random_flip_left_right(image)" in result.source
    shared = [c for c in result.changes if "both model_fn and the input pipeline" in c.message]
    assert [(c.line, c.level) for c in shared] == [(3, "INFO")]
    assert "'augment'" in shared[0].message
