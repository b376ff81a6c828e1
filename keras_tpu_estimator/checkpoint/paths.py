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

A trainer in another process saves new checkpoints and deletes the oldest
(`keep_checkpoint_max`) at any moment. Listing reads the state file again
when a checkpoint it lists vanishes, and `read_latest` reads the newest again
when the one chosen is deleted before or while it is read: an evaluator
never fails because a trainer garbage-collects its checkpoints.
"""

import os
import re

from keras_tpu_estimator.checkpoint import tf_files
from keras_tpu_estimator.checkpoint.common import check_step
from keras_tpu_estimator.checkpoint.common import directory_string
from keras_tpu_estimator.checkpoint.common import join
from keras_tpu_estimator.checkpoint.common import logger

TF_STYLE_PREFIX = "model.ckpt"
_TF_STYLE = re.compile(r"^model\.ckpt-(\d+)$")

# How many times a listing or a read starts again while a trainer saves and
# deletes checkpoints. Each new start follows a new save of the trainer, so
# this bounds nothing in practice; it only keeps a broken file system from
# looping forever.
ATTEMPTS = 100


def listed_checkpoints(directory):
    """The complete checkpoints the state file of `directory` lists, oldest first.

    Args:
        directory: a directory, as a string; a missing one holds none.

    Returns:
        A list of absolute checkpoint prefixes (the latest last).
    """
    if "://" not in directory and not os.path.isdir(directory):
        return []
    listed = tf_files.read_state(directory)
    for _ in range(ATTEMPTS):
        present = [prefix for prefix in listed if tf_files.exists(prefix)]
        if len(present) == len(listed):
            return present
        # A trainer writes the state file, then deletes the checkpoints it no
        # longer lists: those read here may all be gone, the new ones listed
        # in a newer state file. Unchanged, the files were removed by a program.
        again = tf_files.read_state(directory)
        if again == listed:
            return present
        listed = again
    return present


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


def read_newest(choose, read):
    """Returns `read(choose())`, choosing again when the chosen checkpoint is deleted meanwhile.

    A trainer in another process deletes old checkpoints (`keep_checkpoint_max`):
    the checkpoint `choose` returns may vanish before or while `read` reads
    it. Then `choose` is called again (it returns the newest checkpoint left)
    and that one is read. An error while the chosen checkpoint is still there
    is raised: it is not a deletion.

    Args:
        choose: a function returning a checkpoint prefix (or raising when
            there is none).
        read: a function of a prefix, reading that checkpoint.

    Returns:
        What `read` returns.

    Example:

    ```python
    read_newest(lambda: checkpoint_prefix("runs/mnist"),
                lambda prefix: TensorFlowReader(prefix).read("global_step"))
    ```
    """
    for attempt in range(ATTEMPTS):
        prefix = choose()
        try:
            return read(prefix)
        except Exception:
            if attempt == ATTEMPTS - 1 or tf_files.exists(prefix):
                raise  # Still there: not a concurrent deletion.
            logger.info(
                "The checkpoint %s was deleted while it was read (another process "
                "trains there and keeps only its newest); reading the newest again.", prefix,
            )


def read_latest(checkpoint_path, read, argument="checkpoint_path"):
    """Returns `read(prefix)` for the checkpoint `checkpoint_path` names.

    A `model_dir` names its latest checkpoint, read again from the newest
    when a trainer deletes it meanwhile (see `read_newest`); a prefix names
    itself and is read once.

    Args:
        checkpoint_path: a checkpoint prefix or a `model_dir` (see
            `checkpoint_prefix`).
        read: a function of a prefix, reading that checkpoint.
        argument: the argument name used in error messages.

    Returns:
        What `read` returns.

    Raises:
        ValueError: if `checkpoint_path` names no complete checkpoint.

    Example:

    ```python
    read_latest("runs/mnist", lambda prefix: TensorFlowReader(prefix).names())
    ```
    """
    named = directory_string(checkpoint_path, argument).rstrip("/")
    chosen = [checkpoint_prefix(checkpoint_path, argument)]
    if chosen[0] == named:
        return read(chosen[0])
    return read_newest(lambda: chosen.pop() if chosen else checkpoint_prefix(checkpoint_path, argument),
                       read)


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
