"""The custom call's library: built once per installation, early, whole."""

import subprocess

import pytest

from keras_tpu_estimator._backend import tf_ffi_build
from keras_tpu_estimator._backend import tf_ffi

pytestmark = pytest.mark.skipif(not tf_ffi.available(), reason="no C++ compiler here")


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """An empty cache and no build started in this process."""
    monkeypatch.setenv(tf_ffi_build.CACHE_ENV_VAR, str(tmp_path))
    monkeypatch.setattr(tf_ffi_build, "_background", None)
    monkeypatch.setattr(tf_ffi_build, "_background_error", None)
    return tmp_path


def test_the_library_is_cached_per_source_flags_and_installations():
    path = tf_ffi_build.library_path()
    assert path.exists()
    assert path == tf_ffi_build.library_path()
    assert path.name.startswith("tf_ffi-") and path.suffix == ".so"


def test_a_build_is_written_whole_and_not_linked_against_tensorflow(tmp_path):
    target = tmp_path / "built.so"
    tf_ffi_build.compile_to(target)
    assert [p.name for p in tmp_path.iterdir()] == ["built.so"]
    # Linking against libtensorflow_cc (790 MB) was most of a first run's build.
    built = target.read_bytes()
    assert all(name.encode() not in built for name in tf_ffi.TENSORFLOW_LIBRARIES)


def test_without_a_compiler_the_build_names_it_and_leaves_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("CXX", "no-such-compiler")
    with pytest.raises(OSError, match="no-such-compiler"):
        tf_ffi_build.compile_to(tmp_path / "built.so")
    assert list(tmp_path.iterdir()) == []


def test_start_builds_on_a_thread_and_built_waits_for_it(fresh):
    tf_ffi_build.start()
    assert tf_ffi_build._background.is_alive()
    path = tf_ffi_build.built()
    assert path == tf_ffi_build.library_path() and path.exists()
    assert sorted(p.name for p in fresh.iterdir()) == [path.name, f"{path.name}.lock"]


@pytest.mark.parametrize("value", ["0", "off"])
def test_start_does_nothing_when_switched_off(fresh, monkeypatch, value):
    monkeypatch.setenv(tf_ffi_build.ENV_VAR, value)
    tf_ffi_build.start()
    assert tf_ffi_build._background is None
    assert list(fresh.iterdir()) == []


def test_start_does_nothing_when_the_library_is_cached(monkeypatch):
    monkeypatch.setattr(tf_ffi_build, "_background", None)
    tf_ffi_build.start()
    assert tf_ffi_build._background is None


def test_a_failed_background_build_is_raised_by_built(fresh, monkeypatch):
    monkeypatch.setenv("CXX", "false")  # a compiler that fails
    tf_ffi_build.start()
    with pytest.raises(subprocess.CalledProcessError):
        tf_ffi_build.built()
    assert not tf_ffi_build.library_path().exists()
