"""The layout of a `model_dir`: one directory per step, and TensorFlow-style names.

```
model_dir/
    100/          # complete checkpoint of step 100
    200/
    300.orbax-checkpoint-tmp-1712345678/   # a save in progress (or killed)
```

A checkpoint is named by its directory (`model_dir/200`) or by the name
TensorFlow programs parse steps from (`model_dir/model.ckpt-200`). Everything
here reads the directory only: no collective, nothing created.
"""

import os
import re

import orbax.checkpoint as ocp
from etils import epath

from keras_tpu_estimator.checkpoint.common import check_step
from keras_tpu_estimator.checkpoint.common import directory_string
from keras_tpu_estimator.checkpoint.common import join

TF_STYLE_PREFIX = "model.ckpt"
_TF_STYLE = re.compile(r"^model\.ckpt-(\d+)$")


def finished_steps(directory):
    """The steps of the complete orbax checkpoints in `directory`, ascending.

    Only directories named by a step number count (as `CheckpointDirectory`
    writes them): `eval_1` or `export` beside them are not checkpoints, and
    unfinished (temporary) saves are ignored.

    Args:
        directory: a directory, as a string; a missing one holds none.

    Returns:
        A list of ints.

    Example:

    ```python
    finished_steps("/abs/runs/mnist")   # [0, 100, 200]
    ```
    """
    root = epath.Path(directory)
    if not root.is_dir():
        return []
    return sorted(
        int(child.name)
        for child in root.iterdir()
        if child.name.isdigit()
        and child.is_dir()
        and ocp.path.step.is_path_finalized(child)
    )


def latest_checkpoint(model_dir):
    """Returns the path of the newest complete checkpoint in `model_dir`, or None.

    Unfinished (temporary) checkpoints are ignored. Reads the directory only:
    no collective, no directory created.

    Args:
        model_dir: a directory written by `CheckpointDirectory`.

    Returns:
        A string (the checkpoint's directory), or None when there is none or
        `model_dir` does not exist.

    Example:

    ```python
    path = latest_checkpoint("runs/mnist")   # "runs/mnist/1000"
    ```
    """
    model_dir = directory_string(model_dir, "model_dir")
    if not epath.Path(model_dir).is_dir():
        return None
    steps = finished_steps(model_dir)
    return join(model_dir, str(steps[-1])) if steps else None


def tf_style_step(path):
    """The step of a TensorFlow-style checkpoint name (`.../model.ckpt-<step>`), or None.

    Example:

    ```python
    tf_style_step("runs/mnist/model.ckpt-1000")   # 1000
    tf_style_step("runs/mnist/1000")              # None
    ```
    """
    match = _TF_STYLE.match(os.path.basename(path.rstrip("/")))
    return int(match.group(1)) if match else None


def tf_style_path(model_dir, step):
    """The TensorFlow-style name of the checkpoint of `step`: `model_dir/model.ckpt-<step>`.

    TF1 programs parse the step from such names
    (`int(os.path.basename(path).split("-")[1])`); every function of
    `kte.checkpoint` that takes a checkpoint path accepts them for this
    library's checkpoints.

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


def checkpoint_step(checkpoint_path, argument="checkpoint_path"):
    """The `(model_dir, step)` of a checkpoint of this library named by `checkpoint_path`.

    Reads the directory only: nothing is created.

    Args:
        checkpoint_path: the checkpoint's directory (`model_dir/<step>`, as
            `latest_checkpoint` returns it) or its TensorFlow-style name
            (`model_dir/model.ckpt-<step>`, as
            `compat.v1.train.latest_checkpoint` returns it).
        argument: the argument name used in error messages.

    Returns:
        A pair `(model_dir, step)`: the directory of the checkpoints (a
        string) and the step (an int).

    Raises:
        ValueError: if `checkpoint_path` names no complete checkpoint of
            this library (the message lists the steps there are).

    Example:

    ```python
    checkpoint_step("runs/mnist/model.ckpt-1000")   # ("/abs/runs/mnist", 1000)
    checkpoint_step("runs/mnist/1000")              # the same
    ```
    """
    path = directory_string(checkpoint_path, argument).rstrip("/")
    base = os.path.basename(path)
    step = int(base) if base.isdigit() else tf_style_step(path)
    directory = os.path.dirname(path)
    steps = finished_steps(directory) if step is not None else []
    if step is None or step not in steps:
        found = ""
        if step is not None:
            found = f" ({directory} holds the checkpoints of steps {steps})"
        raise ValueError(
            f"Argument `{argument}` must name a complete checkpoint of this "
            f"library: `<model_dir>/<step>` or `<model_dir>/{TF_STYLE_PREFIX}-<step>`. "
            f"Received: {argument}={checkpoint_path!r}{found}"
        )
    return directory, step
