"""Makes Keras run on its JAX backend when `keras_tpu_estimator` is imported.

Keras picks its backend once, when it is first imported: from the
`KERAS_BACKEND` environment variable, else from `~/.keras/keras.json`
(which Keras writes itself, with `"tensorflow"`, on its first import), else
TensorFlow. TensorFlow imports Keras while it is imported itself, so

```python
import tensorflow.compat.v1 as tf    # imports Keras with the TensorFlow backend
import keras_tpu_estimator as kte    # reloads Keras with the JAX backend
```

finds Keras already loaded on the wrong backend. Unless the user asked for
that backend in `KERAS_BACKEND`, Keras is loaded again on JAX, as
`keras.config.set_backend("jax")` does (this module only unloads `keras`
and its submodules, where `set_backend` unloads every module whose name
starts with "keras", this package included, while it is being imported).

This module imports no Keras at its top level: it runs before anything else
in the package does.
"""

import importlib
import os
import sys
import types

from keras_tpu_estimator.log_lines import logger as _log

BACKEND = "jax"



def _is_keras_module_name(name):
    return isinstance(name, str) and (name == "keras" or name.startswith("keras."))


def use_jax_backend():
    """Returns the `keras` module, imported with (or switched to) the JAX backend.

    If Keras is not imported yet, `KERAS_BACKEND` defaults to `"jax"`. If it
    was imported with another backend and `KERAS_BACKEND` does not name that
    backend (TensorFlow imported it, or the backend came from `keras.json`),
    Keras is unloaded and imported again on JAX; a warning names the modules
    that had already bound the old Keras (their Keras objects keep the old
    backend).

    Returns:
        The `keras` module, on the JAX backend.

    Raises:
        ImportError: if `KERAS_BACKEND` names another backend (the user's
            explicit choice, which this library cannot run on).
    """
    requested = os.environ.get("KERAS_BACKEND")
    if requested is not None and requested != BACKEND:
        raise ImportError(
            "keras_tpu_estimator runs on Keras's JAX backend, but the "
            f"environment variable KERAS_BACKEND={requested!r} asks for another "
            "one. Set KERAS_BACKEND=jax (or unset it) before starting Python."
        )
    os.environ["KERAS_BACKEND"] = BACKEND
    import keras

    active = keras.backend.backend()
    if active == BACKEND:
        return keras
    old_modules = {
        name: module for name, module in sys.modules.items() if _is_keras_module_name(name)
    }
    holders = _modules_holding(old_modules.values())
    for name in old_modules:
        del sys.modules[name]
    keras = importlib.import_module("keras")
    if keras.backend.backend() != BACKEND:  # Cannot happen with KERAS_BACKEND=jax.
        raise ImportError(
            "keras_tpu_estimator could not switch Keras to the JAX backend "
            f"(Keras reports {keras.backend.backend()!r}). Set KERAS_BACKEND=jax "
            "before starting Python."
        )
    if holders:
        _log.warning(
            "Keras had been imported with the %r backend before keras_tpu_estimator, "
            "which reloaded it with the JAX backend. The modules %s still hold "
            "Keras names from before: their Keras objects keep the %r backend. "
            "Import keras_tpu_estimator before keras, or set KERAS_BACKEND=jax.",
            active, holders, active,
        )
    else:
        _log.info(
            "Keras had been imported with the %r backend (by TensorFlow); "
            "reloaded it with the JAX backend.", active,
        )
    return keras


def _modules_holding(old_modules):
    """Names of the modules (not Keras's, TensorFlow's or ours) that bound old Keras names.

    A module counts when one of its globals is a Keras module (`import
    keras`) or a class or function defined in Keras (`from keras import
    layers`, `from keras.layers import Dense`).
    """
    old_ids = {id(module) for module in old_modules}
    own = ("keras", "keras_tpu_estimator", "tensorflow", "tf_keras", "importlib", "typing")
    holders, seen = [], set()
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or name.split(".")[0] in own:
            continue
        if id(module) in seen:  # `__mp_main__` is `__main__` again.
            continue
        seen.add(id(module))
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for value in list(namespace.values()):
            if id(value) in old_ids or (
                isinstance(value, (type, types.FunctionType))
                and _is_keras_module_name(getattr(value, "__module__", None))
            ):
                holders.append(name)
                break
    return sorted(holders)
