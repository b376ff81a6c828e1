"""Checkpoints of a `model_dir`: save, restore, inspect, warm-start.

A checkpoint is a flat dict `name -> array`, one directory per training step,
written by `orbax.checkpoint` (no home-made format):

```
model_dir/
    100/          # complete checkpoint of step 100
    200/
    300.orbax-checkpoint-tmp-1712345678/   # a save in progress (or killed)
```

Orbax writes every save into a temporary directory and renames it when done,
so a process killed mid-save leaves a temporary directory that is never taken
for a checkpoint: `latest_step()` and `latest_checkpoint()` only see complete
ones.

For an `EstimatorModel` the names are those TensorFlow users know:

- every variable `model_fn` created, by its scope path (`hidden/kernel`);
- `global_step`, the training step (the optimizer's iteration count);
- every optimizer variable under `optimizer/` (`optimizer/adam/iteration`,
  `optimizer/adam/hidden_kernel_momentum`, ...).

Reading goes through one small seam, `checkpoint_reader(path)`: an object
with `names()` and `read(name)`. It reads this library's checkpoints and
TensorFlow checkpoints (a `tf.compat.v1.train.Saver` or `tf.train.Checkpoint`
prefix), so `warm_start` migrates weights from a TF1 `model_dir`:

```python
manager = kte.checkpoint.CheckpointManager("runs/mnist", max_to_keep=3)
kte.checkpoint.save_model(manager, model)          # at model.global_step
kte.checkpoint.restore_model(manager, other_model)  # the latest step
kte.checkpoint.list_variables(manager.latest_checkpoint())
kte.checkpoint.warm_start(model, kte.checkpoint.WarmStartSettings(
    "tf1_run/model.ckpt-5000", vars_to_warm_start="encoder/.*"))
```
"""

import collections
import logging
import os
import re

import jax
import keras
import numpy as np
import orbax.checkpoint as ocp
from etils import epath

logger = logging.getLogger("keras_tpu_estimator")

# Orbax's layout: one item, named "default", inside each step directory.
_ITEM = "default"
_TMP_MARKER = ".orbax-checkpoint-tmp"
# A TF2 object-based checkpoint names a variable `<object path>/` + this.
_TF_VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_TF_OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"

GLOBAL_STEP = "global_step"
OPTIMIZER_PREFIX = "optimizer/"


# ----------------------------------------------------------------------
# Writing and restoring: the manager of one directory.


class CheckpointManager:
    """Checkpoints of a `model_dir`, written with `orbax.checkpoint.CheckpointManager`.

    Each checkpoint is a flat dict of named arrays saved at a step. Saving is
    synchronous and atomic: orbax writes a temporary directory and renames it
    when the save is complete, so a process killed mid-save leaves nothing
    that `latest_step()` returns or `restore()` loads. Leftover temporary
    directories are left alone (another process may be writing them) and
    ignored.

    With several processes (`jax.distributed`), create the manager and call
    `save` and `restore` on every process: they are collective.

    Args:
        directory: the directory holding the checkpoints (a `model_dir`); it
            is created if missing. Local paths and `gs://` paths work.
        max_to_keep: how many of the newest checkpoints to keep; older ones
            are deleted after each save. `None` or 0 keeps all.

    Raises:
        ValueError: for an empty `directory` or a negative or non-integer
            `max_to_keep`.

    Example:

    ```python
    manager = CheckpointManager("/tmp/run", max_to_keep=2)
    manager.save(100, {"w": np.ones((2, 2))})
    manager.latest_step()           # 100
    manager.restore()["w"]          # numpy array
    manager.close()
    ```
    """

    def __init__(self, directory, max_to_keep=5):
        self._directory = _directory_string(directory, "directory")
        if max_to_keep is not None and (
            isinstance(max_to_keep, bool)
            or not isinstance(max_to_keep, (int, np.integer))
            or max_to_keep < 0
        ):
            raise ValueError(
                "Argument `max_to_keep` must be None or an int >= 0 (0 or None "
                f"keeps all). Received: max_to_keep={max_to_keep!r}"
            )
        self.max_to_keep = int(max_to_keep) if max_to_keep else None
        options = ocp.CheckpointManagerOptions(
            max_to_keep=self.max_to_keep,
            create=True,
            enable_async_checkpointing=False,
        )
        self._manager = ocp.CheckpointManager(self._directory, options=options)

    @property
    def directory(self):
        """The checkpoint directory, a string."""
        return self._directory

    def save(self, step, values):
        """Saves `values` as the checkpoint of `step`, and waits until it is written.

        A step is written once: saving a step that already has a checkpoint
        does nothing and returns False (the checkpoint on disk is kept). A
        step older than the latest checkpoint cannot be saved, since the
        newest checkpoints are the ones kept and resumed from.

        Args:
            step: the training step, an int >= 0.
            values: a dict `name -> array` (JAX arrays, numpy arrays, Python
                scalars or `keras.Variable`s, whose current value is saved).
                Sharded JAX arrays are written by the processes that hold them.

        Returns:
            True if the checkpoint was written, False if `step` already had one.

        Raises:
            ValueError: for a negative `step`, `values` that is not a dict of
                string names, or a `step` older than the latest checkpoint.
        """
        step = _check_step(step)
        if not isinstance(values, dict) or not all(isinstance(k, str) and k for k in values):
            raise ValueError(
                "Argument `values` must be a dict of non-empty string names to "
                f"arrays. Received: values={_short_repr(values)}"
            )
        steps = self.all_steps()
        if step in steps:
            logger.info("Checkpoint of step %d already exists in %s; not saved again.",
                        step, self._directory)
            return False
        if steps and step < steps[-1]:
            raise ValueError(
                f"Cannot save step {step} in {self._directory}: it already holds "
                f"a newer checkpoint (step {steps[-1]}). Restore or delete the "
                "newer checkpoints, or save into another directory."
            )
        tree = {name: _savable(value) for name, value in values.items()}
        self._manager.save(step, args=ocp.args.PyTreeSave(tree), force=True)
        self._manager.wait_until_finished()
        logger.info("Saved checkpoint of step %d in %s.", step, self._directory)
        return True

    def all_steps(self):
        """The steps of the complete checkpoints, ascending (read from disk)."""
        self._manager.reload()
        return sorted(int(s) for s in self._manager.all_steps())

    def latest_step(self):
        """The step of the newest complete checkpoint, or None when there is none."""
        steps = self.all_steps()
        return steps[-1] if steps else None

    def path(self, step):
        """The directory of the checkpoint of `step`, a string.

        Raises:
            ValueError: if there is no checkpoint of `step`.
        """
        step = _check_step(step)
        steps = self.all_steps()
        if step not in steps:
            raise ValueError(
                f"No checkpoint of step {step} in {self._directory}. "
                f"Checkpoints: {steps}"
            )
        return _join(self._directory, str(step))

    def latest_checkpoint(self):
        """The directory of the newest complete checkpoint, or None."""
        step = self.latest_step()
        return None if step is None else _join(self._directory, str(step))

    def restore(self, step=None, targets=None):
        """Reads the checkpoint of `step`.

        Args:
            step: the step to read; None reads the latest.
            targets: None, or a dict `name -> target` naming the values to
                read and how to lay them out. A target is a `keras.Variable`
                or a JAX array (the value comes back with its shape, dtype
                and sharding: placed like the live variable), a
                `jax.ShapeDtypeStruct`, or a numpy array (a numpy array of
                its dtype comes back).

        Returns:
            A dict `name -> array`: every saved value as a numpy array
            without `targets`; exactly the names of `targets` with them.

        Raises:
            ValueError: if there is no checkpoint (naming the directory), no
                checkpoint of `step`, a target name is not in the checkpoint,
                or a target's shape differs from the saved one.

        Example:

        ```python
        values = manager.restore(targets={"w": model_variable})
        model_variable.assign(values["w"])
        ```
        """
        if step is None:
            step = self.latest_step()
            if step is None:
                raise ValueError(
                    f"No checkpoint to restore in {self._directory}: the "
                    "directory holds no complete checkpoint."
                )
        path = self.path(step)  # Checks that `step` exists.
        saved = _OrbaxReader(path).names_and_dtypes()
        if targets is None:
            restore_args = {
                name: ocp.RestoreArgs(restore_type=np.ndarray) for name in saved
            }
            args = ocp.args.PyTreeRestore(restore_args=restore_args)
        else:
            if not isinstance(targets, dict):
                raise ValueError(
                    "Argument `targets` must be None or a dict name -> "
                    f"variable or array. Received: targets={_short_repr(targets)}"
                )
            missing = sorted(set(targets) - set(saved))
            if missing:
                raise ValueError(
                    f"The checkpoint {path} has no values named {_few(missing)}. "
                    f"It holds: {_few(sorted(saved))}"
                )
            restore_args = {
                name: _restore_args(name, target, saved[name][0], path)
                for name, target in targets.items()
            }
            args = ocp.args.PyTreeRestore(
                item={name: 0 for name in targets},
                restore_args=restore_args,
                partial_restore=True,
            )
        restored = self._manager.restore(step, args=args)
        return dict(restored)

    def close(self):
        """Waits for pending work and releases the orbax manager."""
        self._manager.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __repr__(self):
        return f"CheckpointManager({self._directory!r}, max_to_keep={self.max_to_keep})"


# ----------------------------------------------------------------------
# Reading any checkpoint: the reader seam.


class CheckpointReader:
    """Reads named arrays from one checkpoint, whatever wrote it.

    `checkpoint_reader(path)` returns one; `list_variables`, `load_variable`
    and `warm_start` only use these two methods, so a new checkpoint format
    needs only a new reader.
    """

    path = None

    def names(self):
        """Returns `{name: shape}` for every value in the checkpoint."""
        raise NotImplementedError

    def read(self, name):
        """Returns the value `name` as a numpy array.

        Raises:
            ValueError: if the checkpoint has no value `name` (listing a few
                names it has).
        """
        raise NotImplementedError

    def read_many(self, names):
        """Returns `{name: numpy array}` for `names` (one read where possible)."""
        return {name: self.read(name) for name in names}

    def _unknown(self, name):
        known = sorted(self.names())
        return ValueError(
            f"The checkpoint {self.path} has no variable named {name!r}. "
            f"It has {len(known)} variables, e.g. {_few(known)}"
        )


class _OrbaxReader(CheckpointReader):
    """A checkpoint written by `CheckpointManager` (one step directory).

    Reads on this process only (no collective), so one process may inspect a
    checkpoint while others do not.
    """

    def __init__(self, path):
        self.path = path
        self._item = epath.Path(path) / _ITEM
        self._metadata = None

    def names_and_dtypes(self):
        if self._metadata is None:
            handler = ocp.PyTreeCheckpointHandler()
            try:
                tree = handler.metadata(self._item).tree
            finally:
                handler.close()
            self._metadata = {
                name: (tuple(meta.shape), np.dtype(meta.dtype)) for name, meta in tree.items()
            }
        return self._metadata

    def names(self):
        return {name: shape for name, (shape, _) in self.names_and_dtypes().items()}

    def read(self, name):
        return self.read_many([name])[name]

    def read_many(self, names):
        names = list(names)
        known = self.names()
        for name in names:
            if name not in known:
                raise self._unknown(name)
        if not names:
            return {}
        handler = ocp.PyTreeCheckpointHandler()
        try:
            restored = handler.restore(
                self._item,
                args=ocp.args.PyTreeRestore(
                    item={name: 0 for name in names},
                    restore_args={
                        name: ocp.RestoreArgs(restore_type=np.ndarray) for name in names
                    },
                    partial_restore=True,
                ),
            )
        finally:
            handler.close()
        return {name: np.asarray(restored[name]) for name in names}


class _TensorFlowReader(CheckpointReader):
    """A TensorFlow checkpoint prefix (`tf.compat.v1.train.Saver` or `tf.train.Checkpoint`).

    TF1 names (`dense/kernel`, `global_step`) are kept; a TF2 object-based
    name `w/.ATTRIBUTES/VARIABLE_VALUE` is shown as `w`.
    """

    def __init__(self, prefix):
        import tensorflow as tf  # Only for TensorFlow checkpoints.

        self.path = prefix
        self._reader = tf.train.load_checkpoint(prefix)
        self._keys = {}
        for key, shape in self._reader.get_variable_to_shape_map().items():
            if key == _TF_OBJECT_GRAPH:
                continue
            name = key[: -len(_TF_VALUE_SUFFIX)] if key.endswith(_TF_VALUE_SUFFIX) else key
            self._keys[name] = (key, tuple(shape))

    def names(self):
        return {name: shape for name, (_, shape) in self._keys.items()}

    def read(self, name):
        if name not in self._keys:
            raise self._unknown(name)
        return np.asarray(self._reader.get_tensor(self._keys[name][0]))


def checkpoint_reader(path):
    """Returns a `CheckpointReader` for the checkpoint at `path`.

    Args:
        path: one of
            - a checkpoint of this library (`manager.path(step)`,
              `latest_checkpoint(model_dir)`), or its TensorFlow-style name
              `model_dir/model.ckpt-<step>` (`tf_style_path`);
            - a directory of such checkpoints (a `model_dir`): its latest;
            - a TensorFlow checkpoint prefix (`model.ckpt-1000`, with
              `model.ckpt-1000.index` beside it);
            - a TensorFlow `model_dir` (with a `checkpoint` file): its latest.

    Returns:
        A reader with `names()` (`{name: shape}`) and `read(name)`.

    Raises:
        ValueError: if `path` holds no complete checkpoint, or is a
            temporary (unfinished) orbax directory.

    Example:

    ```python
    reader = checkpoint_reader("runs/mnist")
    reader.names()                 # {"hidden/kernel": (784, 256), ...}
    reader.read("hidden/kernel")   # numpy array
    ```
    """
    kind, resolved = _resolve(path)
    if kind == "tensorflow":
        return _TensorFlowReader(resolved)
    return _OrbaxReader(resolved)


def _resolve(path):
    """`("orbax", step_dir)` or `("tensorflow", prefix)` for a checkpoint path."""
    path = _directory_string(path, "checkpoint_path")
    base = os.path.basename(path.rstrip("/"))
    if _TMP_MARKER in base:
        raise ValueError(
            f"{path} is an unfinished (temporary) orbax checkpoint: a save "
            "that did not complete. Use a complete checkpoint."
        )
    p = epath.Path(path)
    if (p / _ITEM).is_dir():
        return "orbax", path
    if base == _ITEM and (p / "_METADATA").exists():  # The item inside a step.
        return "orbax", str(p.parent)
    if epath.Path(path + ".index").exists():
        return "tensorflow", path
    step = _tf_style_step(path)
    if step is not None:
        directory = os.path.dirname(path.rstrip("/"))
        if step in _finished_steps(directory):
            return "orbax", _join(directory, str(step))
    if p.is_dir():
        steps = _finished_steps(path)
        if steps:
            return "orbax", _join(path, str(steps[-1]))
        if (p / "checkpoint").exists():
            import tensorflow as tf  # Only for TensorFlow checkpoints.

            prefix = tf.train.latest_checkpoint(path)
            if prefix is not None:
                return "tensorflow", prefix
    raise ValueError(
        f"No checkpoint found at {path}: expected a checkpoint directory of "
        "this library, a model_dir holding some, or a TensorFlow checkpoint "
        "prefix (with a '.index' file)."
    )


def _finished_steps(directory):
    """The steps of the complete orbax checkpoints in `directory`, ascending.

    Only directories named by a step number count (as the manager writes
    them): `eval_1` or `export` beside them are not checkpoints.
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
        model_dir: a directory written by `CheckpointManager`.

    Returns:
        A string (the checkpoint's directory), or None when there is none or
        `model_dir` does not exist.

    Example:

    ```python
    path = latest_checkpoint("runs/mnist")   # "runs/mnist/1000"
    ```
    """
    model_dir = _directory_string(model_dir, "model_dir")
    if not epath.Path(model_dir).is_dir():
        return None
    steps = _finished_steps(model_dir)
    return _join(model_dir, str(steps[-1])) if steps else None


TF_STYLE_PREFIX = "model.ckpt"
_TF_STYLE = re.compile(r"^model\.ckpt-(\d+)$")


def _tf_style_step(path):
    match = _TF_STYLE.match(os.path.basename(path.rstrip("/")))
    return int(match.group(1)) if match else None


def tf_style_path(model_dir, step):
    """The TensorFlow-style name of the checkpoint of `step`: `model_dir/model.ckpt-<step>`.

    TF1 programs parse the step from such names
    (`int(os.path.basename(path).split("-")[1])`); every function here that
    takes a checkpoint path accepts them for this library's checkpoints.

    Example:

    ```python
    tf_style_path("runs/mnist", 1000)   # "runs/mnist/model.ckpt-1000"
    ```
    """
    return _join(_directory_string(model_dir, "model_dir"), f"{TF_STYLE_PREFIX}-{_check_step(step)}")


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
    path = _directory_string(checkpoint_path, argument).rstrip("/")
    base = os.path.basename(path)
    step = int(base) if base.isdigit() else _tf_style_step(path)
    directory = os.path.dirname(path)
    steps = _finished_steps(directory) if step is not None else []
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


def list_variables(checkpoint_path):
    """Lists the values in a checkpoint, as `tf.train.list_variables`.

    Args:
        checkpoint_path: any path `checkpoint_reader` accepts.

    Returns:
        A list of `(name, shape)` sorted by name; `shape` is a tuple.

    Raises:
        ValueError: if there is no checkpoint at `checkpoint_path`.

    Example:

    ```python
    list_variables(latest_checkpoint("runs/mnist"))
    # [("global_step", ()), ("hidden/bias", (256,)), ...]
    ```
    """
    return sorted(checkpoint_reader(checkpoint_path).names().items())


def load_variable(checkpoint_path, name):
    """Reads one value of a checkpoint, as `tf.train.load_variable`.

    Args:
        checkpoint_path: any path `checkpoint_reader` accepts.
        name: the value's name, e.g. `"hidden/kernel"`.

    Returns:
        A numpy array.

    Raises:
        ValueError: if there is no checkpoint at `checkpoint_path`, or it has
            no value `name` (the message lists a few names it has).
    """
    return checkpoint_reader(checkpoint_path).read(name)


# ----------------------------------------------------------------------
# An EstimatorModel's checkpoint.


def model_values(model):
    """Returns what a checkpoint holds for an `EstimatorModel`: `{name: keras.Variable}`.

    - every variable of `model.store` by its path (`hidden/kernel`);
    - once the model has a training optimizer: each optimizer variable as
      `optimizer/<path>`, where Keras's automatic numbering of the
      optimizer's name is dropped (`adam_2/iteration` is saved as
      `optimizer/adam/iteration`), so names do not depend on how many
      optimizers the process created; and `global_step`, the optimizer's
      iteration count.

    Only variables that exist are listed: the store holds those of the modes
    `model_fn` has been built in, and the optimizer exists after the TRAIN
    mode was built.

    Args:
        model: an `EstimatorModel`.

    Returns:
        A dict `name -> keras.Variable`, store variables first.

    Raises:
        ValueError: if two variables would get the same name (e.g. a
            variable the model_fn named `global_step`).
    """
    values = dict(model.store.variables_by_name())
    optimizer = model.train_optimizer
    if optimizer is None:
        return values

    def add(name, variable):
        if name in values and values[name] is not variable:
            raise ValueError(
                f"Two variables would be saved under the name {name!r}: "
                f"{values[name].path!r} and {variable.path!r}. Rename the "
                "model_fn variable (the names 'global_step' and 'optimizer/...' "
                "are used for the optimizer)."
            )
        values[name] = variable

    for variable in optimizer.variables:
        add(OPTIMIZER_PREFIX + _stable_optimizer_path(variable.path), variable)
    add(GLOBAL_STEP, optimizer.iterations)
    return values


def save_model(manager, model):
    """Saves `model_values(model)` at step `model.global_step`.

    Args:
        manager: a `CheckpointManager`.
        model: an `EstimatorModel`.

    Returns:
        The step saved (an int). A step that already has a checkpoint is not
        written again (see `CheckpointManager.save`).

    Example:

    ```python
    model.fit(...)
    step = save_model(manager, model)
    ```
    """
    step = int(model.global_step)
    manager.save(step, model_values(model))
    return step


def restore_model(manager, model, step=None):
    """Loads a checkpoint into an `EstimatorModel`'s variables.

    Every variable of `model_values(model)` receives the saved value of the
    same name, read directly with the live variable's shape, dtype and
    sharding; names only in the checkpoint are ignored (e.g. the optimizer's
    when the model has not been built for training).

    The model must already have its variables: build the modes you need
    first (`EstimatorModel.fit` builds the TRAIN mode and the optimizer
    before any callback runs, so a callback's `on_train_begin` can restore;
    `evaluate` and `predict` build before their first batch). A model built
    only for evaluation or prediction gets the weights, and its
    `global_step` (what `model_fn` sees) becomes the restored step.

    Args:
        manager: a `CheckpointManager`.
        model: an `EstimatorModel`.
        step: the step to restore; None restores the latest.

    Returns:
        The restored step (an int).

    Raises:
        ValueError: if there is no checkpoint, the model has no variables
            yet, a model variable is missing from the checkpoint (the model
            changed since it was written), or a shape differs.

    Example:

    ```python
    class Resume(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            restore_model(manager, self.model)

    model.fit(train_input_fn, callbacks=[Resume()])
    ```
    """
    if step is None:
        step = manager.latest_step()
        if step is None:
            raise ValueError(
                f"No checkpoint to restore in {manager.directory}: the "
                "directory holds no complete checkpoint."
            )
    step = _check_step(step)
    values = model_values(model)
    if not values:
        raise ValueError(
            "The model has no variables yet: run its model_fn once (fit, "
            "evaluate or predict build it) before restore_model."
        )
    saved = _OrbaxReader(manager.path(step)).names()
    missing = [name for name in values if name not in saved]
    if missing:
        raise ValueError(
            f"The checkpoint of step {step} in {manager.directory} has no value "
            f"for the model variables {_few(missing)}: the model changed since "
            "the checkpoint was written. Use warm_start to load the variables "
            "that match."
        )
    for name, variable in values.items():
        if tuple(saved[name]) != tuple(variable.shape):
            raise ValueError(
                f"Variable {name!r} has shape {tuple(variable.shape)} in the model "
                f"but {tuple(saved[name])} in the checkpoint of step {step} in "
                f"{manager.directory}: the model changed."
            )
    restored = manager.restore(step, targets=values)
    for name, variable in values.items():
        variable.assign(restored[name])
    model.global_step = step  # Also for a model built without an optimizer.
    logger.info("Restored %d variables from step %d of %s.", len(values), step,
                manager.directory)
    return step


# ----------------------------------------------------------------------
# Warm start.


class WarmStartSettings(
    collections.namedtuple(
        "WarmStartSettings",
        [
            "ckpt_to_initialize_from",
            "vars_to_warm_start",
            "var_name_to_vocab_info",
            "var_name_to_prev_var_name",
        ],
    )
):
    """Which variables to initialize from which checkpoint, as `tf.estimator.WarmStartSettings`.

    Args:
        ckpt_to_initialize_from: a checkpoint of this library, a `model_dir`
            of them (its latest), a TensorFlow checkpoint prefix, or a
            TensorFlow `model_dir` (its latest).
        vars_to_warm_start: as in TensorFlow:
            - a regex string: the trainable model variables whose name it
              matches (`re.match`, from the start) are warm-started.
              Defaults to `'.*'`, every trainable variable;
            - a list of regex strings: the model variables (trainable or
              not, e.g. BatchNormalization statistics) matching any of them;
            - a list of `keras.Variable`s of the model;
            - None: none (TensorFlow then warm-starts only the variables of
              `var_name_to_vocab_info`, which is not supported here).
            Optimizer variables and `global_step` are never warm-started.
        var_name_to_vocab_info: vocabulary remapping is not supported; must
            be None or empty.
        var_name_to_prev_var_name: a dict `model name -> name in the
            checkpoint`, for variables that were renamed.

    Raises:
        ValueError: for a non-empty `var_name_to_vocab_info`.

    Example:

    ```python
    WarmStartSettings("gs://bucket/tf1_run",
                      vars_to_warm_start=["encoder/.*", "embeddings/.*"],
                      var_name_to_prev_var_name={"head/kernel": "logits/kernel"})
    ```
    """

    def __new__(
        cls,
        ckpt_to_initialize_from,
        vars_to_warm_start=".*",
        var_name_to_vocab_info=None,
        var_name_to_prev_var_name=None,
    ):
        if var_name_to_vocab_info:
            raise ValueError(
                "Vocabulary remapping (`var_name_to_vocab_info`) is not "
                "supported by keras_tpu_estimator: remap the embedding rows "
                "yourself (load_variable, then assign). Received: "
                f"var_name_to_vocab_info={_short_repr(var_name_to_vocab_info)}"
            )
        if var_name_to_prev_var_name is not None and not isinstance(
            var_name_to_prev_var_name, dict
        ):
            raise ValueError(
                "Argument `var_name_to_prev_var_name` must be None or a dict of "
                "model name to checkpoint name. Received: "
                f"var_name_to_prev_var_name={_short_repr(var_name_to_prev_var_name)}"
            )
        return super().__new__(
            cls,
            ckpt_to_initialize_from,
            vars_to_warm_start,
            var_name_to_vocab_info or {},
            dict(var_name_to_prev_var_name or {}),
        )


class WarmStartReport(
    collections.namedtuple("WarmStartReport", ["matched", "unmatched", "shape_mismatched"])
):
    """What `warm_start` did.

    Attributes:
        matched: names of the model variables loaded from the checkpoint.
        unmatched: names of selected model variables whose checkpoint name
            is not in the checkpoint (left as they were).
        shape_mismatched: `(name, model_shape, checkpoint_shape)` for
            selected variables found with another shape (left as they were).
    """


def warm_start(model, settings):
    """Initializes a model's variables from a checkpoint, as Estimator's `warm_start_from`.

    Only the variables `model_fn` created (`model.store`) are warm-started:
    never the optimizer's variables or `global_step`, so training starts at
    step 0 with fresh optimizer state. The model must be built (its
    `model_fn` run), as for `restore_model`. The report is also logged
    (logger `"keras_tpu_estimator"`).

    Args:
        model: an `EstimatorModel`.
        settings: a `WarmStartSettings`, or a path (a checkpoint of this
            library, a `model_dir`, or a TensorFlow checkpoint prefix or
            model_dir), meaning `WarmStartSettings(path)`: every trainable
            variable, same names.

    Returns:
        A `WarmStartReport`.

    Raises:
        ValueError: if there is no checkpoint at the path, `vars_to_warm_start`
            has the wrong type, or `var_name_to_prev_var_name` names a
            variable that was not selected (as TensorFlow: "Perhaps you
            misspelled them?").

    Example:

    ```python
    report = warm_start(model, WarmStartSettings(
        "tf1_run/model.ckpt-5000", vars_to_warm_start="encoder/.*"))
    report.matched    # ["encoder/dense/kernel", ...]
    ```
    """
    if isinstance(settings, (str, os.PathLike)):
        settings = WarmStartSettings(os.fspath(settings))
    elif not isinstance(settings, WarmStartSettings):
        raise ValueError(
            "Argument `settings` must be a WarmStartSettings or a checkpoint "
            f"path. Received: settings={_short_repr(settings)}"
        )
    reader = checkpoint_reader(settings.ckpt_to_initialize_from)
    # A TF1 train_op's `global_step` is a store variable; it is never warm-started.
    variables = {
        name: v for name, v in model.store.variables_by_name().items() if name != GLOBAL_STEP
    }
    selected = _select(variables, settings.vars_to_warm_start)
    renames = settings.var_name_to_prev_var_name
    unused = sorted(set(renames) - set(selected))
    if unused:
        raise ValueError(
            "You provided the following variables in var_name_to_prev_var_name "
            f"that were not used: {unused}. Perhaps you misspelled them? Here is "
            f"the list of viable variable names: {sorted(selected)}"
        )
    report = _load_from_reader(
        reader, {name: renames.get(name, name) for name in selected}, variables
    )
    matched, unmatched, mismatched = report
    logger.info(
        "Warm-started %d variables from %s: %s", len(matched), reader.path, matched
    )
    if unmatched:
        logger.warning(
            "Warm start from %s: %d selected variables are not in the checkpoint "
            "and keep their initial values: %s", reader.path, len(unmatched), unmatched
        )
    if mismatched:
        logger.warning(
            "Warm start from %s: %d variables have another shape in the checkpoint "
            "and were not loaded (name, model shape, checkpoint shape): %s",
            reader.path, len(mismatched), mismatched,
        )
    return report


def _load_from_reader(reader, wanted, variables):
    """Assigns checkpoint values to model variables, skipping absent names and other shapes.

    Args:
        reader: a `checkpoint_reader`.
        wanted: a dict `model name -> checkpoint name`, in report order.
        variables: a dict `model name -> keras.Variable` holding every name
            of `wanted`.

    Returns:
        A `WarmStartReport` (names in `wanted`'s order).
    """
    saved = reader.names()
    matched, unmatched, mismatched, to_read = [], [], [], {}
    for name, previous in wanted.items():
        if previous not in saved:
            unmatched.append(name)
            continue
        model_shape, saved_shape = tuple(variables[name].shape), tuple(saved[previous])
        if model_shape != saved_shape:
            mismatched.append((name, model_shape, saved_shape))
            continue
        to_read[name] = previous
    values = reader.read_many(sorted(set(to_read.values())))
    for name, previous in to_read.items():
        variable = variables[name]
        variable.assign(np.asarray(values[previous]).astype(variable.dtype))
        matched.append(name)
    return WarmStartReport(matched, unmatched, mismatched)


def _select(variables, vars_to_warm_start):
    """The names of `variables` selected by `vars_to_warm_start` (TF's rules), in order."""
    if vars_to_warm_start is None:
        logger.warning(
            "vars_to_warm_start=None selects no variable (TensorFlow then warm-"
            "starts only var_name_to_vocab_info, which is not supported)."
        )
        return []
    if isinstance(vars_to_warm_start, str):
        pattern = _compile(vars_to_warm_start)
        return [n for n, v in variables.items() if v.trainable and pattern.match(n)]
    if isinstance(vars_to_warm_start, (list, tuple)):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            patterns = [_compile(p) for p in vars_to_warm_start]
            return [n for n in variables if any(p.match(n) for p in patterns)]
        if all(isinstance(v, keras.Variable) for v in vars_to_warm_start):
            ids = {id(v) for v in vars_to_warm_start}
            by_id = {id(v): n for n, v in variables.items()}
            strangers = [v.path for v in vars_to_warm_start if id(v) not in by_id]
            if strangers:
                raise ValueError(
                    "Argument `vars_to_warm_start` holds variables that are not "
                    f"the model's: {_few(strangers)}"
                )
            return [n for n, v in variables.items() if id(v) in ids]
        raise ValueError(
            "If `vars_to_warm_start` is a list, it must be all `keras.Variable` "
            "or all `str`. Given types are "
            f"{[type(v).__name__ for v in vars_to_warm_start]}"
        )
    raise ValueError(
        "`vars_to_warm_start` must be a `list` or `str` (or None). Received: "
        f"vars_to_warm_start={_short_repr(vars_to_warm_start)}"
    )


def _compile(pattern):
    try:
        return re.compile(pattern)
    except re.error as e:
        raise ValueError(
            f"Invalid regex in `vars_to_warm_start`: {pattern!r} ({e})."
        ) from None


# ----------------------------------------------------------------------
# Helpers.


def _directory_string(path, argument):
    if isinstance(path, epath.Path):
        path = str(path)
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ValueError(
            f"Argument `{argument}` must be a non-empty path. Received: "
            f"{argument}={path!r}"
        )
    path = os.fspath(path)
    return path if "://" in path else os.path.abspath(path)


def _join(directory, name):
    if "://" in directory:
        return directory.rstrip("/") + "/" + name
    return os.path.join(directory, name)


def _check_step(step):
    if isinstance(step, (bool, np.bool_)) or not isinstance(step, (int, np.integer)) or step < 0:
        raise ValueError(f"Argument `step` must be an int >= 0. Received: step={step!r}")
    return int(step)


def _savable(value):
    if isinstance(value, keras.Variable):
        value = value.value
    if isinstance(value, jax.Array):
        return value
    return np.asarray(value)


def _restore_args(name, target, saved_shape, path):
    """Orbax's restore arguments giving `target`'s shape, dtype and sharding."""
    if isinstance(target, keras.Variable):
        target = target.value
    if isinstance(target, (jax.Array, jax.ShapeDtypeStruct)):
        shape, dtype = tuple(target.shape), np.dtype(target.dtype)
        sharding = getattr(target, "sharding", None)
    elif isinstance(target, np.ndarray):
        shape, dtype, sharding = target.shape, target.dtype, None
    else:
        raise ValueError(
            f"targets[{name!r}] must be a keras.Variable, a JAX array, a "
            f"jax.ShapeDtypeStruct or a numpy array. Received: {_short_repr(target)}"
        )
    if tuple(shape) != tuple(saved_shape):
        raise ValueError(
            f"targets[{name!r}] has shape {tuple(shape)}, but the checkpoint "
            f"{path} holds shape {tuple(saved_shape)}."
        )
    if sharding is None:
        return ocp.RestoreArgs(restore_type=np.ndarray, dtype=dtype)
    return ocp.ArrayRestoreArgs(sharding=sharding, global_shape=tuple(shape), dtype=dtype)


_NUMBERED = re.compile(r"^([^/]+?)_\d+/")


def _stable_optimizer_path(path):
    """`adam_2/iteration` -> `adam/iteration`: Keras numbers optimizer names per process."""
    return _NUMBERED.sub(r"\1/", path, count=1)


def _few(names, limit=8):
    names = list(names)
    shown = ", ".join(repr(n) for n in names[:limit])
    return f"[{shown}{', ...' if len(names) > limit else ''}]"


def _short_repr(value, limit=200):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
