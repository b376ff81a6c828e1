"""tf1.contrib.image.transform / translate / rotate against TF 2.21's ImageProjectiveTransformV3.

`tf.contrib.image` called that kernel (fill with zeros); TF 2.21 still has
it as `tf.raw_ops.ImageProjectiveTransformV3`: the same images and
transforms go to both.
"""

import math

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator.compat.v1 as tf1

IMAGE = tf1.contrib.image
RNG = np.random.default_rng(0)
UINT8 = RNG.integers(0, 256, size=(2, 9, 7, 3)).astype("uint8")
FLOATS = RNG.normal(size=(2, 9, 7, 3)).astype("float32")


def _tf(images, transforms, interpolation, output_shape=None):
    images = np.asarray(images)
    batched = images[None, ..., None] if images.ndim == 2 else (
        images[None] if images.ndim == 3 else images)
    transforms = np.asarray(transforms, "float32").reshape(-1, 8)
    shape = batched.shape[1:3] if output_shape is None else output_shape
    out = tf.raw_ops.ImageProjectiveTransformV3(
        images=batched, transforms=transforms, output_shape=np.asarray(shape, "int32"),
        fill_value=0.0, interpolation=interpolation, fill_mode="CONSTANT").numpy()
    return out[0, ..., 0] if images.ndim == 2 else (out[0] if images.ndim == 3 else out)


SHEAR_X = [1.0, 0.3, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]  # AutoAugment's shear_x
SHEAR_Y = [1.0, 0.0, 0.0, -0.45, 1.0, 0.0, 0.0, 0.0]
PROJECTIVE = [0.9, 0.1, 1.5, -0.2, 1.1, -0.7, 0.01, -0.02]
ZOOM = [0.5, 0.0, 0.25, 0.0, 0.5, 0.25, 0.0, 0.0]  # every half pixel: rounding ties


@pytest.mark.parametrize("interpolation", ["NEAREST", "BILINEAR"])
@pytest.mark.parametrize("images", [UINT8, FLOATS], ids=["uint8", "float32"])
@pytest.mark.parametrize("transforms", [SHEAR_X, SHEAR_Y, PROJECTIVE, ZOOM],
                         ids=["shear_x", "shear_y", "projective", "zoom"])
def test_transform_matches_tf(images, transforms, interpolation):
    got = np.asarray(IMAGE.transform(images, transforms, interpolation=interpolation))
    expected = _tf(images, transforms, interpolation)
    assert got.dtype == expected.dtype
    atol = 1 if images.dtype == "uint8" else 1e-5  # bilinear: TF truncates to uint8 as we do
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=atol)


@pytest.mark.parametrize("images", [FLOATS[0], FLOATS[0, ..., 0]], ids=["hwc", "hw"])
def test_transform_of_one_image_keeps_its_rank(images):
    got = np.asarray(IMAGE.transform(images, PROJECTIVE, interpolation="BILINEAR"))
    np.testing.assert_allclose(got, _tf(images, PROJECTIVE, "BILINEAR"), rtol=1e-5, atol=1e-5)


def test_transform_per_image_and_output_shape_match_tf():
    transforms = np.array([SHEAR_X, PROJECTIVE], "float32")
    got = IMAGE.transform(FLOATS, transforms, interpolation="BILINEAR", output_shape=[5, 11])
    np.testing.assert_allclose(np.asarray(got), _tf(FLOATS, transforms, "BILINEAR", (5, 11)),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("translations", [[-3, 0], [0, -2], [2.5, 1.0], [[1, 2], [-4, 0]]])
def test_translate_matches_tf(translations):
    t = np.asarray(translations, "float32").reshape(-1, 2)
    transforms = np.stack([np.ones(len(t)), np.zeros(len(t)), -t[:, 0], np.zeros(len(t)),
                           np.ones(len(t)), -t[:, 1], np.zeros(len(t)), np.zeros(len(t))], 1)
    got = IMAGE.translate(UINT8, translations)
    np.testing.assert_array_equal(np.asarray(got), _tf(UINT8, transforms, "NEAREST"))


def test_translate_moves_content_right_and_down():
    image = np.zeros((5, 5), "float32")
    image[1, 1] = 1.0
    moved = np.asarray(IMAGE.translate(image, [2, 1]))
    assert moved[2, 3] == 1.0 and moved.sum() == 1.0


@pytest.mark.parametrize("k", [1, 2, 3])
def test_rotate_by_right_angles_is_rot90_counterclockwise(k):
    square = FLOATS[0, :7]  # 7 x 7 x 3
    got = np.asarray(IMAGE.rotate(square, k * math.pi / 2))
    np.testing.assert_array_equal(got, np.rot90(square, k))


@pytest.mark.parametrize("interpolation", ["NEAREST", "BILINEAR"])
def test_rotate_per_image_angles_matches_tf_about_the_centre(interpolation):
    angles = np.array([math.radians(30), math.radians(-75)], "float32")
    h, w = UINT8.shape[1] - 1, UINT8.shape[2] - 1
    cos, sin = np.cos(angles), np.sin(angles)
    transforms = np.stack([cos, -sin, (w - (cos * w - sin * h)) / 2, sin, cos,
                           (h - (sin * w + cos * h)) / 2, 0 * cos, 0 * cos], 1)
    got = np.asarray(IMAGE.rotate(UINT8, angles, interpolation=interpolation))
    expected = _tf(UINT8, transforms, interpolation)
    assert np.mean(got != expected) < 0.01  # float32 rounding of the offsets only
    np.testing.assert_allclose(got, expected, atol=1)


def test_transform_builds_symbolically():
    out = IMAGE.transform(keras.KerasTensor((2, 9, 7, 3)), SHEAR_X, output_shape=(4, 5))
    assert tuple(out.shape) == (2, 4, 5, 3)


@pytest.mark.parametrize("kwargs, match", [
    (dict(interpolation="BICUBIC"), "`interpolation`.*BICUBIC"),
    (dict(transforms=[1.0, 0.0, 0.0]), "`transforms`.*\\(1, 3\\)"),
    (dict(images=np.zeros((1, 1, 2, 2, 1))), "rank 2"),
])
def test_bad_argument_is_named(kwargs, match):
    arguments = dict(images=FLOATS, transforms=SHEAR_X)
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=match):
        IMAGE.transform(**arguments)


def test_in_a_tf_data_pipeline_they_run_tensorflows_kernel():
    # AutoAugment's calls, in Dataset.map: TF tensors, a level computed by TF.
    def augment(image):
        level = tf.constant(0.3) * 1.0
        sheared = IMAGE.transform(image, [1.0, level, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
        shifted = IMAGE.translate(sheared, [-tf.constant(2.0), 0])
        return IMAGE.rotate(shifted, tf.constant(math.radians(30)), interpolation="BILINEAR")

    dataset = tf.data.Dataset.from_tensor_slices(UINT8).map(augment)
    got = np.stack([image.numpy() for image in dataset])
    expected = np.asarray(IMAGE.rotate(
        IMAGE.translate(IMAGE.transform(UINT8, [1.0, 0.3, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]),
                        [-2.0, 0]),
        math.radians(30), interpolation="BILINEAR"))
    assert got.dtype == np.uint8
    assert np.mean(got != expected) < 0.01
    np.testing.assert_allclose(got, expected, atol=1)
