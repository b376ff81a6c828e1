"""Input read as TensorFlow reads it.

The dataset an `input_fn` returns is iterated once: building the model
reads nothing of it that training then misses (a `.cache()` before
`.repeat()` is filled by the one reading), and a dataset whose reading has
side effects is read as often as TensorFlow reads it. An `input_fn` that
returns the tensors of an iterator (`make_one_shot_iterator(ds).get_next()`,
`make_initializable_iterator`, random noise beside them: the TF1 way)
gives a new batch at every step, as its graph tensors did. Arrays of at
most one batch, trained for more steps than they hold, are refused.

The model memorizes: example `i` moves `table[i]` from 0 to 1, so the
table says which examples training saw.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
from keras_tpu_estimator.inputs import graph as graph_input

from model_fns import estimator_config

tf1 = tf.compat.v1
N = 32  # Examples.
B = 8  # Batch size.


def memorize_fn(features, labels, mode, params):
    """Loss (table[i] - 1)^2 over the batch's example indices `i`; EVAL's loss
    is the mean index; PREDICT returns the features."""
    index = features["i"]
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions=dict(features))
    if mode == kte.ModeKeys.EVAL:
        return kte.TPUEstimatorSpec(mode, loss=keras.ops.mean(keras.ops.cast(index, "float32")))
    table = kte.get_variable("table", shape=(N,), initializer="zeros")
    loss = keras.ops.mean(keras.ops.square(keras.ops.take(table, index) - 1.0)) * B / 2
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(1.0))


def estimator(tmp_path, loop=4):
    return kte.TPUEstimator(
        model_fn=memorize_fn, config=estimator_config(tmp_path, save_every=1000, loop=loop),
        train_batch_size=B, eval_batch_size=B, predict_batch_size=B,
    )


def seen(estimator):
    """The indices of the examples training saw."""
    return set(np.flatnonzero(estimator.get_variable_value("table")).tolist())


def indices(n=N):
    return tf.data.Dataset.range(n).map(lambda i: {"i": tf.cast(i, tf.int32)})


# -- A dataset is iterated once. ----------------------------------------------


def test_a_cached_then_repeated_dataset_trains_on_every_example(tmp_path):
    # As cifar_keras: read, cache, repeat. The source here can be read only
    # once (a stream): a reading for the build would take the first batches
    # from training, which would then cache and repeat only the rest.
    def input_fn(params):
        stream = iter(range(N))
        dataset = tf.data.Dataset.from_generator(
            lambda: stream, output_signature=tf.TensorSpec([], tf.int64))
        dataset = dataset.map(lambda i: {"i": tf.cast(i, tf.int32)}).cache().repeat()
        return dataset.batch(params["batch_size"], drop_remainder=True).prefetch(1)

    trained = estimator(tmp_path)
    trained.train(input_fn, max_steps=3 * N // B)
    assert seen(trained) == set(range(N))


def counted(reads, inner_shape):
    """A dataset of N examples whose generator counts each example it yields;
    a feature "v" of `inner_shape` (None: unknown, a shape tf.data cannot stack)."""

    def generate():
        for i in range(N):
            reads.append(i)
            yield {"i": np.int32(i), "v": np.zeros(2, "float32")}

    signature = {"i": tf.TensorSpec([], tf.int32), "v": tf.TensorSpec([inner_shape], tf.float32)}
    return tf.data.Dataset.from_generator(generate, output_signature=signature)


@pytest.mark.parametrize("inner_shape", [2, None], ids=["static shapes", "unknown shapes"])
@pytest.mark.parametrize("mode", ["train", "evaluate", "predict"])
def test_a_dataset_is_read_once_per_pass(tmp_path, mode, inner_shape):
    reads = []
    model = estimator(tmp_path)
    if mode != "train":
        model.train(lambda params: indices().batch(B, drop_remainder=True), max_steps=1)

    def input_fn(params):
        return counted(reads, inner_shape).batch(params["batch_size"])

    if mode == "train":
        model.train(input_fn)
    elif mode == "evaluate":
        model.evaluate(input_fn)
    else:
        list(model.predict(input_fn))
    assert sorted(reads) == list(range(N))


def streamed(opens, iterator_tensors):
    """An input_fn over a stream of the N example indices, which can be read
    once: its generator counts how often it is opened. With
    `iterator_tensors`, it returns a one-shot iterator's tensors (TF1's way),
    which an eager call would read a batch of before the graph reads them."""
    stream = iter(range(N))

    def generate():
        opens.append(1)
        for i in stream:
            yield {"i": np.int32(i)}

    def input_fn(params):
        dataset = tf.data.Dataset.from_generator(
            generate, output_signature={"i": tf.TensorSpec([], tf.int32)})
        dataset = dataset.batch(params["batch_size"], drop_remainder=True)
        return one_shot(dataset) if iterator_tensors else dataset

    return input_fn


@pytest.mark.parametrize("iterator_tensors", [False, True], ids=["dataset", "iterator tensors"])
def test_a_generator_over_a_stream_is_opened_once_to_train_and_once_to_evaluate(
        tmp_path, iterator_tensors):
    opens = []
    model = estimator(tmp_path)
    model.train(streamed(opens, iterator_tensors))
    assert len(opens) == 1 and seen(model) == set(range(N))
    assert model.evaluate(streamed(opens, iterator_tensors))["loss"] == pytest.approx(np.mean(range(N)))
    assert len(opens) == 2


def test_fit_reads_a_generator_dataset_once():
    opens = []
    model = kte.EstimatorModel(memorize_fn, train_batch_size=B)
    model.compile(steps_per_execution=2)
    model.fit(streamed(opens, False)({"batch_size": B}), verbose=0)
    assert len(opens) == 1 and int(model.global_step) == N // B


# -- The tensors of an iterator: a new batch every step. ----------------------


def one_shot(dataset):
    return tf1.data.make_one_shot_iterator(dataset).get_next()


def one_shot_method(dataset):
    # `ds.make_one_shot_iterator()`: a method of TF1's datasets.
    dataset = tf1.data.Dataset.zip((dataset,)).map(lambda x: x)
    return dataset.make_one_shot_iterator().get_next()


def initializable(dataset):
    # TF1 programs register the initializer for the session to run.
    iterator = tf1.data.make_initializable_iterator(dataset)
    tf1.add_to_collection(tf1.GraphKeys.TABLE_INITIALIZERS, iterator.initializer)
    return iterator.get_next()


def initializable_never_initialized(dataset):
    # TensorFlow 1 failed here ("not initialized"); the initializer is run.
    return tf1.data.make_initializable_iterator(dataset).get_next()


ITERATORS = {"one_shot": one_shot, "one_shot_method": one_shot_method,
             "initializable": initializable,
             "initializable, never initialized": initializable_never_initialized}


@pytest.mark.parametrize("get_next", ITERATORS.values(), ids=ITERATORS.keys())
def test_iterator_tensors_give_a_new_batch_every_step(tmp_path, get_next):
    def input_fn(params):
        dataset = indices().repeat().batch(params["batch_size"], drop_remainder=True)
        return get_next(dataset), None

    trained = estimator(tmp_path)
    trained.train(input_fn, max_steps=3)
    assert trained.get_variable_value("global_step") == 3
    assert seen(trained) == set(range(3 * B))


def test_evaluation_reads_a_new_batch_of_iterator_tensors_every_step(tmp_path):
    model = estimator(tmp_path)
    model.train(lambda params: indices().batch(B, drop_remainder=True), max_steps=1)

    def input_fn(params):
        return one_shot(indices().batch(params["batch_size"])), None

    # The mean index of the first three batches, as TensorFlow evaluates them.
    assert model.evaluate(input_fn, steps=3)["loss"] == pytest.approx(np.mean(range(3 * B)))


def dcgan_input_fn(params):
    """As DCGAN's `mnist_input.InputFunction`: cached, repeated, shuffled
    batches from a one-shot iterator, and random noise of the batch's size."""
    batch_size = params["batch_size"]
    images = np.arange(N, dtype="float32")[:, None] * np.ones((1, 4), "float32")
    dataset = tf.data.Dataset.from_tensor_slices((images, np.arange(N, dtype="int32")))
    dataset = dataset.cache().repeat().shuffle(N)
    dataset = dataset.batch(batch_size, drop_remainder=True).prefetch(2)
    images, labels = tf1.data.make_one_shot_iterator(dataset).get_next()
    noise = tf1.random_normal([batch_size, 2])
    return {"real_images": images, "random_noise": noise, "i": labels}, labels


def test_dcgan_input_fn_gives_new_images_and_new_noise_every_step(tmp_path):
    model = estimator(tmp_path)
    model.train(dcgan_input_fn, max_steps=N // B)
    assert model.get_variable_value("global_step") == N // B
    assert len(seen(model)) > 2 * B  # Shuffled across epochs: some twice.

    # Prediction reads new images and new noise for every batch.
    rows = []
    for example in model.predict(dcgan_input_fn):
        rows.append(example)
        if len(rows) == 3 * B:
            break
    images = [tuple(r["real_images"]) for r in rows]
    noise = [tuple(r["random_noise"]) for r in rows]
    assert len(set(noise)) == 3 * B
    # (repeat().shuffle() may draw an image twice in a batch: count over three.)
    assert len(set(images)) > B and images[:B] != images[B:2 * B]


def test_prediction_ends_with_the_iterator(tmp_path):
    # DCGAN's noise_input_fn: one batch through a one-shot iterator.
    model = estimator(tmp_path)

    def input_fn(params):
        return {"i": one_shot(indices(params["batch_size"]).batch(params["batch_size"]))["i"]}

    batches = list(model.predict(input_fn, yield_single_examples=False))
    assert [list(b["i"]) for b in batches] == [list(range(B))]


def test_an_iterator_fed_by_a_hook_is_refused_with_advice(tmp_path):
    # Initialized by a hook's `sess.run(iterator.initializer, feed_dict=...)`:
    # there is no session for a hook to feed.
    def input_fn(params):
        rows = tf1.placeholder(tf.int32, [None])
        dataset = tf.data.Dataset.from_tensor_slices({"i": rows}).batch(params["batch_size"])
        return tf1.data.make_initializable_iterator(dataset).get_next(), None

    with pytest.raises(ValueError, match=r"(?s)not initialized.*Return a tf\.data\.Dataset"):
        estimator(tmp_path).train(input_fn, max_steps=2)


@pytest.mark.parametrize("make, changing", [
    (lambda: one_shot(indices().batch(B)), True),
    (lambda: {"i": tf1.random_normal([B])}, True),
    (lambda: {"i": tf.constant(np.arange(N))}, False),
    (lambda: {"i": tf.one_hot(tf.constant(np.arange(N)), 3)}, False),
], ids=["iterator", "random", "constant", "computed from constants"])
def test_tensors_change_per_run_when_an_iterator_or_random_op_is_behind_them(make, changing):
    assert graph_input.GraphInput(make).changing == changing


def test_a_graph_input_yields_batches_until_its_iterator_ends():
    graph = graph_input.GraphInput(lambda: one_shot(indices(N + 3).batch(B)))
    assert [len(features["i"]) for features, _ in graph] == [B] * (N // B) + [3]


# -- Arrays: a whole input, refused where they look like one batch a step. ----


def test_arrays_of_one_batch_trained_for_more_steps_are_refused(tmp_path):
    def input_fn(params):
        return {"i": np.arange(params["batch_size"], dtype="int32")}, None

    with pytest.raises(ValueError, match=r"(?s)holds 1 batch.*max_steps.*tf\.data\.Dataset"):
        estimator(tmp_path).train(input_fn, max_steps=5)


def test_arrays_of_one_batch_train_the_step_they_hold(tmp_path):
    def input_fn(params):
        return {"i": np.arange(params["batch_size"], dtype="int32")}, None

    trained = estimator(tmp_path)
    trained.train(input_fn, steps=1)
    assert seen(trained) == set(range(B))


def test_constant_tensors_are_arrays_batched_by_the_batch_size(tmp_path):
    def input_fn(params):
        return {"i": tf.constant(np.arange(N, dtype="int32"))}, None

    trained = estimator(tmp_path)
    trained.train(input_fn)
    assert trained.get_variable_value("global_step") == N // B
    assert seen(trained) == set(range(N))
