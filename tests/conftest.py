"""Test setup: JAX backend and 8 host CPU devices, set before JAX is imported."""

import os

os.environ["KERAS_BACKEND"] = "jax"
# Hermetic: every test compiles what it runs (compile counts are specified);
# tests/test_compilation_cache.py turns the cache on in its own processes.
os.environ["KTE_COMPILATION_CACHE"] = "0"
# The tests compile far more than they run: LLVM's optimizations off takes about
# 30% off the suite (same HLO, same arithmetic; the programs run slower).
for _flag in ("--xla_force_host_platform_device_count=8", "--xla_backend_optimization_level=0"):
    _name = _flag.split("=")[0]
    if _name not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + _flag).strip()

import jax  # noqa: E402
import keras  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_keras_state():
    """Every test starts from the same seed and no global distribution."""
    keras.utils.set_random_seed(0)
    keras.distribution.set_distribution(None)
    yield
    keras.distribution.set_distribution(None)


def pytest_report_header(config):
    return f"jax devices: {jax.device_count()} ({jax.default_backend()})"
