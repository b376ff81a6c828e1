"""How far the host dispatches loops ahead of the devices, in every mode.

JAX dispatches compiled programs asynchronously: a host that never waits on
a loop's results queues loops without bound (tens of thousands of eval
loops on 8 CPU devices make XLA abort). The chunk loop waits on the loop
two before the one it just dispatched, so at most two are in flight.

Observed here: the step runs a `jax.debug.callback` (run when a device
executes it) that records the example ids of its batch, slowed down so
that an unbounded host would race ahead; a Keras callback records, before
each loop is dispatched, how many batches the devices have finished.
"""

import threading
import time

import jax
import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte

BATCH = 8
BATCHES = 12
LOOP = 1  # Steps per loop: a loop is a batch.
MAX_IN_FLIGHT = 2


class DeviceProgress:
    """The batches the devices have executed, from the example ids they saw."""

    def __init__(self):
        self._lock = threading.Lock()
        self._seen = -1

    def record(self, ids):
        time.sleep(0.02)  # A slow device: an unbounded host races ahead.
        with self._lock:
            self._seen = max(self._seen, int(np.max(ids)))

    @property
    def batches_done(self):
        with self._lock:
            return (self._seen + 1) // BATCH


def model_fn_recording(progress):
    def model_fn(features, labels, mode):
        w = kte.get_variable("w", shape=(), initializer="ones")
        if isinstance(features["id"], jax.Array):  # Not in the symbolic build pass.
            jax.debug.callback(progress.record, features["id"])
        if mode == kte.ModeKeys.PREDICT:
            return kte.TPUEstimatorSpec(mode, predictions={"y": features["x"][:, 0] * w})
        loss = keras.ops.mean(features["x"]) * w
        if mode == kte.ModeKeys.EVAL:
            return kte.TPUEstimatorSpec(mode, loss=loss)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1))

    return model_fn


class HostAhead(keras.callbacks.Callback):
    """Before each loop is dispatched: loops dispatched minus loops done."""

    def __init__(self, progress):
        super().__init__()
        self.progress = progress
        self.ahead = []

    def _begin(self, batch, logs=None):
        dispatched = batch // LOOP
        self.ahead.append(dispatched - self.progress.batches_done // LOOP)

    on_train_batch_begin = on_test_batch_begin = on_predict_batch_begin = _begin


def features(n=BATCH * BATCHES):
    return {"x": np.ones((n, 1), "float32"), "id": np.arange(n, dtype="int32")}


RUNS = {
    "evaluate": lambda model, cb: model.evaluate(
        (features(), np.zeros(BATCH * BATCHES, "float32")), callbacks=[cb], verbose=0
    ),
    "predict": lambda model, cb: model.predict(features(), callbacks=[cb], verbose=0),
    "fit": lambda model, cb: model.fit(
        (features(), np.zeros(BATCH * BATCHES, "float32")), callbacks=[cb], verbose=0,
        shuffle=False,
    ),
}


@pytest.mark.parametrize("run", sorted(RUNS))
def test_host_dispatches_at_most_two_loops_ahead(run):
    progress = DeviceProgress()
    model = kte.EstimatorModel(
        model_fn_recording(progress), train_batch_size=BATCH, eval_batch_size=BATCH,
        predict_batch_size=BATCH, config=kte.RunConfig(
            tpu_config=kte.TPUConfig(iterations_per_loop=LOOP)),
        max_resident_bytes=0,
    )
    model.compile()
    host = HostAhead(progress)
    RUNS[run](model, host)
    assert len(host.ahead) == BATCHES
    assert max(host.ahead) <= MAX_IN_FLIGHT
