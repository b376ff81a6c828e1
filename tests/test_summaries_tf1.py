"""TF1 summaries made in `model_fn` and in host calls, written to TensorBoard during training.

A summary made in `model_fn` is written every `save_summary_steps` global
steps (the steps the loss is written at), from the compiled step, with the
values of the step that reached that global step; the reference for the
events is TensorFlow 1's own summary of the same numbers
(`tf.compat.v1.summary` in a `tf.Graph`, TF 2.21).
"""

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.summary import traced

from model_fns import BATCH
from summary_support import read_values
from summary_support import tags_at
from test_summary_encoding import decoded
from test_summary_encoding import tf_summary

STEPS, EVERY = 8, 3
WIDTH = 12  # A row is a 2x2 RGB image.
# Distinct rows: the batch of each step is known.
X = np.random.default_rng(1).uniform(-1, 2, size=(BATCH * STEPS, WIDTH)).astype("float32")


def batch(step_index):
    return X[step_index * BATCH:(step_index + 1) * BATCH]


def summarizing_fn(train_op="keras"):
    """A model_fn of loss = mean(x) * w that summarizes w, x and x as images."""

    def model_fn(features, labels, mode):
        w = tf1.get_variable("w", shape=(), initializer=tf1.ones_initializer())
        tf1.summary.scalar("w", w)
        tf1.summary.histogram("x", features)
        tf1.summary.image("img", tf1.reshape(features, [-1, 2, 2, 3]), max_outputs=2)
        tf1.summary.text("config", "lr=0.1")
        loss = tf1.reduce_mean(features) * w
        if train_op == "keras":
            op = keras.optimizers.SGD(0.1)
        else:  # A TF1 train op: model_fn runs twice per step (train by assignment).
            op = tf1.train.GradientDescentOptimizer(0.1).minimize(
                loss, global_step=tf1.train.get_or_create_global_step())
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=op)

    return model_fn


def fit(model_fn, logdir, loop=4, every=EVERY, device_loop="auto"):
    config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=loop))
    model = kte.EstimatorModel(model_fn, config=config, train_batch_size=BATCH,
                               device_loop=device_loop)
    model.compile()
    model.fit((X, None), shuffle=False, verbose=0,
              callbacks=[kte.summary.SummaryCallback(str(logdir), every)])
    return model


def w_before(step_index):
    """w before the step `step_index` (SGD(0.1) on mean(x) * w)."""
    return np.float32(1.0 - 0.1 * sum(batch(k).mean() for k in range(step_index)))


@pytest.mark.parametrize(
    "train_op, loop, device_loop",
    [("keras", 4, "scan"), ("keras", 1, "auto"), ("keras", 4, "host"), ("tf1", 4, "scan")],
    ids=["scan", "one-step-loops", "host-loop", "tf1-train-op"],
)
def test_model_fn_summaries_are_written_every_n_steps_with_that_steps_values(
        tmp_path, train_op, loop, device_loop):
    fit(summarizing_fn(train_op), tmp_path, loop, device_loop=device_loop)
    # Steps 1, n + 1, 2n + 1, as TF1's SummarySaverHook wrote them from step 0 (the loss
    # too with one-step loops; a TPU loop's loss is at its loop's end, test_summary.py).
    due = [s for s in range(1, STEPS + 1) if (s - 1) % EVERY == 0]
    tags = ("w", "x", "img/image/0", "img/image/1", "config")
    written = tags_at(tmp_path)
    assert {tag: steps for tag, steps in written.items()
            if tag not in ("global_step/sec", "loss")} == {tag: due for tag in tags}
    if loop == 1:
        assert written["loss"] == due
    values = {(step, v.tag): v for step, v in read_values(tmp_path)}
    for step in due:
        x = batch(step - 1)  # The step that took the global step from step - 1 to step.
        np.testing.assert_allclose(values[step, "w"].simple_value, w_before(step - 1), rtol=1e-6)
        expected = tf_summary(lambda tf: tf.compat.v1.summary.merge([
            tf.compat.v1.summary.histogram("x", x),
            tf.compat.v1.summary.image("img", x.reshape(-1, 2, 2, 3), max_outputs=2)]))
        expected = {v.tag: v for v in expected.value}
        assert values[step, "x"].histo == expected["x"].histo
        assert values[step, "config"].tensor.string_val == [b"lr=0.1"]
        for tag in ("img/image/0", "img/image/1"):
            np.testing.assert_array_equal(decoded(values[step, tag]), decoded(expected[tag]))


def test_values_leave_the_device_only_at_the_summary_steps(tmp_path, monkeypatch):
    calls = []
    write = traced._write

    def counting(logdir, build, step, arrays):
        calls.append((int(step), [np.shape(a) for a in arrays]))
        write(logdir, build, step, arrays)

    monkeypatch.setattr(traced, "_write", counting)
    fit(summarizing_fn(), tmp_path)
    # One transfer per summary per due step; the images cut to max_outputs on the device,
    # the text (a constant) none.
    # (In any order within a step: the callbacks are not ordered.)
    assert sorted(calls) == sorted((s, shape) for s in (1, 4, 7)
                                   for shape in ([()], [(BATCH, WIDTH)], [(2, 2, 2, 3)], []))


def test_tpu_estimator_writes_model_fn_summaries_that_tensorboard_reads(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config = kte.RunConfig(model_dir=str(tmp_path), save_summary_steps=2,
                           log_step_count_steps=None,
                           tpu_config=kte.TPUConfig(iterations_per_loop=3))
    estimator = kte.TPUEstimator(model_fn=summarizing_fn(), config=config,
                                 train_batch_size=BATCH, eval_batch_size=BATCH)

    def input_fn(params):
        import tensorflow as tf

        return tf.data.Dataset.from_tensor_slices(X).batch(params["batch_size"])

    estimator.train(input_fn, max_steps=4)
    estimator.evaluate(input_fn, steps=2)
    events = EventAccumulator(str(tmp_path), size_guidance={"images": 0, "histograms": 0})
    events.Reload()
    assert [e.step for e in events.Scalars("w")] == [1, 3]
    assert [(e.step, e.width, e.height) for e in events.Images("img/image/1")] == [(1, 2, 2), (3, 2, 2)]
    assert [e.histogram_value.num for e in events.Histograms("x")] == [BATCH * WIDTH] * 2
    # Evaluation writes its metrics only, as TF1's estimator did.
    assert set(tags_at(tmp_path / "eval")) == {"loss"}


def test_tags_follow_tf1_scopes_and_are_unique_per_model_fn_call(tmp_path):
    def model_fn(features, labels, mode):
        with tf1.variable_scope("block"):
            tf1.summary.scalar("avg", tf1.reduce_mean(features))
            tf1.summary.scalar("avg", tf1.reduce_max(features))
        tf1.summary.scalar("avg", tf1.reduce_min(features), family="stats")
        tf1.summary.scalar("avg", tf1.reduce_min(features), family="stats")
        w = tf1.get_variable("w", shape=(), initializer=tf1.ones_initializer())
        return kte.TPUEstimatorSpec(mode, loss=tf1.reduce_mean(features) * w,
                                    train_op=keras.optimizers.SGD(0.1))

    def reference(tf):
        x = tf.constant(batch(0))
        with tf.compat.v1.variable_scope("block"):
            tf.compat.v1.summary.scalar("avg", tf.reduce_mean(x))
            tf.compat.v1.summary.scalar("avg", tf.reduce_max(x))
        tf.compat.v1.summary.scalar("avg", tf.reduce_min(x), family="stats")
        tf.compat.v1.summary.scalar("avg", tf.reduce_min(x), family="stats")
        return tf.compat.v1.summary.merge_all()

    fit(model_fn, tmp_path, loop=1, every=1)
    first = {v.tag: v.simple_value for step, v in read_values(tmp_path) if step == 1 and v.tag != "loss"}
    expected = {v.tag: v.simple_value for v in tf_summary(reference).value}
    assert first == expected
    assert sorted(first) == ["block/avg", "block/avg_1", "stats/stats/avg", "stats/stats/avg_1"]


def test_merge_all_merges_the_summaries_of_the_call():
    seen = []

    def model_fn(features, labels, mode):
        seen.append(tf1.summary.merge_all())
        tf1.summary.scalar("a", tf1.reduce_mean(features))
        tf1.summary.image("b", tf1.reshape(features, [-1, 2, 2, 3]), max_outputs=2)
        tf1.summary.histogram("c", features, collections=["mine"])
        seen.append(tf1.summary.merge_all())
        seen.append(tf1.summary.merge_all(key="mine"))
        w = tf1.get_variable("w", shape=(), initializer=tf1.ones_initializer())
        return kte.TPUEstimatorSpec(mode, loss=tf1.reduce_mean(features) * w,
                                    train_op=keras.optimizers.SGD(0.1))

    kte.EstimatorModel(model_fn, train_batch_size=BATCH).build_from_batch(
        kte.ModeKeys.TRAIN, (X[:BATCH], None))
    none, merged, mine = seen[:3]
    assert none is None
    assert merged.tags == ["a", "b/image/0", "b/image/1"]
    assert mine.tags == ["c"]


@pytest.mark.parametrize(
    "record, steps",
    [(lambda: tf1.contrib.summary.always_record_summaries(), list(range(STEPS))),
     (lambda: tf1.contrib.summary.record_summaries_every_n_global_steps(3), [0, 3, 6]),
     (lambda: tf1.contrib.summary.never_record_summaries(), None)],
    ids=["always", "every-3", "never"],
)
def test_contrib_summaries_in_model_fn_follow_tf1s_recording_rules(tmp_path, record, steps):
    contrib_dir = tmp_path / "contrib"

    def model_fn(features, labels, mode):
        with tf1.contrib.summary.create_file_writer(str(contrib_dir)).as_default(), record():
            tf1.contrib.summary.scalar("first", features[0, 0])
        w = tf1.get_variable("w", shape=(), initializer=tf1.ones_initializer())
        return kte.TPUEstimatorSpec(mode, loss=tf1.reduce_mean(features) * w,
                                    train_op=keras.optimizers.SGD(0.1))

    fit(model_fn, tmp_path)
    if steps is None:
        assert not contrib_dir.exists() or read_values(contrib_dir) == []
        return
    # At the global step before the step's update, as TF1 read it in the same run.
    written = [(step, v.simple_value) for step, v in read_values(contrib_dir)]
    assert written == [(s, X[s * BATCH, 0]) for s in steps]
    assert len(list(contrib_dir.glob("events.out.tfevents.*"))) == 1  # TF1's one writer.


def test_a_writer_model_fn_opens_writes_one_event_file_per_training_run(tmp_path):
    contrib_dir = tmp_path / "contrib"

    def model_fn(features, labels, mode, params):
        with tf1.contrib.summary.create_file_writer(str(contrib_dir)).as_default(), \
                tf1.contrib.summary.always_record_summaries():
            tf1.contrib.summary.scalar("first", features[0, 0])
        w = tf1.get_variable("w", shape=(), initializer=tf1.ones_initializer())
        return kte.TPUEstimatorSpec(mode, loss=tf1.reduce_mean(features) * w,
                                    train_op=keras.optimizers.SGD(0.1))

    estimator = kte.TPUEstimator(
        model_fn, model_dir=str(tmp_path / "model"), use_tpu=False, train_batch_size=BATCH,
        config=kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=2)))
    estimator.train(lambda params: X[: BATCH * 4], max_steps=4)
    assert len(list(contrib_dir.glob("events.out.tfevents.*"))) == 1
    estimator.train(lambda params: X[: BATCH * 4], max_steps=8)  # A new graph: a new file.
    assert len(list(contrib_dir.glob("events.out.tfevents.*"))) == 2
    assert [step for step, _ in read_values(contrib_dir)] == list(range(8))


def test_a_histogram_of_a_nan_in_model_fn_stops_training_with_tf1s_error(tmp_path):
    def model_fn(features, labels, mode):
        w = tf1.get_variable("w", shape=(), initializer=tf1.ones_initializer())
        tf1.summary.histogram("log_x", tf1.log(features))
        return kte.TPUEstimatorSpec(mode, loss=tf1.reduce_mean(features) * w,
                                    train_op=keras.optimizers.SGD(0.1))

    x = np.ones((BATCH * STEPS, WIDTH), "float32")
    x[BATCH * 5] = -1.0  # The 6th step's batch: log(-1) is NaN.
    model = kte.EstimatorModel(model_fn, train_batch_size=BATCH, config=kte.RunConfig(
        tpu_config=kte.TPUConfig(iterations_per_loop=2)))
    model.compile()
    with pytest.raises(ValueError, match="Nan in summary histogram for: log_x"):
        model.fit((x, None), shuffle=False, verbose=0,
                  callbacks=[kte.summary.SummaryCallback(str(tmp_path), 1)])
    assert model.global_step == 6  # Stopped after the loop of the failing step.
    assert tags_at(tmp_path)["log_x"] == [1, 2, 3, 4, 5]


def test_a_summary_of_a_vector_in_model_fn_is_an_error_naming_the_shape():
    def model_fn(features, labels, mode):
        tf1.summary.scalar("row", features[0])
        return kte.TPUEstimatorSpec(mode, loss=tf1.reduce_mean(features),
                                    train_op=keras.optimizers.SGD(0.1))

    with pytest.raises(ValueError, match=r"scalar summary 'row' must be one number. .*\(12,\)"):
        kte.EstimatorModel(model_fn, train_batch_size=BATCH).build_from_batch(
            kte.ModeKeys.TRAIN, (X[:BATCH], None))


# -- Host calls. --------------------------------------------------------------


def image_host_call_fn(namespace, logdir=None):
    """A model_fn whose host_call writes the batch's first rows as images."""

    def host_call(gs, images):
        if namespace == "tf1":
            tf1.summary.image("rows", images, max_outputs=2)
        else:  # TensorFlow 2's own, as detection's base_model writes them.
            import tensorflow as tf

            tf2 = tf.compat.v2
            with tf2.summary.create_file_writer(str(logdir)).as_default(), \
                    tf2.summary.record_if(True):
                tf2.summary.image("rows", images, step=gs[0] + 1, max_outputs=2)

    def model_fn(features, labels, mode):
        w = tf1.get_variable("w", shape=(), initializer=tf1.ones_initializer())
        gs = tf1.reshape(kte.get_global_step(), [1])
        images = tf1.reshape(features, [-1, 2, 2, 3])
        return kte.TPUEstimatorSpec(mode, loss=tf1.reduce_mean(features) * w,
                                    train_op=keras.optimizers.SGD(0.1),
                                    host_call=(host_call, [gs, images]))

    return model_fn


def test_tf1_images_in_a_host_call_are_tf1s_at_the_host_calls_step(tmp_path):
    model = kte.EstimatorModel(image_host_call_fn("tf1"), train_batch_size=BATCH)
    model.compile()
    with kte.summary.record_summaries(tmp_path, lambda: model.global_step):
        model.fit((X[:3 * BATCH], None), shuffle=False, verbose=0)
    written = read_values(tmp_path)
    assert [(s, v.tag) for s, v in written] == [
        (s, f"rows/image/{i}") for s in (1, 2, 3) for i in (0, 1)]
    for step, value in written:
        (expected,) = [v for v in tf_summary(lambda tf: tf.compat.v1.summary.image(
            "rows", batch(step - 1).reshape(-1, 2, 2, 3), max_outputs=2)).value
            if v.tag == value.tag]
        assert value.image.encoded_image_string == expected.image.encoded_image_string


def test_tensorflow_2_images_in_a_host_call_reach_tensorboard(tmp_path):
    import tensorflow as tf

    model = kte.EstimatorModel(image_host_call_fn("tf2", tmp_path), train_batch_size=BATCH)
    model.compile()
    model.fit((X[:2 * BATCH], None), shuffle=False, verbose=0)
    written = read_values(tmp_path)
    assert [(s, v.tag) for s, v in written] == [(1, "rows"), (2, "rows")]
    for step, value in written:
        width, height, *pngs = tf.make_ndarray(value.tensor)
        assert (int(width), int(height), len(pngs)) == (2, 2, 2)
        pixels = tf.io.decode_png(pngs[0]).numpy()
        # TensorFlow 2 clips floats to [0, 1] (TF1 rescaled them).
        expected = tf.image.convert_image_dtype(
            batch(step - 1).reshape(-1, 2, 2, 3)[0], tf.uint8, saturate=True)
        np.testing.assert_array_equal(pixels, expected.numpy())


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype int64")  # tf1.cast to int64.
def test_amoeba_nets_host_call_writes_through_tf1_summary(tmp_path):
    def model_fn(features, labels, mode):
        w = tf1.get_variable("w", shape=(), initializer=tf1.ones_initializer())
        lr = tf1.reshape(w * 0.5, [1])

        def host_call_fn(gs, lr):  # As amoeba_net_model.py writes it (converted).
            gs = tf1.cast(tf1.reduce_mean(gs), tf1.int64)
            with tf1.summary.create_file_writer(str(tmp_path)).as_default():
                with tf1.summary.always_record_summaries():
                    tf1.summary.scalar("learning_rate", tf1.reduce_mean(lr), step=gs)
                    return tf1.summary.all_summary_ops()

        gs = tf1.reshape(kte.get_global_step(), [1])
        return kte.TPUEstimatorSpec(mode, loss=tf1.reduce_mean(features) * w,
                                    train_op=keras.optimizers.SGD(0.1),
                                    host_call=(host_call_fn, [gs, lr]))

    model = kte.EstimatorModel(model_fn, train_batch_size=BATCH)
    model.compile()
    model.fit((X[:3 * BATCH], None), shuffle=False, verbose=0)
    written = kte.summary.read_scalars(tmp_path)["learning_rate"]
    assert [s for s, _ in written] == [0, 1, 2]
    np.testing.assert_allclose([v for _, v in written], [0.5 * w_before(k) for k in range(3)],
                               rtol=1e-6)


@pytest.mark.filterwarnings("ignore:Cannot activate TF2 compatibility support")
def test_a_tensorflow_graph_tensor_gets_tensorflows_own_summary():
    import tensorflow as tf

    def preprocess(image):  # inception_preprocessing's image summaries, in a tf.data map.
        tf1.summary.image("distorted", tf.expand_dims(image, 0))
        return image

    dataset = tf.data.Dataset.from_tensor_slices(np.zeros((2, 4, 4, 3), "float32")).map(preprocess)
    assert [x.shape for x in dataset] == [(4, 4, 3)] * 2


# -- Conversion. --------------------------------------------------------------

TF1_PROGRAM = '''
import tensorflow.compat.v1 as tf

def model_fn(features, labels, mode, params):
    tf.summary.image("inputs", features, max_outputs=2)
    tf.summary.histogram("logits", features)
    tf.summary.merge_all()
    tf.contrib.layers.summaries.summarize_activation(tf.nn.relu(features))
'''


def test_the_converter_maps_tf1_summaries_and_summarize_activation():
    from keras_tpu_estimator import convert

    result = convert.convert_source(TF1_PROGRAM)
    for name in ("summary.image", "summary.histogram", "summary.merge_all",
                 "contrib.layers.summaries.summarize_activation"):
        assert f"tf1.{name}(" in result.source
    assert [c for c in result.changes if c.level == "ERROR"] == []
