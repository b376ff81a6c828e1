"""`compat.v1.contrib.summary`: TF1 host-call summary code writing through kte.summary."""

import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1


def host_call_fn(logdir, gs, loss):
    """A host call as TPU programs wrote it."""
    gs = gs[0]
    with tf1.contrib.summary.create_file_writer(logdir, max_queue=10).as_default():
        with tf1.contrib.summary.always_record_summaries():
            tf1.contrib.summary.scalar("loss", loss[0], step=gs)
            return tf1.contrib.summary.all_summary_ops()


def test_host_call_code_writes_scalars(tmp_path):
    for step, loss in [(1, 0.5), (2, 0.25)]:
        assert host_call_fn(str(tmp_path), np.array([step]), np.array([loss])) is None
    assert kte.summary.read_scalars(str(tmp_path)) == {"loss": [(1, 0.5), (2, 0.25)]}


def test_record_every_n_steps_skips_the_other_steps(tmp_path):
    with tf1.contrib.summary.create_file_writer(str(tmp_path)).as_default():
        with tf1.contrib.summary.record_summaries_every_n_global_steps(2):
            written = [tf1.contrib.summary.scalar("x", float(s), step=s) for s in range(1, 5)]
    assert written == [False, True, False, True]
    assert kte.summary.read_scalars(str(tmp_path)) == {"x": [(2, 2.0), (4, 4.0)]}


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: tf1.contrib.summary.create_file_writer(""), "`logdir` of create_file_writer"),
        (lambda: tf1.contrib.summary.record_summaries_every_n_global_steps(0), "Received: n=0"),
    ],
)
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
