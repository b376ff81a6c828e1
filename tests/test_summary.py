"""TensorBoard summaries: the default writer, scalars read back, the training callback."""

import os
import threading

import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
from keras_tpu_estimator import summary

from model_fns import estimator_model
from model_fns import linear_fn
from model_fns import loop_logs
from model_fns import ones
from model_fns import with_host_call

TRAIN, PREDICT = kte.ModeKeys.TRAIN, kte.ModeKeys.PREDICT


def event_files(logdir):
    return [f for f in os.listdir(logdir) if f.startswith("events.out.tfevents.")]


# -- scalar / histogram / flush. ----------------------------------------------


def test_outside_record_summaries_nothing_is_written(tmp_path):
    assert summary.scalar("loss", 1.0, step=1) is False
    assert summary.histogram("w", [1.0, 2.0], step=1) is False
    summary.flush()
    assert list(tmp_path.iterdir()) == []


def test_scalars_are_read_back_by_tag_and_step(tmp_path):
    with summary.record_summaries(tmp_path):
        assert summary.scalar("loss", np.float32(0.5), step=2) is True
        summary.scalar("loss", 0.25, step=np.int32(4))
        summary.scalar("accuracy", keras.ops.convert_to_tensor(0.75), step=4)
    assert summary.read_scalars(tmp_path) == {
        "loss": [(2, 0.5), (4, 0.25)],
        "accuracy": [(4, 0.75)],
    }


def test_the_step_defaults_to_the_step_fn_of_the_context(tmp_path):
    step = [3]
    with summary.record_summaries(tmp_path, step_fn=lambda: step[0]):
        summary.scalar("loss", 1.0)
        step[0] = 7
        summary.scalar("loss", 2.0)
    assert summary.read_scalars(tmp_path) == {"loss": [(3, 1.0), (7, 2.0)]}


def test_contexts_nest_and_the_innermost_wins(tmp_path):
    outer, inner = tmp_path / "outer", tmp_path / "inner"
    with summary.record_summaries(outer):
        with summary.record_summaries(inner):
            summary.scalar("a", 1.0, step=1)
        summary.scalar("b", 2.0, step=1)
    assert summary.read_scalars(inner) == {"a": [(1, 1.0)]}
    assert summary.read_scalars(outer) == {"b": [(1, 2.0)]}


def test_one_directory_gets_one_event_file_from_nested_writers(tmp_path):
    with summary.record_summaries(tmp_path, lambda: 1):
        with summary.record_summaries(tmp_path, lambda: 2):
            summary.scalar("a", 1.0)
        summary.scalar("a", 2.0)
    assert len(event_files(tmp_path)) == 1
    assert summary.read_scalars(tmp_path) == {"a": [(1, 2.0), (2, 1.0)]}


def test_the_default_writer_is_per_thread(tmp_path):
    written = []
    with summary.record_summaries(tmp_path, lambda: 0):
        thread = threading.Thread(target=lambda: written.append(summary.scalar("a", 1.0)))
        thread.start()
        thread.join()
    assert written == [False]


def test_histograms_are_written(tmp_path):
    import tensorflow as tf
    from tensorflow.core.util import event_pb2

    with summary.record_summaries(tmp_path, lambda: 5):
        assert summary.histogram("weights", np.arange(10.0)) is True
    (path,) = event_files(tmp_path)
    tags = [
        (v.tag, event.step)
        for record in tf.data.TFRecordDataset(str(tmp_path / path))
        for event in [event_pb2.Event.FromString(record.numpy())]
        for v in event.summary.value
    ]
    assert tags == [("weights", 5)]
    assert summary.read_scalars(tmp_path) == {}  # Not a scalar.


def test_flush_makes_scalars_readable_inside_the_context(tmp_path):
    with summary.record_summaries(tmp_path, lambda: 1):
        summary.scalar("a", 1.0)
        summary.flush()
        assert summary.read_scalars(tmp_path) == {"a": [(1, 1.0)]}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"name": "", "value": 1.0, "step": 1}, "`name` must be a non-empty string"),
        ({"name": "a", "value": [1.0, 2.0], "step": 1}, r"must be one number. Received: value of shape \(2,\)"),
        ({"name": "a", "value": "x", "step": 1}, "must be one number"),
        ({"name": "a", "value": 1.0, "step": 1.5}, r"`step` of summary 'a' must be an integer. Received: step=1.5"),
        ({"name": "a", "value": 1.0}, "has no `step`, and record_summaries was given no `step_fn`"),
    ],
    ids=["empty-name", "vector", "string", "float-step", "no-step"],
)
def test_scalar_arguments(tmp_path, kwargs, message):
    with summary.record_summaries(tmp_path):
        with pytest.raises(ValueError, match=message):
            summary.scalar(**kwargs)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"logdir": None}, "`logdir` must be a directory path. Received: logdir=None"),
        ({"logdir": "x", "step_fn": 3}, "`step_fn` must be None or a function"),
    ],
)
def test_record_summaries_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        with summary.record_summaries(**kwargs):
            pass


def test_read_scalars_of_a_missing_directory_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="`logdir` is not a directory"):
        summary.read_scalars(tmp_path / "missing")


def test_read_scalars_of_a_directory_without_events_is_empty(tmp_path):
    assert summary.read_scalars(tmp_path) == {}


# -- host_call writing summaries, the pattern of TPUEstimator programs. -------


def _scalar_host_call(gs, loss):
    summary.scalar("loss", loss[0], step=gs[0])


summarizing_fn = with_host_call(_scalar_host_call)


@pytest.mark.parametrize("every, steps", [(1, list(range(10))), (3, [0, 3, 6, 9])])
def test_a_host_call_writes_scalars_at_its_steps(tmp_path, every, steps):
    model = estimator_model(summarizing_fn, loop=4, host_call_every=every)
    with summary.record_summaries(tmp_path, lambda: model.global_step):
        model.fit((ones(10), None), shuffle=False, verbose=0)
    assert len(event_files(tmp_path)) == 1
    written = summary.read_scalars(tmp_path)["loss"]
    assert [s for s, _ in written] == steps
    np.testing.assert_allclose([v for _, v in written], [1 - 0.1 * s for s in steps], atol=1e-6)


def test_a_host_call_outside_record_summaries_writes_nothing(tmp_path):
    model = estimator_model(summarizing_fn)
    model.fit((ones(4), None), verbose=0)
    assert model.global_step == 4 and list(tmp_path.iterdir()) == []


def writer_creating_fn(logdir, tf_summary):
    """resnet_main's host_call: a TensorFlow writer created in every call."""

    def host_call(gs, loss):
        writer = tf_summary.create_file_writer(str(logdir), max_queue=4)
        with writer.as_default(), tf_summary.record_if(True):
            tf_summary.scalar("loss", loss[0], step=gs[0])
        writer.close()

    return with_host_call(host_call)


@pytest.mark.parametrize("namespace", ["tf.summary", "tf.compat.v2.summary"])
def test_a_writer_created_in_every_host_call_writes_one_event_file_per_fit(tmp_path, namespace):
    import tensorflow as tf

    tf_summary = tf.summary if namespace == "tf.summary" else tf.compat.v2.summary
    model = estimator_model(writer_creating_fn(tmp_path, tf_summary), loop=4)
    model.fit((ones(10), None), shuffle=False, verbose=0)
    assert len(event_files(tmp_path)) == 1
    assert [s for s, _ in summary.read_scalars(tmp_path)["loss"]] == list(range(10))
    model.fit((ones(4), None), shuffle=False, verbose=0)
    assert len(event_files(tmp_path)) == 2
    assert [s for s, _ in summary.read_scalars(tmp_path)["loss"]] == list(range(14))


def test_tensorflow_writers_are_tensorflows_own_outside_host_calls(tmp_path):
    import tensorflow as tf

    original = tf.summary.create_file_writer
    with summary.keep_writers():
        with summary.host_call_writers():
            first = tf.summary.create_file_writer(str(tmp_path))
            assert tf.summary.create_file_writer(str(tmp_path))._writer is first._writer
            assert isinstance(first, tf.summary.SummaryWriter)
        assert tf.summary.create_file_writer is original
        assert tf.summary.create_file_writer(str(tmp_path / "own")) is not first


def test_a_host_call_writer_of_kte_summary_lasts_the_whole_fit(tmp_path):
    def model_fn(features, labels, mode):
        spec = summarizing_fn(features, labels, mode)
        host_call, tensors = spec.host_call

        def recording_host_call(gs, loss):
            with summary.record_summaries(tmp_path):
                host_call(gs, loss)

        return spec._replace(host_call=(recording_host_call, tensors))

    estimator_model(model_fn, loop=2).fit((ones(6), None), shuffle=False, verbose=0)
    assert len(event_files(tmp_path)) == 1
    assert [s for s, _ in summary.read_scalars(tmp_path)["loss"]] == list(range(6))


# -- at_step. -----------------------------------------------------------------


def test_at_step_records_summaries_without_a_step_at_its_step(tmp_path):
    with summary.record_summaries(tmp_path, lambda: 100):
        summary.scalar("a", 1.0)
        with summary.at_step(7):
            summary.scalar("a", 2.0)
            summary.histogram("h", [1.0, 2.0])
            summary.scalar("a", 3.0, step=3)  # An explicit step still wins.
        summary.scalar("a", 4.0)
    assert summary.read_scalars(tmp_path) == {
        "a": [(3, 3.0), (7, 2.0), (100, 1.0), (100, 4.0)]
    }


def test_at_step_contexts_nest_and_the_innermost_wins(tmp_path):
    with summary.record_summaries(tmp_path, lambda: 0):
        with summary.at_step(np.int64(5)):
            with summary.at_step(np.array([9], "int32")):
                summary.scalar("a", 1.0)
            summary.scalar("a", 2.0)
    assert summary.read_scalars(tmp_path) == {"a": [(5, 2.0), (9, 1.0)]}


def test_at_step_gives_the_step_when_record_summaries_has_no_step_fn(tmp_path):
    with summary.at_step(4), summary.record_summaries(tmp_path):
        assert summary.scalar("a", 1.0) is True
    assert summary.read_scalars(tmp_path) == {"a": [(4, 1.0)]}


def test_at_step_outside_record_summaries_writes_nothing(tmp_path):
    with summary.at_step(4):
        assert summary.scalar("a", 1.0) is False
    assert list(tmp_path.iterdir()) == []


def test_at_step_is_per_thread(tmp_path):
    def write():
        with summary.record_summaries(tmp_path, lambda: 11):
            summary.scalar("other_thread", 1.0)

    with summary.at_step(3):
        thread = threading.Thread(target=write)
        thread.start()
        thread.join()
    assert summary.read_scalars(tmp_path) == {"other_thread": [(11, 1.0)]}


@pytest.mark.parametrize("step", [1.5, "3", [1, 2], True, None])
def test_at_step_step_must_be_one_integer(step):
    with pytest.raises(ValueError, match="`step` must be an integer"):
        with summary.at_step(step):
            pass


# -- SummaryCallback. ---------------------------------------------------------


def test_summary_callback_writes_the_loss_and_the_speed_at_tpu_loops_as_tensorflow(tmp_path):
    model = estimator_model(linear_fn, loop=4)
    callback = summary.SummaryCallback(tmp_path, 3)
    model.fit((ones(10), None), callbacks=[callback], shuffle=False, verbose=0)
    scalars = summary.read_scalars(tmp_path)
    # Loops (TF's runs on a TPU) end at 4, 8, 10: SummarySaverHook wrote at the first, then
    # at the first run after one starting 3 steps after it. The loss of the n-th step
    # (its global step after it) is 1 - 0.1 (n - 1).
    assert [s for s, _ in scalars["loss"]] == [4, 10]
    np.testing.assert_allclose([v for _, v in scalars["loss"]], [0.7, 0.1], atol=1e-6)
    # The first loop only starts the clock (StepCounterHook's).
    assert [s for s, _ in scalars["global_step/sec"]] == [8]
    assert all(v > 0 for _, v in scalars["global_step/sec"])


def test_summary_callback_shares_the_event_file_of_record_summaries(tmp_path):
    model = estimator_model(linear_fn, loop=2)
    with summary.record_summaries(tmp_path, lambda: model.global_step):
        model.fit((ones(4), None), callbacks=[summary.SummaryCallback(tmp_path, 2)], verbose=0)
        summary.scalar("other", 1.0)
    assert len(event_files(tmp_path)) == 1
    assert set(summary.read_scalars(tmp_path)) == {"loss", "global_step/sec", "other"}


@pytest.mark.parametrize("value", [0, 1.5, None])
def test_summary_callback_every_n_steps_must_be_a_positive_int(tmp_path, value):
    with pytest.raises(ValueError, match=f"every_n_steps={value!r}"):
        summary.SummaryCallback(tmp_path, value)


def test_summary_callback_reads_the_loops_from_the_logs(tmp_path):
    callback = summary.SummaryCallback(tmp_path, 2)  # No model: the logs are all it reads.
    callback.on_train_begin()
    callback.on_train_batch_end(2, loop_logs(0, [1.0, 2.0, 3.0]))
    callback.on_train_batch_end(5, loop_logs(3, [4.0, 5.0, 6.0]))
    callback.on_train_batch_end(6, loop_logs(6, [7.0]))  # Step 7: nothing to write.
    callback.on_train_end(loop_logs(6, [7.0]))
    scalars = summary.read_scalars(tmp_path)
    assert scalars["loss"] == [(3, 3.0), (7, 7.0)]  # One run per loop.
    assert [s for s, _ in scalars["global_step/sec"]] == [6]


def test_summary_callback_logs_without_the_loop_keys_are_a_value_error(tmp_path):
    callback = summary.SummaryCallback(tmp_path, 1)
    callback.on_train_begin()
    try:
        with pytest.raises(ValueError, match="'loop_first_step' and 'loop_losses'"):
            callback.on_train_batch_end(0, {"loss": 0.5})
    finally:
        callback.on_train_end()


def test_the_first_writer_warms_the_scalar_path_up_beside_writing_nothing(tmp_path, monkeypatch):
    from keras_tpu_estimator._backend import warm_up
    from keras_tpu_estimator.summary import writers

    started = []
    monkeypatch.setattr(writers, "_scalars_warmed", threading.Event())
    monkeypatch.setattr(warm_up, "beside", lambda fn, *args: started.append(fn))
    writers.acquire(tmp_path)
    writers.acquire(tmp_path / "other")  # Once per process.
    assert started == [writers._scalar_to_noop_writer]
    started[0]()
    writers.release(tmp_path)
    writers.release(tmp_path / "other")
    assert kte.summary.read_scalars(tmp_path) == {}
