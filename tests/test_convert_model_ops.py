"""The converter maps the model ops of issue 21 to compat.v1 and reports the rest with advice."""

import textwrap

import pytest

from keras_tpu_estimator import convert

HEADER = "import tensorflow as tf\n\n\ndef model_fn(features, labels, mode, params):\n"


def _convert(line):
    return convert.convert_source(HEADER + textwrap.indent(line + "\n", "    "))


@pytest.mark.parametrize("before, after", [
    ("tf.layers.separable_conv2d(x, 8, 3)", "tf1.layers.separable_conv2d(x, 8, 3)"),
    ("tf.layers.Conv3D(8, 3)", "tf1.layers.Conv3D(8, 3)"),
    ("tf.layers.conv3d_transpose(x, 8, 2)", "tf1.layers.conv3d_transpose(x, 8, 2)"),
    ("tf.layers.InputSpec(ndim=4)", "tf1.layers.InputSpec(ndim=4)"),
    ("tf.layers.instance_norm(x)", "tf1.layers.instance_norm(x)"),
    ("tf.nn.convolution(x, k, 'SAME')", "tf1.nn.convolution(x, k, 'SAME')"),
    ("tf.nn.sufficient_statistics(x, [0])", "tf1.nn.sufficient_statistics(x, [0])"),
    ("tf.nn.normalize_moments(c, m, v, None)", "tf1.nn.normalize_moments(c, m, v, None)"),
    ("tf.contrib.image.rotate(x, 0.5)", "tf1.contrib.image.rotate(x, 0.5)"),
    ("tf.contrib.image.translate(x, [1, 0])", "tf1.contrib.image.translate(x, [1, 0])"),
    ("tf.contrib.image.transform(x, t)", "tf1.contrib.image.transform(x, t)"),
    ("tf.train.AdadeltaOptimizer(1.0)", "tf1.train.AdadeltaOptimizer(1.0)"),
    ("tf.contrib.opt.LARSOptimizer(0.1)", "tf1.contrib.opt.LARSOptimizer(0.1)"),
    ("tf.contrib.estimator.clip_gradients_by_norm(o, 5.0)",
     "tf1.contrib.estimator.clip_gradients_by_norm(o, 5.0)"),
    ("tf.train.experimental.enable_mixed_precision_graph_rewrite(o)",
     "tf1.train.experimental.enable_mixed_precision_graph_rewrite(o)"),
    ("tf.random.stateless_uniform([2], seed=(2, 3))",
     "tf1.random.stateless_uniform([2], seed=(2, 3))"),
    ("tf.contrib.stateless.stateless_random_normal([2], seed=s)",
     "tf1.contrib.stateless.stateless_random_normal([2], seed=s)"),
    ("tf.random.set_seed(0)", "tf1.random.set_seed(0)"),
])
def test_model_op_is_rewritten_to_compat_v1(before, after):
    result = _convert(before)
    assert after in result.source
    assert not [c for c in result.changes if c.level == "ERROR"]


@pytest.mark.parametrize("call, advice", [
    ("tf.contrib.quantize.create_training_graph(quant_delay=0)", "model.quantize"),
    ("tf.contrib.quantize.create_eval_graph()", "train in float"),
    ("tf.train.write_graph(g, d, 'graph.pbtxt')", "export_saved_model"),
    ("tf.train.batch([x], batch_size=8)", "tf.data.Dataset"),
])
def test_name_without_meaning_is_reported_with_advice(call, advice):
    errors = [c.message for c in _convert(call).changes if c.level == "ERROR"]
    assert len(errors) == 1 and advice in errors[0]


def test_contrib_module_imports_of_these_ops_are_folded():
    source = textwrap.dedent("""\
        import tensorflow as tf
        from tensorflow.contrib.tpu.python.ops import tpu_ops
        from tensorflow.contrib.tpu.python.tpu import bfloat16
        from tensorflow.contrib import image as contrib_image
        from tensorflow.contrib import stateless as contrib_stateless


        def model_fn(features, labels, mode, params):
            with bfloat16.bfloat16_scope():
                x = tpu_ops.cross_replica_sum(features)
            x = contrib_image.rotate(x, 0.3)
            return contrib_stateless.stateless_random_normal([2], seed=[0, 1])
        """)
    result = convert.convert_source(source)
    for expected in ("tf1.tpu.bfloat16_scope()", "tf1.tpu.cross_replica_sum(features)",
                     "tf1.contrib.image.rotate(x, 0.3)",
                     "tf1.contrib.stateless.stateless_random_normal("):
        assert expected in result.source
    assert "tensorflow.contrib" not in result.source
    assert not [c for c in result.changes if c.level in ("ERROR", "WARNING")]
