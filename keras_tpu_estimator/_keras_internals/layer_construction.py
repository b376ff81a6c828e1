"""Keras reaches for the layers `model_fn` constructs (`keras_tpu_estimator.layer_capture`).

Keras layers a `model_fn` creates itself are observed as they are
constructed (`Layer.__new__`), given back on later calls, and named as
TensorFlow 1 named them: Keras's name counters, variable renames and build
hooks are private, and kept here. `tests/test_keras_layers_in_model_fn.py`
pins each of them.
"""

import contextlib
import functools
import threading

from keras.src.backend.common import global_state

from keras_tpu_estimator._keras_internals.global_attributes import global_attribute

_layers_local = threading.local()
_layers_lock = threading.Lock()
_layers_users = 0
_LAYER_NEW = None
_MODEL_NEW = None
_ADD_WEIGHT = None
_INIT_CLASSES = {}


@contextlib.contextmanager
def object_names(uids):
    """Keras's automatic names (`dense`, `dense_1`, ...) count in `uids` inside the block.

    Keras numbers automatic names with one process-wide counter per prefix
    (`naming.uniquify`), so the n-th `Dense` is `dense_<n-1>` however many
    were made before; TF1 counted per graph. `uids` is a
    `collections.defaultdict(int)`, e.g. a fresh one per `model_fn` call.
    """
    with global_attribute("object_name_uids", uids):
        yield


def reserve_object_name(name):
    """Counts `name` as taken in the current automatic-name counters.

    `dense_2` makes the next automatic `dense` name `dense_3` at least; a
    name without a `_<n>` suffix counts as the first of its prefix.
    """
    uids = global_state.get_global_attribute("object_name_uids")
    if uids is None:
        return
    prefix, _, suffix = name.rpartition("_")
    if prefix and suffix.isdigit():
        uids[prefix] = max(uids[prefix], int(suffix) + 1)
    else:
        uids[name] = max(uids[name], 1)


def rename_variable(variable, name):
    """Gives `variable` the last path component `name` (`dense/kernel` -> `dense/<name>`)."""
    parent, _, _ = variable.path.rpartition("/")
    variable._name = name
    variable._path = f"{parent}/{name}" if parent else name


def after_build(layer, callback):
    """Calls `callback(layer)` right after `layer` builds (creates its weights).

    Keras's `Layer.__new__` sets `build` as an attribute of each layer (its
    build wrapper); this wraps that attribute, before anything reads the
    new weights.
    """
    build = layer.__dict__["build"]

    @functools.wraps(build)  # Keras reads the argument names of `build`.
    def build_then_report(*args, **kwargs):
        build(*args, **kwargs)
        callback(layer)

    object.__setattr__(layer, "build", build_then_report)


def layer_tree(layer):
    """`layer` and every layer it holds, recursively."""
    return layer._flatten_layers(include_self=True, recursive=True)


def _observed_class(base):
    """A subclass of `base` whose `__init__` runs `base`'s and then reports it.

    Python calls the `__init__` of the type `__new__` returned: giving the new
    object this class for the length of its construction is how the end of
    a subclass's `__init__` (its sublayers created) is observed.
    """
    cls = _INIT_CLASSES.get(base)
    if cls is None:
        def __init__(self, *args, **kwargs):
            object.__setattr__(self, "__class__", base)
            report = _layers_local.pending.pop()
            _layers_local.depth += 1
            try:
                base.__init__(self, *args, **kwargs)
            finally:
                _layers_local.depth -= 1
            if report is not None:
                report(self, args, kwargs)

        cls = type(base.__name__, (base,), {"__init__": __init__, "__module__": base.__module__})
        _INIT_CLASSES[base] = cls
    return cls


def _reused_class(base):
    """A subclass of `base` whose `__init__` only gives the object `base` back."""
    key = (base, "reused")
    cls = _INIT_CLASSES.get(key)
    if cls is None:
        def __init__(self, *args, **kwargs):
            object.__setattr__(self, "__class__", base)
            report = _layers_local.pending.pop()
            if report is not None:
                report(self, args, kwargs)

        cls = type(base.__name__, (base,), {"__init__": __init__, "__module__": base.__module__})
        _INIT_CLASSES[key] = cls
    return cls


def _inside_a_layer():
    """Whether a Keras layer is building or calling now (its name scope is open)."""
    stack = global_state.get_global_attribute("name_scope_stack") or ()
    return any(getattr(scope, "caller", None) is not None for scope in stack)


def calling_layers():
    """The layers whose call is in progress now (their name scope open), innermost first."""
    stack = global_state.get_global_attribute("name_scope_stack") or ()
    return [scope.caller for scope in reversed(stack) if getattr(scope, "caller", None) is not None]


def track_sublayers(owner, layers):
    """Makes `owner` track `layers` as its own sublayers, even once it is built.

    Keras tracks the layers a layer holds in its attributes, lists and dicts;
    a layer held by a plain Python object is not tracked. Its weights then
    belong to no model: tracking it on `owner` makes them `owner`'s.
    """
    tracker = owner._tracker
    locked = tracker.locked
    tracker.unlock()
    try:
        for layer in layers:
            if not tracker.is_in_store("layers", layer):
                tracker.add_to_store("layers", layer)
    finally:
        if locked:
            tracker.lock()


def _model_new(cls, *args, **kwargs):
    # `keras.Model.__new__` calls `Layer.__new__` without the arguments:
    # kept here for the observer.
    _layers_local.model_arguments = (args, kwargs)
    try:
        return _MODEL_NEW(cls, *args, **kwargs)
    finally:
        _layers_local.model_arguments = None


def _finding_add_weight(self, *args, **kwargs):
    finders = getattr(_layers_local, "weight_finders", None)
    name = kwargs.get("name")
    if finders and finders[-1] is not None and isinstance(name, str):
        from keras.src.backend.common.name_scope import current_path
        from keras.src.backend.common.name_scope import name_scope

        with name_scope(self.name, caller=self):
            path = f"{current_path()}/{name}"
        shape = kwargs.get("shape", args[0] if args else None)
        existing = finders[-1](self, path, () if shape is None else tuple(shape))
        if existing is not None:
            self._track_variable(existing)
            return existing
    return _ADD_WEIGHT(self, *args, **kwargs)


def _observing_new(cls, *args, **kwargs):
    observers = getattr(_layers_local, "observers", None)
    if not observers or _layers_local.depth or _inside_a_layer():
        layer = _LAYER_NEW(cls, *args, **kwargs)
        inner = _layers_local.inner[-1] if observers else None
        if inner is not None:
            inner(layer)
        return layer
    if not args and not kwargs and getattr(_layers_local, "model_arguments", None):
        args, kwargs = _layers_local.model_arguments
    existing, report = observers[-1](cls, args, kwargs)
    if existing is not None:
        if type(existing) is cls:
            # The object is constructed already: its `__init__` must not run again.
            object.__setattr__(existing, "__class__", _reused_class(cls))
            _layers_local.pending.append(report)
        return existing
    layer = _LAYER_NEW(cls, *args, **kwargs)
    if type(layer) is not cls:  # e.g. `keras.Model(inputs, outputs)` is a Functional.
        return layer
    object.__setattr__(layer, "__class__", _observed_class(cls))
    _layers_local.pending.append(report)
    return layer


def _thread_state():
    if not hasattr(_layers_local, "observers"):
        _layers_local.observers, _layers_local.pending, _layers_local.depth = [], [], 0
        _layers_local.inner, _layers_local.weight_finders = [], []
        _layers_local.model_arguments = None


@contextlib.contextmanager
def layer_constructions(observer, inner=None, find_weight=None):
    """Calls `observer` for each Keras layer constructed in this thread inside the block.

    Only layers constructed directly are reported: not the sublayers a
    layer creates (in its `__init__`, `build` or `call`), nor layers made
    inside `constructions_paused`. Those are given to `inner(layer)`, if
    given, as soon as they are allocated (before their `__init__` runs).

    With `find_weight`, a weight a layer adds (`Layer.add_weight`) is
    `find_weight(layer, path, shape)` when that is not None: an existing
    variable, shared by its path, as TF1 shared variables by name.

    Args:
        observer: `observer(cls, args, kwargs)`, called before the layer is
            made, returns `(existing, report)`: `existing` an object to return
            instead of a new layer (if it is a `cls`, its `__init__` does not
            run again), or None to construct one; then `report(layer, args,
            kwargs)` (unless `report` is None) is called with the constructor's
            arguments once the layer is constructed (`args` may be empty in
            `__new__` for Keras models: `keras.Model.__new__` drops them).
    """
    global _layers_users, _LAYER_NEW, _MODEL_NEW, _ADD_WEIGHT
    from keras.src.layers.layer import Layer
    from keras.src.models.model import Model

    with _layers_lock:
        if _layers_users == 0:
            _LAYER_NEW = Layer.__dict__["__new__"].__func__
            _MODEL_NEW = Model.__dict__["__new__"].__func__
            _ADD_WEIGHT = Layer.__dict__["add_weight"]
            Layer.__new__ = staticmethod(_observing_new)
            Model.__new__ = staticmethod(_model_new)
            Layer.add_weight = _finding_add_weight
        _layers_users += 1
    _thread_state()
    _layers_local.observers.append(observer)
    _layers_local.inner.append(inner)
    _layers_local.weight_finders.append(find_weight)
    saved_depth, _layers_local.depth = _layers_local.depth, 0
    try:
        yield
    finally:
        _layers_local.observers.pop()
        _layers_local.inner.pop()
        _layers_local.weight_finders.pop()
        _layers_local.depth = saved_depth
        with _layers_lock:
            _layers_users -= 1
            if _layers_users == 0:
                Layer.__new__ = staticmethod(_LAYER_NEW)
                Model.__new__ = staticmethod(_MODEL_NEW)
                Layer.add_weight = _ADD_WEIGHT


@contextlib.contextmanager
def constructions_paused():
    """Layers constructed inside the block are not reported to `layer_constructions`."""
    _thread_state()
    _layers_local.depth += 1
    try:
        yield
    finally:
        _layers_local.depth -= 1
