"""TF1 variable scopes and `get_variable`, with TF1's names.

Variable names are an API: checkpoints, weight-decay exclusions
(`LayerNorm|bias`), frozen-prefix `var_list`s and EMA shadows select
variables by name. This module gives `model_fn` code TF1's naming on the
library's variable store:

- `variable_scope(name)` prefixes names (`bert/encoder/layer_0/...`);
  `variable_scope(None, default_name="dense")` and the unnamed `tf1.layers`
  number `dense`, `dense_1`, ... within the enclosing scope, counting from
  zero on every `model_fn` call so every trace (build, train, eval,
  predict) replays the same names;
- `reuse=True` / `AUTO_REUSE` / `scope.reuse_variables()` share variables
  within a call, and asking twice for a variable without reuse is TF1's
  "already exists" error;
- `trainable_variables()` / `global_variables()` list the variables used so
  far in this call, in creation order, as `VariableView`s whose `.name` is
  TF1's `scope/var:0` (they live in `_variable_views`, shared with `graph`,
  and are exported here as well).

A variable is created on the first (build) call of `model_fn` and found again
on every later call, as with `kte.get_variable`, which these functions build
on.

```python
with tf1.variable_scope("bert", reuse=tf1.AUTO_REUSE):
    with tf1.variable_scope("embeddings"):
        table = tf1.get_variable("word_embeddings", [vocab, 128],
                                 initializer=tf1.truncated_normal_initializer(stddev=0.02))
decay_vars = [v for v in tf1.trainable_variables()
              if not re.search("LayerNorm|bias", v.name)]
```
"""

import contextlib
import enum

import keras

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.compat.v1 import dtypes
from keras_tpu_estimator.compat.v1 import initializers
from keras_tpu_estimator.model_fn import store as store_lib
# A private alias: the converter reads this module's public names as TF1's.
from keras_tpu_estimator.compat.v1._op_helpers import resolve_initializer as _resolve_initializer
from keras_tpu_estimator.compat.v1._op_helpers import computed_dtype as _computed_dtype
from keras_tpu_estimator.compat.v1._op_helpers import inferred_dtype as _inferred_dtype
# The views and collections, exported here as they always were.
from keras_tpu_estimator.model_fn.tensor_shape import TensorShape  # noqa: F401
from keras_tpu_estimator.compat.v1._variable_views import VariableView  # noqa: F401
from keras_tpu_estimator.compat.v1._variable_views import all_variables  # noqa: F401
from keras_tpu_estimator.compat.v1._variable_views import global_variables  # noqa: F401
from keras_tpu_estimator.compat.v1._variable_views import keras_variable  # noqa: F401
from keras_tpu_estimator.compat.v1._variable_views import model_variables  # noqa: F401
from keras_tpu_estimator.compat.v1._variable_views import trainable_variables  # noqa: F401
from keras_tpu_estimator.compat.v1.graph import GraphKeys
from keras_tpu_estimator.compat.v1.graph import add_to_collection
from keras_tpu_estimator.compat.v1.graph import current_graph


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE
"""`reuse=AUTO_REUSE`: create a variable if it does not exist, else share it."""

_REUSE_VALUES = (None, False, True, AUTO_REUSE)


def _join(parent, name):
    return f"{parent}/{name}" if parent else name


class VariableScope:
    """What `with tf1.variable_scope(...) as vs` gives: a scope to re-enter.

    Attributes:
        name: the scope's full path (`"bert/encoder"`; `""` at the top).
        original_name_scope: `name + "/"` (`""` at the top).
        reuse: None, True or `AUTO_REUSE`.
        initializer, regularizer, dtype, custom_getter: the defaults
            `get_variable` uses inside the scope.
    """

    def __init__(self, name, reuse=None, initializer=None, regularizer=None,
                 dtype=None, custom_getter=None):
        self.name = name
        self.reuse = reuse
        self.initializer = initializer
        self.regularizer = regularizer
        self.dtype = dtype
        self.custom_getter = custom_getter

    @property
    def original_name_scope(self):
        return f"{self.name}/" if self.name else ""

    def reuse_variables(self):
        """Shares variables for the rest of this scope (TF1's `reuse=True`)."""
        self.reuse = True

    def set_initializer(self, initializer):
        self.initializer = initializer

    def set_regularizer(self, regularizer):
        self.regularizer = regularizer

    def set_dtype(self, dtype):
        self.dtype = dtype

    # TF1's partitioner: always None here (variables are laid out by the
    # distribution, not partitioned); code that saves and restores it works.
    partitioner = None

    def set_partitioner(self, partitioner):
        if partitioner is not None:
            raise NotImplementedError(
                f"VariableScope.set_partitioner({partitioner!r}) is not supported: variables "
                "are sharded by the distribution's layout map, not partitioned.")

    def __repr__(self):
        return f"VariableScope(name={self.name!r}, reuse={self.reuse!r})"


def get_variable_scope():
    """Returns the innermost open `VariableScope` (the top-level one outside all)."""
    graph = current_graph()
    if not graph.scopes:
        graph.scopes.append(VariableScope(""))
    return graph.scopes[-1]


def _unique_name(graph, parent, base):
    """TF1's `_get_unique_variable_scope`: `base`, `base_1`, ... unused so far."""
    if not graph.scope_counts.get(_join(parent, base)):
        return base
    index = 1
    while graph.scope_counts.get(_join(parent, f"{base}_{index}")):
        index += 1
    return f"{base}_{index}"


@contextlib.contextmanager
def absolute_scope(path):
    """Makes `path` the current Keras name scope: variables are created under it."""
    if not path:
        with _keras_internals.top_level_name_scope():
            yield
        return
    parent, _, last = path.rpartition("/")
    with keras.name_scope(last, override_parent=parent):
        yield


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, initializer=None,
                   regularizer=None, caching_device=None, partitioner=None,
                   custom_getter=None, reuse=None, dtype=None, use_resource=None,
                   constraint=None, auxiliary_name_scope=True):
    """Opens a TF1 variable scope: names `get_variable` and layer variables.

    Args:
        name_or_scope: a name (may contain `/`), a `VariableScope` to
            re-enter, or None with `default_name`.
        default_name: with `name_or_scope=None`, the name made unique in the
            enclosing scope (`block`, `block_1`, ...) on every call.
        values: ignored (TF1 used it for graph checks).
        initializer: default initializer of `get_variable` in the scope.
        regularizer: default regularizer of `get_variable` in the scope.
        custom_getter: `getter(next_getter, name, *args, **kwargs)` wrapping
            `get_variable` in the scope, as in TF1.
        reuse: None/False (inherit), True (share; the variable must exist in
            this call) or `AUTO_REUSE`.
        dtype: default dtype of `get_variable` in the scope.
        caching_device, use_resource, constraint, auxiliary_name_scope:
            accepted and ignored.
        partitioner: not supported (variables are sharded by the
            distribution's layout map instead).

    Yields:
        The `VariableScope`.

    Raises:
        ValueError: for an invalid name or `reuse`, `reuse=True` without a
            name, or no name and no `default_name`.
        NotImplementedError: for a `partitioner`.

    Example:

    ```python
    for i in range(num_layers):
        with tf1.variable_scope(f"layer_{i}"):
            x = tf1.layers.dense(x, hidden)        # layer_0/dense/kernel, ...
    ```
    """
    del values, caching_device, use_resource, constraint, auxiliary_name_scope
    if partitioner is not None:
        raise NotImplementedError(
            "variable_scope(partitioner=...) is not supported: variables are "
            "sharded by the distribution's layout map (TPUConfig."
            "num_cores_per_replica), not partitioned. Remove the partitioner."
        )
    if reuse not in _REUSE_VALUES:
        raise ValueError(
            f"Argument `reuse` of variable_scope must be None, False, True or "
            f"AUTO_REUSE. Received: reuse={reuse!r}"
        )
    graph = current_graph()
    outer = get_variable_scope()
    restore_counts = None
    if isinstance(name_or_scope, VariableScope):
        path, defaults = name_or_scope.name, name_or_scope
        restore_counts = dict(graph.scope_counts)
    elif name_or_scope is None:
        if default_name is None:
            raise ValueError(
                "variable_scope needs `name_or_scope` or `default_name`: both are None."
            )
        if reuse is True:
            raise ValueError("reuse=True cannot be used without a name_or_scope.")
        parent = _keras_internals.variable_scope_path()
        path, defaults = _join(parent, _unique_name(graph, parent, default_name)), outer
    elif isinstance(name_or_scope, str) and name_or_scope.strip("/"):
        path = _join(_keras_internals.variable_scope_path(), name_or_scope.strip("/"))
        defaults = outer
    else:
        raise ValueError(
            "Argument `name_or_scope` of variable_scope must be a non-empty "
            f"string, a VariableScope or None. Received: {name_or_scope!r}"
        )
    new = VariableScope(
        path,
        reuse=reuse or defaults.reuse,
        initializer=initializer if initializer is not None else defaults.initializer,
        regularizer=regularizer if regularizer is not None else defaults.regularizer,
        dtype=dtype if dtype is not None else defaults.dtype,
        custom_getter=_compose(custom_getter, defaults.custom_getter),
    )
    graph.scope_counts[path] = graph.scope_counts.get(path, 0) + 1
    graph.scopes.append(new)
    try:
        with _keras_internals.variable_scope_entry(path):
            yield new
    finally:
        graph.scopes.pop()
        if restore_counts is not None:
            graph.scope_counts = restore_counts
        else:
            # TF1: leaving a scope resets the numbering of its sub-scopes, so
            # re-entering `layer_0` finds `layer_0/dense` again.
            for key in graph.scope_counts:
                if key.startswith(path + "/"):
                    graph.scope_counts[key] = 0


def _compose(inner, outer):
    """TF1 nests custom getters: the inner scope's wraps the outer one's."""
    if inner is None or outer is None:
        return inner or outer

    def composed(getter, *args, **kwargs):
        return inner(lambda *a, **k: outer(getter, *a, **k), *args, **kwargs)

    return composed


def _used_paths():
    """`{path: variable or layer}` of everything this call has used, layer
    variables included."""
    found = {}
    for path, owner in store_lib.used_in_call().items():
        found[path] = owner
        if not isinstance(owner, keras.Variable):
            found.update((v.path, v) for v in owner.weights)
    return found


def check_reuse(path, reuse, what="Variable", used_paths=None):
    """Raises TF1's error when `path`'s use in this call contradicts `reuse`.

    Args:
        path: the variable's (or layer's) full path.
        reuse: the scope's reuse: None/False, True or `AUTO_REUSE`.
        what: `"Variable"` or `"Layer"`, for the message.
        used_paths: the paths used so far in this call, if already known.

    Raises:
        ValueError: `reuse=True` for a path not used yet in this call, or
            no reuse for one already used.
    """
    used = path in (_used_paths() if used_paths is None else used_paths)
    if reuse is True and not used:
        raise ValueError(
            f"{what} {path} does not exist, or was not created with "
            "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in VarScope?"
        )
    if not reuse and used:
        raise ValueError(
            f"{what} {path} already exists, disallowed. Did you mean to set "
            "reuse=True or reuse=tf.AUTO_REUSE in VarScope?"
        )


def _default_initializer(dtype):
    if dtypes.as_dtype(dtype).is_floating:
        return initializers.glorot_uniform_initializer()
    return initializers.zeros_initializer()


def _true_getter(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, reuse=None, **unused):
    graph = current_graph()
    reuse = reuse if reuse is not None else get_variable_scope().reuse
    used_paths = _used_paths()
    check_reuse(name, reuse, used_paths=used_paths)
    existing = used_paths.get(name)
    if isinstance(existing, keras.Variable) and name not in store_lib.used_in_call():
        return existing  # A layer's variable, shared by name.
    exists = existing is not None
    dtype = dtypes.as_dtype(dtype if dtype is not None else dtypes.float32)
    cast_to = None
    if graph.bfloat16 and dtype == dtypes.bfloat16:
        # bfloat16_scope: stored in float32, read in bfloat16 (TF1's getter).
        dtype, cast_to = dtypes.float32, dtypes.bfloat16
    initializer = _resolve_initializer(initializer)
    if initializer is None:
        initializer = _default_initializer(dtype)
    parent, _, last = name.rpartition("/")
    with absolute_scope(parent):
        variable = store_lib.get_variable(
            last, shape=shape, dtype=str(dtype), initializer=initializer,
            trainable=True if trainable is None else bool(trainable),
        )
    if regularizer is not None and not exists:
        penalty = regularizer(variable)
        if penalty is not None:  # TF1's 0.0-scale regularizers give None: nothing added.
            add_to_collection(GraphKeys.REGULARIZATION_LOSSES, penalty)
    return keras.ops.cast(variable, cast_to) if cast_to else variable


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None,
                 partitioner=None, validate_shape=True, use_resource=None,
                 custom_getter=None, constraint=None, synchronization=None,
                 aggregation=None):
    """Gets or creates the variable `name` in the current `variable_scope`.

    TF1's defaults: dtype float32, initializer the scope's, else Glorot
    uniform for floats and zeros for integers. Created on the first call of
    `model_fn`, found again on every later call.

    Args:
        name: the name inside the current scope (may contain `/`).
        shape: the shape (list or tuple of ints); omit with a constant
            `initializer`.
        dtype: a `tf1` dtype or dtype name; default: a constant `initializer`'s own
            (TF's inference: `[1, 2]` int32), else the scope's (float32).
        initializer: an initializer (object or class), a callable
            `(shape, dtype)`, or a constant array.
        regularizer: `fn(variable) -> scalar`, added to
            `GraphKeys.REGULARIZATION_LOSSES` when the variable is created in
            this call (not when it is reused).
        trainable: whether the optimizer updates it (default True).
        custom_getter: wraps the creation, as in TF1.
        collections, caching_device, validate_shape, use_resource,
            constraint, synchronization, aggregation: accepted and ignored.
        partitioner: not supported.

    Returns:
        The `keras.Variable` (a bfloat16 tensor reading it inside
        `bfloat16_scope` when `dtype` is bfloat16).

    Raises:
        ValueError: for a shape that differs from the stored variable's, a
            variable asked for twice without reuse, or one asked for with
            `reuse=True` that this call has not created.

    Example:

    ```python
    with tf1.variable_scope("output"):
        w = tf1.get_variable("weights", [hidden, num_labels],
                             initializer=tf1.truncated_normal_initializer(stddev=0.02))
        b = tf1.get_variable("bias", [num_labels], initializer=tf1.zeros_initializer())
    ```
    """
    del collections, caching_device, validate_shape, use_resource, constraint
    del synchronization, aggregation
    if partitioner is not None:
        raise NotImplementedError(
            f"get_variable({name!r}, partitioner=...) is not supported: "
            "variables are sharded by the distribution's layout map instead."
        )
    if not isinstance(name, str) or not name.strip("/"):
        raise ValueError(
            f"Argument `name` of get_variable must be a non-empty string. Received: {name!r}"
        )
    if shape is not None and any(d is None for d in shape):
        raise ValueError(
            f"Argument `shape` of get_variable({name!r}) must be fully defined. "
            f"Received: shape={shape!r}"
        )
    current = get_variable_scope()
    full = _join(_keras_internals.variable_scope_path(), name.strip("/"))
    initializer = initializer if initializer is not None else current.initializer
    if dtype is None and _is_constant(initializer):
        # As TF1: a constant initializer gives the variable its own dtype (int ids stay ints).
        dtype = _computed_dtype(_inferred_dtype(initializer))
    kwargs = dict(
        shape=None if shape is None else tuple(int(d) for d in shape),
        dtype=dtype if dtype is not None else current.dtype,
        initializer=initializer,
        regularizer=regularizer if regularizer is not None else current.regularizer,
        trainable=trainable,
    )
    getter = _compose(custom_getter, current.custom_getter)
    if getter is not None:
        return getter(_true_getter, full, **kwargs)
    return _true_getter(full, **kwargs)


def Variable(initial_value=None, trainable=None, collections=None, validate_shape=True,  # noqa: N802
             caching_device=None, name=None, variable_def=None, dtype=None,
             expected_shape=None, import_scope=None, constraint=None, use_resource=None,
             synchronization=None, aggregation=None, shape=None):
    """TF1's `tf.Variable`: a new variable holding `initial_value`, named uniquely.

    As in TF1, every call makes another variable: `name` (default
    `"Variable"`) under the current variable scope, then `name_1`, `name_2`,
    ... within one `model_fn` call; the scope's `reuse`, initializer and
    regularizer do not apply. (TF1 named it by the name scope, which differs
    from the variable scope only where a variable scope is entered again:
    TF1's second `block` name scope is `block_1`.) Since `model_fn` is called again for every
    trace, the variable is created on the first call and found again, by
    that name, on the later ones (as `get_variable`'s are).

    Args:
        initial_value: a value, an array, a tensor computed in `model_fn`,
            or a callable returning one.
        trainable: whether the optimizer updates it (default True).
        name: the name (default `"Variable"`).
        dtype: the dtype; default: `initial_value`'s (TF's inference).
        collections, validate_shape, caching_device, variable_def,
            expected_shape, import_scope, constraint, use_resource,
            synchronization, aggregation, shape: accepted and ignored.

    Returns:
        The `keras.Variable`.

    Raises:
        ValueError: without `initial_value`.

    Example:

    ```python
    seen = tf1.Variable(0, trainable=False, name="examples_seen")
    update = tf1.assign_add(seen, tf1.shape(features)[0])
    ```
    """
    del collections, validate_shape, caching_device, variable_def, expected_shape
    del import_scope, constraint, use_resource, synchronization, aggregation, shape
    if initial_value is None:
        raise ValueError("initial_value must be specified.")
    if callable(initial_value):
        initial_value = initial_value()
    base = _join(_keras_internals.variable_scope_path(), (name or "Variable").strip("/"))
    used, path, index = _used_paths(), base, 0
    while path in used:  # TF1's unique names within the graph (this call).
        index += 1
        path = f"{base}_{index}"
    if dtype is None:
        dtype = _computed_dtype(_inferred_dtype(initial_value))
    return _true_getter(path, dtype=dtype, initializer=initial_value, trainable=trainable,
                        reuse=AUTO_REUSE)


VariableV1 = Variable


def _is_constant(initializer):
    """Whether `initializer` is a value (an array, a list, a number), not an initializer."""
    return initializer is not None and not callable(initializer) and not isinstance(
        initializer, (str, type))


@contextlib.contextmanager
def bfloat16_scope(name=None):
    """Computes in bfloat16 while variables stay float32 (`tf.tpu.bfloat16_scope`).

    Inside, `get_variable(dtype=bfloat16)` creates a float32 variable and
    returns it cast to bfloat16, and `tf1.layers` created here keep float32
    variables and compute in bfloat16 (Keras's `mixed_bfloat16` policy).
    Variable names do not change, so float32 checkpoints load as before.

    Args:
        name: an optional `variable_scope` name opened as well.

    Yields:
        The `VariableScope` in force.

    Example:

    ```python
    with tf1.tpu.bfloat16_scope():
        logits = network(tf1.cast(images, tf1.bfloat16))
    logits = tf1.cast(logits, tf1.float32)
    ```
    """
    graph = current_graph()
    previous, graph.bfloat16 = graph.bfloat16, True
    try:
        if name:
            with variable_scope(name) as vs:
                yield vs
        else:
            yield get_variable_scope()
    finally:
        graph.bfloat16 = previous
