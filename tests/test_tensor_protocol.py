"""What model_fn receives behaves as a TF1 `tf.Tensor`, in every pass.

Indexing, operators and comparisons are evaluated in ONE `model_fn`, run the
ways the library runs it (`ModelFnProgram`, `ModelParts`, `Steps`): the build
pass (the shapes and dtypes it sees), the compiled step and an export with a
polymorphic batch dimension (the values). Each result is compared with
TensorFlow's graph-mode result of the same expression on the same inputs
(`tf.compat.v1.Session`), the reference. TF1's errors are checked too.
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

_rng = np.random.default_rng(0)
# x: float32 (4, 3, 5); k: int32 (4, 3); i: an int32 scalar tensor (1).
INPUTS = {
    "x": _rng.normal(size=(4, 3, 5)).astype("float32"),
    "k": _rng.integers(-9, 9, size=(4, 3)).astype("int32"),
}
ROW = np.linspace(-1, 1, 5).astype("float32")
W = _rng.normal(size=(5, 2)).astype("float32")

# (id, expression): `fn(x, k, tf)` with `tf` the TF1 namespace (tf1 here,
# tf.compat.v1 for the reference).
EXPRESSIONS = [
    # Indexing: new axes.
    ("none", lambda x, k, tf: x[None]),
    ("newaxis", lambda x, k, tf: x[tf.newaxis]),
    ("ellipsis-none", lambda x, k, tf: x[..., None]),
    ("none-ellipsis-none", lambda x, k, tf: x[None, ..., None]),
    ("none-middle", lambda x, k, tf: x[:, None, :]),
    # Integers: Python, numpy, negative.
    ("int", lambda x, k, tf: x[1]),
    ("negative-int", lambda x, k, tf: x[-1]),
    ("numpy-int64", lambda x, k, tf: x[np.int64(2)]),
    ("numpy-int32-negative", lambda x, k, tf: x[:, np.int32(-2)]),
    ("ints", lambda x, k, tf: x[1, 2]),
    ("ints-negative", lambda x, k, tf: x[-1, -1, -1]),
    # Slices: numpy bounds, negative indices and steps.
    ("slice-numpy-stop", lambda x, k, tf: x[:np.int64(2)]),
    ("slice-numpy-start", lambda x, k, tf: x[np.int32(1):]),
    ("slice-negative", lambda x, k, tf: x[1:-1]),
    ("reverse", lambda x, k, tf: x[::-1]),
    ("step", lambda x, k, tf: x[:, ::2]),
    ("negative-step", lambda x, k, tf: x[:, :, 4:0:-2]),
    ("ellipsis-int", lambda x, k, tf: x[..., 0]),
    ("ellipsis-slice", lambda x, k, tf: x[..., -2:]),
    # New and shrunk axes together.
    ("shrink-new", lambda x, k, tf: x[:, None, 1]),
    ("shrink-new-mixed", lambda x, k, tf: x[1, None, :, tf.newaxis, ::-1]),
    ("new-ellipsis-shrink", lambda x, k, tf: x[tf.newaxis, ..., 3]),
    # Scalar tensors as indices.
    ("tensor-index", lambda x, k, tf: x[tf.constant(1)]),
    ("tensor-index-inner", lambda x, k, tf: x[:, tf.constant(2)]),
    ("tensor-index-computed", lambda x, k, tf: x[tf.reduce_sum(tf.ones([2], tf.int32))]),
    ("tensor-index-with-none", lambda x, k, tf: x[tf.constant(0), None]),
    # Operators with Python and numpy scalars and arrays, on either side.
    ("add-int", lambda x, k, tf: x + 1),
    ("radd-float", lambda x, k, tf: 1.5 + x),
    ("rsub", lambda x, k, tf: 1 - x),
    ("rmul-numpy-scalar", lambda x, k, tf: np.float32(2) * x),
    ("mul-numpy-scalar", lambda x, k, tf: x * np.float32(2)),
    ("rmul-numpy-float64-scalar", lambda x, k, tf: np.sqrt(2 / np.pi) * x),
    ("radd-numpy-array", lambda x, k, tf: ROW + x),
    ("rsub-numpy-array", lambda x, k, tf: ROW - x),
    ("div-numpy-array", lambda x, k, tf: x / (ROW + 2)),
    ("rdiv", lambda x, k, tf: 1.0 / (x * x + 1)),
    ("pow", lambda x, k, tf: x ** 2),
    ("rpow", lambda x, k, tf: 2.0 ** x),
    ("neg-abs", lambda x, k, tf: -abs(x)),
    ("matmul-numpy", lambda x, k, tf: x @ W),
    ("floordiv-mod-int", lambda x, k, tf: (k // 4, k % 4)),
    ("int-rmul", lambda x, k, tf: 3 * k - k),
    ("int-numpy-scalar", lambda x, k, tf: k * np.int32(2)),
    # Comparisons and logic.
    ("gt", lambda x, k, tf: x > 0),
    ("rle", lambda x, k, tf: 0.5 <= x),
    ("lt-numpy", lambda x, k, tf: x < np.float32(-0.5)),
    ("gt-numpy-array-left", lambda x, k, tf: ROW > x),
    ("and-or-xor-not", lambda x, k, tf: ((x > 0) & (x < 1), (x > 1) | (x < -1),
                                         (x > 0) ^ (x > 1), ~(x > 0))),
    ("int-compare", lambda x, k, tf: k >= 2),
    # dtypes.
    ("dtype", lambda x, k, tf: (x.dtype == tf.float32, k.dtype == tf.int32,
                                (x > 0).dtype == tf.bool, k.dtype != tf.float32)),
]


def _reference():
    """The expressions' values in TensorFlow's graph mode: `{id: [arrays]}`."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, INPUTS["x"].shape)
        k = tf.compat.v1.placeholder(tf.int32, INPUTS["k"].shape)
        leaves = {name: jax.tree.leaves(fn(x, k, tf.compat.v1)) for name, fn in EXPRESSIONS}
        fetches = {name: [v for v in values if isinstance(v, tf.Tensor)]
                   for name, values in leaves.items()}
        with tf.compat.v1.Session(graph=graph) as session:
            fetched = session.run(fetches, {x: INPUTS["x"], k: INPUTS["k"]})
    # Python values (a dtype comparison) are their own reference.
    return {name: [fetched[name].pop(0) if isinstance(v, tf.Tensor) else v for v in values]
            for name, values in leaves.items()}


class _Program:
    """The expressions as the PREDICT model_fn of a model built on INPUTS."""

    def __init__(self):
        self.built = None

        def model_fn(features, mode):
            outputs = {}
            for name, fn in EXPRESSIONS:
                for j, value in enumerate(jax.tree.leaves(fn(features["x"], features["k"], tf1))):
                    outputs[f"{name}/{j}"] = value
            if self.built is None:  # The build pass.
                self.built = outputs
            # Python values (dtype comparisons) are outputs of the step too.
            return TPUEstimatorSpec(mode=mode, predictions=jax.tree.map(
                lambda v: keras.ops.convert_to_tensor(v), outputs))

        program = ModelFnProgram(model_fn, {}, kte.RunConfig(), False)
        parts = ModelParts(program, keras.distribution.DataParallel(devices=jax.devices()[:1]))
        sample = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), INPUTS)
        parts.build(ModeKeys.PREDICT, (sample, None), None)
        self.step = Steps(program, parts).predict
        self.state = state_lib.read(parts.variables(ModeKeys.PREDICT))

    def run(self, step):
        outputs = step(self.state, (jax.tree.map(jax.numpy.asarray, INPUTS), None))[1]
        return outputs.get("predictions", outputs)

    def exported(self):
        (b,) = jax.export.symbolic_shape("b")
        specs = (
            jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), self.state),
            ({n: jax.ShapeDtypeStruct((b,) + v.shape[1:], v.dtype) for n, v in INPUTS.items()},
             None),
        )
        return self.run(jax.export.export(jax.jit(self.step))(*specs).call)


@pytest.fixture(scope="module")
def runs():
    program = _Program()
    return {
        "reference": _reference(),
        "build": program.built,
        "jit": program.run(jax.jit(program.step)),
        "export": program.exported(),
    }


def _dtype(value):
    return np.dtype(type(value) if isinstance(value, (bool, np.bool_)) else value.dtype)


@pytest.mark.parametrize("way", ["build", "jit", "export"])
@pytest.mark.parametrize("name", [name for name, _ in EXPRESSIONS])
def test_expression_matches_tf1(runs, name, way):
    expected = runs["reference"][name]
    actual = [v for key, v in runs[way].items() if key.rsplit("/", 1)[0] == name]
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        if way == "build":  # Abstract values: shapes and dtypes (Python values as such).
            if isinstance(a, (bool, np.bool_)):
                assert a == e
            else:
                assert (tuple(a.shape), np.dtype(a.dtype)) == (np.shape(e), _dtype(e))
        else:
            a = np.asarray(a)
            assert a.shape == np.shape(e) and a.dtype == _dtype(e), (a.shape, a.dtype)
            np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-6)


# -- TF1's errors. -----------------------------------------------------------


def _errors_of(model_fn_body, batch_dim=None):
    """The exceptions `model_fn_body(features)` raised in the build pass and the step
    (an export with a symbolic batch when `batch_dim` is "b")."""
    raised = []

    def model_fn(features, mode):
        try:
            model_fn_body(features["x"])
        except Exception as error:  # noqa: BLE001 - recorded for the test.
            raised.append(error)
        return TPUEstimatorSpec(mode=mode, predictions={"y": features["x"]})

    program = ModelFnProgram(model_fn, {}, kte.RunConfig(), False)
    parts = ModelParts(program, keras.distribution.DataParallel(devices=jax.devices()[:1]))
    sample = {"x": jax.ShapeDtypeStruct((4, 3), np.float32)}
    parts.build(ModeKeys.PREDICT, (sample, None), None)
    step = Steps(program, parts).predict
    state = state_lib.read(parts.variables(ModeKeys.PREDICT))
    batch = jax.export.symbolic_shape("b")[0] if batch_dim == "b" else 4
    jax.eval_shape(step, state, ({"x": jax.ShapeDtypeStruct((batch, 3), np.float32)}, None))
    return raised


def test_a_tensor_as_a_python_bool_raises_type_error_in_every_pass():
    raised = _errors_of(lambda x: bool(x[0, 0] > 0))
    assert len(raised) == 2 and all(isinstance(e, TypeError) for e in raised), raised


def test_iterating_a_tensor_of_unknown_leading_dimension_raises_tf1s_type_error():
    raised = _errors_of(lambda x: list(x), batch_dim="b")
    assert len(raised) == 1 and isinstance(raised[0], TypeError), raised
    assert "Tensor objects are only iterable when eager execution is enabled" in str(raised[0])


def test_iterating_a_scalar_raises_type_error_in_every_pass():
    raised = _errors_of(lambda x: list(x[0, 0]))
    assert len(raised) == 2 and all(isinstance(e, TypeError) for e in raised), raised


def test_iterating_a_known_dimension_unstacks_in_every_pass():
    rows = []
    _errors_of(lambda x: rows.append([tuple(r.shape) for r in x]))
    assert rows == [[(3,)] * 4] * 2
