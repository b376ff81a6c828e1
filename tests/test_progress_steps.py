"""The steps callbacks are told an epoch has (`params['steps']`, the progress
bar's target), against the steps that run: from arrays' length and a
dataset's cardinality, as Keras counts them."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
from model_fns import BATCH
from model_fns import estimator_model
from model_fns import linear_fn

TRAIN, EVAL, PREDICT = kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL, kte.ModeKeys.PREDICT
FULL = 7 * BATCH  # Seven full batches.
SHORT = 7 * BATCH - 5  # Six full batches and a short one.


class StepCounter(keras.callbacks.Callback):
    """Records `params['steps']` and how many steps each epoch (or call) ran."""

    def __init__(self):
        super().__init__()
        self.ran = []

    def on_epoch_begin(self, epoch, logs=None):
        self.ran.append(0)

    def on_test_begin(self, logs=None):
        self.ran.append(0)

    def on_predict_begin(self, logs=None):
        self.ran.append(0)

    def _count(self, batch, logs=None):
        self.ran[-1] = batch + 1  # Called after each loop, with its last step.

    on_train_batch_end = on_test_batch_end = on_predict_batch_end = _count


def ones(n):
    return np.ones((n, 1), "float32")


def dataset(n, drop_remainder=False):
    return tf.data.Dataset.from_tensor_slices((ones(n), ones(n)[:, 0]))


def batched(n, drop_remainder=False):
    return dataset(n).batch(BATCH, drop_remainder=drop_remainder)


def input_fn_of(n, drop_remainder=False):
    def input_fn(params):
        return dataset(n).batch(params["batch_size"], drop_remainder=drop_remainder)

    return input_fn


def arrays_input_fn(params):
    return ones(SHORT), ones(SHORT)[:, 0]


# (name, input, modes whose count is unknown before the input ends). Training
# skips short batches, so a dataset with a short batch has a known count in
# training only when tf.data can tell its last batch is the only short one.
INPUTS = [
    ("arrays", lambda: (ones(SHORT), ones(SHORT)[:, 0]), ()),
    ("input_fn returning arrays", lambda: arrays_input_fn, ()),
    ("dataset", lambda: batched(FULL), ()),
    ("dataset with a short last batch", lambda: batched(SHORT), (TRAIN,)),
    ("dataset, drop_remainder", lambda: batched(SHORT, drop_remainder=True), ()),
    ("dataset, repeated", lambda: batched(FULL).repeat(2), ()),
    ("dataset, batched then repeated", lambda: batched(SHORT).repeat(2), (TRAIN,)),
    ("dataset, repeated then batched", lambda: dataset(SHORT).repeat(2).batch(BATCH), (TRAIN,)),
    ("dataset, take", lambda: batched(SHORT).take(3), ()),
    ("dataset, shuffled", lambda: dataset(FULL).shuffle(32, seed=0).batch(BATCH), ()),
    ("dataset, mapped", lambda: dataset(FULL).map(lambda x, y: (2 * x, y)).batch(BATCH), (TRAIN,)),
    ("dataset, mapped, drop_remainder",
     lambda: dataset(SHORT).map(lambda x, y: (2 * x, y)).batch(BATCH, drop_remainder=True), ()),
    ("dataset, filtered", lambda: dataset(FULL).filter(lambda x, y: y > 0).batch(BATCH),
     (TRAIN, EVAL, PREDICT)),
    ("input_fn", lambda: input_fn_of(FULL), ()),
    ("input_fn with a short last batch", lambda: input_fn_of(SHORT), (TRAIN,)),
    ("input_fn, drop_remainder", lambda: input_fn_of(SHORT, drop_remainder=True), ()),
]


@pytest.fixture(scope="module")
def model():
    return estimator_model(linear_fn, loop=4)


def run(model, mode, x, counter, **kwargs):
    if mode == TRAIN:
        model.fit(x, callbacks=[counter], verbose=0, **kwargs)
    elif mode == EVAL:
        model.evaluate(x, callbacks=[counter], verbose=0, **kwargs)
    else:
        model.predict(x, callbacks=[counter], verbose=0, **kwargs)


@pytest.mark.parametrize("mode", [TRAIN, EVAL, PREDICT])
@pytest.mark.parametrize("name, make_input, unknown", INPUTS, ids=[i[0] for i in INPUTS])
def test_callbacks_are_told_the_steps_that_run(model, mode, name, make_input, unknown):
    counter = StepCounter()
    if mode == TRAIN and name == "dataset, batched then repeated":  # Short batch mid-stream:
        with pytest.raises(ValueError, match="drop_remainder=True"):  # refused (TPU shapes).
            run(model, mode, make_input(), counter)
        return
    run(model, mode, make_input(), counter)
    assert counter.params["steps"] == (None if mode in unknown else counter.ran[0])


@pytest.mark.parametrize("mode, kwargs", [
    (TRAIN, {"steps_per_epoch": 3}), (EVAL, {"steps": 3}), (PREDICT, {"steps": 3}),
])
def test_a_step_count_given_is_the_target(model, mode, kwargs):
    counter = StepCounter()
    run(model, mode, batched(FULL).repeat(), counter, **kwargs)
    assert counter.params["steps"] == counter.ran[0] == 3


def test_the_progress_bar_shows_the_dataset_length(model, capsys):
    model.fit(batched(FULL), verbose=1)
    steps = FULL // BATCH
    assert f"{steps}/{steps}" in capsys.readouterr().out


def test_an_unknown_count_is_learned_after_the_first_epoch(model):
    counter = StepCounter()
    progress = keras.callbacks.ProgbarLogger()
    model.fit(batched(SHORT), epochs=2, callbacks=[counter, progress], verbose=0)
    assert counter.params["steps"] is None
    assert progress.target == counter.ran[0] == counter.ran[1]


@pytest.mark.parametrize("make_input", [
    lambda: batched(SHORT), lambda: batched(SHORT).repeat(2), lambda: batched(FULL).take(3),
])
@pytest.mark.parametrize("mode", [EVAL, PREDICT])
def test_evaluation_and_prediction_count_as_keras_does(model, make_input, mode):
    reference = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    reference.compile(loss="mse")
    ours, theirs = StepCounter(), StepCounter()
    run(model, mode, make_input(), ours)
    run(reference, mode, make_input(), theirs)
    assert ours.params["steps"] == theirs.params["steps"]


@pytest.mark.parametrize("deployment", [
    kte.InputPipelineConfig.PER_HOST_V1,
    kte.InputPipelineConfig.PER_HOST_V2,  # One call: 8 consecutive batches a step.
    kte.InputPipelineConfig.PER_SHARD_V1,  # Eight calls: a batch of each a step.
])
@pytest.mark.parametrize("mode", [TRAIN, EVAL, PREDICT])
@pytest.mark.parametrize("n", [FULL, SHORT])
def test_input_fn_deployments_count_the_steps_that_run(deployment, mode, n):
    config = kte.RunConfig(tpu_config=kte.TPUConfig(
        iterations_per_loop=4, per_host_input_for_training=deployment))
    model = kte.EstimatorModel(linear_fn, config=config, train_batch_size=BATCH,
                               eval_batch_size=BATCH, predict_batch_size=BATCH)
    model.compile()
    counter = StepCounter()
    run(model, mode, input_fn_of(n, drop_remainder=mode == TRAIN), counter)
    assert counter.params["steps"] == counter.ran[0]


@pytest.mark.parametrize("make_input", [
    lambda: batched(FULL), lambda: batched(SHORT, drop_remainder=True),
    lambda: batched(FULL).repeat(2), lambda: batched(SHORT).take(3),
])
def test_training_on_full_batches_counts_as_keras_does(model, make_input):
    reference = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    reference.compile(loss="mse")
    ours, theirs = StepCounter(), StepCounter()
    run(model, TRAIN, make_input(), ours)
    run(reference, TRAIN, make_input(), theirs)
    assert ours.params["steps"] == theirs.params["steps"]
