"""`.keras` files of an `EstimatorModel`: its config, how it was built, saving.

A `.keras` file holds a model's config (JSON), how to build it and its
variables. For an `EstimatorModel` the config names `model_fn` by its Keras
registered name, so the file loads only where the same function is
registered (`@keras.saving.register_keras_serializable()`), as for any custom
Keras object. The build config records the sample batch of each mode built,
in order: loading runs `model_fn` on the same shapes, which creates the same
variables (and optimizer) in the same order, and Keras then loads their
values.

Without a registered `model_fn`, the code-free ways to keep a model are the
`model_dir` checkpoints (`kte.checkpoint.save_model`, `TPUEstimator`),
`save_weights` and `export`; the error says so before anything is written.
"""

import json
import os
import tempfile

import jax
import keras
import numpy as np

from keras_tpu_estimator.config import RunConfig
from keras_tpu_estimator.config import TPUConfig

_ARRAY = "__array__"  # Marks a (shape, dtype) leaf in a build config.


class Saving:
    """The `.keras` methods of `EstimatorModel` (a mixin, as Keras's `Trainer`).

    The model records, for them, its constructor arguments
    (`_arguments`), each mode's sample batch (`_built_batches`) and the
    optimizer given to `compile` (`_compiled_optimizer`).
    """

    def get_config(self):
        """The constructor arguments; `model_fn` by its Keras registered name."""
        return model_config(self, dict(self._arguments, name=self.name))

    @classmethod
    def from_config(cls, config):
        """The model `get_config` describes (`model_fn` must be registered)."""
        return model_from_config(cls, config)

    def get_build_config(self):
        """How to rebuild: the compile arguments, then each built mode's sample batch."""
        compiled = None
        if self.compiled:
            optimizer = self._compiled_optimizer
            compiled = {
                "optimizer": keras.saving.serialize_keras_object(optimizer) if optimizer else None,
                "steps_per_execution": self.steps_per_execution,
            }
        return {"compile": compiled, "modes": [list(entry) for entry in self._built_batches]}

    def build_from_config(self, config):
        """Compiles and builds as `get_build_config` says: the same variables, in order.

        Compiling comes first, since TRAIN may train with the compiled
        optimizer; `get_compile_config` is therefore None.
        """
        compiled = config.get("compile")
        if compiled is not None:
            optimizer = compiled["optimizer"]
            self.compile(
                optimizer=keras.saving.deserialize_keras_object(optimizer) if optimizer else None,
                steps_per_execution=compiled["steps_per_execution"],
            )
        for mode, spec in config.get("modes", []):
            self.build_from_batch(mode, batch_from_spec(spec))

    def get_compile_config(self):
        return None  # Part of the build config (see `build_from_config`).

    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Saves a `.keras` file (a temporary file renamed when complete).

        `model_fn` must be registered with
        `@keras.saving.register_keras_serializable()`; `keras.saving.load_model`
        then rebuilds the model and loads its variables and optimizer.

        Raises:
            ValueError: for an unregistered `model_fn` (naming the code-free
                alternatives: model_dir checkpoints, `save_weights`,
                `export`) or a config that is not plain data, before
                anything is written.
        """
        check_saveable(self)
        if zipped is False or not os.fspath(filepath).endswith(".keras"):
            return super().save(filepath, overwrite=overwrite, zipped=zipped, **kwargs)
        if not overwrite and os.path.exists(filepath):
            return super().save(filepath, overwrite=False, zipped=zipped, **kwargs)  # Asks.
        save_atomically(
            lambda path: super(Saving, self).save(path, overwrite=True, **kwargs),
            filepath,
        )


def check_saveable(model):
    """Raises a ValueError, before anything is written, if `model` cannot
    be saved as a `.keras` file: an unregistered `model_fn`, or a config
    that is not plain data."""
    model_fn = model.model_fn
    name = keras.saving.get_registered_name(model_fn)
    if keras.saving.get_registered_object(name) is not model_fn:
        raise ValueError(
            "A .keras file names model_fn by its Keras registered name, and "
            f"`model_fn` ({getattr(model_fn, '__qualname__', model_fn)!r}) is not "
            "registered: decorate it with `@keras.saving.register_keras_serializable()` "
            "(and import it before `keras.saving.load_model`). Or keep the model "
            "without its code: model_dir checkpoints (`kte.checkpoint.save_model`, "
            "as TPUEstimator writes them), `model.save_weights('m.weights.h5')`, or "
            "a SavedModel for serving with `model.export(...)`."
        )
    config = model.get_config()
    for key, value in config.items():
        try:
            json.dumps(keras.saving.serialize_keras_object(value))
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"EstimatorModel `{key}` cannot be saved in a .keras file (plain "
                f"data only: numbers, strings, lists, dicts). Received: {key}={value!r} "
                f"({error})"
            ) from None


def model_config(model, kwargs):
    """The `get_config()` of an `EstimatorModel` made with these arguments."""
    return {
        "model_fn": keras.saving.serialize_keras_object(model.model_fn),
        "params": {k: v for k, v in model.params.items() if k not in ("batch_size", "context")},
        "config": run_config_to_dict(model.config),
        **kwargs,
    }


def model_from_config(cls, config):
    """`EstimatorModel.from_config`: the model `model_config` describes."""
    config = dict(config)
    config["model_fn"] = keras.saving.deserialize_keras_object(config["model_fn"])
    config["config"] = run_config_from_dict(config["config"])
    layout_map = config.get("layout_map")
    if isinstance(layout_map, dict):
        config["layout_map"] = {k: tuple(v) for k, v in layout_map.items()}
    return cls(**config)


def run_config_to_dict(config):
    """A `RunConfig` as plain data (its `tpu_config` a dict too)."""
    values = config.get_config()
    values["tpu_config"] = dict(values["tpu_config"]._asdict())
    return values


def run_config_from_dict(values):
    """The `RunConfig` of `run_config_to_dict`."""
    values = dict(values)
    tpu = dict(values["tpu_config"])
    if tpu.get("input_partition_dims") is not None:
        tpu["input_partition_dims"] = _tuples(tpu["input_partition_dims"])
    values["tpu_config"] = TPUConfig(**tpu)
    return RunConfig(**values)


def batch_spec(batch):
    """A sample batch as JSON data: `{"__array__": [shape, dtype]}` leaves."""
    return _to_json(jax.tree.map(
        lambda a: {_ARRAY: [list(a.shape), np.dtype(a.dtype).name]}, batch
    ))


def batch_from_spec(spec):
    """The `jax.ShapeDtypeStruct` batch of `batch_spec`."""
    if isinstance(spec, dict) and set(spec) == {_ARRAY}:
        shape, dtype = spec[_ARRAY]
        return jax.ShapeDtypeStruct(tuple(shape), dtype)
    if isinstance(spec, dict):
        return {k: batch_from_spec(v) for k, v in spec.items()}
    if isinstance(spec, list):
        return tuple(batch_from_spec(v) for v in spec)
    return spec


def save_atomically(save, filepath):
    """Calls `save(path)` on a temporary file beside `filepath`, then renames
    it: a failed save leaves no half-written file."""
    filepath = os.fspath(filepath)
    directory, name = os.path.split(os.path.abspath(filepath))
    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".keras", dir=directory)
    os.close(handle)
    try:
        save(temporary)
        os.replace(temporary, filepath)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def _to_json(tree):
    if isinstance(tree, dict):
        return {str(k): _to_json(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [_to_json(v) for v in tree]
    return tree


def _tuples(value):
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value
