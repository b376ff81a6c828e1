"""TensorFlow 2 summaries (`tf.compat.v2.summary`) made inside `model_fn`.

A TF1 program writes them into a writer of its own, under `record_if`, at
`step=global_step`. The reference is TensorFlow itself: the same model as a
`tf.compat.v1` graph run in a session, its summaries run before each
update (TF 2.21), writing into another directory; the events must match.
"""

import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.summary import traced

from model_fns import BATCH
from summary_support import read_values

STEPS, WIDTH = 6, 12  # A row is a 2x2 RGB image.
X = np.random.default_rng(3).uniform(0, 1, size=(BATCH * STEPS, WIDTH)).astype("float32")


def summaries(tf1_api, tf2, features, logdir):
    """The TF2 summaries of the program, made with `tf1_api` (ours or TensorFlow's)."""
    global_step = tf1_api.train.get_or_create_global_step()
    w = tf1_api.get_variable("w", shape=(), initializer=tf1_api.ones_initializer())
    writer = tf2.summary.create_file_writer(logdir, max_queue=5, flush_millis=1000)
    record = tf1_api.equal(tf1_api.mod(global_step, 2), 0)
    with writer.as_default(), tf2.summary.record_if(record):
        tf2.summary.scalar("w", w, step=global_step)
        with tf1_api.variable_scope("block"):
            tf2.summary.scalar("mean", tf1_api.reduce_mean(features), step=global_step)
        tf2.summary.histogram("x", features, step=global_step)
        tf2.summary.image("img", tf1_api.reshape(features, [-1, 2, 2, 3]), step=global_step,
                          max_outputs=2)
        tf2.summary.text("config", "lr=0.1", step=global_step)
    return writer, tf1_api.reduce_mean(features) * w, global_step


def model_fn_writing_to(logdir, seen_ops):
    def model_fn(features, labels, mode, params):
        _, loss, global_step = summaries(tf1, tf1.compat.v2, features, logdir)
        ops = tf1.summary.all_v2_summary_ops()
        seen_ops.append((mode, ops))
        with tf1.control_dependencies(ops):
            train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(
                loss, global_step=global_step)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=tf1.group(train_op, *ops))

    return model_fn


def input_fn(params):
    import tensorflow as tf

    return tf.data.Dataset.from_tensor_slices(X).batch(params["batch_size"])


def tensorflows_record(logdir):
    """What TensorFlow writes running the same program for STEPS steps."""
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default():
        batch = tf.compat.v1.placeholder(tf.float32, (BATCH, WIDTH))
        writer, loss, global_step = summaries(tf.compat.v1, tf.compat.v2, batch, logdir)
        ops = tf.compat.v1.summary.all_v2_summary_ops()
        with tf.control_dependencies(ops):  # The summaries see the values before the update.
            train = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
                loss, global_step=global_step)
        with tf.compat.v1.Session(graph=graph) as session:
            session.run([tf.compat.v1.global_variables_initializer(), writer.init()])
            for i in range(STEPS):
                session.run(train, {batch: X[i * BATCH:(i + 1) * BATCH]})
            session.run(writer.flush())
    return read_values(logdir)


def by_step_and_tag(values):
    return {(step, v.tag): v for step, v in values}


def test_tf2_summaries_in_model_fn_are_what_tensorflow_writes(tmp_path):
    seen_ops = []
    config = kte.RunConfig(model_dir=str(tmp_path / "model"), log_step_count_steps=None,
                           tpu_config=kte.TPUConfig(iterations_per_loop=3))
    estimator = kte.TPUEstimator(model_fn=model_fn_writing_to(str(tmp_path / "model/extra"),
                                                              seen_ops),
                                 config=config, use_tpu=False, train_batch_size=BATCH)
    estimator.train(input_fn, max_steps=STEPS)
    traced.wait()
    ours = by_step_and_tag(read_values(tmp_path / "model/extra"))
    theirs = by_step_and_tag(tensorflows_record(str(tmp_path / "tf")))

    tags = ["w", "block/mean", "x", "img", "config"]
    assert sorted(ours) == sorted(theirs) == sorted((s, t) for s in (0, 2, 4) for t in tags)
    for key, expected in theirs.items():
        got = ours[key]
        assert got.metadata == expected.metadata, key
        mine, reference = tf_array(got), tf_array(expected)
        if mine.dtype.kind == "f":
            np.testing.assert_allclose(mine, reference, rtol=1e-6, err_msg=str(key))
        else:  # The image's width, height and PNGs; the text.
            assert mine.tolist() == reference.tolist(), key
    assert len(list((tmp_path / "model/extra").glob("events.out.tfevents.*"))) == 1
    assert all(isinstance(ops, list) for _, ops in seen_ops)
    assert {len(ops) for _, ops in seen_ops} == {len(tags)}


def tf_array(value):
    import tensorflow as tf

    array = tf.make_ndarray(value.tensor)
    return array.astype("float64") if array.dtype.kind == "f" else array


def test_all_v2_summary_ops_is_a_list_also_when_there_are_none(tmp_path):
    seen = []

    def model_fn(features, labels, mode):
        seen.append(tf1.summary.all_v2_summary_ops())
        w = tf1.get_variable("w", shape=(), initializer=tf1.ones_initializer())
        loss = tf1.reduce_mean(features) * w
        step = tf1.train.get_or_create_global_step()
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator = kte.TPUEstimator(model_fn=model_fn, use_tpu=False, train_batch_size=BATCH,
                                 config=kte.RunConfig(model_dir=str(tmp_path)))
    estimator.train(input_fn, max_steps=1)
    assert seen and all(ops == [] for ops in seen)
    assert tf1.summary.all_v2_summary_ops() == []  # Outside model_fn too.


def test_without_record_if_every_step_is_recorded_and_in_a_host_call_at_once(tmp_path):
    logdir, host_logdir = str(tmp_path / "extra"), str(tmp_path / "host")
    tf2 = tf1.compat.v2

    def host_call(global_step, loss):  # numpy values: written at once.
        with tf2.summary.create_file_writer(host_logdir).as_default():
            with tf2.summary.record_if(global_step[0] % 2 == 1):
                tf2.summary.scalar("loss", loss[0], step=global_step[0])

    def model_fn(features, labels, mode):
        step = tf1.train.get_or_create_global_step()
        w = tf1.get_variable("w", shape=(), initializer=tf1.ones_initializer())
        tf2.summary.scalar("nowhere", w, step=step)  # No default writer: not recorded.
        with tf2.summary.create_file_writer(logdir).as_default(step=step):
            tf2.summary.scalar("first", features[0, 0])  # At the writer's default step.
        loss = tf1.reduce_mean(features) * w
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        return kte.TPUEstimatorSpec(
            mode, loss=loss, train_op=train_op,
            host_call=(host_call, [tf1.reshape(step, [1]), tf1.reshape(loss, [1])]))

    config = kte.RunConfig(model_dir=str(tmp_path / "model"),
                           tpu_config=kte.TPUConfig(iterations_per_loop=1))
    kte.TPUEstimator(model_fn=model_fn, use_tpu=False, train_batch_size=BATCH,
                     config=config).train(input_fn, max_steps=4)
    traced.wait()
    written = [(s, v.tag, float(tf_array(v))) for s, v in read_values(logdir)]
    assert written == [(s, "first", X[s * BATCH, 0]) for s in range(4)]
    assert [(s, v.tag) for s, v in read_values(host_logdir)] == [(1, "loss"), (3, "loss")]
    assert len(list((tmp_path / "host").glob("events.out.tfevents.*"))) == 1


def test_no_step_is_tensorflows_error():
    def model_fn(features, labels, mode):
        with tf1.compat.v2.summary.create_file_writer("unused").as_default():
            tf1.compat.v2.summary.scalar("x", tf1.reduce_mean(features))

    model = kte.EstimatorModel(model_fn, train_batch_size=BATCH)
    with pytest.raises(ValueError, match="No step set"):
        model.build_from_batch(kte.ModeKeys.TRAIN, (X[:BATCH], None))
