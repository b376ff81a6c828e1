"""`tf.contrib.slim.nets.inception`: tf_slim's Inception networks, converted, equal tf_slim's."""

import numpy as np
import pytest

import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator import convert

from slim_reference import run

pytest.importorskip("tf_slim")

IMAGES = np.random.default_rng(0).uniform(-1, 1, (1, 75, 75, 3)).astype("float32")


# Names of the pre-trained slim checkpoint (inception_v3_2016_08_28), one per kind of block.
CHECKPOINT_NAMES = [
    "InceptionV3/Conv2d_1a_3x3/weights",
    "InceptionV3/Conv2d_1a_3x3/BatchNorm/beta",
    "InceptionV3/Conv2d_1a_3x3/BatchNorm/moving_mean",
    "InceptionV3/Mixed_5b/Branch_1/Conv2d_0b_5x5/weights",
    "InceptionV3/Mixed_6e/Branch_2/Conv2d_0e_1x7/weights",
    "InceptionV3/Mixed_7c/Branch_3/Conv2d_0b_1x1/BatchNorm/moving_variance",
    "InceptionV3/Logits/Conv2d_1c_1x1/weights",
    "InceptionV3/Logits/Conv2d_1c_1x1/biases",
]


def test_inception_v3_builds_with_the_slim_checkpoints_names():
    # tf_slim's own network code, converted; its layers are compared with tf_slim's in
    # test_contrib_layers.py (tf_slim's nets themselves need tf_keras on TensorFlow 2).
    slim = tf1.contrib.slim

    def program():
        with slim.arg_scope(slim.nets.inception.inception_v3_arg_scope()):
            logits, end_points = slim.nets.inception.inception_v3(
                IMAGES, num_classes=5, is_training=False, depth_multiplier=0.1, min_depth=4,
                create_aux_logits=False)  # (aux logits need inputs of 107x107 or more)
        names = [v.op.name for v in tf1.global_variables()]
        return np.asarray(logits), names

    logits, names = run(program)
    assert logits.shape == (1, 5) and np.isfinite(logits).all()
    assert set(CHECKPOINT_NAMES) <= set(names)
    assert len(names) == 388 - 10  # the checkpoint's variables but AuxLogits' and global_step
    assert len(tf1.contrib.slim.nets.inception_v3.inception_v3_base.__name__) > 0


def test_a_network_slim_does_not_offer_is_named():
    with pytest.raises(AttributeError, match="the networks offered are"):
        tf1.contrib.slim.nets.mobilenet_v9


@pytest.mark.parametrize("imports, use", [
    ("from tensorflow.contrib.slim.nets import inception",
     "inception.inception_v3(features, 10)"),
    ("from tensorflow.contrib.slim.python.slim.nets.inception_v3 import inception_v3_base",
     "inception_v3_base(features)"),
    ("import tf_slim as slim", "slim.nets.inception.inception_v3(features, 10)"),
])
def test_converter_maps_slims_nets_to_compat_v1(imports, use):
    source = f"{imports}\n\ndef model_fn(features, labels, mode, params):\n    return {use}\n"
    result = convert.convert_source(source)
    assert not result.errors
    assert "tf1.contrib.slim.nets.inception.inception_v3" in result.source
