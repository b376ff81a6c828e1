"""Builds `tf_ffi.cc` into a shared library once per installation, early.

The library `tf_ffi` loads is compiled with `$CXX` or `g++` (about 2.5 s)
into `$KTE_TF_FFI_CACHE` (default `~/.cache/keras_tpu_estimator`), once
per source, flags and installation of TensorFlow and jaxlib, written whole
under a lock. `start()`, called as `keras_tpu_estimator` is imported,
begins that build on a thread of its own where the library is not cached
yet: the compiler runs on one core while Python imports Keras and
TensorFlow (about 3 s) on the other, so a machine's first run does not wait
for it. `built()` waits for that build, or builds.

Nothing here imports TensorFlow or jaxlib: the packages are found on disk.

```python
tf_ffi_build.start()           # at import: returns at once
path = tf_ffi_build.built()    # at first use: the library's path
```
"""

import hashlib
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading

from keras_tpu_estimator._backend import switches

ENV_VAR = "KTE_TF_FFI"
CACHE_ENV_VAR = "KTE_TF_FFI_CACHE"
SOURCE = pathlib.Path(__file__).with_name("tf_ffi.cc")
# Not linked against TensorFlow's libraries: linking against the 790 MB
# libtensorflow_cc took 10 s of a 13 s build. `tf_ffi` binds their symbols
# when it opens the library in a process that has imported TensorFlow.
# -O1: a call cost the same at -O0 to -O2 (TensorFlow's eager op is most of
# it); it compiles in 2.4 s, at -O2 in 2.9 s.
FLAGS = ("-std=c++17", "-O1", "-shared", "-fPIC", "-w")

_background = None  # The thread of `start()`'s build, and its error, if any.
_background_error = None


def package_dir(name):
    """The directory of the installed package `name`, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise OSError(f"{name} is not installed: {SOURCE.name} is built against it")
    return pathlib.Path(spec.submodule_search_locations[0])


def _installation(name, file):
    path = package_dir(name) / file
    stat = path.stat()
    return f"{path} {stat.st_size} {stat.st_mtime_ns}"


def library_path():
    """Where the library for this source, these flags and these installations lives.

    Raises:
        OSError: if TensorFlow or jaxlib is not installed.
    """
    key = hashlib.sha256(SOURCE.read_bytes())
    key.update(f"{FLAGS} {sys.platform}".encode())
    key.update(_installation("tensorflow", "libtensorflow_framework.so.2").encode())
    key.update(_installation("jaxlib", "version.py").encode())
    cache = os.environ.get(CACHE_ENV_VAR) or pathlib.Path.home() / ".cache" / "keras_tpu_estimator"
    return pathlib.Path(cache) / f"tf_ffi-{key.hexdigest()[:16]}.so"


def compile_to(target):
    """Compiles `SOURCE` into `target`, written whole (a temporary file renamed).

    Raises:
        OSError: without a compiler.
        subprocess.CalledProcessError: if the compiler fails (its `stderr`
            says why).
    """
    compiler = os.environ.get("CXX") or "g++"
    if shutil.which(compiler) is None:
        raise OSError(f"no C++ compiler ({compiler!r}) to build {SOURCE.name}")
    includes = [f"-I{package_dir('jaxlib') / 'include'}",
                f"-I{package_dir('tensorflow') / 'include'}"]
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".so", delete=False) as f:
        partial = pathlib.Path(f.name)
    try:
        subprocess.run([compiler, *FLAGS, str(SOURCE), *includes, "-o", str(partial)],
                       check=True, capture_output=True, text=True)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def _build(path):
    import filelock  # noqa: PLC0415

    with filelock.FileLock(f"{path}.lock"):
        if not path.exists():
            compile_to(path)
    return path


def _build_in_background(path):
    global _background_error
    try:
        _build(path)
    except (OSError, subprocess.CalledProcessError) as error:
        _background_error = error


def start():
    """Starts building the library on a thread, where it is switched on and not cached.

    Returns at once. The thread is not a daemon: a process that ends
    sooner waits for the build, so no compiler is left writing.
    """
    global _background
    if _background is not None or switches.is_off(ENV_VAR):
        return
    try:
        path = library_path()
    except OSError:
        return  # `built()` says why, if the library is ever needed (as for no compiler).
    if path.exists():
        return
    _background = threading.Thread(target=_build_in_background, args=(path,),
                                   name="tf_ffi build")
    _background.start()


def built():
    """The path of the built library: waits for `start()`'s build, or builds.

    Returns:
        The library's path (`library_path()`).

    Raises:
        OSError: without a compiler, or without TensorFlow or jaxlib.
        subprocess.CalledProcessError: if the compiler fails.
    """
    if _background is not None:
        _background.join()
        if _background_error is not None:
            raise _background_error
    return _build(library_path())
