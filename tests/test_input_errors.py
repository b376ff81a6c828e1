"""Bad input is refused clearly, before any step runs on it.

What an `input_fn` returns is checked as TensorFlow's estimator checks it
(`parse_input_fn_result`: a tuple must be `(features, labels)`); the
batches are checked as they are read: a short batch in the middle of a
training input (TPUs need static shapes: TensorFlow's TPUEstimator refuses
it; each tensor's leading dimension is named when they differ), features
whose keys, dtypes or shapes change. Each error names the argument or the batch, the
value and what is allowed.
"""

import re

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte

from model_fns import BATCH
from model_fns import estimator_model
from model_fns import regression_fn

TRAIN, EVAL, PREDICT = kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL, kte.ModeKeys.PREDICT
DIM = 4


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    return {"x": rng.normal(size=(n, DIM)).astype("float32")}, rng.normal(size=n).astype("float32")


def batches(sizes):
    """An iterator of batches `(features, labels)` of these sizes."""
    return iter([data(n, seed=i) for i, n in enumerate(sizes)])


def run(model, mode, x, **kwargs):
    if mode == TRAIN:
        return model.fit(x, verbose=0, **kwargs)
    if mode == EVAL:
        return model.evaluate(x, verbose=0, **kwargs)
    return model.predict(x, verbose=0, **kwargs)


@pytest.fixture
def model():
    return estimator_model(regression_fn, params={"lr": 0.05})


# -- What an input_fn returns. ------------------------------------------------


@pytest.mark.parametrize("returned, shown", [
    (None, "None"),
    (5, "5"),
    (2.5, "2.5"),
    ("x", "'x'"),
])
def test_input_fn_returning_no_input_is_refused(model, returned, shown):
    with pytest.raises(TypeError, match=rf"input_fn.*returned {shown}.*tf.data.Dataset"):
        model.fit(lambda params: returned, verbose=0)


@pytest.mark.parametrize("returned", [
    lambda: (data(BATCH)[0], data(BATCH)[1], np.ones(BATCH, "float32")),  # + weights.
    lambda: (data(BATCH)[0],) * 3,
    lambda: [np.ones((BATCH, DIM), "float32")] * 3,
])
def test_input_fn_returning_a_tuple_other_than_a_pair_is_refused(model, returned):
    value = returned()
    with pytest.raises(ValueError, match=r"input_fn should return \(features, labels\) as a "
                                         rf"len 2 tuple.*{type(value).__name__} of {len(value)}"):
        model.fit(lambda params: value, verbose=0)


def test_input_fn_returning_a_list_of_numbers_is_refused(model):
    with pytest.raises(TypeError, match=r"input_fn.*\[1\.0, 2\.0\].*float.*arrays"):
        model.fit(lambda params: [1.0, 2.0], verbose=0)


def test_input_fn_returning_a_pair_of_arrays_trains(model):
    features, labels = data(4 * BATCH)
    model.fit(lambda params: (features, labels), verbose=0)
    assert model.global_step == 4


@pytest.mark.parametrize("container", [list, tuple])
def test_input_fn_returning_two_batches_is_refused(model, container):
    two = container([data(BATCH, seed=0), data(BATCH, seed=1)])
    with pytest.raises(ValueError, match=rf"input_fn returned a {container.__name__} of 2 "
                       r"\(features, labels\) batches.*one batch.*tf.data.Dataset of batches"):
        model.fit(lambda params: two, verbose=0)


def test_train_input_without_labels_names_the_missing_labels(model):
    with pytest.raises(ValueError, match=r"labels.*None.*input_fn.*\(features, labels\)"):
        model.fit(lambda params: data(4 * BATCH)[0], verbose=0)


@pytest.mark.parametrize("fails", [
    lambda features, labels: labels + 1.0,                      # NoneType arithmetic.
    lambda features, labels: keras.ops.convert_to_tensor(labels),
    lambda features, labels: labels.shape,                      # 'NoneType' attribute.
])
def test_train_model_fn_failing_on_missing_labels_advises_returning_them(fails):
    def model_fn(features, labels, mode, params):
        fails(features, labels)

    model = estimator_model(model_fn)
    with pytest.raises(ValueError, match=r"labels are None.*return \(features, labels\)"):
        model.fit(lambda params: data(4 * BATCH)[0], verbose=0)


def test_train_model_fn_error_unrelated_to_labels_is_left_as_it_is():
    """ALBERT and ELECTRA carry labels in features: their errors say nothing of labels."""
    def model_fn(features, labels, mode, params):
        raise ValueError("einsum subscripts 'BFH,HO->BFO' do not match")

    model = estimator_model(model_fn)
    with pytest.raises(ValueError, match="einsum subscripts") as raised:
        model.fit(lambda params: data(4 * BATCH)[0], verbose=0)
    assert "labels" not in str(raised.value)


# -- Strings reaching model_fn. -----------------------------------------------


def with_strings(where):
    """Features {"x"} and labels of 4 batches, strings in `where` (a feature read or not)."""
    features, labels = data(4 * BATCH)
    words = np.array(["a", "b"])[np.arange(4 * BATCH) % 2]
    if where == "labels":
        return features, words
    if where == "features['x']":
        return {"x": np.repeat(words[:, None], DIM, axis=1)}, labels
    return {**features, "name": words}, labels  # A feature model_fn never reads.


@pytest.mark.parametrize("where", ["features['x']", "features['name']", "labels"])
@pytest.mark.parametrize("form", ["dataset", "arrays"])
def test_strings_reaching_model_fn_are_refused_naming_them(model, where, form):
    features, labels = with_strings(where)
    if form == "dataset":
        returned = tf.data.Dataset.from_tensor_slices((features, labels)).batch(BATCH)
    else:
        returned = (features, labels)
    with pytest.raises(TypeError, match=re.escape(where) + r" is a string tensor.*no strings"
                       r".*Strings belong in input_fn.*feature_column"):
        model.fit(lambda params: returned, verbose=0)


def test_a_string_feature_is_refused_before_model_fn_reads_it(tmp_path):
    """TPUEstimator builds model_fn before any batch is placed: the build names it."""
    estimator = kte.TPUEstimator(model_fn=regression_fn, params={"lr": 0.05},
                                 config=kte.RunConfig(model_dir=str(tmp_path)),
                                 train_batch_size=BATCH)
    features, labels = with_strings("features['x']")
    with pytest.raises(TypeError, match=r"features\['x'\] is a string tensor"):
        estimator.train(lambda params: tf.data.Dataset.from_tensor_slices(
            (features, labels)).batch(params["batch_size"]), max_steps=1)


def test_a_string_feature_refused_in_prediction_too(model):
    features, _ = with_strings("features['name']")
    with pytest.raises(TypeError, match=r"features\['name'\] is a string tensor"):
        model.predict(lambda params: tf.data.Dataset.from_tensor_slices(features).batch(BATCH),
                      verbose=0)


# -- A short batch in the middle of a training input. -------------------------


SIZES = [BATCH] * 3 + [BATCH - 5] + [BATCH] * 4  # The fourth batch is short.


def generated(sizes, x_shape=(None, DIM)):
    """A tf.data dataset of `batches(sizes)`, its features of static shape `x_shape`."""
    return tf.data.Dataset.from_generator(
        lambda: batches(sizes),
        output_signature=({"x": tf.TensorSpec(x_shape)}, tf.TensorSpec((None,))),
    )


def sliced(n):
    return tf.data.Dataset.from_tensor_slices(data(n, seed=n)).batch(BATCH)


TRAINING_INPUTS = {
    "dataset": lambda: generated(SIZES),
    "dataset of unknown shapes": lambda: generated(SIZES, x_shape=(None, None)),
    "concatenated datasets": lambda: sliced(3 * BATCH).concatenate(sliced(BATCH - 5)).concatenate(
        sliced(4 * BATCH)),
    "iterable": lambda: batches(SIZES),
    "input_fn": lambda: lambda params: generated(SIZES),
}


@pytest.mark.parametrize("kind", sorted(TRAINING_INPUTS))
def test_short_batch_mid_stream_in_training_is_an_error(model, kind):
    with pytest.raises(ValueError, match=rf"batch 3 .*{BATCH - 5} examples.*batch size is "
                                         rf"{BATCH}.*drop_remainder=True"):
        model.fit(TRAINING_INPUTS[kind](), verbose=0)
    assert model.global_step <= 3


def test_short_batch_mid_stream_of_grouped_input_is_an_error():
    # PER_HOST_V2: a step's 16 rows are 8 consecutive batches of 2 of one call.
    config = kte.RunConfig(tpu_config=kte.TPUConfig(
        iterations_per_loop=2,
        per_host_input_for_training=kte.InputPipelineConfig.PER_HOST_V2))
    model = kte.EstimatorModel(regression_fn, params={"lr": 0.05}, config=config,
                               train_batch_size=16)
    model.compile()
    sizes = [2] * 24 + [1] + [2] * 40  # Batch 24 is short: step 3 has 15 rows.
    with pytest.raises(ValueError, match=r"batch 3 .*15 examples.*batch size is 16"):
        model.fit(lambda params: generated(sizes), verbose=0)


def test_short_last_batch_of_training_input_is_dropped(model):
    model.fit(batches([BATCH] * 5 + [BATCH - 5]), verbose=0)
    assert model.global_step == 5


@pytest.mark.parametrize("mode", [EVAL, PREDICT])
def test_evaluation_and_prediction_run_short_batches_mid_stream(model, mode):
    model.fit(batches([BATCH] * 2), verbose=0)
    sizes = [BATCH, BATCH - 5, BATCH]
    inputs = batches(sizes) if mode == EVAL else (f for f, _ in batches(sizes))
    result = run(model, mode, inputs)
    if mode == PREDICT:
        assert len(result["y"]) == sum(sizes)


# -- Batches that change mid-stream. ------------------------------------------


def changed(change):
    """Four batches; the third changed by `change(features, labels)`."""
    out = list(batches([BATCH] * 4))
    out[2] = change(*out[2])
    return iter(out)


CHANGES = {
    "key added": (lambda f, y: ({**f, "z": f["x"]}, y), r"keys.*added: \['z'\]"),
    "key removed": (lambda f, y: ({"w": f["x"]}, y), r"removed: \['x'\].*added: \['w'\]"),
    "dtype": (lambda f, y: ({"x": f["x"].astype("float64")}, y),
              r"features\['x'\].*dtype.*float32 to float64"),
    "shape": (lambda f, y: ({"x": f["x"][:, :2]}, y),
              rf"features\['x'\].*shape.*\({BATCH}, {DIM}\) to \({BATCH}, 2\)"),
    "labels dtype": (lambda f, y: (f, y.astype("int32")), r"labels.*float32 to int32"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
@pytest.mark.parametrize("mode", [TRAIN, EVAL])
def test_batches_that_change_mid_stream_are_refused(model, mode, change):
    make, message = CHANGES[change]
    with pytest.raises(ValueError, match=rf"batch 2 .*{message}"):
        run(model, mode, changed(make))


def test_labels_of_fewer_rows_than_the_features_make_a_short_training_batch(model):
    # Each tensor keeps its own leading dimension (TPUEstimator split each
    # along its own); the batch's is the smallest: here a short batch
    # mid-stream, refused in training with every tensor's leading dimension.
    features, labels = data(BATCH)
    bad = iter([(features, labels[:BATCH - 2])] * 3)
    with pytest.raises(ValueError, match=rf"batch 0 .*features.*{BATCH}.*labels.*{BATCH - 2}"):
        run(model, TRAIN, bad)


def test_dataset_labels_of_another_batch_size_than_the_features_are_refused(model):
    features, labels = data(4 * BATCH)
    dataset = tf.data.Dataset.zip((
        tf.data.Dataset.from_tensor_slices(features).batch(BATCH),
        tf.data.Dataset.from_tensor_slices(labels).batch(BATCH - 2),
    ))
    with pytest.raises(ValueError, match=rf"features.*{BATCH}.*labels.*{BATCH - 2}"):
        model.fit(dataset, verbose=0)


def test_batches_of_features_labels_and_weights_are_refused(model):
    features, labels = data(BATCH)
    weighted = iter([(features, labels, np.ones(BATCH, "float32"))] * 3)
    with pytest.raises(ValueError, match=r"\(features, labels\) as a len 2 tuple.*tuple of 3"):
        model.fit(weighted, verbose=0)


def test_arrays_of_features_and_labels_of_other_sizes_name_both(model):
    features, labels = data(4 * BATCH)
    with pytest.raises(ValueError, match=rf"features\['x'\] has {4 * BATCH}, labels has 10"):
        model.fit((features, labels[:10]), verbose=0)
