"""A small ResNet, a TPUEstimator program.

In the shape of the TPU ResNet reference model: pre-activation residual blocks built from
`tf.layers.conv2d` and `tf.layers.batch_normalization` (moving statistics
updated through `UPDATE_OPS`), L2 weight decay on every non-batch-norm
variable, `MomentumOptimizer` with a `piecewise_constant` learning rate from
the global step, and `per_host_input_for_training=PER_HOST_V2`. The data are
scikit-learn's 8x8 digits as one-channel images.

`examples/tf1/resnet.py` is the TensorFlow 1 original; `examples/resnet.py`
is the converter's output, unedited:

    keras-tpu-estimator convert examples/tf1/resnet.py -o examples/resnet.py
    python examples/resnet.py        # 600 steps: 0.993 top-1 test accuracy (measured)
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

BATCH_NORM_DECAY = 0.9
BATCH_NORM_EPSILON = 1e-5
WEIGHT_DECAY = 1e-4
NUM_CLASSES = 10


def load_data():
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)
    labels = digits.target.astype(np.int32)
    return train_test_split(images, labels, test_size=0.25, random_state=0, stratify=labels)


def make_input_fn(images, labels, training):
    def input_fn(params):
        # With PER_HOST_V2 each host builds its own pipeline of params["batch_size"].
        dataset = tf.data.Dataset.from_tensor_slices((images, labels))
        if training:
            dataset = dataset.shuffle(len(images), seed=0).repeat()
        dataset = dataset.map(lambda image, label: (image - 0.5, label))
        return dataset.batch(params["batch_size"], drop_remainder=training)

    return input_fn


def batch_norm_relu(inputs, is_training, relu=True):
    inputs = tf1.layers.batch_normalization(
        inputs,
        axis=3,
        momentum=BATCH_NORM_DECAY,
        epsilon=BATCH_NORM_EPSILON,
        center=True,
        scale=True,
        training=is_training,
        fused=True,
    )
    if relu:
        inputs = tf1.nn.relu(inputs)
    return inputs


def conv2d(inputs, filters, kernel_size, strides):
    return tf1.layers.conv2d(
        inputs,
        filters=filters,
        kernel_size=kernel_size,
        strides=strides,
        padding="same",
        use_bias=False,
        kernel_initializer=tf1.variance_scaling_initializer(),
    )


def residual_block(inputs, filters, is_training, strides):
    """A pre-activation residual block with a projection when the shape changes."""
    shortcut = inputs
    inputs = batch_norm_relu(inputs, is_training)
    if strides != 1 or inputs.shape[-1] != filters:
        shortcut = conv2d(inputs, filters, 1, strides)
    inputs = conv2d(inputs, filters, 3, strides)
    inputs = batch_norm_relu(inputs, is_training)
    inputs = conv2d(inputs, filters, 3, 1)
    return inputs + shortcut


def resnet(images, is_training):
    net = conv2d(images, 16, 3, 1)
    for group, (filters, strides) in enumerate([(16, 1), (32, 2), (64, 2)]):
        with tf1.variable_scope("block_group%d" % (group + 1)):
            net = residual_block(net, filters, is_training, strides)
    net = batch_norm_relu(net, is_training)
    net = tf1.reduce_mean(net, axis=[1, 2])
    return tf1.layers.dense(net, NUM_CLASSES)


def metric_fn(labels, logits):
    predictions = tf1.argmax(logits, axis=1)
    in_top_3 = tf1.cast(tf1.nn.in_top_k(logits, labels, 3), tf1.float32)
    return {
        "top_1_accuracy": tf1.metrics.accuracy(labels, predictions),
        "top_3_accuracy": tf1.metrics.mean(in_top_3),
    }


def model_fn(features, labels, mode, params):
    is_training = mode == kte.ModeKeys.TRAIN
    logits = resnet(features, is_training)

    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(
            mode, predictions={"classes": tf1.argmax(logits, axis=1), "logits": logits}
        )

    one_hot_labels = tf1.one_hot(labels, NUM_CLASSES)
    cross_entropy = tf1.losses.softmax_cross_entropy(onehot_labels=one_hot_labels, logits=logits)
    # Weight decay on every variable but the batch normalization parameters.
    loss = cross_entropy + WEIGHT_DECAY * tf1.add_n(
        [tf1.nn.l2_loss(v) for v in tf1.trainable_variables() if "batch_normalization" not in v.name]
    )

    if mode == kte.ModeKeys.EVAL:
        return kte.TPUEstimatorSpec(
            mode, loss=loss, eval_metrics=(metric_fn, [labels, logits])
        )

    global_step = tf1.train.get_global_step()
    boundaries = [int(params["train_steps"] * 0.5), int(params["train_steps"] * 0.8)]
    values = [params["learning_rate"] * decay for decay in (1.0, 0.1, 0.01)]
    learning_rate = tf1.train.piecewise_constant(global_step, boundaries, values)
    optimizer = tf1.train.MomentumOptimizer(learning_rate, momentum=0.9, use_nesterov=True)
    if params["use_tpu"]:
        optimizer = tf1.tpu.CrossShardOptimizer(optimizer)
    # Batch normalization updates its moving statistics through UPDATE_OPS.
    update_ops = tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)
    with tf1.control_dependencies(update_ops):
        train_op = optimizer.minimize(loss, global_step)
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def main(model_dir=None, train_steps=600, batch_size=64):
    """Trains and evaluates; returns the eval results."""
    model_dir = model_dir or tempfile.mkdtemp(prefix="resnet_")
    x_train, x_test, y_train, y_test = load_data()
    run_config = kte.RunConfig(
        model_dir=model_dir,
        save_checkpoints_steps=train_steps,
        tpu_config=kte.TPUConfig(
            iterations_per_loop=100,
            per_host_input_for_training=kte.InputPipelineConfig.PER_HOST_V2,
        ),
    )
    estimator = kte.TPUEstimator(
        model_fn=model_fn,
        use_tpu=True,
        config=run_config,
        params={"learning_rate": 0.1, "train_steps": train_steps},
        train_batch_size=batch_size,
        eval_batch_size=batch_size,
    )
    estimator.train(input_fn=make_input_fn(x_train, y_train, training=True), max_steps=train_steps)
    results = estimator.evaluate(input_fn=make_input_fn(x_test, y_test, training=False))
    tf1.logging.info("eval results: %s", results)
    print("test top-1 accuracy: %.4f" % results["top_1_accuracy"])
    return results


if __name__ == "__main__":
    tf1.logging.set_verbosity(tf1.logging.INFO)
    main()
