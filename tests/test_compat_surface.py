"""The compat.v1 surface has one semantics: build pass, compiled step and export.

Every op in the table runs inside a `model_fn` three ways, through the
library's own machinery (`ModelFnProgram`, `ModelParts`, `Steps`):

- in the compiled PREDICT step (`jax.jit`), as the library runs it: the reference;
- in the build pass (abstract values): the outputs have the reference's shapes and dtypes;
- under `jax.export` with a polymorphic batch dimension, as
  `export_saved_model` serves it: the reference's values.

A table row is `(op, fn)`: `fn(f)` calls the op on the features `f` (the
arrays of `FEATURES`, batch first) and returns a tensor or a tuple of them.
`op` names the compat.v1 function the row covers; `test_the_table_covers_the_surface`
checks every public op of the op modules has a row.
"""

import inspect

import jax
import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator._backend import lowering
from keras_tpu_estimator.compat.v1 import array_ops
from keras_tpu_estimator.compat.v1 import check_ops
from keras_tpu_estimator.compat.v1 import control_flow
from keras_tpu_estimator.compat.v1 import math_ops
from keras_tpu_estimator.compat.v1 import ops
from keras_tpu_estimator.compat.v1 import random_ops
from keras_tpu_estimator.engine import state as state_lib
from keras_tpu_estimator.engine.parts import ModelParts
from keras_tpu_estimator.engine.program import ModelFnProgram
from keras_tpu_estimator.engine.steps import Steps
from keras_tpu_estimator.spec import ModeKeys
from keras_tpu_estimator.spec import TPUEstimatorSpec

BATCH = 4
_rng = np.random.default_rng(0)
FEATURES = {
    "x": _rng.normal(size=(BATCH, 3, 5)).astype("float32"),
    "m": _rng.normal(size=(BATCH, 5)).astype("float32"),
    "p": (np.abs(_rng.normal(size=(BATCH, 5))) + 0.1).astype("float32"),
    "u": _rng.uniform(-0.9, 0.9, size=(BATCH, 5)).astype("float32"),
    "logits": _rng.normal(size=(BATCH, 6)).astype("float32"),
    "labels": np.array([0, 5, 2, 2], "int32"),
    "ids": _rng.integers(0, 10, size=(BATCH, 7)).astype("int32"),
    "lengths": np.array([0, 7, 3, 5], "int32"),
    "image": _rng.normal(size=(BATCH, 8, 8, 3)).astype("float32"),
    "seq": _rng.normal(size=(BATCH, 9, 3)).astype("float32"),
}
W = _rng.normal(size=(5, 2)).astype("float32")
TABLE_10x5 = _rng.normal(size=(10, 5)).astype("float32")
FILTER = _rng.normal(size=(3, 3, 3, 4)).astype("float32")
DEPTHWISE = _rng.normal(size=(3, 3, 3, 2)).astype("float32")
POINTWISE = _rng.normal(size=(1, 1, 6, 4)).astype("float32")
FILTER_1D = _rng.normal(size=(2, 3, 4)).astype("float32")


def get_shape_list(tensor):
    """The BERT family's helper: static dims as ints, unknown ones from `tf.shape`."""
    shape = list(tensor.shape)
    dynamic = tf1.shape(tensor)
    return [dynamic[i] if d is None else d for i, d in enumerate(shape)]


def gelu(x):
    """ALBERT's gelu: a numpy scalar times a tensor."""
    cdf = 0.5 * (1.0 + tf1.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * tf1.pow(x, 3))))
    return x * cdf


def _is_tensor(x):
    assert isinstance(x, tf1.Tensor), type(x)
    return x


KERNEL_1D = np.linspace(-1, 1, 40).astype("float32").reshape(2, 5, 4)

CASES = [
    # ops: reductions, casts, construction.
    ("reduce_sum", lambda f: tf1.reduce_sum(f["x"], axis=[1, 2])),
    ("reduce_mean", lambda f: tf1.reduce_mean(f["x"], reduction_indices=1, keep_dims=True)),
    ("reduce_max", lambda f: tf1.reduce_max(f["m"], -1)),
    ("reduce_min", lambda f: tf1.reduce_min(f["m"])),
    ("reduce_prod", lambda f: tf1.reduce_prod(f["m"], 1)),
    ("reduce_any", lambda f: tf1.reduce_any(f["m"] > 1, 1)),
    ("reduce_all", lambda f: tf1.reduce_all(f["m"] > -3, 1)),
    ("reduce_logsumexp", lambda f: tf1.reduce_logsumexp(f["logits"], 1)),
    ("argmax", lambda f: tf1.argmax(f["logits"], axis=-1, output_type=tf1.int32)),
    ("argmin", lambda f: tf1.argmin(f["logits"], 1)),
    ("cast", lambda f: tf1.cast(f["m"] > 0, tf1.float32)),
    ("to_float", lambda f: tf1.to_float(f["ids"])),
    ("to_int32", lambda f: tf1.to_int32(f["m"] * 3)),
    ("to_int64", lambda f: tf1.to_int64(f["m"] * 3)),
    ("constant", lambda f: f["m"] + tf1.constant([1.0, 2.0, 3.0, 4.0, 5.0])),
    ("convert_to_tensor", lambda f: tf1.convert_to_tensor(f["m"]) + 1),
    ("zeros", lambda f: f["m"] + tf1.zeros([5])),
    ("ones", lambda f: f["m"] * tf1.ones([1, 5])),
    ("zeros_like", lambda f: tf1.zeros_like(f["ids"], dtype=tf1.float32)),
    ("ones_like", lambda f: tf1.ones_like(f["m"])),
    ("fill", lambda f: f["m"] + tf1.fill([1, 5], 7.0)),
    ("shape", lambda f: tf1.ones(tf1.shape(f["m"])) * f["m"]),
    ("shape/dim", lambda f: tf1.reshape(f["x"], [tf1.shape(f["x"])[0], -1])),
    ("shape/cast", lambda f: f["m"] / tf1.cast(tf1.shape(f["m"])[0], tf1.float32)),
    ("shape/cast_all", lambda f: f["m"] * tf1.cast(tf1.shape(f["m"]), tf1.float32)[0]),
    ("shape/concat", lambda f: tf1.reshape(
        f["x"], tf1.concat([tf1.shape(f["x"])[:-1], [5, 1]], 0))),
    ("shape/stack", lambda f: tf1.reshape(f["x"], tf1.stack([tf1.shape(f["x"])[0], -1]))),
    ("shape/zeros", lambda f: tf1.zeros([tf1.shape(f["m"])[0], 2]) + 1),
    ("shape/tile", lambda f: tf1.tile(tf1.constant(W)[None], [tf1.shape(f["m"])[0], 1, 1])),
    ("rank", lambda f: f["m"] * tf1.rank(f["x"])),
    ("size", lambda f: f["m"] / tf1.size(f["x"])),
    ("reshape", lambda f: tf1.reshape(f["x"], [-1, 15])),
    ("reshape/get_shape_list", lambda f: tf1.reshape(f["x"], get_shape_list(f["x"])[:-1] + [5, 1])),
    ("reshape/static_shape_product", lambda f: tf1.reshape(
        f["x"], [get_shape_list(f["x"])[0] * 3, 5])),
    ("squeeze", lambda f: tf1.squeeze(f["m"][:, :1], axis=[1])),
    ("expand_dims", lambda f: tf1.expand_dims(f["m"], 1)),
    ("transpose", lambda f: tf1.transpose(f["x"], perm=[0, 2, 1])),
    ("concat", lambda f: tf1.concat([f["m"], f["p"]], axis=1)),
    ("concat/constants", lambda f: f["m"][:, :2] + tf1.concat([[1.0], [2.0]], 0)),
    ("stack", lambda f: tf1.stack([f["m"], f["p"]], axis=1)),
    ("stack/constants", lambda f: f["m"][:, :2] * tf1.stack([1.5, 2.0])),
    ("unstack", lambda f: tuple(tf1.unstack(f["x"], axis=1))),
    ("split", lambda f: tuple(tf1.split(f["m"], [2, -1], axis=1))),
    ("slice", lambda f: tf1.slice(f["x"], [0, 1, 0], [-1, 2, 3])),
    ("tile", lambda f: tf1.tile(f["m"], [1, 2])),
    ("pad", lambda f: tf1.pad(f["m"], [[0, 0], [1, 2]])),
    ("gather", lambda f: tf1.gather(tf1.constant(TABLE_10x5), f["ids"])),
    ("gather/axis", lambda f: tf1.gather(f["m"], [4, 1], axis=1)),
    ("gather_nd", lambda f: tf1.gather_nd(tf1.constant(TABLE_10x5), f["ids"][:, :1])),
    ("one_hot", lambda f: tf1.one_hot(f["labels"], 6, on_value=0.9, off_value=0.02)),
    ("where", lambda f: tf1.where(f["m"] > 0, f["m"], f["p"])),
    ("where_v2", lambda f: tf1.where_v2(f["m"] > 0, f["m"], 0.0)),
    ("sequence_mask", lambda f: tf1.sequence_mask(f["lengths"], maxlen=7, dtype=tf1.float32)),
    ("matmul", lambda f: tf1.matmul(f["m"], tf1.constant(W))),
    ("matmul/transpose", lambda f: tf1.matmul(f["x"], f["x"], transpose_b=True)),
    ("einsum", lambda f: tf1.einsum("bfh,ho->bfo", f["x"], tf1.constant(W))),
    ("einsum/upper_case", lambda f: tf1.einsum("BFH,HO->BFO", f["x"], tf1.constant(W))),
    ("range", lambda f: f["m"] + tf1.cast(tf1.range(5), tf1.float32)),
    ("range/batch", lambda f: tf1.range(0, tf1.shape(f["ids"])[0]) * 7 + f["labels"]),
    ("add_n", lambda f: tf1.add_n([f["m"], f["p"], f["u"]])),
    ("clip_by_value", lambda f: tf1.clip_by_value(f["m"], -0.5, 0.5)),
    ("identity", lambda f: tf1.identity(f["m"])),
    ("stop_gradient", lambda f: tf1.stop_gradient(f["m"])),
    ("cumsum", lambda f: tf1.cumsum(f["m"], axis=1, exclusive=True, reverse=True)),
    # ops: elementwise.
    ("add", lambda f: tf1.add(f["m"], 1.0)),
    ("subtract", lambda f: tf1.subtract(f["m"], f["p"])),
    ("multiply", lambda f: tf1.multiply(f["m"], f["p"])),
    ("divide", lambda f: tf1.divide(f["m"], f["p"])),
    ("truediv", lambda f: tf1.truediv(f["m"], 2.0)),
    ("div", lambda f: tf1.div(f["m"], f["p"])),
    ("floordiv", lambda f: tf1.floordiv(f["ids"], 3)),
    ("floormod", lambda f: tf1.floormod(f["ids"], 3)),
    ("mod", lambda f: tf1.mod(f["m"], 0.7)),
    ("pow", lambda f: tf1.pow(f["p"], 1.5)),
    ("maximum", lambda f: tf1.maximum(f["m"], 0.0)),
    ("minimum", lambda f: tf1.minimum(f["m"], f["p"])),
    ("squared_difference", lambda f: tf1.squared_difference(f["m"], f["p"])),
    ("equal", lambda f: tf1.equal(f["ids"], 3)),
    ("not_equal", lambda f: tf1.not_equal(f["ids"], 3)),
    ("less", lambda f: tf1.less(f["m"], f["p"])),
    ("less_equal", lambda f: tf1.less_equal(f["m"], 0.0)),
    ("greater", lambda f: tf1.greater(f["m"], 0.0)),
    ("greater_equal", lambda f: tf1.greater_equal(f["m"], f["u"])),
    ("logical_and", lambda f: tf1.logical_and(f["m"] > 0, f["u"] > 0)),
    ("logical_or", lambda f: tf1.logical_or(f["m"] > 0, f["u"] > 0)),
    ("logical_xor", lambda f: tf1.logical_xor(f["m"] > 0, f["u"] > 0)),
    ("logical_not", lambda f: tf1.logical_not(f["m"] > 0)),
    ("abs", lambda f: tf1.abs(f["m"])),
    ("negative", lambda f: tf1.negative(f["m"])),
    ("sign", lambda f: tf1.sign(f["m"])),
    ("square", lambda f: tf1.square(f["m"])),
    ("sqrt", lambda f: tf1.sqrt(f["p"])),
    ("rsqrt", lambda f: tf1.rsqrt(f["p"])),
    ("exp", lambda f: tf1.exp(f["m"])),
    ("log", lambda f: tf1.log(f["p"])),
    ("log1p", lambda f: tf1.log1p(f["p"])),
    ("floor", lambda f: tf1.floor(f["m"])),
    ("ceil", lambda f: tf1.ceil(f["m"])),
    ("round", lambda f: tf1.round(f["m"] * 3)),
    ("reciprocal", lambda f: tf1.reciprocal(f["p"])),
    ("sin", lambda f: tf1.sin(f["m"])),
    ("cos", lambda f: tf1.cos(f["m"])),
    ("tanh", lambda f: tf1.tanh(f["m"])),
    ("sigmoid", lambda f: tf1.sigmoid(f["m"])),
    ("erf", lambda f: tf1.erf(f["m"])),
    ("is_nan", lambda f: tf1.is_nan(f["m"])),
    ("is_finite", lambda f: tf1.is_finite(f["m"])),
    ("is_inf", lambda f: tf1.is_inf(f["m"])),
    # Python operators and numpy operands, as TF1 code mixes them.
    ("operators/numpy_scalar_left", lambda f: np.sqrt(2 / np.pi) * f["m"]),
    ("operators/numpy_float32_left", lambda f: np.float32(2.0) - f["m"]),
    ("operators/numpy_array_left", lambda f: np.ones(5, "float32") + f["m"]),
    ("operators/gelu", lambda f: gelu(f["x"])),
    ("operators/python", lambda f: (1.0 - f["m"]) * 2 / f["p"] ** 2 + (-f["m"]) // 1 % 3),
    ("operators/getitem", lambda f: f["x"][:, 1:, ::2][..., None]),
    ("operators/batch_dim", lambda f: f["m"] * f["m"].shape[0]),
    ("Tensor/isinstance", lambda f: _is_tensor(f["m"]) + 1),
    # array_ops.
    ("broadcast_to", lambda f: tf1.broadcast_to(f["m"][:, None], tf1.shape(f["x"]))),
    ("meshgrid", lambda f: tuple(tf1.meshgrid(tf1.range(3), tf1.range(2)))
     + (f["m"],)),
    ("reverse", lambda f: tf1.reverse(f["m"], [1])),
    ("reverse_v2", lambda f: tf1.reverse_v2(f["x"], axis=[1, 2])),
    ("roll", lambda f: tf1.roll(f["m"], 2, 1)),
    ("linspace", lambda f: f["m"] * tf1.linspace(0.0, 1.0, 5)),
    ("lin_space", lambda f: f["m"] * tf1.lin_space(0.0, 1.0, 5)),
    ("eye", lambda f: tf1.matmul(f["m"], tf1.eye(5))),
    ("matrix_band_part", lambda f: tf1.matrix_band_part(f["x"], 1, 0)),
    ("matrix_transpose", lambda f: tf1.matrix_transpose(f["x"])),
    ("shape_n", lambda f: tf1.ones(tf1.shape_n([f["m"], f["x"]])[1]) * f["x"]),
    ("identity_n", lambda f: tuple(tf1.identity_n([f["m"], f["p"]]))),
    ("dimension_value", lambda f: f["m"] * tf1.dimension_value(f["x"].shape[1])),
    # math_ops.
    ("div_no_nan", lambda f: tf1.div_no_nan(f["m"], f["m"] * (f["u"] > 0))),
    ("divide_no_nan", lambda f: tf1.divide_no_nan(f["m"], f["p"])),
    ("realdiv", lambda f: tf1.realdiv(f["m"], f["p"])),
    ("xdivy", lambda f: tf1.xdivy(f["m"] * (f["u"] > 0), f["p"])),
    ("reduce_variance", lambda f: tf1.reduce_variance(f["m"], axis=1)),
    ("reduce_std", lambda f: tf1.reduce_std(f["m"], axis=1, keepdims=True)),
    ("count_nonzero", lambda f: tf1.count_nonzero(f["ids"] > 4, axis=1)),
    ("cumprod", lambda f: tf1.cumprod(f["p"], axis=1, exclusive=True)),
    ("unsorted_segment_sum", lambda f: tf1.unsorted_segment_sum(f["m"], f["labels"], 6)),
    ("unsorted_segment_max", lambda f: tf1.unsorted_segment_max(f["m"], f["labels"], 6)),
    ("segment_sum", lambda f: tf1.segment_sum(tf1.constant(W), [0, 0, 1, 2, 2])),
    ("segment_mean", lambda f: tf1.segment_mean(f["m"][0], [0, 0, 2, 2, 3])),
    ("unsorted_segment_mean", lambda f: tf1.unsorted_segment_mean(f["m"], f["labels"], 6)),
    ("searchsorted", lambda f: tf1.searchsorted(tf1.sort(f["m"]), f["u"], side="right")),
    ("scalar_mul", lambda f: tf1.scalar_mul(-2, f["ids"])),
    ("matrix_diag", lambda f: tf1.matrix_diag(f["m"], k=1)),
    ("matrix_set_diag", lambda f: tf1.matrix_set_diag(f["x"], f["x"][:, :, 1])),
    ("log_sigmoid", lambda f: tf1.log_sigmoid(f["m"])),
    ("sort", lambda f: tf1.sort(f["m"], direction="DESCENDING")),
    ("argsort", lambda f: tf1.argsort(f["m"])),
    ("tensordot", lambda f: tf1.tensordot(f["x"], tf1.constant(W), axes=1)),
    ("norm", lambda f: tf1.norm(f["m"], axis=1)),
    ("acos", lambda f: tf1.acos(f["u"])),
    ("asin", lambda f: tf1.asin(f["u"])),
    ("atan", lambda f: tf1.atan(f["m"])),
    ("cosh", lambda f: tf1.cosh(f["m"])),
    ("sinh", lambda f: tf1.sinh(f["m"])),
    ("tan", lambda f: tf1.tan(f["u"])),
    ("rint", lambda f: tf1.rint(f["m"] * 3)),
    ("expm1", lambda f: tf1.expm1(f["m"])),
    ("atan2", lambda f: tf1.atan2(f["m"], f["u"])),
    ("accumulate_n", lambda f: tf1.accumulate_n([f["m"], f["p"]])),
    # random_ops (the model's seed generator: same state, same numbers).
    ("random_uniform", lambda f: f["m"] + tf1.random_uniform(tf1.shape(f["m"]))),
    ("random_uniform/ints", lambda f: tf1.random_uniform([BATCH], 0, 10, dtype=tf1.int32)),
    ("random_normal", lambda f: f["x"] * tf1.random_normal(get_shape_list(f["x"]))),
    ("truncated_normal", lambda f: f["m"] + tf1.truncated_normal([5], stddev=0.1)),
    ("random_shuffle", lambda f: tf1.random_shuffle(f["m"])),
    ("multinomial", lambda f: tf1.multinomial(f["logits"], 3)),
    ("random.uniform", lambda f: tf1.random.uniform([tf1.shape(f["m"])[0], 1]) * f["m"]),
    ("random.categorical", lambda f: tf1.random.categorical(f["logits"], 2)),
    # check_ops (checked on what is known while tracing).
    ("assert_equal", lambda f: _after(tf1.assert_equal(tf1.shape(f["m"])[0],
                                                       tf1.shape(f["p"])[0]), f["m"])),
    ("assert_none_equal", lambda f: _after(tf1.assert_none_equal(1, 2), f["m"])),
    ("assert_less", lambda f: _after(tf1.assert_less(f["m"], f["m"] + 1), f["m"])),
    ("assert_less_equal", lambda f: _after(tf1.assert_less_equal(1, 1), f["m"])),
    ("assert_greater", lambda f: _after(tf1.assert_greater(f["p"], 0.0), f["p"])),
    ("assert_greater_equal", lambda f: _after(tf1.assert_greater_equal(f["p"], 0.0), f["p"])),
    ("assert_positive", lambda f: _after(tf1.assert_positive(f["p"]), f["p"])),
    ("assert_negative", lambda f: _after(tf1.assert_negative(-f["p"]), f["p"])),
    ("assert_non_negative", lambda f: _after(tf1.assert_non_negative(f["p"]), f["p"])),
    ("assert_non_positive", lambda f: _after(tf1.assert_non_positive(-f["p"]), f["p"])),
    ("assert_near", lambda f: _after(tf1.assert_near(f["m"], f["m"]), f["m"])),
    ("assert_integer", lambda f: _after(tf1.assert_integer(f["ids"]), f["ids"])),
    ("assert_type", lambda f: _after(tf1.assert_type(f["m"], tf1.float32), f["m"])),
    ("assert_rank", lambda f: _after(tf1.assert_rank(f["x"], 3), f["x"])),
    ("assert_rank_at_least", lambda f: _after(tf1.assert_rank_at_least(f["x"], 2), f["x"])),
    ("assert_rank_in", lambda f: _after(tf1.assert_rank_in(f["x"], [2, 3]), f["x"])),
    ("assert_scalar", lambda f: _after(tf1.assert_scalar(tf1.reduce_sum(f["m"])), f["m"])),
    ("check_numerics", lambda f: tf1.check_numerics(f["m"], "m")),
    ("verify_tensor_all_finite", lambda f: tf1.verify_tensor_all_finite(f["m"], "m")),
    # control_flow.
    ("cond", lambda f: tf1.cond(tf1.reduce_sum(f["m"]) > 0, lambda: f["m"], lambda: -f["m"])),
    ("cond/static", lambda f: tf1.cond(tf1.shape(f["m"])[1] > 1, lambda: f["m"], lambda: f["p"])),
    ("case", lambda f: tf1.case([(tf1.reduce_sum(f["m"]) > 100, lambda: f["p"])],
                                default=lambda: f["m"])),
    ("while_loop", lambda f: tf1.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
                                            [tf1.constant(0), f["m"]])[1]),
    ("map_fn", lambda f: tf1.map_fn(lambda row: row * 2, f["m"])),
    # nn.
    ("nn.relu", lambda f: tf1.nn.relu(f["m"])),
    ("nn.relu6", lambda f: tf1.nn.relu6(f["m"] * 8)),
    ("nn.elu", lambda f: tf1.nn.elu(f["m"])),
    ("nn.selu", lambda f: tf1.nn.selu(f["m"])),
    ("nn.leaky_relu", lambda f: tf1.nn.leaky_relu(f["m"], alpha=0.1)),
    ("nn.gelu", lambda f: tf1.nn.gelu(f["m"])),
    ("nn.softplus", lambda f: tf1.nn.softplus(f["m"])),
    ("nn.softsign", lambda f: tf1.nn.softsign(f["m"])),
    ("nn.swish", lambda f: tf1.nn.swish(f["m"])),
    ("nn.silu", lambda f: tf1.nn.silu(f["m"])),
    ("nn.tanh", lambda f: tf1.nn.tanh(f["m"])),
    ("nn.sigmoid", lambda f: tf1.nn.sigmoid(f["m"])),
    ("nn.softmax", lambda f: tf1.nn.softmax(f["logits"])),
    ("nn.log_softmax", lambda f: tf1.nn.log_softmax(f["logits"], axis=-1)),
    ("nn.sparse_softmax_cross_entropy_with_logits",
     lambda f: tf1.nn.sparse_softmax_cross_entropy_with_logits(labels=f["labels"],
                                                               logits=f["logits"])),
    ("nn.softmax_cross_entropy_with_logits_v2",
     lambda f: tf1.nn.softmax_cross_entropy_with_logits_v2(
         labels=tf1.one_hot(f["labels"], 6), logits=f["logits"])),
    ("nn.softmax_cross_entropy_with_logits",
     lambda f: tf1.nn.softmax_cross_entropy_with_logits(
         labels=tf1.one_hot(f["labels"], 6), logits=f["logits"])),
    ("nn.sigmoid_cross_entropy_with_logits",
     lambda f: tf1.nn.sigmoid_cross_entropy_with_logits(labels=tf1.to_float(f["m"] > 0),
                                                        logits=f["u"])),
    ("nn.weighted_cross_entropy_with_logits",
     lambda f: tf1.nn.weighted_cross_entropy_with_logits(
         labels=tf1.to_float(f["m"] > 0), logits=f["u"], pos_weight=2.0)),
    ("nn.dropout", lambda f: tf1.nn.dropout(f["x"], keep_prob=0.9)),
    ("nn.dropout/noise_shape", lambda f: tf1.nn.dropout(
        f["x"], rate=0.5, noise_shape=[tf1.shape(f["x"])[0], 1, 5])),
    ("nn.l2_loss", lambda f: tf1.nn.l2_loss(f["m"])),
    ("nn.l2_normalize", lambda f: tf1.nn.l2_normalize(f["m"], axis=-1)),
    ("nn.embedding_lookup", lambda f: tf1.nn.embedding_lookup(tf1.constant(TABLE_10x5), f["ids"])),
    ("nn.bias_add", lambda f: tf1.nn.bias_add(f["x"], tf1.ones([5]))),
    ("nn.moments", lambda f: tf1.nn.moments(f["x"], axes=[0, 1])),
    ("nn.convolution", lambda f: tf1.nn.convolution(f["x"], KERNEL_1D, "SAME", strides=[2])),
    ("nn.sufficient_statistics",
     lambda f: tf1.nn.sufficient_statistics(f["x"], [0, 1])[:3]),
    ("nn.normalize_moments", lambda f: tf1.nn.normalize_moments(
        *tf1.nn.sufficient_statistics(f["x"], [0, 2], shift=0.5))),
    ("nn.batch_normalization", lambda f: tf1.nn.batch_normalization(
        f["m"], 0.1, 2.0, tf1.zeros([5]), tf1.ones([5]), 1e-3)),
    ("nn.fused_batch_norm", lambda f: tf1.nn.fused_batch_norm(
        f["image"], tf1.ones([3]), tf1.zeros([3]))),
    ("nn.top_k", lambda f: tuple(tf1.nn.top_k(f["logits"], k=2))),
    ("nn.in_top_k", lambda f: tf1.nn.in_top_k(f["logits"], f["labels"], 2)),
    ("nn.conv2d", lambda f: tf1.nn.conv2d(f["image"], tf1.constant(FILTER), [1, 2, 2, 1], "SAME")),
    ("nn.conv1d", lambda f: tf1.nn.conv1d(f["seq"], tf1.constant(FILTER_1D), 1, "VALID")),
    ("nn.depthwise_conv2d", lambda f: tf1.nn.depthwise_conv2d(
        f["image"], tf1.constant(DEPTHWISE), [1, 1, 1, 1], "SAME")),
    ("nn.separable_conv2d", lambda f: tf1.nn.separable_conv2d(
        f["image"], tf1.constant(DEPTHWISE), tf1.constant(POINTWISE), [1, 1, 1, 1], "VALID")),
    ("nn.max_pool", lambda f: tf1.nn.max_pool(f["image"], [1, 2, 2, 1], [1, 2, 2, 1], "VALID")),
    ("nn.avg_pool", lambda f: tf1.nn.avg_pool(f["image"], [1, 3, 3, 1], [1, 2, 2, 1], "SAME")),
    ("nn.max_pool2d", lambda f: tf1.nn.max_pool2d(f["image"], 2, 2, "SAME")),
    ("nn.avg_pool2d", lambda f: tf1.nn.avg_pool2d(f["image"], [2, 2], [2, 2], "VALID")),
    ("nn.space_to_depth", lambda f: tf1.nn.space_to_depth(f["image"], 2)),
    ("nn.depth_to_space", lambda f: tf1.nn.depth_to_space(tf1.tile(f["image"], [1, 1, 1, 4]), 2)),
    ("nn.space_to_batch", lambda f: tf1.nn.space_to_batch(f["image"], [[0, 0], [1, 1]], 2)),
    # Recurrent loops (the cells create variables; see test_rnn_cells for TF's numbers).
    ("nn.dynamic_rnn", lambda f: tf1.nn.dynamic_rnn(
        tf1.nn.rnn_cell.LSTMCell(4), f["seq"], sequence_length=f["lengths"], dtype=tf1.float32)),
    ("nn.bidirectional_dynamic_rnn", lambda f: tf1.nn.bidirectional_dynamic_rnn(
        tf1.nn.rnn_cell.GRUCell(3), tf1.nn.rnn_cell.BasicRNNCell(2), f["seq"],
        sequence_length=f["lengths"], dtype=tf1.float32)),
    ("nn.static_rnn", lambda f: tf1.nn.static_rnn(
        tf1.nn.rnn_cell.BasicLSTMCell(3), tf1.unstack(f["seq"], axis=1),
        sequence_length=f["lengths"], dtype=tf1.float32)),
    ("nn.static_bidirectional_rnn", lambda f: tf1.nn.static_bidirectional_rnn(
        tf1.nn.rnn_cell.GRUCell(2), tf1.nn.rnn_cell.GRUCell(2), tf1.unstack(f["seq"], axis=1),
        sequence_length=f["lengths"], dtype=tf1.float32)),
    ("nn.zero_fraction", lambda f: tf1.nn.zero_fraction(tf1.nn.relu(f["m"]))),
    ("nn.xw_plus_b", lambda f: tf1.nn.xw_plus_b(f["m"], tf1.constant(W), tf1.ones([2]))),
    ("nn.relu_layer", lambda f: tf1.nn.relu_layer(f["m"], tf1.constant(W), tf1.ones([2]))),
    # losses (into GraphKeys.LOSSES, as TF1).
    ("losses.sparse_softmax_cross_entropy", lambda f: tf1.losses.sparse_softmax_cross_entropy(
        f["labels"], f["logits"], weights=tf1.to_float(f["labels"] > 0))),
    ("losses.softmax_cross_entropy", lambda f: tf1.losses.softmax_cross_entropy(
        tf1.one_hot(f["labels"], 6), f["logits"], label_smoothing=0.1)),
    ("losses.sigmoid_cross_entropy", lambda f: tf1.losses.sigmoid_cross_entropy(
        tf1.to_float(f["m"] > 0), f["u"])),
    ("losses.mean_squared_error", lambda f: tf1.losses.mean_squared_error(f["m"], f["u"])),
    ("losses.absolute_difference", lambda f: tf1.losses.absolute_difference(f["m"], f["u"])),
    ("losses.huber_loss", lambda f: tf1.losses.huber_loss(f["m"], f["u"], delta=0.5)),
    ("losses.log_loss", lambda f: tf1.losses.log_loss(tf1.to_float(f["m"] > 0),
                                                      tf1.sigmoid(f["u"]))),
    ("losses.compute_weighted_loss", lambda f: tf1.losses.compute_weighted_loss(
        f["p"], weights=tf1.to_float(f["m"] > 0))),
    ("losses.get_total_loss", lambda f: (tf1.losses.mean_squared_error(f["m"], f["u"]),
                                         tf1.losses.get_total_loss())),
    # initializers, through get_variable (created in the build pass).
    ("get_variable", lambda f: tf1.matmul(f["m"], tf1.get_variable(
        "w", [5, 2], initializer=tf1.truncated_normal_initializer(stddev=0.02)))),
]


def _after(assertion, value):
    with tf1.control_dependencies([assertion]):
        return tf1.identity(value)


# Public op names the table does not call, and why.
NOT_OPS = {
    "boolean_mask": "value-dependent output size: raises NotImplementedError, tested in test_compat_ops",
    "unique": "value-dependent output size: raises NotImplementedError",
    "Dimension": "a class (TF1's tensor_shape.Dimension), not an op: test_tensor_shape",
    "TensorShape": "a class (TF1's tensor_shape.TensorShape), not an op: test_tensor_shape",
    "as_shape": "builds a TensorShape, not an op: test_tensor_shape",
    **{f"losses.{n}": "a collection accessor, not an op" for n in (
        "add_loss", "add_to_collection", "get_collection", "get_losses",
        "get_regularization_loss", "get_regularization_losses")},
}


def _leaves(out):
    return {str(i): leaf for i, leaf in enumerate(jax.tree.leaves(out))}


class _Program:
    """`fn` as the PREDICT `model_fn` of a model built on `FEATURES`."""

    def __init__(self, fn):
        self.symbolic = None

        def model_fn(features, mode):
            outputs = _leaves(fn(features))
            if self.symbolic is None:  # The build pass: abstract values.
                self.symbolic = outputs
            return TPUEstimatorSpec(mode=mode, predictions=outputs)

        program = ModelFnProgram(model_fn, {}, kte.RunConfig(), False)
        self.parts = ModelParts(program, keras.distribution.DataParallel(devices=jax.devices()[:1]))
        sample = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), FEATURES)
        self.parts.build(ModeKeys.PREDICT, (sample, None), None)
        self.step = Steps(program, self.parts).predict
        self.state = state_lib.read(self.parts.variables(ModeKeys.PREDICT))

    def run(self, step, state=None):
        # The library hands model_fn JAX arrays (numpy ones only in tests).
        features = jax.tree.map(jax.numpy.asarray, FEATURES)
        outputs = step(state or self.state, (features, None))[1]
        return outputs.get("predictions", outputs)

    def exported(self):
        """The step exported with a symbolic batch dimension `b`, called on `FEATURES`."""
        (b,) = jax.export.symbolic_shape("b")
        specs = (
            jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), self.state),
            ({k: jax.ShapeDtypeStruct((b,) + v.shape[1:], v.dtype) for k, v in FEATURES.items()},
             None),
        )
        with lowering.xla_only():  # As the SavedModel export traces (no host callbacks).
            exported = jax.export.export(jax.jit(self.step))(*specs)
        return self.run(exported.call)


_BUILT = {}


def _built(op, fn):
    """The op's `_Program` and its compiled step's outputs (the reference), made once."""
    if op not in _BUILT:
        program = _Program(fn)
        _BUILT[op] = program, program.run(jax.jit(program.step))
    return _BUILT[op]


def _assert_same_values(actual, expected):
    assert actual.keys() == expected.keys()
    for key in expected:
        a, e = np.asarray(actual[key]), np.asarray(expected[key])
        assert a.shape == e.shape and a.dtype == e.dtype, (key, a.shape, a.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6, err_msg=key)


@pytest.mark.parametrize("way", ["build", "export"])
@pytest.mark.parametrize("op, fn", CASES, ids=[op for op, _ in CASES])
def test_op_runs_alike_in_the_build_pass_the_step_and_export(op, fn, way):
    program, expected = _built(op, fn)
    if way == "build":
        shapes = {k: (tuple(v.shape), keras.backend.standardize_dtype(v.dtype))
                  for k, v in program.symbolic.items()}
        assert shapes == {k: (np.shape(v), keras.backend.standardize_dtype(v.dtype))
                          for k, v in expected.items()}
    else:
        _assert_same_values(program.exported(), expected)


def test_the_table_covers_the_surface():
    modules = [ops, array_ops, math_ops, random_ops, check_ops, control_flow]
    names = {n for m in modules for n in m.__all__}
    names |= {f"nn.{n}" for n in dir(tf1.nn)
              if not n.startswith("_") and callable(getattr(tf1.nn, n))
              and getattr(getattr(tf1.nn, n), "__module__", "").startswith("keras_tpu_estimator")}
    names |= {f"losses.{n}" for n in dir(tf1.losses)
              if inspect.isfunction(getattr(tf1.losses, n)) and not n.startswith("_")}
    covered = {op.split("/")[0] for op, _ in CASES}
    assert sorted(names - covered - set(NOT_OPS)) == []
