"""tf1.image's colour, resizing, box and codec ops against TensorFlow's own.

Each deterministic case is a function of a TF1 namespace `ns`: with
`ns = tf.compat.v1` it builds a TensorFlow graph that a `Session` runs (the
reference); with `ns = tf1` it runs under `jax.jit`, as inside a
`model_fn`. Values agree to float32 rounding (integer images to one step of
the conversion back from floats) and dtypes agree. The random ops draw from
the model's seed generator: their specification is the range of what they
draw, their invariants, and repeatability. The codecs read and write bytes,
which only TensorFlow holds: they run TensorFlow's ops in the input pipeline
and raise in `model_fn`.
"""

import functools

import jax
import jax.numpy as jnp
import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.compat.v1._op_helpers import computed_dtype
from keras_tpu_estimator.model_fn import store as store_lib

import tf_reference

V1 = tf.compat.v1
_rng = np.random.default_rng(0)
RGB = _rng.uniform(size=(2, 5, 6, 3)).astype("float32")
WIDE = _rng.uniform(-0.5, 1.5, size=(4, 6, 3)).astype("float32")  # outside [0, 1]
U8 = (_rng.uniform(size=(5, 6, 3)) * 255).astype("uint8")
F16 = RGB[0].astype("float16")
# Two or three equal channels, grays and black: the hue's ties.
TIES = np.array([[[0.5, 0.5, 0.1], [0.2, 0.7, 0.7], [0.9, 0.3, 0.9], [0.4, 0.4, 0.4],
                  [0.0, 0.0, 0.0], [1.0, 1.0, 0.0]]], "float32")
HUES = np.stack([np.linspace(-0.5, 1.5, 9), np.full(9, 0.6), np.full(9, 0.8)], -1)[None]
HUES = HUES.astype("float32")
BOXES = np.array([[0.1, 0.2, 0.8, 0.9], [-0.2, 0.5, 1.3, 0.1], [0.5, 0.5, 0.5, 0.5],
                  [0.9, 0.9, 0.1, 0.05]], "float32")
BOX_IND = np.array([1, 0, 1, 0], "int32")

# name -> function of the namespace `ns`
CASES = {
    "rgb_to_hsv": lambda ns: ns.image.rgb_to_hsv(RGB),
    "rgb_to_hsv/outside_unit_range": lambda ns: ns.image.rgb_to_hsv(WIDE),
    "rgb_to_hsv/ties": lambda ns: ns.image.rgb_to_hsv(TIES),
    "rgb_to_hsv/float16": lambda ns: ns.image.rgb_to_hsv(F16),
    "hsv_to_rgb": lambda ns: ns.image.hsv_to_rgb(RGB),
    "hsv_to_rgb/hue_outside_unit_range": lambda ns: ns.image.hsv_to_rgb(HUES),
    "hsv_to_rgb/round_trip": lambda ns: ns.image.hsv_to_rgb(ns.image.rgb_to_hsv(RGB)),
    "adjust_hue": lambda ns: ns.image.adjust_hue(RGB, 0.3),
    "adjust_hue/negative": lambda ns: ns.image.adjust_hue(RGB, -0.8),
    "adjust_hue/outside_unit_range": lambda ns: ns.image.adjust_hue(WIDE, 0.45),
    "adjust_hue/ties": lambda ns: ns.image.adjust_hue(TIES, 0.25),
    "adjust_hue/uint8": lambda ns: ns.image.adjust_hue(U8, 0.2),
    "adjust_hue/tensor_delta": lambda ns: ns.image.adjust_hue(RGB, ns.constant(0.6)),
    "adjust_saturation": lambda ns: ns.image.adjust_saturation(RGB, 1.7),
    "adjust_saturation/down": lambda ns: ns.image.adjust_saturation(RGB, 0.4),
    "adjust_saturation/zero": lambda ns: ns.image.adjust_saturation(RGB, 0.0),
    "adjust_saturation/outside_unit_range": lambda ns: ns.image.adjust_saturation(WIDE, 1.3),
    "adjust_saturation/ties": lambda ns: ns.image.adjust_saturation(TIES, 3.0),
    "adjust_saturation/uint8": lambda ns: ns.image.adjust_saturation(U8, 2.5),
    "resize_bicubic/down": lambda ns: ns.image.resize_bicubic(RGB, [3, 4]),
    "resize_bicubic/up": lambda ns: ns.image.resize_bicubic(RGB, [13, 17]),
    "resize_bicubic/align_corners": lambda ns: ns.image.resize_bicubic(
        RGB, [9, 11], align_corners=True),
    "resize_bicubic/uint8": lambda ns: ns.image.resize_bicubic(U8[None], [7, 4]),
    "resize_bicubic/list_of_images": lambda ns: ns.image.resize_bicubic(
        [ns.constant(U8)], [8, 8])[0],
    "resize_area/down": lambda ns: ns.image.resize_area(RGB, [2, 3]),
    "resize_area/fractional": lambda ns: ns.image.resize_area(RGB, [3, 4]),
    "resize_area/up": lambda ns: ns.image.resize_area(RGB, [11, 9]),
    "resize_area/align_corners": lambda ns: ns.image.resize_area(RGB, [3, 5],
                                                                 align_corners=True),
    "resize_area/uint8": lambda ns: ns.image.resize_area(U8[None], [3, 2]),
    "resize_images/bicubic": lambda ns: ns.image.resize_images(
        U8, [4, 9], ns.image.ResizeMethod.BICUBIC),
    "resize_images/area": lambda ns: ns.image.resize_images(
        U8, [4, 9], ns.image.ResizeMethod.AREA),
    "resize_images/area_same_size": lambda ns: ns.image.resize_images(
        U8, [5, 6], ns.image.ResizeMethod.AREA),
    "resize_images/method_name": lambda ns: ns.image.resize_images(RGB, [3, 3], "area"),
    "resize_images/preserve_aspect_ratio": lambda ns: ns.image.resize_images(
        RGB, [10, 10], preserve_aspect_ratio=True),
    "resize/bicubic_align_corners": lambda ns: ns.image.resize(
        RGB, [8, 3], ns.image.ResizeMethod.BICUBIC, align_corners=True),
    "crop_and_resize": lambda ns: ns.image.crop_and_resize(RGB, BOXES, BOX_IND, [4, 3]),
    "crop_and_resize/nearest": lambda ns: ns.image.crop_and_resize(
        RGB, BOXES, BOX_IND, [5, 4], method="nearest"),
    "crop_and_resize/extrapolation_value": lambda ns: ns.image.crop_and_resize(
        RGB, BOXES, BOX_IND, [4, 4], extrapolation_value=-1.0),
    "crop_and_resize/one_pixel": lambda ns: ns.image.crop_and_resize(
        RGB, BOXES, BOX_IND, [1, 1]),
    "crop_and_resize/uint8": lambda ns: ns.image.crop_and_resize(
        U8[None], BOXES[:2], [0, 0], [3, 3]),
    "crop_and_resize/box_indices": lambda ns: ns.image.crop_and_resize(
        RGB, BOXES, crop_size=[2, 2], box_indices=BOX_IND),
}


TABLE = tf_reference.Table(CASES)


def _check(expected, actual):
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert str(actual.dtype) == computed_dtype(expected.dtype)
    assert actual.shape == expected.shape
    if expected.dtype.kind in "iu":
        # One step of float -> int conversion, where float32 rounding differs.
        np.testing.assert_allclose(actual, expected, atol=1)
    elif expected.dtype == np.float16:
        np.testing.assert_allclose(actual, expected, rtol=2e-3, atol=2e-3)
    else:
        # Float32 rounding, relative to the images' scale (255 for uint8 inputs).
        scale = max(1.0, float(np.abs(expected).max()))
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=2e-6 * scale)


@pytest.mark.parametrize("name", list(CASES))
def test_op_matches_tensorflow_under_jit(name):
    _check(*TABLE.pair(name))


@pytest.mark.parametrize("op, argument", [("adjust_hue", 0.1), ("adjust_saturation", 0.5)])
def test_float16_images_are_adjusted_in_float16(op, argument):
    """TensorFlow's CPU kernels lack float16 (its XLA ones compute in float32): the float32
    result, rounded to float16."""
    expected = getattr(V1.image, op)(tf.constant(F16.astype("float32")), argument).numpy()
    got = getattr(tf1.image, op)(F16, argument)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, expected.astype("float16"), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("call, shape, dtype", [
    (lambda x: tf1.image.adjust_hue(x, 0.2), (2, 5, 6, 3), "float32"),
    (lambda x: tf1.image.adjust_saturation(x, 0.5), (2, 5, 6, 3), "float32"),
    (lambda x: tf1.image.rgb_to_hsv(x), (2, 5, 6, 3), "float32"),
    (lambda x: tf1.image.resize_bicubic(x, [7, 3]), (2, 7, 3, 3), "float32"),
    (lambda x: tf1.image.resize_area(x, [2, 2]), (2, 2, 2, 3), "float32"),
    (lambda x: tf1.image.crop_and_resize(x, BOXES, BOX_IND, [4, 4]), (4, 4, 4, 3), "float32"),
])
def test_op_runs_in_the_build_pass(call, shape, dtype):
    """On KerasTensors (the symbolic build pass): the step's shape and dtype."""
    out = call(keras.KerasTensor(RGB.shape, "float32"))
    assert isinstance(out, keras.KerasTensor)
    assert (tuple(out.shape), out.dtype) == (shape, dtype)


# -- Random ops: in model_fn, from the model's seed generator. ---------------


def _in_model_fn(fn, compiled=False):
    """`fn()` inside a model_fn call of a fresh store (its own seed generator)."""
    with store_lib.model_fn_call(store_lib.VariableStore(), kte.ModeKeys.TRAIN, True, 0, True):
        return jax.jit(fn)() if compiled else fn()


RANDOM_CASES = {
    "random_hue": lambda: tf1.image.random_hue(RGB, 0.4, seed=7),
    "random_saturation": lambda: tf1.image.random_saturation(RGB, 0.2, 1.8, seed=7),
    "sample_distorted_bounding_box": lambda: tf1.image.sample_distorted_bounding_box(
        [40, 50, 3], [[[0.1, 0.2, 0.6, 0.7]]], seed=7, min_object_covered=0.3),
}


@pytest.mark.parametrize("name", sorted(RANDOM_CASES))
@pytest.mark.parametrize("compiled", [False, True])
def test_random_op_repeats_under_the_same_global_seed(name, compiled):
    """A fixed op seed and global seed (`keras.utils.set_random_seed`) repeat the numbers."""
    results = []
    for _ in range(2):
        keras.utils.set_random_seed(3)
        results.append(_in_model_fn(RANDOM_CASES[name], compiled))
    jax.tree.map(np.testing.assert_array_equal, results[0], results[1])


@pytest.mark.parametrize("name", sorted(RANDOM_CASES))
def test_random_op_draws_new_numbers_on_every_call(name):
    first, second = _in_model_fn(lambda: (RANDOM_CASES[name](), RANDOM_CASES[name]()))
    assert any(not np.array_equal(a, b) for a, b in zip(jax.tree.leaves(first),
                                                           jax.tree.leaves(second)))


def _hexcone_extremes(images):
    images = np.asarray(images, np.float64)
    return images.max(-1), images.min(-1)


def test_random_hue_only_turns_the_hue():
    """Each pixel keeps its largest and smallest channel; the dtype stays."""
    out = _in_model_fn(lambda: tf1.image.random_hue(RGB, 0.5))
    assert out.shape == RGB.shape and out.dtype == np.float32
    for got, want in zip(_hexcone_extremes(out), _hexcone_extremes(RGB)):
        np.testing.assert_allclose(got, want, atol=1e-6)
    assert not np.allclose(out, RGB)


def test_random_hue_equals_adjust_hue_by_one_delta_per_call():
    """The whole batch turns by one drawn delta in [-max_delta, max_delta]: the same as
    TensorFlow's adjust_hue by the delta that maps the first pixel."""
    out = np.asarray(_in_model_fn(lambda: tf1.image.random_hue(RGB, 0.3)))
    hue_in, hue_out = (np.asarray(tf1.image.rgb_to_hsv(x))[..., 0] for x in (RGB, out))
    saturated = np.asarray(tf1.image.rgb_to_hsv(RGB))[..., 1] > 0.2
    deltas = ((hue_out - hue_in + 0.5) % 1.0 - 0.5)[saturated]
    assert np.abs(deltas).max() <= 0.3 + 1e-5
    np.testing.assert_allclose(deltas, deltas[0], atol=1e-4)
    expected = V1.image.adjust_hue(tf.constant(RGB), float(np.median(deltas))).numpy()
    np.testing.assert_allclose(out, expected, atol=1e-4)


def test_random_saturation_keeps_hue_and_value():
    out = _in_model_fn(lambda: tf1.image.random_saturation(U8, 0.5, 1.5))
    assert out.dtype == np.uint8 and out.shape == U8.shape
    hsv_in, hsv_out = (np.asarray(tf1.image.rgb_to_hsv(tf1.image.convert_image_dtype(
        x, tf1.float32))) for x in (U8, out))
    np.testing.assert_allclose(hsv_out[..., 2], hsv_in[..., 2], atol=1 / 255)
    ratio = hsv_out[..., 1] / np.maximum(hsv_in[..., 1], 1e-6)
    colourful = hsv_in[..., 1] > 0.3
    assert 0.5 - 0.05 <= np.median(ratio[colourful]) <= 1.5 + 0.05


@pytest.mark.parametrize("call, match", [
    (lambda: tf1.image.random_hue(RGB, 0.6), "max_delta must be <= 0.5"),
    (lambda: tf1.image.random_hue(RGB, -0.1), "max_delta must be non-negative"),
    (lambda: tf1.image.random_saturation(RGB, 1.0, 1.0), "upper must be > lower"),
    (lambda: tf1.image.random_saturation(RGB, -1.0, 1.0), "lower must be non-negative"),
    (lambda: tf1.image.sample_distorted_bounding_box([9, 9, 3], np.zeros((1, 0, 4))),
     "use_image_if_no_bounding_boxes"),
    (lambda: tf1.image.sample_distorted_bounding_box([9, 9, 3], [[[0, 0, 1.5, 1]]]),
     r"must be in \[0.0, 1.0\]"),
    (lambda: tf1.image.sample_distorted_bounding_box([9, 9, 3], [[0, 0, 1, 1]]),
     r"\[batch, N, 4\]"),
    (lambda: tf1.image.sample_distorted_bounding_box([9, 9, 3], [[[0, 0, 1, 1]]],
                                                     area_range=[0.1, 1.5]), "<= 1.0"),
    (lambda: tf1.image.sample_distorted_bounding_box([9, 9, 3], [[[0, 0, 1, 1]]],
                                                     aspect_ratio_range=[-1, 2]),
     "aspect_ratio_range must be non-negative"),
    (lambda: tf1.image.sample_distorted_bounding_box([9, 9, 3], [[[0, 0, 1, 1]]],
                                                     area_range=[0.1, 0.5, 0.6]),
     "area_range must hold 2 numbers"),
    (lambda: tf1.image.sample_distorted_bounding_box([9, 9, 3], [[[0, 0, 1, 1]]],
                                                     max_attempts=0), "max_attempts"),
])
def test_random_op_bad_arguments_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        _in_model_fn(call)


# -- sample_distorted_bounding_box: what TF's sampler guarantees. --------------

HEIGHT, WIDTH = 40, 50
OBJECT = np.array([0.1, 0.2, 0.6, 0.7], "float32")  # rows 4..24, columns 10..35


@functools.cache
def _samples(min_object_covered=0.3, area_range=(0.1, 1.0), aspect_ratio_range=(0.75, 1.33),
             draws=96):
    """`draws` samples, drawn one after the other in one model_fn call."""
    def sample():
        return [tf1.image.sample_distorted_bounding_box(
            np.array([HEIGHT, WIDTH, 3], np.int64), OBJECT[None, None],
            min_object_covered=min_object_covered, area_range=area_range,
            aspect_ratio_range=aspect_ratio_range, max_attempts=50) for _ in range(draws)]

    return [tuple(np.asarray(v) for v in s) for s in _in_model_fn(sample)]


def test_sampled_box_is_a_slice_of_the_image_in_the_dtypes_of_tensorflow():
    for begin, size, bboxes in _samples():
        assert (begin.dtype, size.dtype, bboxes.dtype) == (np.int32, np.int32, np.float32)
        assert begin.shape == size.shape == (3,) and bboxes.shape == (1, 1, 4)
        assert begin[2] == 0 and size[2] == -1
        assert 0 <= begin[0] and begin[0] + size[0] <= HEIGHT
        assert 0 <= begin[1] and begin[1] + size[1] <= WIDTH
        np.testing.assert_allclose(bboxes[0, 0], [
            begin[0] / HEIGHT, begin[1] / WIDTH, (begin[0] + size[0]) / HEIGHT,
            (begin[1] + size[1]) / WIDTH], rtol=1e-6)


def test_sampled_box_keeps_the_area_aspect_ratio_and_object_constraints():
    sizes = []
    for begin, size, _ in _samples():
        (y, x), (h, w) = begin[:2], size[:2]
        assert 0.1 * HEIGHT * WIDTH <= h * w <= HEIGHT * WIDTH
        # The width is the height times the ratio, rounded.
        assert 0.75 - 0.5 / h <= w / h <= 1.33 + 0.5 / h
        covered = max(0, min(y + h, 24) - max(y, 4)) * max(0, min(x + w, 35) - max(x, 10))
        assert covered / (20 * 25) >= 0.3
        sizes.append((h, w))
    assert len(set(sizes)) > 10  # drawn, not fixed


def test_sampled_box_offsets_are_drawn_as_tensorflows():
    """As TF's sampler: a crop shorter (narrower) than the image never ends at its last row
    (column), and offsets spread over the rest."""
    ends = [(b[0] + s[0], b[1] + s[1], s[0], s[1]) for b, s, _ in _samples()]
    assert not any(end_y == HEIGHT and h < HEIGHT for end_y, _, h, _ in ends)
    assert not any(end_x == WIDTH and w < WIDTH for _, end_x, _, w in ends)
    assert len({b[0] for b, _, _ in _samples()}) > 5


def test_sampled_box_is_the_whole_image_when_no_crop_qualifies():
    # Half the image at most, but all of an object larger than that.
    begin, size, bboxes = _in_model_fn(lambda: tf1.image.sample_distorted_bounding_box(
        [HEIGHT, WIDTH, 3], [[[0.0, 0.0, 0.9, 0.9]]], min_object_covered=1.0,
        area_range=(0.05, 0.5)))
    np.testing.assert_array_equal(begin, [0, 0, 0])
    np.testing.assert_array_equal(size, [HEIGHT, WIDTH, -1])
    np.testing.assert_array_equal(bboxes, [[[0.0, 0.0, 1.0, 1.0]]])


def test_sampled_box_without_boxes_covers_the_image_when_allowed():
    for begin, size, _ in [_in_model_fn(lambda: tf1.image.sample_distorted_bounding_box(
            [HEIGHT, WIDTH, 3], np.zeros((1, 0, 4), np.float32), min_object_covered=0.5,
            use_image_if_no_bounding_boxes=True)) for _ in range(3)]:
        assert size[0] * size[1] >= 0.5 * HEIGHT * WIDTH


def test_sampled_box_matches_tensorflows_range_of_sizes():
    """Over many draws, TF's sampler and this one produce crops of the same range of sizes."""
    with tf.Graph().as_default():
        op = V1.image.sample_distorted_bounding_box(
            [HEIGHT, WIDTH, 3], OBJECT[None, None], seed=1, seed2=2, min_object_covered=0.3,
            area_range=(0.1, 1.0), max_attempts=50)
        with V1.Session() as session:
            theirs = [session.run(op)[1] for _ in range(300)]
    ours = [s for _, s, _ in _samples()]
    for axis in (0, 1):
        low, high = min(s[axis] for s in theirs), max(s[axis] for s in theirs)
        assert low - 2 <= min(s[axis] for s in ours) and max(s[axis] for s in ours) <= high + 2


def test_sampled_box_in_the_build_pass():
    with store_lib.model_fn_call(store_lib.VariableStore(), kte.ModeKeys.TRAIN, True, 0, True):
        begin, size, bboxes = tf1.image.sample_distorted_bounding_box(
            keras.KerasTensor((3,), "int32"), keras.KerasTensor((1, 2, 4)))
    assert [tuple(t.shape) for t in (begin, size, bboxes)] == [(3,), (3,), (1, 1, 4)]
    assert [t.dtype for t in (begin, size, bboxes)] == ["int32", "int32", "float32"]


# -- Both sides: TensorFlow's ops in the input pipeline. ----------------------

JPEG = tf.io.encode_jpeg(U8).numpy()
PNG = tf.io.encode_png(U8).numpy()

# name -> (function of (ns, x), its input)
PIPELINE_CASES = {
    "decode_jpeg": (lambda ns, b: ns.image.decode_jpeg(b, channels=3), JPEG),
    "decode_and_crop_jpeg": (lambda ns, b: ns.image.decode_and_crop_jpeg(
        b, [1, 2, 3, 4], channels=3), JPEG),
    "extract_jpeg_shape": (lambda ns, b: ns.image.extract_jpeg_shape(b), JPEG),
    "is_jpeg": (lambda ns, b: ns.image.is_jpeg(b), JPEG),
    "decode_png": (lambda ns, b: ns.image.decode_png(b), PNG),
    "decode_image": (lambda ns, b: ns.image.decode_image(b, channels=3), PNG),
    "encode_png": (lambda ns, x: ns.image.decode_png(ns.image.encode_png(x)), U8),
    "encode_jpeg": (lambda ns, x: ns.image.decode_jpeg(ns.image.encode_jpeg(x, quality=90)),
                    U8),
    "adjust_hue": (lambda ns, x: ns.image.adjust_hue(x, 0.2), RGB),
    "adjust_saturation": (lambda ns, x: ns.image.adjust_saturation(x, 1.5), RGB),
    "rgb_to_hsv": (lambda ns, x: ns.image.rgb_to_hsv(x), RGB),
    "resize_bicubic": (lambda ns, x: ns.image.resize_bicubic(x, [7, 3]), RGB),
    "resize_area": (lambda ns, x: ns.image.resize_area(x, [3, 3]), RGB),
    "crop_and_resize": (lambda ns, x: ns.image.crop_and_resize(x, BOXES, BOX_IND, [3, 3]), RGB),
    "random_hue": (lambda ns, x: ns.image.random_hue(x, 0.3, seed=4), RGB),
    "random_saturation": (lambda ns, x: ns.image.random_saturation(x, 0.5, 1.5, seed=5), RGB),
    "sample_distorted_bounding_box": (lambda ns, x: ns.image.sample_distorted_bounding_box(
        ns.shape(x), [[[0.1, 0.1, 0.9, 0.9]]], seed=6, seed2=7)[1], U8),
}


@pytest.mark.parametrize("name", sorted(PIPELINE_CASES))
def test_in_dataset_map_runs_tensorflow(name):
    case, value = PIPELINE_CASES[name]
    tf.random.set_seed(1)  # One map function: ops of equal seeds draw the same numbers.
    dataset = tf.data.Dataset.from_tensors(value).map(lambda x: (case(tf1, x), case(V1, x)))
    got, expected = next(iter(dataset))
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_decoding_in_input_fn_and_resizing_in_model_fn_train(tmp_path):
    """The split the codecs ask for: bytes decoded in input_fn, the images in model_fn."""
    def preprocess(image):
        return tf1.image.adjust_saturation(tf1.image.resize_bicubic([image], [4, 4])[0], 1.2)

    def input_fn(params):
        def parse(contents):
            image = tf1.image.convert_image_dtype(tf1.image.decode_jpeg(contents, 3), tf.float32)
            return preprocess(image), 1.0
        dataset = tf.data.Dataset.from_tensors(JPEG).repeat().map(parse)
        return dataset.batch(params["batch_size"], drop_remainder=True)

    def model_fn(features, labels, mode, params):
        hue = tf1.image.random_hue(features, 0.1)
        logits = tf1.layers.dense(tf1.layers.flatten(hue), 1)[:, 0]
        loss = tf1.reduce_mean(tf1.square(logits - labels))
        train_op = tf1.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=tf1.train.get_global_step())
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    config = kte.RunConfig(model_dir=str(tmp_path), log_step_count_steps=None,
                           tpu_config=kte.TPUConfig(iterations_per_loop=1))
    estimator = kte.TPUEstimator(model_fn=model_fn, config=config, train_batch_size=8)
    estimator.train(input_fn, max_steps=2)
    assert estimator.get_variable_value("global_step") == 2


# -- The codecs in model_fn. --------------------------------------------------

CODECS = {
    "decode_jpeg": lambda x: tf1.image.decode_jpeg(x, channels=3),
    "decode_and_crop_jpeg": lambda x: tf1.image.decode_and_crop_jpeg(x, [0, 0, 2, 2]),
    "extract_jpeg_shape": lambda x: tf1.image.extract_jpeg_shape(x),
    "decode_png": lambda x: tf1.image.decode_png(x),
    "decode_image": lambda x: tf1.image.decode_image(x),
    "encode_jpeg": lambda x: tf1.image.encode_jpeg(x),
    "encode_png": lambda x: tf1.image.encode_png(x),
}


@pytest.mark.parametrize("name", sorted(CODECS))
def test_codec_in_model_fn_says_it_belongs_in_input_fn(name):
    def step(x):
        return CODECS[name](x)

    with pytest.raises(TypeError, match=rf"tf1\.image\.{name} .*encoded image bytes.*"
                                        r"input_fn.*Received: `\w+` of type"):
        _in_model_fn(lambda: jax.jit(step)(jnp.asarray(U8)))


def test_codec_on_python_bytes_in_model_fn_raises_too():
    with pytest.raises(TypeError, match="a call inside model_fn"):
        _in_model_fn(lambda: tf1.image.decode_jpeg(JPEG))


def test_codec_on_python_bytes_on_the_host_runs_tensorflow_eagerly():
    got = tf1.image.decode_jpeg(JPEG, channels=3)
    assert isinstance(got, tf.Tensor)
    np.testing.assert_array_equal(got.numpy(), V1.image.decode_jpeg(JPEG, channels=3).numpy())


def test_codecs_are_marked_for_the_converter():
    assert tf1.image.decode_jpeg.input_only == "reads encoded image bytes"
    assert tf1.image.encode_png.input_only == "writes encoded image bytes"
    assert not hasattr(tf1.image.resize_bicubic, "input_only")


# -- Bad arguments. -----------------------------------------------------------


@pytest.mark.parametrize("call, error, match", [
    (lambda: tf1.image.rgb_to_hsv(U8), TypeError, "float images.*uint8"),
    (lambda: tf1.image.hsv_to_rgb(RGB[..., :2]), ValueError, "3 channels"),
    (lambda: tf1.image.adjust_hue(RGB[0, 0], 0.1), ValueError, "rank 3 or more"),
    (lambda: tf1.image.adjust_saturation(np.ones((2, 2, 4), "float32"), 2.0), ValueError,
     "3 channels"),
    (lambda: tf1.image.resize_bicubic(RGB, [4, 4], half_pixel_centers=True), ValueError,
     "half_pixel_centers"),
    (lambda: tf1.image.resize_images(RGB, [4, 4], method=7), ValueError, "method=7"),
    (lambda: tf1.image.resize_area(RGB, [4]), ValueError, "size"),
    (lambda: tf1.image.crop_and_resize(RGB[0], BOXES, BOX_IND, [2, 2]), ValueError,
     "rank 4"),
    (lambda: tf1.image.crop_and_resize(RGB, BOXES, BOX_IND, [2, 2], method="bicubic"),
     ValueError, "'bilinear' or 'nearest'"),
    (lambda: tf1.image.crop_and_resize(RGB, BOXES, crop_size=[2, 2]), ValueError, "box_ind"),
])
def test_bad_argument_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_a_size_known_only_in_the_step_is_refused():
    with pytest.raises(ValueError, match="known while tracing"):
        jax.jit(lambda n: tf1.image.resize_bicubic(RGB, jnp.stack([n, n])))(3)
