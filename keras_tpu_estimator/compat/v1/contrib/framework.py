"""`tf.contrib.framework` (and slim's spellings): arg scopes, model variables, checkpoint loads.

What TPU programs take from it: `arg_scope`/`add_arg_scope` (re-exported
from `contrib._arg_scope`), `variable`/`model_variable` (a hand-written batch
norm's `beta`, `moving_mean`, ...), the `get_*variables*` filters, the global
step, and `assign_from_checkpoint_fn`, which here is a warm start:

```python
def model_fn(features, labels, mode, params):
    with tf1.variable_scope("bn"):
        beta = tf1.contrib.framework.model_variable(
            "beta", [64], initializer=tf1.zeros_initializer())
    ...
    init_fn = tf1.contrib.framework.assign_from_checkpoint_fn(
        "pretrained/model.ckpt-1000",
        tf1.contrib.framework.get_variables_to_restore(exclude=["logits"]))
```

The variables listed take the checkpoint's values when they are created
(the first build of `model_fn`), exactly where TF1 ran the callback: on a
fresh start, before a `model_dir` checkpoint (which wins) is restored.
"""

import keras

from keras_tpu_estimator.checkpoint import WarmStartReport as _WarmStartReport
from keras_tpu_estimator.checkpoint import checkpoint_reader as _checkpoint_reader
from keras_tpu_estimator.compat.v1 import dtypes as _dtypes
from keras_tpu_estimator.compat.v1 import graph as _graph
from keras_tpu_estimator.compat.v1 import training_ops as _training_ops
from keras_tpu_estimator.compat.v1 import variables as _variables
from keras_tpu_estimator.model_fn import initialization as _initialization
from keras_tpu_estimator.model_fn import store as _store
from keras_tpu_estimator.compat.v1._global_step import get_global_step  # noqa: F401
from keras_tpu_estimator.compat.v1._global_step import get_or_create_global_step  # noqa: F401
from keras_tpu_estimator.compat.v1._variable_views import VariableView as _VariableView
from keras_tpu_estimator.compat.v1._variable_views import keras_variable as _keras_variable
from keras_tpu_estimator.compat.v1.contrib._arg_scope import add_arg_scope
from keras_tpu_estimator.compat.v1.contrib._arg_scope import arg_scope  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib._arg_scope import arg_scoped_arguments  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib._arg_scope import current_arg_scope  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib._arg_scope import has_arg_scope  # noqa: F401
from keras_tpu_estimator.log_lines import logger as _logger

_GraphKeys = _graph.GraphKeys
# Collections the variable store computes (`graph.get_collection`): never stored.
_COMPUTED = frozenset(
    [_GraphKeys.GLOBAL_VARIABLES, _GraphKeys.TRAINABLE_VARIABLES, _GraphKeys.MODEL_VARIABLES]
)


# ----------------------------------------------------------------------
# Variables.


@add_arg_scope
def variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
             trainable=True, collections=None, caching_device=None, device=None,
             partitioner=None, custom_getter=None, use_resource=None,
             synchronization=None, aggregation=None):
    """Gets or creates a variable, as `tf.contrib.framework.variable`.

    `tf1.get_variable` under the current `variable_scope` (so `name` becomes
    `scope/name`), with slim's additions: a new variable joins the
    `collections` listed (besides the variable collections, which the store
    computes), and `device` is ignored (JAX places variables by the
    distribution's layout).

    Args:
        name: the name within the current variable scope.
        shape: the shape (list or tuple of ints).
        dtype: a `tf1` dtype or name (default: the scope's, else float32).
        initializer: as `tf1.get_variable`'s.
        regularizer: `fn(variable) -> scalar`, added to
            `GraphKeys.REGULARIZATION_LOSSES` when the variable is created.
        trainable: whether the optimizer updates it.
        collections: names of collections the new variable joins (e.g.
            `GraphKeys.MOVING_AVERAGE_VARIABLES`, or the program's own).
        custom_getter: wraps the creation, as in TF1.
        device, caching_device, use_resource, synchronization, aggregation:
            accepted and ignored.
        partitioner: not supported (see `tf1.get_variable`).

    Returns:
        The `keras.Variable` (as `tf1.get_variable` returns it).

    Raises:
        ValueError: for `collections` that is not a string or a list of
            strings, and as `tf1.get_variable` does.

    Example:

    ```python
    with tf1.variable_scope("BatchNorm"):
        moving_mean = tf1.contrib.framework.variable(
            "moving_mean", [64], initializer=tf1.zeros_initializer(), trainable=False,
            collections=[tf1.GraphKeys.MOVING_AVERAGE_VARIABLES])
    ```
    """
    del caching_device, device, use_resource, synchronization, aggregation
    collections = _collection_names(collections)
    used_before = set(_store.used_in_call())
    value = _variables.get_variable(
        name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
        trainable=trainable, partitioner=partitioner, custom_getter=custom_getter,
    )
    found = _keras_variable(value)
    if isinstance(found, keras.Variable) and found.path not in used_before:
        view = _VariableView(found)
        for collection in collections:
            if collection not in _COMPUTED:
                _graph.add_to_collection(collection, view)
    return value


@add_arg_scope
def model_variable(name, shape=None, dtype=_dtypes.float32, initializer=None,
                   regularizer=None, trainable=True, collections=None, caching_device=None,
                   device=None, partitioner=None, custom_getter=None, use_resource=None,
                   synchronization=None, aggregation=None):
    """Gets or creates a model variable, as `tf.contrib.framework.model_variable`.

    `variable` with dtype float32 by default; the variable is in
    `GraphKeys.MODEL_VARIABLES` (which, here, lists every variable
    `model_fn` has used) besides `collections`.

    Example:

    ```python
    weights = tf1.contrib.framework.model_variable(
        "weights", [5, 5, 3, 64], initializer=tf1.truncated_normal_initializer(stddev=0.1),
        regularizer=tf1.contrib.layers.l2_regularizer(0.05))
    ```
    """
    return variable(
        name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
        trainable=trainable, collections=collections, caching_device=caching_device,
        device=device, partitioner=partitioner, custom_getter=custom_getter,
        use_resource=use_resource, synchronization=synchronization, aggregation=aggregation,
    )


def _collection_names(collections):
    if collections is None:
        return []
    names = [collections] if isinstance(collections, str) else collections
    if not isinstance(names, (list, tuple, set)) or not all(isinstance(n, str) for n in names):
        raise ValueError(
            "Argument `collections` must be a collection name or a list of them. "
            f"Received: collections={collections!r}"
        )
    return list(dict.fromkeys(names))


def get_variables(scope=None, suffix=None, collection=_GraphKeys.GLOBAL_VARIABLES):
    """The variables of `collection` whose name starts with `scope` and holds `suffix`.

    As `tf.contrib.framework.get_variables`: `scope` (a regular expression
    matched at the start of the TF1 name, or a `VariableScope`) and `suffix`
    (the name's end before `:0`) filter the collection.

    Args:
        scope: a string or a `VariableScope`, or None for all.
        suffix: e.g. `"weights"`, or None.
        collection: a `GraphKeys` name (default: the global variables).

    Returns:
        A list of `VariableView`s (`.name` like `conv1/weights:0`), in
        creation order.

    Example:

    ```python
    tf1.contrib.framework.get_variables("InceptionV3/Logits")
    ```
    """
    if isinstance(scope, _variables.VariableScope):
        scope = scope.name
    if suffix is not None:
        if ":" not in suffix:
            suffix += ":"
        scope = (scope or "") + ".*" + suffix
    return _graph.get_collection(collection, scope)


def get_model_variables(scope=None, suffix=None):
    """`get_variables` of `GraphKeys.MODEL_VARIABLES` (here: every variable used)."""
    return get_variables(scope, suffix, _GraphKeys.MODEL_VARIABLES)


def get_trainable_variables(scope=None, suffix=None):
    """`get_variables` of `GraphKeys.TRAINABLE_VARIABLES`."""
    return get_variables(scope, suffix, _GraphKeys.TRAINABLE_VARIABLES)


def get_local_variables(scope=None, suffix=None):
    """`get_variables` of `GraphKeys.LOCAL_VARIABLES` (what the program added there)."""
    return get_variables(scope, suffix, _GraphKeys.LOCAL_VARIABLES)


def get_variables_by_suffix(suffix, scope=None):
    """The global variables whose name ends with `suffix` (before `:0`)."""
    return get_variables(scope=scope, suffix=suffix)


def get_variables_by_name(given_name, scope=None):
    """The global variables named `given_name` in any scope."""
    return get_variables(scope=scope, suffix=f"/{given_name}:|^{given_name}:")


def get_unique_variable(var_op_name):
    """The variable whose TF1 op name is `var_op_name` (`"conv1/weights"`).

    Raises:
        ValueError: if no variable, or more than one, has that name.
    """
    found = [v for v in get_variables(var_op_name) if v.op.name == var_op_name]
    if len(found) != 1:
        raise ValueError(
            f"get_unique_variable({var_op_name!r}): "
            f"{'no variable has' if not found else 'several variables have'} that name."
        )
    return found[0]


def get_variables_to_restore(include=None, exclude=None):
    """The global variables under the `include` scopes and none of the `exclude` ones.

    As `tf.contrib.framework.get_variables_to_restore`: each scope is a
    regular expression matched at the start of the variable's TF1 name.

    Args:
        include: a list or tuple of scopes, or None for every variable.
        exclude: a list or tuple of scopes, or None.

    Returns:
        A list of `VariableView`s, in creation order.

    Raises:
        TypeError: if `include` or `exclude` is given but not a list or tuple.

    Example:

    ```python
    variables = tf1.contrib.framework.get_variables_to_restore(exclude=["logits", "global_step"])
    ```
    """
    for argument, value in (("include", include), ("exclude", exclude)):
        if value is not None and not isinstance(value, (list, tuple)):
            raise TypeError(
                f"Argument `{argument}` of get_variables_to_restore must be a list or "
                f"tuple of scope names. Received: {argument}={value!r}"
            )
    if include is None:
        chosen = get_variables()
    else:
        chosen = [v for scope in include for v in get_variables(scope)]
    excluded = {v for scope in exclude or () for v in get_variables(scope)}
    return [v for v in chosen if v not in excluded]


# ----------------------------------------------------------------------
# Checkpoints.


def assign_from_checkpoint_fn(model_path, var_list, ignore_missing_vars=False,
                              reshape_variables=False):
    """Loads variables from a checkpoint when they are created; returns TF1's callback.

    In TF1 this built a `Saver` and returned `callback(session)` that the
    program ran once after initialization (a `Scaffold`'s `init_fn`), so a
    restored `model_dir` checkpoint took precedence. Here the load happens
    at the same point, by itself: call it in `model_fn` or `scaffold_fn`,
    and the variables of `var_list` take the checkpoint's values when the
    first build of `model_fn` creates them (as `tf1.train.init_from_checkpoint`
    does), never over trained or restored weights. The returned callback
    does nothing more; it stays so that TF1 code calling it keeps working.
    The checkpoint may be TensorFlow's (`tf.compat.v1.train.Saver`) or this
    library's.

    Args:
        model_path: a checkpoint prefix (`model.ckpt-1000`) or directory.
        var_list: a list of variables (each loaded from its own TF1 name), or
            a dict `{checkpoint name: variable or list of variables}`.
        ignore_missing_vars: if True, names missing from the checkpoint are
            skipped with a warning instead of raising.
        reshape_variables: if True, a checkpoint value with the variable's
            number of elements but another shape is reshaped to fit.

    Returns:
        `callback(session)`, which does nothing; None when
        `ignore_missing_vars` left no variable to load (as in TF1).

    Raises:
        ValueError: for an empty `var_list`, no checkpoint at `model_path`,
            a name missing from the checkpoint (without
            `ignore_missing_vars`), or a checkpoint value of another shape.
        TypeError: for an entry of `var_list` that is not a variable.
        RuntimeError: outside `model_fn`, `scaffold_fn` and a hook's
            `begin()` (where TF1's LoadEMAHook calls it, the returned
            callback loads when `after_create_session` calls it; elsewhere,
            to evaluate with moving averages, return
            `Scaffold(saver=tf1.train.Saver(ema.variables_to_restore()))`
            from `scaffold_fn` instead).

    Example:

    ```python
    def scaffold_fn():
        init_fn = tf1.contrib.framework.assign_from_checkpoint_fn(
            FLAGS.warm_start_path, tf1.contrib.framework.get_variables_to_restore(
                exclude=["logits"]), ignore_missing_vars=True)
        return tf1.train.Scaffold(init_fn=lambda scaffold, session: init_fn(session))
    ```
    """
    pairs = _load_request(model_path, var_list, ignore_missing_vars, reshape_variables,
                          "assign_from_checkpoint_fn")
    if not pairs:
        _logger.warning("assign_from_checkpoint_fn: no variables to restore from %s",
                        model_path)
        return None
    if _store.in_built_graph():  # A hook's begin(): the callback loads, as TF1's did.
        reader = _checkpoint_reader(model_path)

        def load(session):
            del session
            values = reader.read_many(sorted({name for name, _ in pairs}))
            for name, variable in pairs:
                variable.assign(values[name].reshape(variable.shape).astype(variable.dtype))
            _logger.info("assign_from_checkpoint_fn: loaded %d variables from %s",
                         len(pairs), reader.path)

        return load

    def callback(session):
        """The load already happened when the variables were created."""
        del session

    return callback


def assign_from_checkpoint(model_path, var_list, ignore_missing_vars=False):
    """`assign_from_checkpoint_fn` in TF1's op form: returns `(op, feed_dict)`.

    The load happens when the variables are created (see
    `assign_from_checkpoint_fn`); the op does nothing and the feed dict is
    empty.

    Returns:
        `(tf1.no_op(), {})`.
    """
    _load_request(model_path, var_list, ignore_missing_vars, False, "assign_from_checkpoint")
    return _training_ops.no_op(), {}


def _load_request(model_path, var_list, ignore_missing_vars, reshape, caller):
    """Checks the request and defers the load to the end of the build.

    Every trace checks alike (so each returns the same); only the build
    pass loads.

    Returns:
        The `(checkpoint name, keras.Variable)` pairs to load.
    """
    if not var_list:
        raise ValueError(f"Argument `var_list` of {caller} cannot be empty. "
                         f"Received: var_list={var_list!r}")
    try:
        _store.current_call(f"compat.v1.contrib.framework.{caller}")
    except RuntimeError:
        raise RuntimeError(
            f"{caller} loads variables as they are created, so it must be called in "
            "model_fn or scaffold_fn. To evaluate with moving averages (TF1's "
            "LoadEMAHook), return tf1.train.Scaffold(saver=tf1.train.Saver("
            "ema.variables_to_restore())) from the EVAL spec's scaffold_fn."
        ) from None
    if not isinstance(model_path, (str, bytes)) or not model_path:
        raise ValueError(f"Argument `model_path` of {caller} must be a checkpoint prefix "
                         f"or directory. Received: model_path={model_path!r}")
    reader = _checkpoint_reader(model_path)
    saved = reader.names()
    pairs = []
    for name, variable in _named_variables(var_list, caller):
        if name not in saved:
            if not ignore_missing_vars:
                raise ValueError(f"{caller}: checkpoint {reader.path} is missing variable "
                                 f"[{name}] (pass ignore_missing_vars=True to skip it).")
            _logger.warning("%s: variable %s missing in checkpoint %s", caller, name,
                            reader.path)
            continue
        shape, saved_shape = tuple(variable.shape), tuple(saved[name])
        fits = shape == saved_shape or (
            reshape and _size(shape) == _size(saved_shape))
        if not fits:
            raise ValueError(
                f"{caller}: {variable.path} has shape {shape} but the checkpoint's "
                f"{name!r} has shape {saved_shape}"
                + ("" if reshape else " (reshape_variables=True reshapes same-size values).")
            )
        pairs.append((name, variable))
    if pairs and not _store.in_built_graph():  # A trace has no build: values set then.
        _initialization.defer_to_end_of_build(lambda build: _load(reader, pairs, build))
    return pairs


def _named_variables(var_list, caller):
    if isinstance(var_list, dict):
        items = [(name, v) for name, value in var_list.items()
                 for v in (value if isinstance(value, (list, tuple)) else [value])]
    elif isinstance(var_list, (list, tuple)):
        items = [(None, v) for v in var_list]
    else:
        raise TypeError(f"Argument `var_list` of {caller} must be a list of variables or a "
                        f"dict of checkpoint name to variable. Received: {var_list!r}")
    named = []
    for name, value in items:
        variable = _keras_variable(value)
        if not isinstance(variable, keras.Variable):
            raise TypeError(f"{caller}: var_list holds {value!r}, which is not a variable "
                            "of model_fn.")
        named.append((variable.path if name is None else name.split(":")[0], variable))
    return named


def _size(shape):
    size = 1
    for dim in shape:
        size *= int(dim)
    return size


def _load(reader, pairs, build):
    """Assigns the checkpoint values to the variables this build created.

    Returns:
        A `kte.checkpoint.WarmStartReport` (variables created earlier, and so
        already initialized or trained, are left out).
    """
    new = {id(v) for v in build.new_variables().values()}
    pairs = [(name, v) for name, v in pairs if id(v) in new]
    values = reader.read_many(sorted({name for name, _ in pairs}))
    for name, variable in pairs:
        variable.assign(values[name].reshape(variable.shape).astype(variable.dtype))
    matched = [variable.path for _, variable in pairs]
    _logger.info("assign_from_checkpoint_fn: initialized %d variables from %s: %s",
                 len(matched), reader.path, matched)
    return _WarmStartReport(matched, [], [])
