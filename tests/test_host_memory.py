"""On CPU devices, glibc keeps the memory a step frees for the next one."""

import os
import pathlib
import platform
import subprocess
import sys
import types

import jax
import pytest

from keras_tpu_estimator._backend import host_memory

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc")

# A fresh process (mallopt is process-wide) that loads the module file alone,
# asks for the setting on its CPU devices, then twice malloc's 64 MiB, writes
# it and frees it (as XLA:CPU's buffers are), and prints how much the
# resident memory grew after each round.
SCRIPT = """
import ctypes, importlib.util, resource, sys
import jax
spec = importlib.util.spec_from_file_location("host_memory", sys.argv[1])
host_memory = importlib.util.module_from_spec(spec)
spec.loader.exec_module(host_memory)
kept = host_memory.keep_freed_memory(jax.devices("cpu"))
libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, (ctypes.c_size_t,)
libc.free.argtypes = (ctypes.c_void_p,)

def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()

def round_trip():
    buffer = libc.malloc(64 * 2**20)
    ctypes.memset(buffer, 1, 64 * 2**20)
    libc.free(buffer)

before = resident()
round_trip()
first = resident() - before
round_trip()
print(kept, first, resident() - before)
"""
MIB = 2**20


def _run(**env):
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, pathlib.Path(host_memory.__file__)],
        env={**environment, "JAX_PLATFORMS": "cpu", **env},
        capture_output=True, text=True, timeout=120, check=True,
    )
    kept, first, second = done.stdout.split()
    return kept == "True", int(first), int(second)


def test_freed_memory_is_kept_and_reused():
    kept, first, second = _run()
    assert kept
    assert first >= 60 * MIB  # Freed, but still the process's.
    assert second - first < 4 * MIB  # The second round reused it.


@pytest.mark.parametrize("env", [
    {host_memory.ENV_VAR: "0"},
    {host_memory.ENV_VAR: "off"},
    {"MALLOC_ARENA_MAX": "2"},
    {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1000000"},
], ids=["switched-off", "switched-off-by-word", "malloc-variable", "malloc-tunable"])
def test_the_switch_and_the_users_own_malloc_options_leave_glibc_alone(env):
    kept, first, second = _run(**env)
    assert not kept
    assert first < 8 * MIB and second < 8 * MIB  # glibc's default: given back when freed


@pytest.fixture
def not_asked_yet(monkeypatch):
    monkeypatch.setattr(host_memory, "_applied", None)
    calls = []
    monkeypatch.setattr(host_memory, "_set_options", lambda: calls.append(1) or True)
    return calls


def test_devices_other_than_cpu_change_nothing(not_asked_yet):
    assert not host_memory.keep_freed_memory([types.SimpleNamespace(platform="gpu")])
    assert not not_asked_yet


def test_the_options_are_set_once_per_process(not_asked_yet, monkeypatch):
    monkeypatch.delenv(host_memory.ENV_VAR, raising=False)
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    for name in [n for n in os.environ if n.startswith("MALLOC_")]:
        monkeypatch.delenv(name)
    assert host_memory.keep_freed_memory(jax.devices("cpu"))
    assert host_memory.keep_freed_memory(jax.devices("cpu"))
    assert not_asked_yet == [1]
