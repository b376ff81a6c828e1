"""What a TF1 graph held that `model_fn` code reads back: collections.

In TensorFlow 1 each mode built a fresh graph, and code read state back from
it: `tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)`, the names already
taken by layers, the `variable_scope` in force. Here `model_fn` is called
once per mode and once per compiled trace; `Graph` is that state for one
call, created empty on every call, so every trace replays the same names and
collections.

```python
tf1.add_to_collection("my_losses", aux_loss)
total = loss + tf1.add_n(tf1.get_collection("my_losses"))
```
"""

import contextlib
import re

from keras_tpu_estimator.model_fn import store as store_lib
# Private aliases: `graph`'s public names are TF1's (the converter reads them).
from keras_tpu_estimator.compat.v1._variable_views import global_variables as _global_variables
from keras_tpu_estimator.compat.v1._variable_views import trainable_variables as _trainable_variables


class GraphKeys:
    """The standard collection names of `tf.compat.v1.GraphKeys`.

    `UPDATE_OPS` is always empty: layers (batch normalization moving
    statistics) update their state inside the step itself, so there is
    nothing to run "before" the train op. `TRAINABLE_VARIABLES` and
    `GLOBAL_VARIABLES` list the variables `model_fn` has used so far in this
    call, by TF1 name. `REGULARIZATION_LOSSES` holds the penalties of the
    `kernel_regularizer`s (and `get_variable(regularizer=...)`) used so far;
    they count only where the program adds them to its loss, as in TF1.
    """

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    LOSSES = "losses"
    UPDATE_OPS = "update_ops"
    SUMMARIES = "summaries"
    GLOBAL_STEP = "global_step"
    VARIABLES = GLOBAL_VARIABLES


class Graph:
    """The TF1 graph state of one `model_fn` call.

    Attributes:
        collections: `{key: list}` of `add_to_collection`.
        scope_counts: how often each variable-scope path was opened, TF1's
            counter behind `dense`, `dense_1`, ...
        scopes: the stack of open `VariableScope`s (innermost last).
        bfloat16: whether a `bfloat16_scope` is open.
    """

    def __init__(self):
        self.collections = {}
        self.scope_counts = {}
        self.scopes = []
        self.bfloat16 = False

    # What TF1 code calls on `tf.get_default_graph()`.

    finalized = False

    def get_collection(self, name, scope=None):
        return get_collection(name, scope)

    def get_collection_ref(self, name):
        return get_collection_ref(name)

    def add_to_collection(self, name, value):
        add_to_collection(name, value)

    def add_to_collections(self, names, value):
        add_to_collections(names, value)

    def get_all_collection_keys(self):
        return list(self.collections)

    def clear_collection(self, name):
        self.collections.pop(name, None)

    @contextlib.contextmanager
    def as_default(self):
        yield self

    def finalize(self):
        """Nothing to freeze: the call's operations are a traced function."""

    def control_dependencies(self, control_inputs):
        return control_dependencies(control_inputs)

    def name_scope(self, name):
        return name_scope(name)

    def get_tensor_by_name(self, name):
        raise NotImplementedError(
            f"get_tensor_by_name({name!r}): values computed in model_fn are JAX values, "
            "which have no graph names. Keep a reference to the tensor instead (return it "
            "from the function that makes it, or put it in a collection).")

    get_operation_by_name = get_tensor_by_name


def current_graph():
    """Returns the `Graph` of the `model_fn` call in progress.

    Raises:
        RuntimeError: outside a `model_fn` run by this library.
    """
    return store_lib.call_state("compat.v1.graph", Graph)


def get_default_graph():
    """TF1's `tf.get_default_graph()` in `model_fn`: this call's `Graph`.

    It answers what TF1 code asks of it: its collections
    (`get_collection`, `add_to_collection`, ...), `as_default()`,
    `finalize()`, `control_dependencies`, `name_scope`. Tensors have no
    graph names here: `get_tensor_by_name` raises and says what to do.

    Example:

    ```python
    losses = tf1.get_default_graph().get_collection("my_losses")
    ```
    """
    return current_graph()


def add_to_collection(name, value):
    """Appends `value` to the collection `name` of this `model_fn` call."""
    current_graph().collections.setdefault(name, []).append(value)


def add_to_collections(names, value):
    """Appends `value` to each collection in `names`."""
    for name in [names] if isinstance(names, str) else names:
        add_to_collection(name, value)


def get_collection_ref(key):
    """Returns the list of collection `key` itself (appending to it adds)."""
    if key in (GraphKeys.TRAINABLE_VARIABLES, GraphKeys.GLOBAL_VARIABLES):
        raise ValueError(
            f"get_collection_ref({key!r}): the variable collections are "
            "computed from the variable store and cannot be changed; use "
            "get_collection."
        )
    return current_graph().collections.setdefault(key, [])


def get_collection(key, scope=None):
    """Returns a copy of collection `key`, filtered by `scope` as TF1 does.

    Args:
        key: a `GraphKeys` name or any string.
        scope: if given, keep only items whose `.name` matches this regular
            expression at its start (`re.match`), as TF1's filter.

    Returns:
        A new list.

    Example:

    ```python
    reg_loss = tf1.add_n(tf1.get_collection(tf1.GraphKeys.REGULARIZATION_LOSSES))
    ```
    """
    if key == GraphKeys.TRAINABLE_VARIABLES:
        return _trainable_variables(scope)
    if key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES):
        return _global_variables(scope)
    items = list(current_graph().collections.get(key, []))
    if scope is None:
        return items
    return [i for i in items if hasattr(i, "name") and re.match(scope, i.name)]


def moving_average_variables(scope=None):
    """The variables `ExponentialMovingAverage.apply` averages in this call (TF1's collection)."""
    return get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def local_variables(scope=None):
    """TF1's `LOCAL_VARIABLES` collection: what the program added to it (metrics keep
    their own state here, not local variables)."""
    return get_collection(GraphKeys.LOCAL_VARIABLES, scope)


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """Accepted for TF1 code; orders nothing (there is nothing to order).

    TF1 programs wrap their train op in
    `tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))` so
    that batch-norm statistics update before the step. Here a step is one pure
    function: every layer update is part of it, and JAX runs what the outputs
    depend on. Operations that were only run for a side effect inside this
    block (an `assign`, a print) must be returned or used instead.

    Args:
        control_inputs: anything (ignored), or None.
    """
    del control_inputs
    yield


@contextlib.contextmanager
def name_scope(name, default_name=None, values=None):
    """Accepted for TF1 code; does not change variable names.

    In TF1 `name_scope` named operations, never variables (only
    `variable_scope` prefixes `get_variable` and layer variables). JAX
    operations have no names, so the scope has nothing to name.

    Yields:
        The scope's name, as TF1's `name_scope` does.
    """
    del values
    name = name if name is not None else default_name
    yield f"{name}/" if name else ""
