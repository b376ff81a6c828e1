"""TF1 summaries written on the host are the events TensorFlow 1 writes for the same values.

Each case writes a summary with `compat.v1.summary` (numpy values, as a
`host_call` gets them) and reads the event file back; the reference is
`tf.compat.v1.summary` of TensorFlow 2.21 in a `tf.Graph`, run in a session:
the serialized `Summary` TF1's kernels make.
"""

import jax.numpy as jnp
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1

from summary_support import read_values

RNG = np.random.default_rng(0)


def tf_summary(make):
    """The `Summary` proto TensorFlow 1 makes: `make(tf)` builds the op in a graph."""
    import tensorflow as tf
    from tensorflow.core.framework import summary_pb2

    graph = tf.Graph()
    with graph.as_default():
        op = make(tf)
        with tf.compat.v1.Session(graph=graph) as session:
            return summary_pb2.Summary.FromString(session.run(op))


def written(tmp_path, write, step=5):
    """The `Summary.Value`s `write()` writes inside `record_summaries(tmp_path)`, at `step`."""
    with kte.summary.record_summaries(tmp_path, lambda: step):
        assert write() is True
    values = read_values(tmp_path)
    assert {s for s, _ in values} == {step}
    return [v for _, v in values]


# -- scalar. ------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, family, tag",
    [("loss", None, "loss"), ("loss", "train", "train/train/loss"), ("a b:c", None, "a_b_c")],
)
def test_scalar_is_a_simple_value_with_tf1s_tag(tmp_path, name, family, tag):
    (ours,) = written(tmp_path, lambda: tf1.summary.scalar(name, np.float32(0.25), family=family))
    (theirs,) = tf_summary(
        lambda tf: tf.compat.v1.summary.scalar(name, tf.constant(0.25), family=family)
    ).value
    assert ours == theirs and ours.tag == tag


# -- histogram. ---------------------------------------------------------------

HISTOGRAM_VALUES = {
    "small": np.array([1.0, 2.0, -3.0, 0.0], "float32"),
    "normal": RNG.normal(size=(40, 25)).astype("float32"),
    "wide": np.array([1e-15, -1e-13, 3e-12, 1e25, -7e19, 5.5, 5.5, 0.0], "float64"),
    "ints": RNG.integers(-50, 50, size=300).astype("int32"),
    "half": RNG.normal(scale=100, size=64).astype("float16"),
    "bfloat16": RNG.normal(scale=10, size=64).astype(jnp.bfloat16),
    "empty": np.zeros((0, 3), "float32"),
}


@pytest.mark.parametrize("values", HISTOGRAM_VALUES.values(), ids=HISTOGRAM_VALUES.keys())
def test_histogram_buckets_are_tf1s(tmp_path, values):
    (ours,) = written(tmp_path, lambda: tf1.summary.histogram("h", values))
    (theirs,) = tf_summary(lambda tf: tf.compat.v1.summary.histogram("h", values)).value
    assert ours.tag == theirs.tag == "h"
    assert ours.histo == theirs.histo


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_histogram_of_a_nan_or_infinity_is_an_error(tmp_path, bad):
    with kte.summary.record_summaries(tmp_path, lambda: 1):
        with pytest.raises(ValueError, match="in summary histogram for: h"):
            tf1.summary.histogram("h", np.array([1.0, bad]))


# -- image. -------------------------------------------------------------------


def decoded(value):
    import tensorflow as tf

    return tf.io.decode_png(value.image.encoded_image_string).numpy()


def with_nan_pixel(images):
    images = images.copy()
    images[0, 1, 2, 0] = np.nan
    return images


IMAGES = {
    "unit-float": RNG.uniform(size=(4, 5, 6, 3)).astype("float32"),
    "signed-float": RNG.normal(size=(2, 3, 4, 1)).astype("float32"),
    "large-float": RNG.uniform(0, 1000, size=(2, 3, 4, 4)).astype("float32"),
    "zeros": np.zeros((2, 3, 3, 3), "float32"),
    "tiny": np.full((1, 2, 2, 1), 1e-7, "float32"),
    "nan-pixel": with_nan_pixel(RNG.uniform(size=(2, 3, 4, 3)).astype("float32")),
    "uint8": RNG.integers(0, 256, size=(3, 4, 5, 3)).astype("uint8"),
    "half": RNG.normal(size=(2, 3, 3, 3)).astype("float16"),
    "double": RNG.uniform(-2, 5, size=(2, 3, 3, 1)).astype("float64"),
}


@pytest.mark.parametrize("images", IMAGES.values(), ids=IMAGES.keys())
def test_images_are_tf1s_pngs_byte_for_byte(tmp_path, images):
    ours = written(tmp_path, lambda: tf1.summary.image("img", images))
    theirs = tf_summary(lambda tf: tf.compat.v1.summary.image("img", images)).value
    assert [v.tag for v in ours] == [v.tag for v in theirs]
    for mine, reference in zip(ours, theirs):
        assert (mine.image.height, mine.image.width, mine.image.colorspace) == (
            reference.image.height, reference.image.width, reference.image.colorspace)
        np.testing.assert_array_equal(decoded(mine), decoded(reference))
        assert mine.image.encoded_image_string == reference.image.encoded_image_string


@pytest.mark.parametrize(
    "max_outputs, tags",
    [(1, ["img/image"]), (2, ["img/image/0", "img/image/1"]),
     (9, ["img/image/0", "img/image/1", "img/image/2", "img/image/3"])],
)
def test_max_outputs_picks_the_first_images_and_their_tags(tmp_path, max_outputs, tags):
    images = IMAGES["unit-float"]
    ours = written(tmp_path, lambda: tf1.summary.image("img", images, max_outputs=max_outputs))
    theirs = tf_summary(
        lambda tf: tf.compat.v1.summary.image("img", images, max_outputs=max_outputs)).value
    assert [v.tag for v in ours] == [v.tag for v in theirs] == tags
    for mine, reference in zip(ours, theirs):
        np.testing.assert_array_equal(decoded(mine), decoded(reference))


def test_contrib_image_paints_non_finite_pixels_with_bad_color(tmp_path):
    images = with_nan_pixel(IMAGES["unit-float"][:1])
    with tf1.contrib.summary.always_record_summaries():
        (ours,) = written(tmp_path, lambda: tf1.contrib.summary.image(
            "img", images, bad_color=[0, 0, 255], max_images=1, step=5))
    assert decoded(ours)[1, 2].tolist() == [0, 0, 255]


@pytest.mark.parametrize(
    "images, message",
    [(np.zeros((2, 3, 3)), r"shape \[batch_size, height, width, channels\]"),
     (np.zeros((1, 2, 2, 2)), "with 1, 3 or 4 channels"),
     (np.zeros((1, 2, 2, 3), "int32"), "must be uint8, float16, float32, float64 or bfloat16")],
    ids=["rank-3", "two-channels", "int32"],
)
def test_bad_images_are_named(tmp_path, images, message):
    with kte.summary.record_summaries(tmp_path, lambda: 1):
        with pytest.raises(ValueError, match=message):
            tf1.summary.image("img", images)


def test_max_outputs_must_be_positive():
    with pytest.raises(ValueError, match="`max_outputs` must be an int >= 1. Received: max_outputs=0"):
        tf1.summary.image("img", IMAGES["uint8"], max_outputs=0)


# -- audio and text. ----------------------------------------------------------


@pytest.mark.parametrize(
    "audio, max_outputs",
    [(RNG.uniform(-1.2, 1.2, size=(3, 50)).astype("float32"), 2),
     (RNG.uniform(-1, 1, size=(2, 40, 2)).astype("float32"), 1)],
    ids=["mono-clipped", "stereo"],
)
def test_audio_is_tf1s_wav_byte_for_byte(tmp_path, audio, max_outputs):
    import tensorflow as tf

    ours = written(tmp_path, lambda: tf1.summary.audio("au", audio, 8000, max_outputs=max_outputs))
    theirs = tf_summary(
        lambda tf: tf.compat.v1.summary.audio("au", audio, 8000, max_outputs=max_outputs)).value
    assert [v.tag for v in ours] == [v.tag for v in theirs]
    for mine, reference in zip(ours, theirs):
        fields = ("sample_rate", "num_channels", "length_frames", "content_type")
        assert [getattr(mine.audio, f) for f in fields] == [getattr(reference.audio, f) for f in fields]
        samples = [tf.audio.decode_wav(v.audio.encoded_audio_string).audio.numpy()
                   for v in (mine, reference)]
        np.testing.assert_array_equal(*samples)
        assert mine.audio.encoded_audio_string == reference.audio.encoded_audio_string


@pytest.mark.parametrize("text", ["hello", ["a", "b"], np.array([["x", "y"]])], ids=["str", "list", "2d"])
def test_text_is_tf1s_text_tensor(tmp_path, text):
    (ours,) = written(tmp_path, lambda: tf1.summary.text("t", text))
    (theirs,) = tf_summary(lambda tf: tf.compat.v1.summary.text("t", tf.constant(text))).value
    assert ours == theirs
