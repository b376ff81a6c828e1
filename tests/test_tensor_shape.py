"""A model_fn's tensors have TF1's static shape and dtype, in every pass.

Part 1: `tf1.TensorShape` and `tf1.Dimension` against TensorFlow's own
(`tf.compat.v1`, with TF1's `Dimension`s: `disable_v2_tensorshape`).

Part 2: what a `model_fn` reads of its tensors (`.shape`, `.get_shape()`,
`.dtype`, `set_shape`) in the build pass and the compiled step (a batch of 4)
and in an export (a symbolic batch), against TensorFlow's graph-mode tensors
of shape (4, 3, 5) and (None, 3, 5) respectively. Results are compared as
plain values: a shape as its `as_list()`, a dimension as its `.value`, a
dtype as its name, an error as its type.
"""

import jax
import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.engine import state as state_lib
from keras_tpu_estimator.engine.parts import ModelParts
from keras_tpu_estimator.engine.program import ModelFnProgram
from keras_tpu_estimator.engine.steps import Steps
from keras_tpu_estimator.spec import ModeKeys
from keras_tpu_estimator.spec import TPUEstimatorSpec


@pytest.fixture(scope="module", autouse=True)
def tf1_tensor_shapes():
    """TensorFlow's shapes as TF1 had them: indexing gives `Dimension`s."""
    tf.compat.v1.disable_v2_tensorshape()
    yield
    tf.compat.v1.enable_v2_tensorshape()


def _plain(value):
    """`value` with shapes, dimensions and dtypes as plain Python values."""
    if hasattr(value, "as_list"):
        return ("shape", value.as_list() if value.ndims is not None else None)
    if hasattr(value, "is_floating"):
        return ("dtype", value.name)
    if hasattr(value, "value") and not isinstance(value, (str, bytes)):
        return ("dimension", value.value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (np.integer, np.bool_)):
        return value.item()
    return value


def _result(fn, *args):
    try:
        return _plain(fn(*args))
    except Exception as error:  # noqa: BLE001 - the type is the result.
        return ("raises", type(error).__name__)


# -- Part 1: the classes. -------------------------------------------------------

SHAPES = {
    "known": [4, 3, 5],
    "partly-known": [None, 3, 5],
    "scalar": [],
    "vector": [7],
}

# (id, fn(shape, ns)) with `shape` a TensorShape of `ns`.
SHAPE_CASES = [
    ("as_list", lambda s, ns: s.as_list()),
    ("ndims-rank-len", lambda s, ns: (s.ndims, s.rank, len(s))),
    ("dims", lambda s, ns: s.dims),
    ("iterate", lambda s, ns: list(s)),
    ("index-last", lambda s, ns: s[-1] if len(s) else None),
    ("slice", lambda s, ns: s[1:]),
    ("num_elements", lambda s, ns: s.num_elements()),
    ("is_fully_defined", lambda s, ns: s.is_fully_defined()),
    ("str", lambda s, ns: str(s)),
    ("percent", lambda s, ns: "%s" % s),
    ("format", lambda s, ns: "{}".format(s)),
    ("repr", lambda s, ns: repr(s)),
    ("bool", lambda s, ns: bool(s)),
    ("eq-list", lambda s, ns: s == [None, 3, 5]),
    ("eq-tuple", lambda s, ns: s == (4, 3, 5)),
    ("ne-list", lambda s, ns: s != [4, 3, 5]),
    ("eq-self", lambda s, ns: s == ns.TensorShape(s.as_list())),
    ("add-tuple", lambda s, ns: s + (2,)),
    ("radd-list", lambda s, ns: [2] + s),
    ("concatenate", lambda s, ns: s.concatenate([1, None])),
    ("merge_with", lambda s, ns: s.merge_with([4, None, 5])),
    ("merge_with-incompatible", lambda s, ns: s.merge_with([4, 4, 4])),
    ("is_compatible_with", lambda s, ns: (s.is_compatible_with([None, 3, 5]),
                                          s.is_compatible_with([None, 3]))),
    ("assert_is_compatible_with", lambda s, ns: s.assert_is_compatible_with([4, 3, 6])),
    ("with_rank", lambda s, ns: s.with_rank(3)),
    ("with_rank_at_least", lambda s, ns: s.with_rank_at_least(2)),
    ("with_rank_at_most", lambda s, ns: s.with_rank_at_most(1)),
    ("assert_has_rank", lambda s, ns: s.assert_has_rank(1)),
    ("hash-equal", lambda s, ns: hash(s) == hash(ns.TensorShape(s.as_list()))),
]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name, fn", SHAPE_CASES, ids=[n for n, _ in SHAPE_CASES])
def test_tensor_shape_answers_as_tf1s(shape, name, fn):
    expected = _result(fn, tf.compat.v1.TensorShape(SHAPES[shape]), tf.compat.v1)
    assert _result(fn, tf1.TensorShape(SHAPES[shape]), tf1) == expected


# (id, fn(ns)): dimensions alone.
DIMENSION_CASES = [
    ("value", lambda ns: ns.Dimension(3).value),
    ("unknown-value", lambda ns: ns.Dimension(None).value),
    ("int", lambda ns: int(ns.Dimension(3))),
    ("arithmetic", lambda ns: (ns.Dimension(3) * 2, 2 * ns.Dimension(3), ns.Dimension(3) + 1,
                               ns.Dimension(7) // 2, ns.Dimension(7) % 4, ns.Dimension(7) - 1)),
    ("unknown-arithmetic", lambda ns: (ns.Dimension(None) * 2, ns.Dimension(None) + 1)),
    ("eq", lambda ns: (ns.Dimension(3) == 3, ns.Dimension(3) == ns.Dimension(3),
                       ns.Dimension(3) != 4)),
    ("unknown-eq", lambda ns: (ns.Dimension(None) == 3, ns.Dimension(3) == ns.Dimension(None))),
    ("str-repr", lambda ns: (str(ns.Dimension(3)), repr(ns.Dimension(3)),
                             str(ns.Dimension(None)), repr(ns.Dimension(None)))),
    ("negative", lambda ns: ns.Dimension(-1)),
    ("dimension_value", lambda ns: (ns.dimension_value(ns.Dimension(3)),
                                    ns.dimension_value(ns.Dimension(None)),
                                    ns.dimension_value(4), ns.dimension_value(None))),
]


@pytest.mark.parametrize("name, fn", DIMENSION_CASES, ids=[n for n, _ in DIMENSION_CASES])
def test_dimension_answers_as_tf1s(name, fn):
    assert _result(fn, tf1) == _result(fn, tf.compat.v1)


def test_a_known_dimension_is_an_int_keras_takes_as_one():
    dense = keras.layers.Dense(tf1.Dimension(3))
    dense.build((None, tf1.Dimension(5)))
    assert dense.kernel.shape == (5, 3)


# -- Part 2: what a model_fn reads of its tensors. -----------------------------

# (id, fn(x, k, ns)): x float32 (B, 3, 5), k int32 (B, 3).
TENSOR_CASES = [
    ("shape", lambda x, k, ns: x.shape),
    ("get_shape", lambda x, k, ns: x.get_shape()),
    ("as_list", lambda x, k, ns: x.shape.as_list()),
    ("get_shape-as_list", lambda x, k, ns: x.get_shape().as_list()),
    ("ndims", lambda x, k, ns: (x.shape.ndims, x.get_shape().ndims, len(x.shape))),
    ("index-value", lambda x, k, ns: (x.shape[-1].value, x.shape[1].value, x.shape[0].value)),
    ("dims-values", lambda x, k, ns: [d.value for d in x.shape.dims]),
    ("dimension_value", lambda x, k, ns: [ns.dimension_value(d) for d in x.shape]),
    ("str", lambda x, k, ns: (str(x.shape), "%s" % x.shape, "shape {}".format(k.shape))),
    ("slice", lambda x, k, ns: x.shape[1:].as_list()),
    ("arithmetic", lambda x, k, ns: (x.shape[1] * x.shape[2]).value),
    ("num_elements", lambda x, k, ns: (x.shape.num_elements(), x.shape[1:].num_elements())),
    ("is_fully_defined", lambda x, k, ns: x.shape.is_fully_defined()),
    ("eq", lambda x, k, ns: (x.shape == [None, 3, 5], k.shape[1:] == (3,))),
    ("with_rank", lambda x, k, ns: x.shape.with_rank(3).as_list()),
    ("with_rank-wrong", lambda x, k, ns: x.shape.with_rank(2)),
    ("assert_has_rank-wrong", lambda x, k, ns: x.get_shape().assert_has_rank(4)),
    ("set_shape", lambda x, k, ns: (x.set_shape([None, 3, 5]), x.shape.as_list())[1]),
    ("set_shape-incompatible", lambda x, k, ns: x.set_shape([None, 3, 6])),
    ("set_shape-rank", lambda x, k, ns: k.set_shape([None])),
    ("dtype", lambda x, k, ns: (x.dtype, k.dtype, (x > 0).dtype)),
    ("dtype-attributes", lambda x, k, ns: (
        x.dtype.is_floating, k.dtype.is_integer, x.dtype.is_integer, (x > 0).dtype.is_bool,
        x.dtype.base_dtype == ns.float32, x.dtype.name, k.dtype.as_numpy_dtype == np.int32,
        x.dtype.size, x.dtype.max == np.finfo(np.float32).max, x.dtype.is_complex)),
    ("dtype-equality", lambda x, k, ns: (
        x.dtype == ns.float32, x.dtype == np.float32, x.dtype == "float32",
        k.dtype != ns.float32, x.dtype in (ns.float16, ns.float32), k.dtype == np.int64)),
    ("cast-to-dtype", lambda x, k, ns: ns.cast(k, x.dtype.base_dtype).dtype),
    ("reshape-by-shape", lambda x, k, ns: ns.reshape(k, [-1, k.shape[1].value]).shape[1:]),
]


def _reference(batch):
    """The cases on TensorFlow graph tensors of batch `batch` (None: unknown)."""
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, (batch, 3, 5))
        k = tf.compat.v1.placeholder(tf.int32, (batch, 3))
        return {name: _result(fn, x, k, tf.compat.v1) for name, fn in TENSOR_CASES}


def _library(batch):
    """The cases in a model_fn: `{pass: {id: result}}` for the build pass and
    the step (batch 4) or for an export's step (batch None: symbolic)."""
    seen = []

    def model_fn(features, mode):
        seen.append({name: _result(fn, features["x"], features["k"], tf1)
                     for name, fn in TENSOR_CASES})
        return TPUEstimatorSpec(mode=mode, predictions={"x": features["x"]})

    program = ModelFnProgram(model_fn, {}, kte.RunConfig(), False)
    parts = ModelParts(program, keras.distribution.DataParallel(devices=jax.devices()[:1]))
    sample = {"x": jax.ShapeDtypeStruct((4, 3, 5), np.float32),
              "k": jax.ShapeDtypeStruct((4, 3), np.int32)}
    parts.build(ModeKeys.PREDICT, (sample, None), None)
    step = Steps(program, parts).predict
    state = state_lib.read(parts.variables(ModeKeys.PREDICT))
    size = jax.export.symbolic_shape("b")[0] if batch is None else batch
    jax.eval_shape(step, state, ({"x": jax.ShapeDtypeStruct((size, 3, 5), np.float32),
                                  "k": jax.ShapeDtypeStruct((size, 3), np.int32)}, None))
    return {"build": seen[0], "step": seen[1]}


@pytest.fixture(scope="module")
def results():
    return {
        "tf-known": _reference(4), "tf-unknown": _reference(None),
        "known": _library(4), "export": _library(None)["step"],
    }


@pytest.mark.parametrize("way", ["build", "step", "export"])
@pytest.mark.parametrize("name", [name for name, _ in TENSOR_CASES])
def test_a_tensors_static_shape_and_dtype_are_tf1s(results, name, way):
    if way == "export":
        actual, expected = results["export"][name], results["tf-unknown"][name]
    else:
        actual, expected = results["known"][way][name], results["tf-known"][name]
    assert actual == expected


def test_jax_and_keras_still_see_tuples_and_numpy_dtypes_inside_model_fn():
    seen = {}

    def model_fn(features, mode):
        x = features["x"]
        seen["user"] = (type(x.shape).__name__, type(x.dtype).__name__)
        seen["jnp"] = jax.numpy.reshape(x, x.shape).shape  # JAX reads its own shape.
        seen["keras"] = keras.ops.zeros_like(x).shape
        return TPUEstimatorSpec(mode=mode, predictions={"x": x})

    program = ModelFnProgram(model_fn, {}, kte.RunConfig(), False)
    parts = ModelParts(program, keras.distribution.DataParallel(devices=jax.devices()[:1]))
    parts.build(ModeKeys.PREDICT, ({"x": jax.ShapeDtypeStruct((4, 3), np.float32)}, None), None)
    assert seen["user"] == ("TensorShape", "DType")
    assert seen["jnp"] == (4, 3) and seen["keras"] == (4, 3)


def test_outside_model_fn_a_tracer_has_jax_s_shape_and_dtype():
    jax.jit(lambda x: (_check_plain(x), x)[1])(np.ones((2, 3), np.float32))


def _check_plain(x):
    assert type(x.shape) is tuple and isinstance(x.dtype, np.dtype)
    assert not hasattr(x, "get_shape")


# -- A TensorShape goes wherever TF1 took a shape or sizes. -------------------

IMAGE = np.ones((1, 4, 4, 2), np.float32)
TAKERS = {
    "zeros": lambda s: tf1.zeros(s),
    "reshape": lambda s: tf1.reshape(np.ones(6, np.float32), s),
    "random_normal": lambda s: tf1.random_normal(s),
    "get_variable": lambda s: tf1.get_variable("v", s),
    "layers.conv2d-kernel_size": lambda s: tf1.layers.conv2d(IMAGE, 3, s[:2])[0, 0, 0],
    "slim.conv2d-kernel_size": lambda s: tf1.contrib.slim.conv2d(IMAGE, 3, s[:2])[0, 0, 0],
    "slim.avg_pool2d-kernel_size": lambda s: tf1.contrib.slim.avg_pool2d(IMAGE, s[:2])[0, 0, 0],
}


@pytest.mark.parametrize("taker", TAKERS)
def test_a_tensor_shape_is_taken_as_a_shape_or_sizes(taker):
    from keras_tpu_estimator.model_fn import store as store_lib

    with store_lib.model_fn_call(store_lib.VariableStore(), ModeKeys.TRAIN, True, 0, True):
        out = TAKERS[taker](tf1.TensorShape([2, 3]))
    assert out.shape in ((2, 3), (3,), (2,))


def test_a_variable_scope_has_no_partitioner_and_keeps_none():
    from keras_tpu_estimator.model_fn import store as store_lib

    with store_lib.model_fn_call(store_lib.VariableStore(), ModeKeys.TRAIN, True, 0, True):
        scope = tf1.get_variable_scope()
        saved = scope.partitioner  # AmoebaNet saves, clears and restores it.
        scope.set_partitioner(None)
        scope.set_partitioner(saved)
        with pytest.raises(NotImplementedError, match="not partitioned"):
            scope.set_partitioner(lambda shape, dtype: [1] * len(shape))
