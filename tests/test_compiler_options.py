"""On CPU devices, loop programs compile without copies of the variables they update."""

import types

import jax
import numpy as np
import pytest
from jax import numpy as jnp

from keras_tpu_estimator._backend import compiler_options
from keras_tpu_estimator.engine.loop import STACKED
from keras_tpu_estimator.engine.loop import LoopPrograms

CPU = jax.devices("cpu")[:1]
REGION_ANALYSIS = "xla_cpu_copy_insertion_use_region_analysis"


def _step(state, batch):
    """Two dense layers trained by SGD: `w2` is read for `x`'s gradient and updated."""
    x, y = batch

    def loss(params):
        hidden = jnp.tanh(x @ params["w1"])
        return jnp.mean((hidden @ params["w2"] - y) ** 2)

    value, grads = jax.value_and_grad(loss)(state)
    return jax.tree.map(lambda p, g: p - 0.1 * g, state, grads), {"loss": value}


def _state():
    rng = np.random.default_rng(0)
    return {"w1": jnp.asarray(rng.standard_normal((16, 64), np.float32)),
            "w2": jnp.asarray(rng.standard_normal((64, 32), np.float32))}


def _batches():
    rng = np.random.default_rng(1)
    return (jnp.asarray(rng.standard_normal((5, 8, 16), np.float32)),
            jnp.asarray(rng.standard_normal((5, 8, 32), np.float32)))


def _program(options):
    return LoopPrograms(options).get("train", _step, STACKED, donate=True)


def _copies_of_w2(options):
    text = _program(options).lower(_state(), _batches(), np.int32(5)).compile().as_text()
    return [line for line in text.splitlines() if "f32[64,32]" in line and " copy(" in line]


def test_cpu_devices_get_region_analysis(monkeypatch):
    monkeypatch.delenv(compiler_options.ENV_VAR, raising=False)
    assert compiler_options.for_devices(CPU) == {REGION_ANALYSIS: True}


def test_other_devices_get_none():
    assert compiler_options.for_devices([types.SimpleNamespace(platform="gpu")]) is None


@pytest.mark.parametrize("value", ["0", "off", "False", "no"])
def test_the_switch_turns_them_off(monkeypatch, value):
    monkeypatch.setenv(compiler_options.ENV_VAR, value)
    assert compiler_options.for_devices(CPU) is None


def test_an_option_set_in_xla_flags_stands(monkeypatch):
    monkeypatch.delenv(compiler_options.ENV_VAR, raising=False)
    monkeypatch.setenv("XLA_FLAGS", f"--xla_force_host_platform_device_count=8 --{REGION_ANALYSIS}=false")
    assert compiler_options.for_devices(CPU) is None


def test_xla_copies_an_updated_variable_without_the_options():
    assert _copies_of_w2(None)  # What the options remove: pins XLA:CPU's default.


def test_the_options_drop_the_copy(monkeypatch):
    monkeypatch.delenv(compiler_options.ENV_VAR, raising=False)
    assert not _copies_of_w2(compiler_options.for_devices(CPU))


def test_the_values_are_the_same(monkeypatch):
    monkeypatch.delenv(compiler_options.ENV_VAR, raising=False)
    plain = _program(None)(_state(), _batches(), np.int32(5))
    analysed = _program(compiler_options.for_devices(CPU))(_state(), _batches(), np.int32(5))
    jax.tree.map(np.testing.assert_array_equal, plain, analysed)
