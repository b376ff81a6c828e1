"""Writing SavedModel directories: timestamped exports and `EstimatorModel.export`.

Every export is written under a temporary name and renamed once complete
(`export_saved_model`: `<base>/.temp-<timestamp>-<pid>` to
`<base>/<timestamp>`; `write_saved_model`: beside the target, replacing it),
so a reader never sees half an export. A killed export's temporary directory
is hidden, and removed by the next export into the same base. `assets_extra` files are copied into `assets.extra/`.
"""

import contextlib
import os
import shutil
import time

import filelock

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator._backend import lowering
from keras_tpu_estimator import distribute
from keras_tpu_estimator.export import compatibility
from keras_tpu_estimator.export.receivers import build_raw_serving_input_receiver_fn
from keras_tpu_estimator.export.signatures import build_archive
from keras_tpu_estimator.export.signatures import set_method_names
from keras_tpu_estimator.spec import describe as _describe
from keras_tpu_estimator.log_lines import logger as _log


_ASSETS_EXTRA = "assets.extra"
# An export in progress: `<base>/.temp-<timestamp>-<pid>`, and its lock file.
_TEMP_PREFIX = ".temp-"
_LOCK_SUFFIX = ".lock"
_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")


def export_saved_model(
    model,
    export_dir_base,
    serving_input_receiver_fn,
    assets_extra=None,
    as_text=False,
    global_step=None,
    platforms=("cpu",),
    restore=None,
):
    """Exports `model` to a new timestamped directory under `export_dir_base`.

    The SavedModel is written to `<export_dir_base>/.temp-<timestamp>-<pid>`
    and renamed to `<export_dir_base>/<timestamp>` (Unix seconds) once
    complete, so a directory with a timestamp name is always a whole export.
    The temporary directories of killed exports are removed first
    (`remove_dead_exports`).

    Args:
        model: an `EstimatorModel` with the weights to export.
        export_dir_base: the directory the timestamped export goes in
            (created if missing).
        serving_input_receiver_fn: a function of no arguments returning a
            `ServingInputReceiver` or `TensorServingInputReceiver`.
        assets_extra: a dict of destination path (relative to
            `assets.extra/` in the export) to source file path.
        as_text: write `saved_model.pbtxt` instead of `saved_model.pb`.
        global_step: the step saved as the `global_step` variable; defaults
            to `model.global_step`.
        platforms: the platforms the serving program is compiled for, any of
            `"cpu"`, `"cuda"`, `"rocm"`, `"tpu"`.
        restore: optional function called once `model_fn`'s PREDICT layers
            exist, to load the weights to export; returns their global step.

    Returns:
        The export directory, as bytes (as TensorFlow's estimators return it).

    Raises:
        ValueError: for invalid arguments (before anything is written), a
            receiver function that does not return a receiver, features JAX
            cannot take, or a program that cannot be compiled for a platform.

    Example:

    ```python
    path = export_saved_model(model, "exports", receiver_fn)  # b"exports/1700000000"
    ```
    """
    export_dir_base = _directory(export_dir_base, "export_dir_base")
    assets_extra = _check_assets_extra(assets_extra)
    os.makedirs(export_dir_base, exist_ok=True)
    remove_dead_exports(export_dir_base)
    # With several processes, each writes and process 0's copy becomes the export.
    export_dir = distribute.first_process_value(_timestamped_dir(export_dir_base))
    temp_dir = os.path.join(
        export_dir_base, f"{_TEMP_PREFIX}{os.path.basename(export_dir)}-{os.getpid()}"
    )
    # Held while writing: the OS releases it if this process is killed, which
    # tells the next export that the temporary directory is dead.
    lock = filelock.FileLock(temp_dir + _LOCK_SUFFIX, timeout=0)
    try:
        with lock:
            _write(model, temp_dir, serving_input_receiver_fn, assets_extra, as_text,
                   global_step, platforms, verbose=False, restore=restore)
            if distribute.is_first_process():
                os.rename(temp_dir, export_dir)
            else:
                shutil.rmtree(temp_dir)
    finally:
        _remove_file(temp_dir + _LOCK_SUFFIX)
    distribute.wait_for_every_process("export_saved_model")
    _log.info("SavedModel written to: %s", export_dir)
    return os.fsencode(export_dir)


def remove_dead_exports(export_dir_base):
    """Removes the temporary directories of killed exports from `export_dir_base`.

    An export writes `<base>/.temp-<timestamp>-<pid>` (hidden, and not a
    number: TensorFlow Serving and `ls` skip it) while holding an OS file
    lock beside it. One whose lock is free belongs to a process that died:
    it is removed. Ones being written are left alone.

    Args:
        export_dir_base: an export directory base.

    Returns:
        The paths removed, a list.
    """
    removed = []
    for name in sorted(os.listdir(export_dir_base)):
        if not name.startswith(_TEMP_PREFIX) or name.endswith(_LOCK_SUFFIX):
            continue
        path = os.path.join(export_dir_base, name)
        lock = filelock.FileLock(path + _LOCK_SUFFIX, timeout=0)
        try:
            with lock:
                shutil.rmtree(path, ignore_errors=True)
        except filelock.Timeout:
            continue  # Another process is writing it.
        _remove_file(path + _LOCK_SUFFIX)
        _log.info("Removed the temporary directory of a killed export: %s", path)
        removed.append(path)
    return removed


def _remove_file(path):
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def write_saved_model(
    model,
    export_dir,
    serving_input_receiver_fn,
    assets_extra=None,
    as_text=False,
    global_step=None,
    platforms=("cpu",),
    verbose=False,
):
    """Exports `model` to exactly `export_dir`, replacing what is there.

    Written beside it under a temporary name first and renamed at the end, so
    `export_dir` holds either the previous export or the whole new one.

    Args:
        model: an `EstimatorModel`.
        export_dir: the SavedModel directory.
        serving_input_receiver_fn: see `export_saved_model`.
        assets_extra: see `export_saved_model`.
        as_text: see `export_saved_model`.
        global_step: see `export_saved_model`.
        platforms: see `export_saved_model`.
        verbose: print the signatures written.

    Raises:
        ValueError: see `export_saved_model`.

    Example:

    ```python
    write_saved_model(model, "serving/model", receiver_fn)
    ```
    """
    export_dir = _directory(export_dir, "filepath")
    assets_extra = _check_assets_extra(assets_extra)
    parent = os.path.dirname(os.path.abspath(export_dir))
    os.makedirs(parent, exist_ok=True)
    temp_dir = f"{os.path.abspath(export_dir)}.temp-{os.getpid()}-{time.time_ns()}"
    _write(model, temp_dir, serving_input_receiver_fn, assets_extra, as_text, global_step,
           platforms, verbose)
    old = None
    if os.path.exists(export_dir):
        old = temp_dir + ".old"
        os.rename(export_dir, old)
    os.rename(temp_dir, export_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


_EXPORT_KWARGS = ("serving_input_receiver_fn", "assets_extra", "as_text", "platforms")


def export_model(model, filepath, format="tf_saved_model", verbose=None, input_signature=None,
                 **kwargs):
    """`EstimatorModel.export`: Keras's `model.export` for a `model_fn` model.

    Args:
        model: an `EstimatorModel`.
        filepath: the SavedModel directory; replaced atomically.
        format: only `"tf_saved_model"`.
        verbose: print the signatures written; None means True, as in Keras.
        input_signature: the features: a dict of name to spec, or one spec,
            optionally in a one-element list.
        **kwargs: `serving_input_receiver_fn`, `assets_extra`, `as_text`,
            `platforms`.

    Raises:
        ValueError: for another `format`, neither or both of
            `input_signature` and `serving_input_receiver_fn`, or an unknown
            keyword argument.

    Example:

    ```python
    export_model(model, "serving/model", input_signature={"x": keras.InputSpec((None, 4))})
    ```
    """
    if format != "tf_saved_model":
        raise ValueError(
            "EstimatorModel.export writes TensorFlow SavedModels only: "
            f"`format` must be 'tf_saved_model'. Received: format={format!r}"
        )
    unknown = sorted(set(kwargs) - set(_EXPORT_KWARGS))
    if unknown:
        raise ValueError(
            f"EstimatorModel.export got unexpected keyword arguments {unknown}; "
            f"it takes {list(_EXPORT_KWARGS)}."
        )
    receiver_fn = kwargs.pop("serving_input_receiver_fn", None)
    if (receiver_fn is None) == (input_signature is None):
        raise ValueError(
            "EstimatorModel.export needs exactly one of `input_signature` (the "
            "features' specs) and `serving_input_receiver_fn`. Received: "
            f"input_signature={_describe(input_signature)}, "
            f"serving_input_receiver_fn={_describe(receiver_fn)}"
        )
    if receiver_fn is None:
        if isinstance(input_signature, (list, tuple)):
            if len(input_signature) != 1:
                raise ValueError(
                    "`input_signature` describes the one `features` argument of "
                    "model_fn: a dict of specs, one spec, or a list of one of "
                    f"these. Received: input_signature={_describe(input_signature)}"
                )
            input_signature = input_signature[0]
        receiver_fn = build_raw_serving_input_receiver_fn(input_signature)
    write_saved_model(
        model, filepath, receiver_fn, verbose=True if verbose is None else bool(verbose),
        **kwargs,
    )


def _directory(path, argument):
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ValueError(
            f"Argument `{argument}` must be a directory path (str, bytes or "
            f"os.PathLike). Received: {argument}={_describe(path)}"
        )
    return os.fspath(path)


def _check_assets_extra(assets_extra):
    if assets_extra is None:
        return {}
    if not isinstance(assets_extra, dict):
        raise ValueError(
            "Argument `assets_extra` must be None or a dict of destination "
            "path (relative to assets.extra/) to source file path. Received: "
            f"assets_extra={_describe(assets_extra)}"
        )
    for destination, source in assets_extra.items():
        parts = os.path.normpath(str(destination)).split(os.sep)
        if not isinstance(destination, str) or os.path.isabs(destination) or ".." in parts:
            raise ValueError(
                "The keys of `assets_extra` must be relative paths inside "
                f"assets.extra/. Received: {destination!r}"
            )
        if not os.path.isfile(os.fspath(source)):
            raise ValueError(
                f"`assets_extra[{destination!r}]` must be an existing file. "
                f"Received: {source!r}"
            )
    return dict(assets_extra)


def _timestamped_dir(export_dir_base):
    """`<base>/<unix seconds>`, a name neither taken nor being written."""
    while True:
        name = str(int(time.time()))
        path = os.path.join(export_dir_base, name)
        temp_prefix = f"{_TEMP_PREFIX}{name}-"
        if not os.path.exists(path) and not any(
            entry.startswith(temp_prefix) for entry in os.listdir(export_dir_base)
        ):
            return path
        time.sleep(1)


def _write(model, directory, serving_input_receiver_fn, assets_extra, as_text, global_step,
           platforms, verbose, restore=None):
    """Writes the SavedModel to `directory`; removes it on any error."""
    platforms = _check_platforms(platforms)
    if not callable(serving_input_receiver_fn):
        raise ValueError(
            "Argument `serving_input_receiver_fn` must be a function returning a "
            "kte.export.ServingInputReceiver. Received: "
            f"serving_input_receiver_fn={_describe(serving_input_receiver_fn)}"
        )
    try:
        # jax2tf serializes no host callbacks: XLA's own convolutions in the export.
        with compatibility.calling_convention(), lowering.xla_only():
            archive, method_names = build_archive(
                model, serving_input_receiver_fn, global_step, platforms, restore
            )
            archive.write_out(directory, verbose=verbose)
        _finish(directory, method_names)
        if as_text:
            _to_text(directory)
        for destination, source in assets_extra.items():
            target = os.path.join(directory, _ASSETS_EXTRA, destination)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(os.fspath(source), target)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise


def _finish(directory, method_names):
    """What `tf.saved_model.save` cannot write: method names, older TensorFlow.

    Sets the TensorFlow Serving method names of the signatures and makes the
    serving programs loadable by the oldest TensorFlow that can run them
    (`compatibility.make_loadable`), then writes the fingerprint again.
    """
    path = os.path.join(directory, "saved_model.pb")
    proto = _keras_internals.saved_model_proto()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    set_method_names(proto, method_names)
    oldest = compatibility.make_loadable(proto)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())
    _keras_internals.write_saved_model_fingerprint(directory)
    if oldest is not None:
        _log.info("The export loads in TensorFlow (and TensorFlow Serving) %s or later.", oldest)


def _check_platforms(platforms):
    platforms = tuple(platforms) if isinstance(platforms, (list, tuple)) else (platforms,)
    if not platforms or any(p not in _PLATFORMS for p in platforms):
        raise ValueError(
            f"Argument `platforms` must be a non-empty list of {list(_PLATFORMS)}. "
            f"Received: platforms={platforms!r}"
        )
    return platforms


def _to_text(directory):
    """Replaces `saved_model.pb` by the same proto as `saved_model.pbtxt`."""
    from google.protobuf import text_format

    binary = os.path.join(directory, "saved_model.pb")
    proto = _keras_internals.saved_model_proto()
    with open(binary, "rb") as f:
        proto.ParseFromString(f.read())
    with open(os.path.join(directory, "saved_model.pbtxt"), "w") as f:
        f.write(text_format.MessageToString(proto))
    os.remove(binary)
