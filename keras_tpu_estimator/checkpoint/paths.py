"""The layout of a `model_dir`, as TensorFlow writes it: checkpoint prefixes and the state file.

```
model_dir/
    checkpoint                           # lists the checkpoints, the latest last
    model.ckpt-100.index                 # a complete checkpoint of step 100
    model.ckpt-100.data-00000-of-00001
    model.ckpt-100.meta
    model.ckpt-200_temp/                 # a save in progress (or killed)
```

A checkpoint is named by its prefix (`model_dir/model.ckpt-200`), as in
TensorFlow: `tf.train.latest_checkpoint`, `tf.train.load_checkpoint` and TF1
program code (`int(path.split("-")[-1])`, globs of `*.index`) read it. The
checkpoints of a `model_dir` are those its state file lists whose files are
there (a program may delete or rename them, as ALBERT does). Everything here
reads only: no collective, nothing created.
"""

import os
import re

from keras_tpu_estimator.checkpoint import tf_files
from keras_tpu_estimator.checkpoint.common import check_step
from keras_tpu_estimator.checkpoint.common import directory_string
from keras_tpu_estimator.checkpoint.common import join

TF_STYLE_PREFIX = "model.ckpt"
_TF_STYLE = re.compile(r"^model\.ckpt-(\d+)$")


def listed_checkpoints(directory):
    """The complete checkpoints the state file of `directory` lists, oldest first.

    Args:
        directory: a directory, as a string; a missing one holds none.

    Returns:
        A list of absolute checkpoint prefixes (the latest last).
    """
    if "://" not in directory and not os.path.isdir(directory):
        return []
    return [prefix for prefix in tf_files.read_state(directory) if tf_files.exists(prefix)]


def finished_steps(directory):
    """The steps of the complete checkpoints `model.ckpt-<step>` of `directory`, ascending.

    Args:
        directory: a directory, as a string; a missing one holds none.

    Returns:
        A list of ints.

    Example:

    ```python
    finished_steps("/abs/runs/mnist")   # [0, 100, 200]
    ```
    """
    parent = directory.rstrip("/")
    steps = set()
    for prefix in listed_checkpoints(directory):
        step = tf_style_step(prefix)
        if step is not None and os.path.dirname(prefix) == parent:
            steps.add(step)
    return sorted(steps)


def latest_checkpoint(model_dir):
    """Returns the prefix of the newest complete checkpoint in `model_dir`, or None.

    As `tf.train.latest_checkpoint`, but a checkpoint whose files were
    removed is skipped for the newest one left. Nothing is created.

    Args:
        model_dir: a directory of checkpoints.

    Returns:
        A string (`model_dir/model.ckpt-<step>`), or None when there is none
        or `model_dir` does not exist.

    Example:

    ```python
    path = latest_checkpoint("runs/mnist")   # "/abs/runs/mnist/model.ckpt-1000"
    ```
    """
    listed = listed_checkpoints(directory_string(model_dir, "model_dir"))
    return listed[-1] if listed else None


def tf_style_step(path):
    """The step of a TensorFlow-style checkpoint name (`.../model.ckpt-<step>`), or None.

    Example:

    ```python
    tf_style_step("runs/mnist/model.ckpt-1000")   # 1000
    tf_style_step("runs/mnist/model.ckpt-best")   # None
    ```
    """
    match = _TF_STYLE.match(os.path.basename(path.rstrip("/")))
    return int(match.group(1)) if match else None


def tf_style_path(model_dir, step):
    """The prefix of the checkpoint of `step`: `model_dir/model.ckpt-<step>`.

    Args:
        model_dir: the directory of the checkpoints.
        step: the step, an int >= 0.

    Returns:
        A string.

    Raises:
        ValueError: for an empty `model_dir` or a negative `step`.

    Example:

    ```python
    tf_style_path("runs/mnist", 1000)   # "/abs/runs/mnist/model.ckpt-1000"
    ```
    """
    return join(directory_string(model_dir, "model_dir"), f"{TF_STYLE_PREFIX}-{check_step(step)}")


def checkpoint_prefix(checkpoint_path, argument="checkpoint_path"):
    """The complete checkpoint `checkpoint_path` names: its prefix.

    Args:
        checkpoint_path: a checkpoint prefix (`model_dir/model.ckpt-1000`,
            `model_dir/model.ckpt-best`: any name with its `.index` file
            beside it), or a `model_dir` (its latest checkpoint).
        argument: the argument name used in error messages.

    Returns:
        A string.

    Raises:
        ValueError: if `checkpoint_path` names no complete checkpoint (the
            message lists the checkpoints its directory holds).

    Example:

    ```python
    checkpoint_prefix("runs/mnist")   # "/abs/runs/mnist/model.ckpt-1000"
    ```
    """
    path = directory_string(checkpoint_path, argument).rstrip("/")
    if tf_files.exists(path):
        return path
    if "://" in path or os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is not None:
            return latest
    directory = os.path.dirname(path)
    found = ""
    listed = listed_checkpoints(directory)
    if listed:
        found = f" ({directory} holds the checkpoints {[os.path.basename(p) for p in listed]})"
    raise ValueError(
        f"No checkpoint found at {path}. "
        f"Argument `{argument}` must name a complete checkpoint: a prefix "
        f"`<model_dir>/{TF_STYLE_PREFIX}-<step>` (with its `.index` file) or a "
        f"model_dir holding checkpoints. Received: {argument}={checkpoint_path!r}{found}"
    )


def checkpoint_step(checkpoint_path, argument="checkpoint_path"):
    """The `(model_dir, step)` of a checkpoint named `model_dir/model.ckpt-<step>`.

    Args:
        checkpoint_path: the checkpoint's prefix (as `latest_checkpoint`
            returns it).
        argument: the argument name used in error messages.

    Returns:
        A pair `(model_dir, step)`: the directory of the checkpoint (a
        string) and the step (an int).

    Raises:
        ValueError: if `checkpoint_path` names no complete checkpoint, or
            one whose name holds no step.

    Example:

    ```python
    checkpoint_step("runs/mnist/model.ckpt-1000")   # ("/abs/runs/mnist", 1000)
    ```
    """
    prefix = checkpoint_prefix(checkpoint_path, argument)
    step = tf_style_step(prefix)
    if step is None:
        raise ValueError(
            f"Argument `{argument}` must name a checkpoint `<model_dir>/"
            f"{TF_STYLE_PREFIX}-<step>`. Received: {argument}={checkpoint_path!r}"
        )
    return os.path.dirname(prefix), step
