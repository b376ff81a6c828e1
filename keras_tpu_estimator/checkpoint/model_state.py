"""An `EstimatorModel`'s checkpoint: which variables, by which names; saving and restoring.

For an `EstimatorModel` the names are those TensorFlow users know:

- every variable `model_fn` created, by its scope path (`hidden/kernel`);
- `global_step`, the training step (the optimizer's iteration count);
- every optimizer variable under `optimizer/` (`optimizer/adam/iteration`,
  `optimizer/adam/hidden_kernel_momentum`, ...).

```python
checkpoints = kte.checkpoint.CheckpointDirectory("runs/mnist", max_to_keep=3)
kte.checkpoint.save_model(checkpoints, model)          # at model.global_step
kte.checkpoint.restore_model(checkpoints, other_model)  # the latest step
```
"""

import re

import jax
import jax.numpy as jnp
import keras
import numpy as np

from keras_tpu_estimator.checkpoint.common import check_step
from keras_tpu_estimator.checkpoint.common import few
from keras_tpu_estimator.checkpoint.common import logger
from keras_tpu_estimator.checkpoint.directory import restore_prefix
from keras_tpu_estimator.checkpoint.paths import read_newest
from keras_tpu_estimator.checkpoint.paths import tf_style_path
from keras_tpu_estimator.checkpoint.paths import tf_style_step
from keras_tpu_estimator.checkpoint.readers import TensorFlowReader

GLOBAL_STEP = "global_step"
OPTIMIZER_PREFIX = "optimizer/"
# Keras's random-number generator states (`keras.random.SeedGenerator`): TF1
# kept none in checkpoints.
GENERATOR_STATE = "seed_generator_state"


def _tf1_lacks(name):
    """Whether a checkpoint TF1 wrote may lack the model variable `name`."""
    return name.startswith(OPTIMIZER_PREFIX) or name.rpartition("/")[2] == GENERATOR_STATE


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

    Example:

    ```python
    sorted(model_values(model))
    # ["encoder/hidden/kernel", ..., "global_step", "optimizer/adam/iteration", ...]
    ```
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


def save_model(checkpoints, model):
    """Saves `model_values(model)` at step `model.global_step`.

    Args:
        checkpoints: a `CheckpointDirectory`.
        model: an `EstimatorModel`.

    Returns:
        The step saved (an int). A step that already has a checkpoint is not
        written again (see `CheckpointDirectory.save`).

    Example:

    ```python
    model.fit(...)
    step = save_model(checkpoints, model)
    ```
    """
    step = int(model.global_step)
    checkpoints.save(step, model_values(model))
    return step


def restore_model(checkpoints, model, step=None):
    """Loads a checkpoint of a `CheckpointDirectory` into an `EstimatorModel`'s variables.

    See `load_checkpoint` for what is loaded.

    Args:
        checkpoints: a `CheckpointDirectory`.
        model: an `EstimatorModel`.
        step: the step to restore; None restores the latest (the newest left
            when another process's `keep_checkpoint_max` deletes it meanwhile).

    Returns:
        The restored global step (an int).

    Raises:
        ValueError: if there is no checkpoint, or as `load_checkpoint`.

    Example:

    ```python
    class Resume(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            restore_model(checkpoints, self.model)

    model.fit(train_input_fn, callbacks=[Resume()])
    ```
    """
    if step is not None:
        return load_checkpoint(checkpoints.path(check_step(step)), model)

    def latest():
        step = checkpoints.latest_step()
        if step is None:
            raise ValueError(
                f"No checkpoint to restore in {checkpoints.directory}: the "
                "directory holds no complete checkpoint."
            )
        return tf_style_path(checkpoints.directory, step)

    return read_newest(latest, lambda prefix: load_checkpoint(prefix, model))


def load_checkpoint(prefix, model):
    """Loads the checkpoint `prefix` into an `EstimatorModel`'s variables: resumes from it.

    Every variable of `model_values(model)` receives the saved value of the
    same name, read with the live variable's shape, dtype and sharding;
    names only in the checkpoint are ignored (e.g. the optimizer's when the
    model has not been built for training). The checkpoint may be written
    by TensorFlow (a TF1 `model_dir`): the optimizer's variables of a Keras
    optimizer it lacks (`optimizer/...`) keep their initial values, with a
    warning, as do the states of Keras's random-number generators (TF1 kept
    none), and its `global_step` becomes the model's.

    The model must already have its variables: build the modes you need
    first (`EstimatorModel.fit` builds the TRAIN mode and the optimizer
    before any callback runs, so a callback's `on_train_begin` can restore;
    `evaluate` and `predict` build before their first batch). A model built
    only for evaluation or prediction gets the weights, and its
    `global_step` (what `model_fn` sees) becomes the checkpoint's.

    Args:
        prefix: a complete checkpoint's prefix (`model_dir/model.ckpt-100`).
        model: an `EstimatorModel`.

    Returns:
        The checkpoint's global step (an int): its `global_step` value,
        else the step in its name, else 0.

    Raises:
        ValueError: if the model has no variables yet, a variable of
            `model_fn` is missing from the checkpoint (the model changed
            since it was written), or a shape differs.
        DamagedCheckpointError: (a ValueError) if the files cannot be read.
    """
    values = model_values(model)
    if not values:
        raise ValueError(
            "The model has no variables yet: run its model_fn once (fit, "
            "evaluate or predict build it) before restore_model."
        )
    reader = TensorFlowReader(prefix)
    saved = reader.names()
    absent = [name for name in values if name not in saved]
    missing = [name for name in absent if not _tf1_lacks(name)]
    if missing:
        raise ValueError(
            f"The checkpoint {prefix} has no value for the model variables "
            f"{few(missing)}: the model changed since the checkpoint was "
            "written. Use warm_start to load the variables that match."
        )
    values = {name: v for name, v in values.items() if name in saved}
    for name, variable in values.items():
        if tuple(saved[name]) != tuple(variable.shape):
            raise ValueError(
                f"Variable {name!r} has shape {tuple(variable.shape)} in the model "
                f"but {tuple(saved[name])} in the checkpoint {prefix}: the model changed."
            )
    restored = restore_prefix(prefix, values, reader)
    for name, variable in values.items():
        variable.assign(restored[name])
    step = _global_step(prefix, reader, saved)
    model.global_step = step  # Also for a model built without an optimizer.
    if absent:
        logger.warning(
            "The checkpoint %s has no value for the optimizer or random-number "
            "generator variables %s (it was not written with this optimizer, e.g. by "
            "TensorFlow): they keep their initial values.", prefix, few(absent),
        )
    bad = non_finite_names(restored)
    if bad:  # Not written by this library's saver; maybe by an older version.
        logger.warning(
            "The checkpoint %s holds NaN or infinite values in %s: what is "
            "computed from it (losses, metrics, predictions) is not meaningful. "
            "Evaluate or resume from an earlier checkpoint.", prefix, few(bad),
        )
    logger.info("Restored %d variables from %s (global step %d).", len(values), prefix, step)
    return step


def _global_step(prefix, reader, saved):
    if GLOBAL_STEP in saved and saved[GLOBAL_STEP] == ():
        return int(reader.read(GLOBAL_STEP))
    step = tf_style_step(prefix)
    return 0 if step is None else step


_NUMBERED = re.compile(r"^([^/]+?)_\d+/")


def _stable_optimizer_path(path):
    """`adam_2/iteration` -> `adam/iteration`: Keras numbers optimizer names per process."""
    return _NUMBERED.sub(r"\1/", path, count=1)


@jax.jit
def _finite_flags(arrays):
    return jnp.stack([jnp.all(jnp.isfinite(a)) for a in arrays])


def _is_finite(array):
    """Whether the host array `array` holds no NaN and no infinity."""
    with np.errstate(all="ignore"):
        # A finite sum proves it in one pass without a temporary; a sum that
        # overflowed is checked element by element.
        return bool(np.isfinite(np.sum(array))) or bool(np.isfinite(array).all())


def non_finite_names(values):
    """The names of the values of `values` holding a NaN or an infinity.

    Values this process holds whole (numpy arrays, JAX arrays on its own
    devices) are checked on the host, where a checkpoint reads them anyway;
    a compiled check cost a cold run 0.4 s of XLA compile per model. Arrays
    sharded over processes are checked by one jitted reduction, which every
    process runs.

    Args:
        values: a dict `name -> keras.Variable or array`.

    Returns:
        A list of names, empty when every value is finite.
    """
    bad, names, sharded = [], [], []
    for name, value in values.items():
        value = value.value if isinstance(value, keras.Variable) else value
        if not jnp.issubdtype(value.dtype, jnp.inexact):
            continue
        if isinstance(value, jax.Array) and not value.is_fully_addressable:
            names.append(name)
            sharded.append(value)
        elif not _is_finite(np.asarray(value)):
            bad.append(name)
    if sharded:
        flags = jax.device_get(_finite_flags(sharded))
        bad += [name for name, finite in zip(names, flags) if not finite]
    bad = set(bad)
    return [name for name in values if name in bad]  # In the order of `values`.
