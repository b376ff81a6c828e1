"""tf1.image's detection ops and contrib's activation summaries, against TensorFlow's own.

Each op case is a function of a TF1 namespace `ns`: with `ns = tf.compat.v1`
it builds a TensorFlow graph that a `Session` runs (the reference, TF 2.21);
with `ns = tf1` it runs under `jax.jit`, as inside a
`model_fn`. Indices, counts, boxes, scores, classes and pixels are equal,
with equal dtypes and shapes. The NMS forms whose output size depends on
the values run TensorFlow's op outside `model_fn` and raise inside it.
"""

import jax
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
_rng = np.random.default_rng(7)


def _boxes(*shape):
    """Random `[y_min, x_min, y_max, x_max]` boxes in about `[0, 1]`, overlapping often."""
    centers = _rng.uniform(0.1, 0.9, size=(*shape, 2))
    halves = _rng.uniform(0.05, 0.35, size=(*shape, 2))
    return np.concatenate([centers - halves, centers + halves], -1).astype("float32")


BOXES = _boxes(14)
SCORES = _rng.uniform(size=14).astype("float32")
# Ties: quarter scores, and box 5 twice with one score.
TIED_BOXES = BOXES.copy()
TIED_BOXES[9] = TIED_BOXES[5]
TIED = np.round(SCORES * 4) / 4
TIED[9] = TIED[5]
# Only the repeated box ties (TF's per-class heap leaves the order of other ties open).
REPEATED = SCORES.copy()
REPEATED[9] = REPEATED[5]
BATCH_BOXES, BATCH_SCORES = _boxes(3, 10), _rng.uniform(size=(3, 10)).astype("float32")
# IoU(0, 1) = IoU(0, 2) = 0.5 exactly; scores 0.5 tie with a threshold of 0.5.
HALVES = np.array([[0, 0, 1, 1], [0, 0, 1, 0.5], [0, 0.5, 1, 1], [2, 2, 3, 3]], "float32")
HALF_SCORES = np.array([0.9, 0.8, 0.5, 0.5], "float32")
# Per class (q = classes) and shared (q = 1) boxes, scores [batch, boxes, classes].
CLASS_BOXES = _boxes(2, 12, 3) * 1.2 - 0.1  # some outside [0, 1]: clipped
CLASS_SCORES = _rng.uniform(size=(2, 12, 3)).astype("float32")
IMAGES = _rng.uniform(size=(2, 7, 9, 3)).astype("float32")
DRAWN = np.array([
    [[0.1, 0.2, 0.8, 0.9], [-0.2, 0.5, 0.6, 1.4], [0.7, 0.1, 0.2, 0.5], [0.0, 0.0, 1.0, 1.0]],
    [[1.2, 0.0, 1.5, 1.0], [0.3, 0.3, 0.3, 0.3], [0.5, -0.4, 0.9, 0.45], [0.2, 0.6, 0.99, 0.7]],
], "float32")
NESTED = _boxes(12) * np.linspace(0.2, 1, 12)[:, None].astype("float32")

# name -> function of the namespace `ns`
CASES = {
    "padded": lambda ns: ns.image.non_max_suppression_padded(
        BOXES, SCORES, 5, 0.5, pad_to_max_output_size=True),
    "padded/ties": lambda ns: ns.image.non_max_suppression_padded(
        TIED_BOXES, TIED, 8, 0.4, pad_to_max_output_size=True),
    "padded/fewer_valid_than_max": lambda ns: ns.image.non_max_suppression_padded(
        BOXES, SCORES, 12, 0.3, 0.6, pad_to_max_output_size=True),
    "padded/iou_at_threshold_suppresses": lambda ns: ns.image.non_max_suppression_padded(
        HALVES, HALF_SCORES, 4, 0.5, pad_to_max_output_size=True),
    "padded/score_at_threshold_is_dropped": lambda ns: ns.image.non_max_suppression_padded(
        HALVES, HALF_SCORES, 4, 0.1, 0.5, pad_to_max_output_size=True),
    "padded/more_than_boxes": lambda ns: ns.image.non_max_suppression_padded(
        HALVES, HALF_SCORES, 9, 0.7, pad_to_max_output_size=True),
    "padded/corners_as_the_first_box_gives_them": lambda ns: ns.image.non_max_suppression_padded(
        BOXES[:, [2, 3, 0, 1]], SCORES, 6, 0.4, pad_to_max_output_size=True),
    "padded/boxes_below_zero_suppress_but_are_not_output":
        lambda ns: ns.image.non_max_suppression_padded(
            BOXES - 0.4, SCORES, 6, 0.3, pad_to_max_output_size=True),
    "padded/sorted_input": lambda ns: ns.image.non_max_suppression_padded(
        BOXES, np.sort(SCORES)[::-1].copy(), 6, 0.4, pad_to_max_output_size=True,
        sorted_input=True),
    "padded/batched": lambda ns: ns.image.non_max_suppression_padded(
        BATCH_BOXES, BATCH_SCORES, 4, 0.4, 0.2, pad_to_max_output_size=True),
    "padded/two_batch_axes": lambda ns: ns.image.non_max_suppression_padded(
        BATCH_BOXES[:2, None].repeat(2, 1), BATCH_SCORES[:2, None].repeat(2, 1), 3, 0.5,
        pad_to_max_output_size=True),
    "combined/shared_boxes": lambda ns: ns.image.combined_non_max_suppression(
        CLASS_BOXES[:, :, :1], CLASS_SCORES, 4, 7, 0.5),
    "combined/boxes_per_class": lambda ns: ns.image.combined_non_max_suppression(
        CLASS_BOXES, CLASS_SCORES, 3, 8, 0.3),
    "combined/score_threshold": lambda ns: ns.image.combined_non_max_suppression(
        CLASS_BOXES, CLASS_SCORES, 5, 12, 0.5, 0.7),
    "combined/iou_at_threshold_is_kept": lambda ns: ns.image.combined_non_max_suppression(
        HALVES[None, :, None], HALF_SCORES[None, :, None], 4, 4, 0.5, 0.6),
    "combined/score_at_threshold_is_dropped": lambda ns: ns.image.combined_non_max_suppression(
        HALVES[None, :, None], HALF_SCORES[None, :, None], 4, 4, 0.1, 0.5),
    "combined/pad_per_class": lambda ns: ns.image.combined_non_max_suppression(
        CLASS_BOXES, CLASS_SCORES, 2, 20, 0.5, pad_per_class=True),
    "combined/per_class_above_boxes": lambda ns: ns.image.combined_non_max_suppression(
        HALVES[None, :, None], np.stack([HALF_SCORES] * 2, -1)[None], 9, 20, 0.4,
        pad_per_class=True),
    "combined/no_clip": lambda ns: ns.image.combined_non_max_suppression(
        CLASS_BOXES, CLASS_SCORES, 3, 5, 0.5, clip_boxes=False),
    "combined/ties_across_classes": lambda ns: ns.image.combined_non_max_suppression(
        HALVES[None, :, None], np.stack([HALF_SCORES, HALF_SCORES[::-1]], -1)[None], 2, 6, 0.4),
    "combined/duplicates": lambda ns: ns.image.combined_non_max_suppression(
        TIED_BOXES[None, :, None], REPEATED[None, :, None], 6, 6, 0.5),
    "draw": lambda ns: ns.image.draw_bounding_boxes(IMAGES, DRAWN),
    "draw/colors": lambda ns: ns.image.draw_bounding_boxes(
        IMAGES, DRAWN, colors=np.array([[1, 0, 0, 1], [0, 0.5, 1, 1]], "float32")),
    "draw/gray": lambda ns: ns.image.draw_bounding_boxes(IMAGES[..., :1], DRAWN),
    "draw/rgba_float16": lambda ns: ns.image.draw_bounding_boxes(
        np.concatenate([IMAGES, IMAGES[..., :1]], -1).astype("float16"), DRAWN),
    "draw/empty_colors": lambda ns: ns.image.draw_bounding_boxes(
        IMAGES, DRAWN, colors=np.zeros((0, 3), "float32")),
    "draw/colors_cycle": lambda ns: ns.image.draw_bounding_boxes(
        np.zeros((1, 24, 24, 3), "float32"), NESTED[None]),
    "draw/no_boxes": lambda ns: ns.image.draw_bounding_boxes(IMAGES, np.zeros((2, 0, 4))),
}


TABLE = tf_reference.Table(CASES)


def _check(expected, actual):
    expected, actual = jax.tree.leaves(tuple(expected) if isinstance(expected, tuple)
                                       else expected), jax.tree.leaves(actual)
    assert len(actual) == len(expected)
    for want, got in zip(expected, actual):
        want, got = np.asarray(want), np.asarray(got)
        assert str(got.dtype) == computed_dtype(want.dtype)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", list(CASES))
def test_op_matches_tensorflow_under_jit(name):
    _check(*TABLE.pair(name))


def test_draw_bounding_boxes_reads_tf2s_positional_colors():
    """`tf.image.draw_bounding_boxes(images, boxes, colors)` (TF2) converts to tf1's name."""
    colors = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]], "float32")
    expected = tf.image.draw_bounding_boxes(IMAGES, DRAWN, colors).numpy()
    np.testing.assert_array_equal(tf1.image.draw_bounding_boxes(IMAGES, DRAWN, colors), expected)


@pytest.mark.parametrize("call, shapes", [
    (lambda b, s: tf1.image.non_max_suppression_padded(b, s, 6, pad_to_max_output_size=True),
     [((3, 6), "int32"), ((3,), "int32")]),
    (lambda b, s: tf1.image.combined_non_max_suppression(b[:, :, None], s[..., None], 4, 5),
     [((3, 5, 4), "float32"), ((3, 5), "float32"), ((3, 5), "float32"), ((3,), "int32")]),
])
def test_nms_runs_in_the_build_pass(call, shapes):
    """On KerasTensors (the symbolic build pass): the step's static shapes and dtypes."""
    out = call(keras.KerasTensor((3, 10, 4), "float32"), keras.KerasTensor((3, 10), "float32"))
    assert [(tuple(o.shape), o.dtype) for o in out] == shapes


def test_draw_bounding_boxes_runs_in_the_build_pass():
    out = tf1.image.draw_bounding_boxes(keras.KerasTensor((2, 7, 9, 3), "float32"), DRAWN)
    assert isinstance(out, keras.KerasTensor) and tuple(out.shape) == (2, 7, 9, 3)


# -- The value-dependent forms. -----------------------------------------------


def _in_model_fn(fn):
    with store_lib.model_fn_call(store_lib.VariableStore(), kte.ModeKeys.TRAIN, True, 0, True):
        return fn()


VALUE_DEPENDENT = {
    "non_max_suppression": lambda ns, b, s: ns.image.non_max_suppression(b, s, 5, 0.4),
    "non_max_suppression_with_scores": lambda ns, b, s: ns.image.non_max_suppression_with_scores(
        b, s, 5, 0.4, soft_nms_sigma=0.5),
    "non_max_suppression_overlaps": lambda ns, b, s: ns.image.non_max_suppression_overlaps(
        np.asarray(b)[:, :1] * np.asarray(b)[:, 1], s, 5, 0.1),
    "non_max_suppression_padded": lambda ns, b, s: ns.image.non_max_suppression_padded(
        b, s, 5, 0.4),
}


@pytest.mark.parametrize("name", sorted(VALUE_DEPENDENT))
def test_value_dependent_nms_raises_in_model_fn_and_names_the_padded_form(name):
    with pytest.raises(NotImplementedError, match="pad_to_max_output_size=True"):
        _in_model_fn(lambda: VALUE_DEPENDENT[name](tf1, BOXES, SCORES))


@pytest.mark.parametrize("name", sorted(VALUE_DEPENDENT))
def test_value_dependent_nms_runs_tensorflows_op_outside_model_fn(name):
    expected = VALUE_DEPENDENT[name](V1, tf.constant(BOXES), tf.constant(SCORES))
    for boxes in (BOXES, tf.constant(BOXES)):  # host values, TensorFlow's tensors
        got = VALUE_DEPENDENT[name](tf1, boxes, SCORES)
        jax.tree.map(np.testing.assert_array_equal, tuple(got) if isinstance(got, tuple) else got,
                     tuple(expected) if isinstance(expected, tuple) else expected)


# -- Errors. ------------------------------------------------------------------


@pytest.mark.parametrize("call, error, match", [
    (lambda: tf1.image.non_max_suppression_padded(BATCH_BOXES, BATCH_SCORES, 3),
     ValueError, "must be True for batched input"),
    (lambda: tf1.image.non_max_suppression_padded(BOXES, SCORES[:5], 3,
                                                  pad_to_max_output_size=True),
     ValueError, r"scores \[\.\.\., num_boxes\]"),
    (lambda: jax.jit(lambda m: tf1.image.non_max_suppression_padded(
        BOXES, SCORES, m, pad_to_max_output_size=True))(3),
     ValueError, "max_output_size must be known"),
    (lambda: tf1.image.combined_non_max_suppression(CLASS_BOXES[:, :, :2], CLASS_SCORES, 3, 3),
     ValueError, "either 1 or num classes"),
    (lambda: tf1.image.combined_non_max_suppression(CLASS_BOXES, CLASS_SCORES, 0, 3),
     ValueError, "max_size_per_class must be positive"),
    (lambda: tf1.image.combined_non_max_suppression(CLASS_BOXES, CLASS_SCORES, 3, 0),
     ValueError, "max_total_size must be > 0"),
    (lambda: tf1.image.combined_non_max_suppression(CLASS_BOXES, CLASS_SCORES, 3, 3, 1.5),
     ValueError, r"iou_threshold must be in \[0, 1\]"),
    (lambda: tf1.image.draw_bounding_boxes(np.zeros((2, 7, 9, 2), "float32"), DRAWN),
     ValueError, "Channel depth should be either 1"),
    (lambda: tf1.image.draw_bounding_boxes(np.zeros((2, 7, 9, 3), "uint8"), DRAWN),
     TypeError, "float images"),
    (lambda: tf1.image.draw_bounding_boxes(IMAGES, DRAWN, colors=np.ones((2, 2))),
     ValueError, "equal or more channels"),
    (lambda: tf1.image.draw_bounding_boxes(IMAGES, DRAWN[:1]), ValueError, "batch size 2"),
])
def test_bad_arguments_raise_naming_them(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- contrib.layers.summaries. ------------------------------------------------


def _summaries_of(body):
    """The `summaries` collection's tags after `body(features)` runs in a TRAIN model_fn."""
    seen = {}

    def model_fn(features, labels, mode):
        w = tf1.get_variable("w", shape=(2,), initializer=tf1.ones_initializer())
        seen["returned"] = body(features)
        seen["tags"] = [tag for op in tf1.get_collection(tf1.GraphKeys.SUMMARIES)
                        for tag in op.tags]
        return kte.TPUEstimatorSpec(mode, loss=tf1.reduce_mean(features * w[0]),
                                    train_op=keras.optimizers.SGD(0.1))

    kte.EstimatorModel(model_fn, train_batch_size=8).build_from_batch(
        kte.ModeKeys.TRAIN, (np.ones((8, 3), "float32"), None))
    return seen


@pytest.mark.parametrize("body, tags", [
    # A JAX value has no op name: `activation`, made unique as TF1 made names.
    (lambda x: [tf1.contrib.layers.summaries.summarize_activation(tf1.nn.relu(x)),
                tf1.contrib.layers.summarize_activation(x)], ["activation", "activation_1"]),
    (lambda x: tf1.contrib.layers.summarize_tensor(tf1.reduce_mean(x), tag="mean"), ["mean"]),
    (lambda x: tf1.contrib.layers.summarize_tensor(x), ["tensor"]),
    # Variables keep their TF1 names.
    (lambda x: tf1.contrib.layers.summarize_variables(), ["w"]),
    (lambda x: tf1.contrib.layers.summarize_activation(tf1.trainable_variables()[0]),
     ["w/activation"]),
    (lambda x: tf1.contrib.layers.summarize_collection("variables", name_filter="v"), []),
    (lambda x: tf1.contrib.layers.summarize_tensors([x, tf1.reduce_max(x)]),
     ["tensor", "tensor_1"]),
])
def test_summaries_are_tagged_by_tf1_names_where_values_have_them(body, tags):
    assert _summaries_of(body)["tags"] == tags


def test_summarize_activations_summarizes_the_activations_collection():
    def body(x):
        tf1.add_to_collection("activations", tf1.nn.relu(x))
        tf1.add_to_collection("activations", tf1.nn.relu6(x))
        return tf1.contrib.layers.summarize_activations()

    seen = _summaries_of(body)
    assert seen["tags"] == ["activation", "activation_1"] and len(seen["returned"]) == 2


def test_summarize_tensor_skips_booleans_as_tf1_did():
    assert _summaries_of(lambda x: tf1.contrib.layers.summarize_tensor(x > 0))["returned"] is None


def test_a_used_tag_is_refused_as_in_tf1():
    def body(x):
        tf1.contrib.layers.summarize_tensor(x, tag="x")
        tf1.contrib.layers.summarize_tensor(x, tag="x")

    with pytest.raises(ValueError, match="Conflict with summary tag: x already exists"):
        _summaries_of(body)


def test_a_name_filter_cannot_match_values_without_names():
    def body(x):
        tf1.add_to_collection("activations", x)
        return tf1.contrib.layers.summarize_activations(name_filter="conv")

    with pytest.raises(ValueError, match="no TF1 op name"):
        _summaries_of(body)


def test_summarize_activation_writes_tf1s_histogram(tmp_path):
    """The written histogram is TF1's `HistogramProto` of the activation's values."""
    from summary_support import read_values
    from test_summary_encoding import tf_summary

    x = np.random.default_rng(3).normal(size=(8, 3)).astype("float32")

    def model_fn(features, labels, mode):
        w = tf1.get_variable("w", shape=(), initializer=tf1.ones_initializer())
        tf1.contrib.layers.summarize_activation(tf1.nn.relu(features))
        tf1.contrib.layers.summarize_tensor(tf1.reduce_sum(features), tag="total")
        return kte.TPUEstimatorSpec(mode, loss=tf1.reduce_mean(features) * w,
                                    train_op=keras.optimizers.SGD(0.1))

    model = kte.EstimatorModel(model_fn, train_batch_size=8)
    model.compile()
    model.fit((x, None), shuffle=False, verbose=0,
              callbacks=[kte.summary.SummaryCallback(str(tmp_path), 1)])
    written = {v.tag: v for _, v in read_values(tmp_path)}
    expected = tf_summary(lambda t: t.compat.v1.summary.histogram(
        "activation", t.nn.relu(t.constant(x)))).value[0]
    assert written["activation"].histo == expected.histo
    assert written["total"].simple_value == pytest.approx(float(x.sum()))
