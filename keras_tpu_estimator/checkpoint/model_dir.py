"""`ModelDirCheckpoints`: an estimator's `model_dir`, and which checkpoint each of its models holds.

An estimator's every call starts from a checkpoint (the latest, or the one
given) and training writes new ones. Restoring is skipped when a model
already holds the checkpoint, unchanged since; and when checkpoints are
disabled, training continues from the weights it left in memory.

```python
checkpoints = kte.checkpoint.ModelDirCheckpoints("runs/mnist", max_to_keep=5)
checkpoints.load(model)   # the latest checkpoint's step, or None
checkpoints.load(model)   # the same step, nothing read again
```
"""

import functools
import os

from keras_tpu_estimator.checkpoint import tf_files
from keras_tpu_estimator.checkpoint.directory import CheckpointDirectory
from keras_tpu_estimator.checkpoint.model_state import load_checkpoint
from keras_tpu_estimator.checkpoint.paths import latest_checkpoint
from keras_tpu_estimator.checkpoint.paths import read_latest
from keras_tpu_estimator.checkpoint.paths import tf_style_path
from keras_tpu_estimator.checkpoint.saver import CheckpointSaver


class ModelDirCheckpoints:
    """The checkpoints of a `model_dir`, and the checkpoint each model holds.

    Models are told apart by identity: the same `EstimatorModel` object
    keeps its record until `forget` (its weights changed without a
    checkpoint) or a newer load.

    Args:
        model_dir: the directory of the checkpoints (created if missing).
        max_to_keep: how many of the newest checkpoints to keep; `None` or
            0 keeps all.

    Raises:
        ValueError: for an empty `model_dir` or an invalid `max_to_keep`.

    Example:

    ```python
    checkpoints = ModelDirCheckpoints("runs/mnist")
    start, from_memory = checkpoints.training_start(model)
    model.fit(..., callbacks=[checkpoints.saver(model, save_steps=100)])
    checkpoints.training_ended(model)
    checkpoints.load(other_model, "runs/mnist/model.ckpt-best")
    ```
    """

    def __init__(self, model_dir, max_to_keep=5):
        self._directory = CheckpointDirectory(model_dir, max_to_keep=max_to_keep)
        # id(model) -> (prefix, index signature, step) of the checkpoint it
        # holds, unchanged since.
        self._loaded = {}
        # id(model) -> the step of trained weights no checkpoint holds (when
        # checkpoints are disabled): training continues from them.
        self._unsaved = {}

    @property
    def directory(self):
        """The `CheckpointDirectory` of `model_dir`."""
        return self._directory

    def latest_checkpoint(self):
        """The path of the newest complete checkpoint, or None."""
        return self._directory.latest_checkpoint()

    def load(self, model, checkpoint_path=None):
        """Makes `model` hold the checkpoint `checkpoint_path` (default: the latest).

        Nothing is read when the model already holds that checkpoint (the
        same prefix, its `.index` unchanged). The latest of a `model_dir` (this
        one's, or the one `checkpoint_path` names) is read consistently while
        another process trains there: if that process deletes it
        (`keep_checkpoint_max`) before or while it is read, the newest left is
        read instead (see `read_latest`).

        Args:
            model: an `EstimatorModel`, built for the mode it will run.
            checkpoint_path: None, or a checkpoint prefix (any name with its
                `.index` file: `model.ckpt-1000`, `model.ckpt-best`, another
                `model_dir`'s, TensorFlow's) or a `model_dir` (its latest).

        Returns:
            The global step loaded, or None when `checkpoint_path` is None
            and `model_dir` holds no checkpoint.

        Raises:
            ValueError: if `checkpoint_path` names no complete checkpoint, or
                the checkpoint does not fit the model (see `load_checkpoint`).
            DamagedCheckpointError: (a ValueError) if the checkpoint's files
                cannot be read, naming it.
        """
        if checkpoint_path is None:
            if latest_checkpoint(self._directory.directory) is None:
                return None
            checkpoint_path = self._directory.directory
        return read_latest(checkpoint_path, functools.partial(self._load_or_forget, model))

    def _load_or_forget(self, model, prefix):
        """Loads `prefix`; if that fails, `model` may hold part of it: the next load reads."""
        try:
            return self._load_prefix(model, prefix)
        except BaseException:
            self.forget(model)
            raise

    def _load_prefix(self, model, prefix):
        signature = _signature(prefix)
        held = self._loaded.get(id(model))
        if held is not None and held[:2] == (prefix, signature):
            return held[2]
        step = load_checkpoint(prefix, model)
        self._loaded[id(model)] = (prefix, signature, step)
        return step

    def forget(self, model):
        """Notes that `model`'s weights may differ from any checkpoint: the next `load` reads."""
        self._loaded.pop(id(model), None)

    def saved(self, model, step):
        """Notes that `model` holds the checkpoint of `step` of `model_dir`, just saved."""
        prefix = tf_style_path(self._directory.directory, step)
        self._loaded[id(model)] = (prefix, _signature(prefix), step)

    def training_start(self, model):
        """Where training `model` continues from.

        Returns:
            `(step, from_memory)`: `from_memory` is True when `model` holds
            trained weights of `step` that no checkpoint holds, newer than
            the latest checkpoint; otherwise `step` is the latest
            checkpoint's (0 without one), which `load` gives the model.
        """
        latest = self._directory.latest_step()
        unsaved = self._unsaved.get(id(model))
        if unsaved is not None and unsaved >= (latest or 0):
            return unsaved, True
        return latest or 0, False

    def training_began(self, model):
        """Notes that `model` is training: what it held in memory is no longer kept apart."""
        self._unsaved.pop(id(model), None)

    def training_ended(self, model):
        """Notes where training left `model`: in memory only, if its step has no checkpoint."""
        if self._directory.latest_step() != model.global_step:
            self._unsaved[id(model)] = model.global_step

    def saver(self, model, save_steps=None, save_secs=None, listeners=()):
        """Returns a `CheckpointSaver` writing `model_dir` and noting what `model` holds.

        Args:
            model: the `EstimatorModel` that will train with the callback.
            save_steps: as `CheckpointSaver`'s.
            save_secs: as `CheckpointSaver`'s.
            listeners: as `CheckpointSaver`'s.

        Returns:
            A `CheckpointSaver`.
        """
        return CheckpointSaver(
            self._directory,
            save_steps=save_steps,
            save_secs=save_secs,
            listeners=listeners,
            on_saved=functools.partial(self.saved, model),
        )


def _signature(prefix):
    """What tells a checkpoint's files apart from others later given the same name.

    (A program renames checkpoints: ALBERT's `model.ckpt-best`.)
    """
    index = prefix + ".index"
    try:
        if "://" in index:
            stat = tf_files.tf().io.gfile.stat(index)
            return (stat.length, stat.mtime_nsec)
        stat = os.stat(index)
    except Exception:  # Gone: nothing held matches.
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)
