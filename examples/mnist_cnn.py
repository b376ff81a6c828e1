"""MNIST-style convolutional classifier, a TPUEstimator program.

In the shape of the TPU MNIST reference model: a `tf.layers` CNN, Adam with
an exponentially decaying learning rate wrapped in `CrossShardOptimizer`, an
accuracy `metric_fn`, and a SavedModel export. The data are scikit-learn's
bundled 8x8 digits (1347 train, 450 test images), so nothing is downloaded.

`examples/tf1/mnist_cnn.py` is the TensorFlow 1 original; `examples/mnist_cnn.py`
is the converter's output, unedited:

    keras-tpu-estimator convert examples/tf1/mnist_cnn.py -o examples/mnist_cnn.py
    python examples/mnist_cnn.py     # 1000 steps: 0.989 test accuracy (measured)
"""

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import tempfile

import numpy as np
import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
import tensorflow as tf
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

NUM_CLASSES = 10


def load_data():
    """Train/test split of the 8x8 digits, pixels scaled to [0, 1]."""
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int32)
    return train_test_split(images, labels, test_size=0.25, random_state=0, stratify=labels)


def make_input_fn(images, labels, training):
    """An input_fn over arrays; TPUEstimator passes params["batch_size"]."""

    def input_fn(params):
        batch_size = params["batch_size"]
        if labels is None:
            dataset = tf.data.Dataset.from_tensor_slices({"image": images})
        else:
            dataset = tf.data.Dataset.from_tensor_slices(({"image": images}, labels))
        if training:
            dataset = dataset.shuffle(len(images), seed=0).repeat()
        # TPUs need static shapes: drop the last partial batch when training.
        return dataset.batch(batch_size, drop_remainder=training)

    return input_fn


def create_model(images, training):
    """Two conv/pool blocks and a dense head on 8x8 images; returns logits."""
    net = tf1.reshape(images, [-1, 8, 8, 1])
    net = tf1.layers.conv2d(net, 32, 3, padding="same", activation=tf1.nn.relu)
    net = tf1.layers.max_pooling2d(net, pool_size=2, strides=2)
    net = tf1.layers.conv2d(net, 64, 3, padding="same", activation=tf1.nn.relu)
    net = tf1.layers.max_pooling2d(net, pool_size=2, strides=2)
    net = tf1.layers.flatten(net)
    net = tf1.layers.dense(net, 128, activation=tf1.nn.relu)
    net = tf1.layers.dropout(net, rate=0.3, training=training)
    return tf1.layers.dense(net, NUM_CLASSES)


def metric_fn(labels, logits):
    predictions = tf1.argmax(logits, axis=1)
    return {"accuracy": tf1.metrics.accuracy(labels=labels, predictions=predictions)}


def model_fn(features, labels, mode, params):
    """The TPUEstimator model_fn."""
    image = features["image"]
    logits = create_model(image, training=(mode == kte.ModeKeys.TRAIN))

    if mode == kte.ModeKeys.PREDICT:
        predictions = {
            "class_ids": tf1.argmax(logits, axis=1),
            "probabilities": tf1.nn.softmax(logits),
        }
        return kte.TPUEstimatorSpec(
            mode,
            predictions=predictions,
            export_outputs={"classify": kte.PredictOutput(predictions)},
        )

    loss = tf1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == kte.ModeKeys.EVAL:
        return kte.TPUEstimatorSpec(
            mode, loss=loss, eval_metrics=(metric_fn, [labels, logits])
        )

    learning_rate = tf1.train.exponential_decay(
        params["learning_rate"],
        tf1.train.get_global_step(),
        decay_steps=1000,
        decay_rate=0.5,
    )
    optimizer = tf1.train.AdamOptimizer(learning_rate)
    if params["use_tpu"]:
        optimizer = tf1.tpu.CrossShardOptimizer(optimizer)
    train_op = optimizer.minimize(loss, tf1.train.get_global_step())
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def serving_input_receiver_fn():
    """The server receives a batch of flattened 8x8 images."""
    image = tf.compat.v1.placeholder(tf.float32, [None, 64], name="image")
    return kte.export.ServingInputReceiver({"image": image}, {"image": image})


def main(model_dir=None, train_steps=1000, batch_size=64, export=True):
    """Trains, evaluates and exports; returns the eval results and export path."""
    model_dir = model_dir or tempfile.mkdtemp(prefix="mnist_cnn_")
    x_train, x_test, y_train, y_test = load_data()
    run_config = kte.RunConfig(
        model_dir=model_dir,
        save_checkpoints_steps=500,
        tpu_config=kte.TPUConfig(iterations_per_loop=100),
    )
    estimator = kte.TPUEstimator(
        model_fn=model_fn,
        use_tpu=True,
        config=run_config,
        params={"learning_rate": 2e-3},
        train_batch_size=batch_size,
        eval_batch_size=batch_size,
        predict_batch_size=batch_size,
    )
    estimator.train(input_fn=make_input_fn(x_train, y_train, training=True), max_steps=train_steps)
    results = estimator.evaluate(input_fn=make_input_fn(x_test, y_test, training=False))
    tf1.logging.info("eval results: %s", results)
    print("test accuracy: %.4f" % results["accuracy"])
    export_path = None
    if export:
        export_path = estimator.export_saved_model(model_dir + "/export", serving_input_receiver_fn)
        print("exported to %s" % export_path)
    return results, export_path


if __name__ == "__main__":
    tf1.logging.set_verbosity(tf1.logging.INFO)
    main()
