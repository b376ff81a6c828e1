"""The variable store: how a `model_fn` function owns layers and variables.

A TPUEstimator `model_fn` is a plain function, called once per mode and once
per compiled step. To behave like a Keras model it must create its layers and
variables on the first call and find the very same objects on every later
call. `VariableStore` keeps them, keyed by their scope path (`"hidden"`,
`"encoder/layer_0/kernel"`), and the functions below look them up from inside
`model_fn`:

```python
def model_fn(features, labels, mode, params):
    with kte.variable_scope("encoder"):
        dense = kte.get_or_create_layer("hidden", lambda: keras.layers.Dense(64))
        bias = kte.get_variable("bias", shape=(64,), initializer="zeros")
    x = dense(features["x"]) + bias      # variables: encoder/hidden/kernel, ...
    step = kte.get_global_step()         # the current training step
    ...
```

Keys are also the variables' Keras paths, so they are stable names for
checkpoints, layout maps and warm starts.

Keras layers that `model_fn` constructs itself (`keras.layers.Dense(10)(x)`)
are kept too, in creation order, and given back by their constructor on
every later call: see `layer_capture`.
"""

import collections
import contextlib
import threading
import weakref

import jax
import keras
import numpy as np

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.model_fn import layer_capture

_state = threading.local()
# store -> {mode: the ModelFnCall of its last build}: the graph a mode built.
_built = weakref.WeakKeyDictionary()


class VariableStore(keras.layers.Layer):
    """Layers and variables created by a `model_fn`, keyed by scope path.

    Being a Keras layer, the store tracks what it holds: its `variables`,
    `trainable_variables` and `non_trainable_variables` are those of every
    stored layer and variable, and it saves and loads like any layer.
    """

    def __init__(self, name="variable_store", **kwargs):
        super().__init__(name=name, **kwargs)
        # Not `_layers`: that attribute is Keras's own.
        self.created_layers = {}
        self.created_variables = {}
        # Keras layers model_fn created itself (`layer_capture`), in order.
        self.layer_order = layer_capture.LayerOrder()

    def variables_by_name(self):
        """Returns `{path: variable}` for every variable, in creation order."""
        return {v.path: v for v in self.variables}


class ModelFnCall:
    """What the functions of this module see while `model_fn` runs."""

    def __init__(self, store, mode, building, global_step):
        self.store = store
        self.mode = mode
        self.building = building
        self.global_step = global_step
        # What this call asked for, in first-use order: TF1's "graph" view.
        self.used = {}
        self.call_state = {}
        self.capture = None
        self.finished = False  # The call returned: what it made is the built graph.


@contextlib.contextmanager
def model_fn_call(store, mode, building, global_step, training):
    """Runs the enclosed `model_fn` call against `store`.

    Args:
        store: the `VariableStore` to create in and look up from.
        mode: the `ModeKeys` value of this call.
        building: whether new layers and variables may be created (the first,
            concrete call of a mode) or must already exist (compiled steps).
        global_step: the step count `get_global_step()` returns.
        training: the `training` flag layers see (True in TRAIN mode).
    """
    previous = getattr(_state, "context", None)
    context = ModelFnCall(store, mode, building, global_step)
    _state.context = context
    context.capture = capture = layer_capture.LayerCapture(context)
    try:
        # Keras layers created inside model_fn are kept in the store, with
        # automatic names counted per call, as TF1 counted them per graph.
        with _keras_internals.training_context(training), \
                _keras_internals.object_names(collections.defaultdict(int)), \
                _keras_internals.layer_constructions(
                    capture, inner=capture.inner, find_weight=capture.find_weight):
            yield
            if building:
                _keras_internals.initialize_deferred_variables()
        capture.adopt_untracked()
        context.finished = True
        if building:
            _built.setdefault(store, {})[mode] = context
    finally:
        _state.context = previous


@contextlib.contextmanager
def built_graph(store, mode):
    """Inside, TF1 code sees the graph `mode`'s last build made, as after `model_fn`.

    A TF1 `SessionRunHook.begin()` ran once `model_fn` had built the graph,
    and read it: `tf.trainable_variables()`, the collections,
    `ema.variables_to_restore()`. Here that is the last building call of
    `mode` against `store`: its variables, in creation order, and its
    collections. Without one (the mode not built yet) the block changes
    nothing.

    Example:

    ```python
    with built_graph(model.store, ModeKeys.EVAL):
        hook.begin()
    ```
    """
    context = _built.get(store, {}).get(mode)
    previous = getattr(_state, "context", None)
    if context is not None:
        _state.context = context
    try:
        yield
    finally:
        _state.context = previous


def in_built_graph():
    """Whether TF1 code runs in a `built_graph` block (after `model_fn`, not inside it)."""
    context = getattr(_state, "context", None)
    return context is not None and context.finished


class OutsideModelFnError(RuntimeError):
    """A function that needs the `model_fn` call in progress ran outside one.

    Its `function_name` names what was needed (`"get_seed_generator"`).
    """

    def __init__(self, message, function_name):
        super().__init__(message)
        self.function_name = function_name


def in_model_fn_call():
    """Whether a `model_fn` call is in progress in this thread."""
    return getattr(_state, "context", None) is not None


def current_call(function_name):
    context = getattr(_state, "context", None)
    if context is None:
        raise OutsideModelFnError(
            f"`kte.{function_name}` can only be called inside a model_fn run "
            "by `EstimatorModel` or `TPUEstimator`.",
            function_name,
        )
    return context


def _path(name):
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(
            "Argument `name` must be a non-empty string without '/'. "
            f"Received: name={name!r}"
        )
    parent = _keras_internals.current_scope_path()
    return parent, f"{parent}/{name}" if parent else name


def _not_created_error(kind, path, context):
    return ValueError(
        f"model_fn asked for the {kind} '{path}', which does not exist yet, "
        f"in a compiled {context.mode!r} step. Layers and variables are "
        "created on the first call of model_fn in each mode; model_fn must "
        "create the same ones, with the same names, on every call."
    )


def get_or_create_layer(name, factory):
    """Returns the layer stored at `name`, creating it with `factory` once.

    The layer is named `name`, and its variables are created under the
    enclosing `variable_scope`s: `get_or_create_layer("hidden", ...)` inside
    `variable_scope("encoder")` owns `encoder/hidden/kernel`.

    Args:
        name: the layer's name inside the current scope (no `/`).
        factory: a zero-argument callable returning a new `keras.layers.Layer`.
            Called only the first time.

    Returns:
        The same `keras.layers.Layer` object on every call of `model_fn`.

    Raises:
        ValueError: if `name` is invalid, or the layer is first asked for in a
            compiled step (model_fn must create the same layers every call).
        TypeError: if `factory` does not return a Keras layer.

    Example:

    ```python
    logits = kte.get_or_create_layer(
        "logits", lambda: keras.layers.Dense(10))(features["x"])
    ```
    """
    context = current_call("get_or_create_layer")
    parent, path = _path(name)
    layer = context.store.created_layers.get(path)
    if layer is not None:
        context.used.setdefault(path, layer)
        return layer
    if not context.building:
        raise _not_created_error("layer", path, context)
    if not callable(factory):
        raise TypeError(
            f"Argument `factory` of get_or_create_layer('{path}') must be a "
            f"callable returning a keras Layer. Received: {factory!r}"
        )
    # The factory's layer is this name's, not one model_fn created: not
    # captured, and its automatic names do not count in the call's.
    with _keras_internals.constructions_paused(), \
            _keras_internals.object_names(collections.defaultdict(int)):
        layer = factory()
    if not isinstance(layer, keras.layers.Layer):
        raise TypeError(
            f"The factory of get_or_create_layer('{path}') must return a "
            f"keras.layers.Layer. It returned: {layer!r}"
        )
    layer.name = name
    _keras_internals.pin_layer_path(layer, parent)
    context.store.created_layers[path] = layer
    context.used[path] = layer
    return layer


def get_variable(name, shape=None, dtype=None, initializer=None, trainable=True):
    """Returns the variable stored at `name`, creating it once.

    Mirrors `tf.compat.v1.get_variable`: the default initializer is Glorot
    uniform, and `initializer` may be a Keras initializer (object or name),
    a callable `(shape, dtype)`, or a constant array (then `shape` may be
    omitted).

    Args:
        name: the variable's name inside the current scope (no `/`).
        shape: the variable's shape (a tuple of ints).
        dtype: the variable's dtype; defaults to Keras's `floatx()`.
        initializer: how to initialize it (see above).
        trainable: whether the optimizer updates it.

    Returns:
        The same `keras.Variable` on every call of `model_fn`.

    Raises:
        ValueError: if the stored variable has another shape, or the variable
            is first asked for in a compiled step.

    Example:

    ```python
    with kte.variable_scope("embeddings"):
        table = kte.get_variable("word", shape=(vocab, 128))
    ```
    """
    context = current_call("get_variable")
    parent, path = _path(name)
    variable = context.store.created_variables.get(path)
    if variable is not None:
        if shape is not None and tuple(shape) != tuple(variable.shape):
            raise ValueError(
                f"Trying to share variable {path}, but specified shape "
                f"{tuple(shape)} and found shape {tuple(variable.shape)}."
            )
        context.used.setdefault(path, variable)
        return variable
    if not context.building:
        raise _not_created_error("variable", path, context)
    if initializer is None:
        initializer = "glorot_uniform"
    if isinstance(initializer, str) or isinstance(
        initializer, keras.initializers.Initializer
    ):
        initializer = keras.initializers.get(initializer)
    elif not callable(initializer):
        # A traced constant (the build pass is traced) keeps its tracer.
        value = initializer if isinstance(initializer, jax.Array) else np.asarray(initializer)
        if shape is not None and tuple(shape) != value.shape:
            raise ValueError(
                f"Argument `initializer` of get_variable('{path}') has shape "
                f"{value.shape}, but `shape` is {tuple(shape)}."
            )
        shape, initializer = value.shape, value
    if shape is None:
        raise ValueError(
            f"get_variable('{path}') needs a `shape` unless `initializer` is "
            "a constant array."
        )
    # The enclosing `variable_scope`s are Keras name scopes: the new
    # variable's path is `path`.
    variable = keras.Variable(
        initializer, shape=tuple(shape), dtype=dtype, trainable=trainable, name=name
    )
    context.store.created_variables[path] = variable
    context.used[path] = variable
    return variable


@contextlib.contextmanager
def variable_scope(name):
    """Opens a scope: layers and variables created inside are named under it.

    Args:
        name: the scope's name (no `/`). Scopes nest: `a` inside `b` is `b/a`.

    Example:

    ```python
    for i in range(3):
        with kte.variable_scope(f"layer_{i}"):
            x = kte.get_or_create_layer("dense", lambda: keras.layers.Dense(8))(x)
    ```
    """
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(
            "Argument `name` of variable_scope must be a non-empty string "
            f"without '/'. Received: name={name!r}"
        )
    with keras.name_scope(name):
        yield


def get_global_step():
    """Returns the current training step inside `model_fn`.

    It is the optimizer's iteration count: an integer scalar tensor that
    advances by one every training step, also inside an on-device loop, so a
    learning rate computed from it takes effect on every step.

    Raises:
        RuntimeError: outside a `model_fn` run by this library.
    """
    return current_call("get_global_step").global_step


def used_in_call():
    """Returns `{path: layer or variable}` that this `model_fn` call asked for.

    In first-use order: what a TF1 graph held at this point of the call, so
    `compat.v1.trainable_variables()` lists variables in creation order.
    """
    context = current_call("used_in_call")
    context.capture.adopt_untracked()
    return dict(context.used)


def call_state(key, factory):
    """Returns state that lives as long as the current `model_fn` call.

    `compat.v1` keeps what a TF1 graph held here (collections, scope name
    counts): it starts empty on every call, so every trace replays the same.

    Args:
        key: a string naming the state.
        factory: a zero-argument callable creating the state on first use.
    """
    context = current_call("call_state")
    if key not in context.call_state:
        context.call_state[key] = factory()
    return context.call_state[key]


def get_seed_generator():
    """Returns the store's `keras.random.SeedGenerator`, creating it once.

    Random ops inside `model_fn` (dropout) draw from it. Its state is a
    variable of the store, advanced inside the compiled steps, so every step
    draws new numbers and `keras.utils.set_random_seed` makes runs repeat.

    Raises:
        ValueError: if first asked for in a compiled step.
    """
    context = current_call("get_seed_generator")
    store = context.store
    generator = getattr(store, "seed_generator", None)
    if generator is None:
        if not context.building:
            raise _not_created_error("seed generator", "seed_generator", context)
        with keras.name_scope("random", override_parent=""):
            store.seed_generator = keras.random.SeedGenerator(name="seed_generator")
    return store.seed_generator


def current_mode():
    """Returns the `ModeKeys` value of the `model_fn` call in progress."""
    return current_call("current_mode").mode
