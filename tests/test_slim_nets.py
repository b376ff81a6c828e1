"""`tf.contrib.slim.nets.inception`: tf_slim's Inception networks, converted, equal tf_slim's."""

import numpy as np
import pytest

import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator import convert

from slim_reference import run

pytest.importorskip("tf_slim")

IMAGES = np.random.default_rng(0).uniform(-1, 1, (1, 75, 75, 3)).astype("float32")


# The stem and first block of the pre-trained slim checkpoint (inception_v3_2016_08_28).
STEM_NAMES = [
    f"InceptionV3/{layer}/{variable}"
    for layer in ("Conv2d_1a_3x3", "Conv2d_2a_3x3", "Conv2d_2b_3x3", "Conv2d_3b_1x1",
                  "Conv2d_4a_3x3")
    for variable in ("weights", "BatchNorm/beta", "BatchNorm/moving_mean",
                     "BatchNorm/moving_variance")
] + [
    f"InceptionV3/Mixed_5b/{branch}/{variable}"
    for branch in ("Branch_0/Conv2d_0a_1x1", "Branch_1/Conv2d_0a_1x1", "Branch_1/Conv2d_0b_5x5",
                   "Branch_2/Conv2d_0a_1x1", "Branch_2/Conv2d_0b_3x3", "Branch_2/Conv2d_0c_3x3",
                   "Branch_3/Conv2d_0b_1x1")
    for variable in ("weights", "BatchNorm/beta", "BatchNorm/moving_mean",
                     "BatchNorm/moving_variance")
]


def test_inception_v3_builds_with_the_slim_checkpoints_names():
    # tf_slim's own network code, converted, up to its first Inception block (the
    # whole network builds the same way, at 60 s on a CPU); its layers are compared
    # with tf_slim's in test_contrib_layers.py (tf_slim's nets need tf_keras on TF 2).
    slim = tf1.contrib.slim

    def program():
        inception_v3 = slim.nets.inception_v3  # (only this file converted: faster)
        with slim.arg_scope(inception_v3.inception_v3_arg_scope()):
            net, end_points = inception_v3.inception_v3_base(
                IMAGES, final_endpoint="Mixed_5b", depth_multiplier=0.1, min_depth=4)
        return np.asarray(net), sorted(end_points), [v.op.name for v in tf1.global_variables()]

    net, end_points, names = run(program)
    assert net.shape == (1, 7, 7, 25) and np.isfinite(net).all()
    assert end_points[0] == "Conv2d_1a_3x3" and "Mixed_5b" in end_points
    assert names == STEM_NAMES


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
