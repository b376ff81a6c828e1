"""`TrainerLock`: one training process per `model_dir`.

Two trainers writing one `model_dir` would overwrite each other's
checkpoints. `TPUEstimator.train` holds an OS file lock (`flock`, through the
`filelock` library) on `model_dir/.trainer.lock` while it trains: a second
trainer is refused at its start. The operating system releases the lock when
its process ends, killed or not, so no stale lock is ever left to remove.
Evaluators and exporters do not take it: they read while a trainer writes.
Taking it removes the half-written saves (`model.ckpt-<step>_temp/`) of a
trainer that was killed while saving.

```python
with kte.checkpoint.TrainerLock("runs/mnist"):
    ...   # the only process training into runs/mnist
```
"""

import os
import re
import shutil

import filelock
import jax

from keras_tpu_estimator.checkpoint.common import directory_string
from keras_tpu_estimator.checkpoint.common import join

LOCK_FILE = ".trainer.lock"
_UNFINISHED = re.compile(r"^model\.ckpt-\d+_temp$|^\.checkpoint\.tmp-")  # Saves not finished.


class ModelDirInUseError(RuntimeError):
    """Raised when another process is training into the same `model_dir`."""


class TrainerLock:
    """The lock of the process training into a `model_dir`.

    With several processes (`jax.distributed`) only process 0 takes it: the
    processes of one run train together. A `gs://` (or other URL) model_dir
    has no file lock: there the lock does nothing.

    Args:
        model_dir: the directory trained into (created if missing).

    Raises:
        ValueError: for an empty `model_dir`.

    Example:

    ```python
    lock = TrainerLock("runs/mnist")
    lock.acquire()    # ModelDirInUseError if another process trains there
    ...
    lock.release()
    ```
    """

    def __init__(self, model_dir):
        self._directory = directory_string(model_dir, "model_dir")
        self._path = join(self._directory, LOCK_FILE)
        local = "://" not in self._directory
        self._lock = filelock.FileLock(self._path, timeout=0) if local else None

    @property
    def path(self):
        """The lock file, a string."""
        return self._path

    def acquire(self):
        """Takes the lock, or fails at once.

        Returns:
            self.

        Raises:
            ModelDirInUseError: if another process (or another estimator of
                this one) is training into `model_dir`.
        """
        if self._lock is None or jax.process_index() != 0:
            return self
        os.makedirs(self._directory, exist_ok=True)
        try:
            self._lock.acquire()
        except filelock.Timeout:
            raise ModelDirInUseError(
                f"The model_dir {self._directory} is being trained by another "
                f"process (it holds the lock {self._path}). Two trainers of one "
                "model_dir overwrite each other's checkpoints: wait until it "
                "ends, or train into another model_dir. (Evaluating and "
                "exporting while it trains are fine.)"
            ) from None
        _remove_unfinished_saves(self._directory)
        return self

    def release(self):
        """Releases the lock (nothing happens if it is not held)."""
        if self._lock is not None and self._lock.is_locked:
            self._lock.release()

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc_info):
        self.release()

    def __repr__(self):
        return f"TrainerLock({self._directory!r})"


def _remove_unfinished_saves(directory):
    """Removes the checkpoints a killed trainer left half-written.

    Only the lock's holder writes checkpoints, so once it holds the lock
    every unfinished save belongs to a process that is gone.
    """
    for name in os.listdir(directory):
        if _UNFINISHED.match(name):
            path = os.path.join(directory, name)
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.remove(path)
