"""TF1 recurrent cells and loops match TensorFlow: names, outputs, final states, gradients.

Each case of `tests/references/make_rnn_references.py` is one TF1 program; TF
2.15 ran it (the fixture `rnn_cells.npz`), and here the library runs the very
same function on `keras_tpu_estimator.compat.v1`: built on shape-only
tensors, its variables (found by their TF1 names) set to TF's values, then
run compiled by `jax.jit`.
"""

import functools
import importlib.util
import os

import jax
import jax.numpy as jnp
import keras
import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator.model_fn import store as store_lib

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "make_rnn_references", os.path.join(_HERE, "references", "make_rnn_references.py"))
refs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(refs)

FIXTURE = np.load(refs.FIXTURE)
INPUTS = {k: FIXTURE[f"input:{k}"] for k in refs.inputs()}
SYMBOLIC = {k: keras.KerasTensor(v.shape, dtype=str(v.dtype)) for k, v in INPUTS.items()}


def run(program, store, building):
    with store_lib.model_fn_call(store, kte.ModeKeys.TRAIN, building, 0, True):
        return program()


def tf_names(case):
    return [str(n) for n in FIXTURE[f"{case}:names"]]


def tf_leaves(case, kind="out"):
    count = len([k for k in FIXTURE.files if k.startswith(f"{case}:{kind}:")])
    return [FIXTURE[f"{case}:{kind}:{i}"] for i in range(count)]


def built(program):
    """A store holding what `program` creates (on shape-only inputs), and its variables' names."""
    store = store_lib.VariableStore()
    run(lambda: program(SYMBOLIC), store, building=True)
    return store, list(store.variables_by_name())


@functools.lru_cache(maxsize=None)
def built_case(case):
    """`built` for a fixture case, once per case (its names and numbers are tested apart)."""
    return built(lambda a: refs.CASES[case](tf1, a))


def compiled(program, store, names):
    """`values -> program(INPUTS)` under `jax.jit`, the variables `names` reading `values`."""
    variables = [store.variables_by_name()[n] for n in names]

    def apply(values):
        with keras.StatelessScope(state_mapping=list(zip(variables, values))):
            return run(lambda: program(INPUTS), store, building=False)

    return jax.jit(apply)


def tf_values(case, names):
    return [jnp.asarray(FIXTURE[f"{case}:var:{n}"]) for n in names]


@pytest.mark.parametrize("case", sorted(refs.CASES))
def test_variables_have_tensorflows_names_in_creation_order(case):
    _, names = built_case(case)
    assert names == tf_names(case)


@pytest.mark.parametrize("case", sorted(refs.CASES))
def test_outputs_and_final_states_match_tensorflow(case):
    program = lambda a: refs.CASES[case](tf1, a)  # noqa: E731
    store, names = built_case(case)
    got = jax.tree.leaves(compiled(program, store, names)(tf_values(case, names)))
    expected = tf_leaves(case)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), e, atol=1e-5, rtol=1e-5)


def test_gradient_through_the_loop_matches_tensorflow():
    case = refs.GRADIENT_CASE
    program = lambda a: refs.CASES[case](tf1, a)  # noqa: E731
    store, names = built_case(case)
    forward = compiled(program, store, names)

    def total(values):
        outputs, _ = forward(values)
        return jnp.sum(outputs)

    grads = jax.grad(total)(tf_values(case, names))
    for name, g in zip(names, grads):
        np.testing.assert_allclose(np.asarray(g), FIXTURE[f"{case}:grad:{name}"],
                                   atol=1e-5, rtol=1e-5)


def block_cell_program(a):
    cell = tf1.contrib.rnn.LSTMBlockCell(refs.BLOCK_CELL["units"],
                                         forget_bias=refs.BLOCK_CELL["forget_bias"],
                                         cell_clip=refs.BLOCK_CELL["cell_clip"], use_peephole=True)
    outputs, state = tf1.nn.dynamic_rnn(cell, a["x"], dtype=tf1.float32)
    return outputs, state.c, state.h


def test_contrib_lstm_block_cell_matches_tensorflows_block_kernel():
    store, names = built(block_cell_program)
    assert names == tf_names("lstm_block_cell")
    got = compiled(block_cell_program, store, names)(tf_values("lstm_block_cell", names))
    for g, e in zip(got, tf_leaves("lstm_block_cell")):
        np.testing.assert_allclose(np.asarray(g), e, atol=1e-5, rtol=1e-5)


def test_fixture_came_from_tensorflow_2_15():
    assert str(FIXTURE["tensorflow_version"]).startswith("2.15")
