"""Keras layers created inside `model_fn`, kept as a TF1 graph kept them.

A TF1 Keras user wrote `logits = tf.keras.layers.Dense(10)(x)` inside
`model_fn`: the graph held the layer's variables (`dense/kernel`), every mode
built its own graph with the same names, and checkpoints joined them. Here
`model_fn` runs once per mode and once per compiled step, so a layer created
inside it is kept by the variable store the first time and *given back* on
every later call: the n-th layer of a class (or of an explicit name) within a
scope is the same object in every call, like Haiku's and Flax's compact
modules.

Names follow TF1's: Keras's automatic names (`dense`, `dense_1`, ...,
`model`, `model_1`) count from zero in every `model_fn` call, as TF1's
counted per graph, and a variable's path is the scope the layer is first
called in, then its name (`dense/kernel`, `block/conv2d_1/kernel`). An
explicit `name` given twice is made unique (`head`, `head_1`).

```python
def model_fn(features, labels, mode, params):
    x = keras.Input(tensor=features["image"])      # `features["image"]` itself
    x = keras.layers.Conv2D(32, 3)(x)              # conv2d/kernel, conv2d/bias
    logits = keras.layers.Dense(10)(keras.layers.Flatten()(x))   # dense/kernel
    ...
```

Layers made by `kte.get_or_create_layer`'s factory, and the sublayers a
layer makes in its `__init__`, are not captured: they belong to their owner.
So do the sublayers a layer makes but Keras does not track, because a plain
Python object holds them (a list of block objects, each holding its
`Conv2D`s): TF1 kept every variable in the graph whoever held it, so such a
layer is *adopted*, tracked as a sublayer of the captured (or stored) layer
that was being constructed or called when it was made. Its variables are
then the model's: trained, saved, restored and listed by
`tf1.trainable_variables()`.
"""

import collections
import functools

import keras
import numpy as np

from keras_tpu_estimator import _keras_internals


class LayerOrder:
    """The store's record of captured layers: `{key: (path, config signature)}`.

    A plain object, so that Keras does not track (and wrap) its dict.
    """

    def __init__(self):
        self.entries = {}


class PassThroughInput:
    """What `keras.Input(tensor=t)` constructs inside `model_fn`: `output` is `t`.

    TF1's `Input(tensor=t)` returned `t` itself; a Keras 3 `InputLayer`
    accepts only symbolic tensors, and so would fail in the compiled steps.
    """

    def __init__(self, tensor):
        self.output = tensor


def signature(value):
    """A comparable summary of a constructor argument (config, not identity).

    Initializers and other Keras objects compare by class and config,
    functions by qualified name, tensors and arrays by dtype, layers by name.
    """
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (np.generic,)):
        return value.item()
    if isinstance(value, (list, tuple)):
        return tuple(signature(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), signature(v)) for k, v in value.items()))
    if isinstance(value, keras.layers.Layer):
        return ("layer", value.name)
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return ("tensor", str(value.dtype))
    get_config = getattr(value, "get_config", None)
    if callable(get_config) and not isinstance(value, type):
        try:
            return (type(value).__qualname__, signature(get_config()))
        except Exception:  # noqa: BLE001  (a config that cannot be read: compare the class)
            return (type(value).__qualname__,)
    if callable(value):
        return ("callable", getattr(value, "__module__", None),
                getattr(value, "__qualname__", type(value).__qualname__))
    return (type(value).__qualname__,)


def _arguments(args, kwargs):
    return signature({"args": list(args), **kwargs})


def _class_name(cls):
    # A class defined inside model_fn is a new object in every call: compare names.
    return cls.__module__, cls.__qualname__


# Keras 3 weight names that TF1's Keras spelled otherwise: `{class: {keras: tf1}}`.
TF1_WEIGHT_NAMES = {keras.layers.DepthwiseConv2D: {"kernel": "depthwise_kernel"}}


def _tf1_renames(cls):
    """`TF1_WEIGHT_NAMES` of `cls` or of the class it derives from (EfficientNet's
    own `DepthwiseConv2D` subclass saves `depthwise_kernel` too)."""
    for base, renames in TF1_WEIGHT_NAMES.items():
        if issubclass(cls, base):
            return renames
    return None


def _rename_weights(renames, layer):
    for variable in layer.weights:
        if variable.name in renames:
            _keras_internals.rename_variable(variable, renames[variable.name])


def _tf1_weight_names(layer):
    """Gives `layer`'s weights TF1's names when it builds (`TF1_WEIGHT_NAMES`)."""
    renames = _tf1_renames(type(layer))
    if renames and not getattr(layer, "built", False) and "build" in layer.__dict__:
        _keras_internals.after_build(layer, functools.partial(_rename_weights, renames))


def _ordinal(n):
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class LayerCapture:
    """The observer of Keras layer constructions during one `model_fn` call.

    Args:
        context: the `store.ModelFnCall` of the call.
    """

    def __init__(self, context):
        self.context = context
        self.counts = collections.Counter()
        # Layers made inside other layers, `[layer, owner]` in order, not yet
        # known to be tracked; an owner under construction is its capture key.
        self.inner_layers = []
        self.constructing = []
        # `{path: variable}` before this call: what its new layers may share
        # (not what this call made: TF1 shared across graphs, by name).
        self.earlier = context.store.variables_by_name() if context.building else {}

    def inner(self, layer):
        """Records a layer constructed inside another (see `adopt_untracked`)."""
        if not self.context.building:
            return
        _tf1_weight_names(layer)
        if self.constructing:
            owner = self.constructing[-1]
        else:
            stored = {id(each) for each in self.context.store.created_layers.values()}
            owner = next((caller for caller in _keras_internals.calling_layers()
                          if id(caller) in stored), None)
        self.inner_layers.append([layer, owner])

    def adopt_untracked(self):
        """Tracks each recorded layer that nothing tracks on the layer that made it.

        Called before the call's variables are listed, and when the call ends.
        """
        if not self.inner_layers:
            return
        store = self.context.store
        tracked = {id(each) for each in _keras_internals.layer_tree(store)}
        waiting = []
        for layer, owner in self.inner_layers:
            if isinstance(owner, str):  # Its owner is still being constructed.
                waiting.append([layer, owner])
            elif id(layer) not in tracked and owner is not None:
                _keras_internals.track_sublayers(owner, [layer])
                tracked.update(id(each) for each in _keras_internals.layer_tree(layer))
        self.inner_layers = waiting

    def __call__(self, cls, args, kwargs):
        if issubclass(cls, keras.layers.InputLayer):
            tensor = kwargs.get("input_tensor")
            return (PassThroughInput(tensor) if tensor is not None else None), None
        scope = _keras_internals.current_scope_path()
        name = kwargs.get("name")
        named = isinstance(name, str) and bool(name)
        # Counted per scope and per class (or explicit name): a layer made in
        # one mode only shifts none of the others.
        base = f"name:{name}" if named else f"class:{cls.__name__}"
        index = self.counts[scope, base]
        self.counts[scope, base] += 1
        key = f"{scope}/{base}#{index}"
        where = (f"the {_ordinal(index + 1)} `{cls.__name__}`"
                 + (f" named {name!r}" if named else "") + f" in scope {scope!r}")
        store = self.context.store
        entries = store.layer_order.entries
        shared_path = None
        # A mode whose build made its own object keeps it (TF1: a graph per mode).
        own_key = f"{key}@{self.context.mode}"
        if own_key in entries:
            key = own_key
        elif (key in entries and self.context.building
                and _arguments(args, kwargs) != entries[key][1]):
            key, shared_path = own_key, entries[key][0]
        entry = entries.get(key)
        if entry is None:
            if not self.context.building:
                raise ValueError(
                    f"model_fn created {where} in a compiled {self.context.mode!r} "
                    "step, but not in its first call of that mode. Keras layers "
                    "created inside model_fn are kept in creation order and given "
                    "back on every later call: model_fn must create the same "
                    "layers, in the same order, on every call."
                )
            self.constructing.append(key)
            return None, lambda layer, a, k: self._created(
                key, scope, layer, a, k, shared_path)
        path, _ = entry
        layer = store.created_layers[f"{path}@{self.context.mode}" if key == own_key else path]
        if _class_name(type(layer)) != _class_name(cls):
            raise ValueError(
                f"model_fn created {where} as a `{cls.__qualname__}`, where an "
                f"earlier call created a `{type(layer).__qualname__}` (the layer "
                f"{path!r}). Keras layers created inside model_fn are matched by "
                "scope, class and creation order: create the same layers, in the "
                "same order, on every call (in every mode)."
            )
        return layer, lambda layer, a, k: self._reused(key, where, path, layer, a, k)

    def _created(self, key, scope, layer, args, kwargs, shared_path=None):
        store, used = self.context.store, self.context.used
        if self.constructing and self.constructing[-1] == key:
            self.constructing.pop()
        for entry in self.inner_layers:
            if entry[1] == key:
                entry[1] = layer
        if shared_path is not None:
            # This mode's own object, named as the first one: its weights are
            # that one's variables, found by path (`find_weight`).
            layer.name = shared_path.rpartition("/")[2]
            store.created_layers[f"{shared_path}@{self.context.mode}"] = layer
            store.layer_order.entries[key] = (shared_path, _arguments(args, kwargs))
            for each in _keras_internals.layer_tree(layer):
                _tf1_weight_names(each)
            used[shared_path] = layer
            return
        name = base = layer.name
        path = f"{scope}/{name}" if scope else name
        suffix = 0
        while path in store.created_layers or path in used:
            suffix += 1
            name = f"{base}_{suffix}"
            path = f"{scope}/{name}" if scope else name
        if name != base:
            layer.name = name
        store.created_layers[path] = layer
        for each in _keras_internals.layer_tree(layer):
            _tf1_weight_names(each)
        store.layer_order.entries[key] = (path, _arguments(args, kwargs))
        used[path] = layer

    def find_weight(self, layer, path, shape):
        """The variable another mode's build made at `path` (TF1 shared variables by name).

        Raises:
            ValueError: TF1's error when its shape is not `shape`.
        """
        if not self.context.building:
            return None
        renames = _tf1_renames(type(layer)) or {}
        parent, _, name = path.rpartition("/")
        existing = self.earlier.get(f"{parent}/{renames.get(name, name)}")
        if existing is not None and tuple(existing.shape) != tuple(shape):
            raise ValueError(
                f"Trying to share variable {existing.path}, but specified shape "
                f"{tuple(shape)} and found shape {tuple(existing.shape)}."
            )
        return existing

    def _reused(self, key, where, path, layer, args, kwargs):
        _, expected = self.context.store.layer_order.entries[key]
        received = _arguments(args, kwargs)
        if received != expected:
            raise ValueError(
                f"model_fn created {where} with other arguments than in an "
                f"earlier call, which created the layer {path!r}.\n"
                f"  earlier: {expected}\n  now:     {received}\n"
                "Keras layers created inside model_fn are given back on every "
                "later call: create them with the same arguments on every call "
                "(in every mode)."
            )
        for each in _keras_internals.layer_tree(layer):
            _keras_internals.reserve_object_name(each.name)
        self.context.used.setdefault(path, layer)
