"""The persistent compilation cache: on by default, a program compiled once per machine."""

import json
import os
import subprocess
import sys

import pytest

PROGRAM = """
import json, jax
hits = []
jax.monitoring.register_event_listener(
    lambda event, **kwargs: hits.append(1) if event == "/jax/compilation_cache/cache_hits" else None)
import keras_tpu_estimator as kte
jax.jit(lambda x: x * 2 + 1)(jax.numpy.arange(3.0)).block_until_ready()
print(json.dumps({"directory": kte.compilation_cache.directory(), "hits": len(hits)}))
"""


def run(tmp_path, **env):
    environment = dict(os.environ, KERAS_BACKEND="jax", **env)
    environment.pop("KTE_COMPILATION_CACHE", None)  # As a user's process has it.
    environment.update(env)
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=environment, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_what_the_first_compiled(tmp_path):
    cache = str(tmp_path / "cache")
    first = run(tmp_path, KTE_COMPILATION_CACHE_DIR=cache)
    second = run(tmp_path, KTE_COMPILATION_CACHE_DIR=cache)
    assert first == {"directory": cache, "hits": 0}
    assert second["directory"] == cache and second["hits"] >= 1


def test_the_cache_can_be_turned_off(tmp_path):
    result = run(tmp_path, KTE_COMPILATION_CACHE="off",
                 KTE_COMPILATION_CACHE_DIR=str(tmp_path / "cache"))
    assert result["directory"] is None
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("value", ["0", "off", "false", " OFF "])
def test_each_off_value_leaves_the_cache_off(tmp_path, monkeypatch, value):
    from keras_tpu_estimator import compilation_cache

    monkeypatch.setenv("KTE_COMPILATION_CACHE", value)
    monkeypatch.setenv("KTE_COMPILATION_CACHE_DIR", str(tmp_path / "cache"))
    assert compilation_cache.enable_default() is None
    assert not (tmp_path / "cache").exists()


def test_a_cache_directory_the_user_gave_jax_wins(tmp_path):
    theirs = str(tmp_path / "theirs")
    result = run(tmp_path, JAX_COMPILATION_CACHE_DIR=theirs,
                 KTE_COMPILATION_CACHE_DIR=str(tmp_path / "ours"))
    assert result["directory"] == theirs
    assert not (tmp_path / "ours").exists()
