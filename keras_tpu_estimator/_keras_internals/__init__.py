"""The few places where this library reaches into Keras internals.

Keras's public `StatelessScope` refuses to create variables, but real
`model_fn`s build an optimizer (and so its variables) on every call. Inside the
compiled steps we therefore bind traced values to variables directly, and set
the `training` flag of the layer call context without an entry layer, so that
layers called from a plain function (not from a `Layer.call`) see it. Keeping
these reaches here means a Keras upgrade has one package to check, and
`tests/test_keras_internals.py` pins each of them. The reaches for the
layers `model_fn` constructs live in `layer_construction` (re-exported here);
the one into TensorFlow (its eager context, for `_backend.tf_ffi`) in
`tf_eager_context`.

Layering: imports no other part of the library, only Keras's and JAX's
internals; every layer may import it.
"""

import contextlib
import functools
import threading

import numpy as np

from keras.src.backend.common import global_state
from keras.src.backend.common.keras_tensor import KerasTensor
from keras.src.layers.layer import CallContext

from keras_tpu_estimator._keras_internals.global_attributes import global_attribute


@contextlib.contextmanager
def bound_values(variables, values):
    """Makes `variables` read `values` (e.g. tracers) inside the block.

    Assignments made inside the block (e.g. BatchNormalization moving
    statistics) are visible through `current_values`; every variable gets its
    original value back on exit, even on error.

    Args:
        variables: list of `keras.Variable`.
        values: list of arrays, one per variable.
    """
    saved = [v._value for v in variables]
    try:
        for variable, value in zip(variables, values):
            variable._value = value
        yield
    finally:
        for variable, value in zip(variables, saved):
            variable._value = value


def current_values(variables):
    """The values `variables` hold now (inside `bound_values`, the bound ones)."""
    return [v._value for v in variables]


@contextlib.contextmanager
def training_context(training):
    """Layers called inside the block resolve `training` to this value."""
    context = CallContext(entry_layer=None)
    context.set_value("training", training)
    with global_attribute("current_call_ctx", context):
        yield


def set_training(training):
    """Changes the `training` flag of the block `training_context` opened.

    Returns:
        False if no such block is open (a Keras layer's own call is).
    """
    context = global_state.get_global_attribute("current_call_ctx")
    if context is None or context.entry_layer is not None:
        return False
    context.set_value("training", training)
    return True


def current_training():
    """The `training` flag of the open `training_context` block, or None."""
    context = global_state.get_global_attribute("current_call_ctx")
    return None if context is None else context.get_value("training")


def pin_layer_path(layer, parent_path):
    """Builds `layer`'s variables under `parent_path`, wherever it is called."""
    layer._parent_path = parent_path


def current_scope_path():
    """The path of the Keras name scopes open now (`""` at the top level)."""
    from keras.src.backend.common.name_scope import current_path

    return current_path()


def raw_learning_rate(optimizer):
    """What `optimizer` was given as its rate: a variable, a schedule or a callable."""
    return optimizer._learning_rate


def traced_learning_rate(optimizer):
    """The rate of an optimizer given `learning_rate=callable`, evaluated now.

    Returns None for a float rate (a variable that callbacks may change) or a
    `LearningRateSchedule` (evaluated by the optimizer at its own step).
    """
    import keras

    rate = raw_learning_rate(optimizer)
    if isinstance(rate, (keras.Variable, keras.optimizers.schedules.LearningRateSchedule)):
        return None
    return rate() if callable(rate) else None


@contextlib.contextmanager
def learning_rate_override(optimizer, rate):
    """Makes `optimizer` apply with `rate` (e.g. a tracer) inside the block."""
    saved = optimizer._learning_rate
    optimizer._learning_rate = lambda: rate
    try:
        yield
    finally:
        optimizer._learning_rate = saved


def initialize_deferred_variables():
    """Initializes now the variables Keras deferred (made inside a `StatelessScope`).

    A `keras.Model` subclass builds its sublayers inside `compute_output_spec`
    (a `StatelessScope`): their variables wait for an initializer call that
    Keras makes when the outermost scope closes. Called at the end of a
    `model_fn` call, their initializers (TF1 code drawing from the model's
    random-number generator) run while that call still holds its state.
    """
    waiting = global_state.get_global_attribute("uninitialized_variables") or []
    global_state.set_global_attribute("uninitialized_variables", [])
    with global_attribute("stateless_scope", None):
        for variable in waiting:
            if variable._value is None:  # Others got their value since.
                variable._deferred_initialize()


@contextlib.contextmanager
def assignments_ignored():
    """`Variable.assign` (and `assign_add`/`assign_sub`) change nothing inside the block.

    The shape is still checked and the value returned, so code that assigns
    (a TF1 optimizer's `apply_gradients`) runs, but no variable changes.

    Random-number generators (`keras.random.SeedGenerator`) do advance inside
    the block, and are set back when it ends: each draw gets new numbers, as
    each TF1 random op had its own seed (initializers drawing in the block
    would otherwise all draw the same numbers).
    """
    from keras.src.backend.common.variables import Variable

    original = Variable.assign
    generators = {}

    def assign(self, value):
        if self.name == "seed_generator_state":
            generators.setdefault(id(self), (self, self._value))
            return original(self, value)
        shape = getattr(value, "shape", None)
        if tuple(np.shape(value) if shape is None else shape) != tuple(self.shape):
            return original(self, value)  # Raises Keras's shape error.
        return value

    Variable.assign = assign
    try:
        yield
    finally:
        Variable.assign = original
        for variable, value in generators.values():
            variable._value = value


def batch_moments(layer, inputs, mask):
    """The batch mean and biased variance a `keras.layers.BatchNormalization` would use.

    Computed over the layer's reduction axes (every axis but `layer.axis`),
    with `mask` as `layer.call` applies it.

    Args:
        layer: a built `keras.layers.BatchNormalization`.
        inputs: the batch.
        mask: None, or a mask of the batch's leading axes.

    Returns:
        A `(mean, variance)` pair of tensors shaped like the layer's `gamma`.
    """
    return layer._moments(inputs, mask)


def batch_reduction_axes(layer):
    """The axes a built `keras.layers.BatchNormalization` reduces over (all but `axis`)."""
    return layer._reduction_axes


def hidden_endpoint(archive, name, fn, input_signature, **kwargs):
    """Converts `fn` (JAX) in `archive`, without making it a SavedModel signature.

    `keras.export.ExportArchive.add_endpoint` converts a JAX function to a
    `tf.function` bound to the archive's variables, and makes every endpoint
    a signature. Signatures that first run TensorFlow ops (parsing
    `tf.train.Example`s) and then the converted function need it as a
    building block only: it stays an attribute of the saved object, but is
    taken off the archive's list of signatures.

    Returns:
        The converted `tf.function`.
    """
    function = archive.add_endpoint(name, fn, input_signature=input_signature, **kwargs)
    archive._endpoint_names.remove(name)
    archive._endpoint_signatures.pop(name, None)
    return function


def saved_model_proto():
    """An empty `SavedModel` protocol buffer, the message in `saved_model.pb`.

    TensorFlow's public API has no name for the message class; it lives in
    `tensorflow.core.protobuf.saved_model_pb2`. TensorFlow is imported here.

    Returns:
        A `saved_model_pb2.SavedModel` message, e.g. for `ParseFromString`.
    """
    from tensorflow.core.protobuf import saved_model_pb2

    return saved_model_pb2.SavedModel()


@contextlib.contextmanager
def layouts_removed(variables):
    """`variables` have no layout inside the block: an assignment adds no sharding constraint.

    A Keras variable created under a distribution keeps its layout
    (`Variable._layout`), and assigning it inside a trace constrains the new
    value to that layout (`with_sharding_constraint`): a serving program on
    one device would carry the training mesh (Shardy `sdy` operations) when
    `model_fn` assigns, e.g. the seed generator's state when it draws random
    numbers.
    """
    saved = [v._layout for v in variables]
    try:
        for v in variables:
            v._layout = None
        yield
    finally:
        for v, layout in zip(variables, saved):
            v._layout = layout


@contextlib.contextmanager
def stateless_scope_as_bound_values(variables):
    """Trades the active `keras.StatelessScope` for `bound_values` inside the block.

    `ExportArchive` runs an endpoint in a `StatelessScope` mapping the tracked
    variables to their converted values; there no variable may be created,
    yet real `model_fn`s build an optimizer in every mode. Inside the block
    `variables` hold their mapped values directly and no stateless scope is
    active, as in `EstimatorModel`'s compiled steps. The scope is back on exit.
    """
    from keras.src.backend.common.stateless_scope import get_stateless_scope

    scope = get_stateless_scope()
    if scope is None:
        yield
        return
    values = [scope.get_current_value(v) for v in variables]
    mapped = [(v, x) for v, x in zip(variables, values) if x is not None]
    with global_attribute("stateless_scope", None), \
            bound_values([v for v, _ in mapped], [x for _, x in mapped]):
        yield


@contextlib.contextmanager
def top_level_name_scope():
    """Closes every Keras name scope inside the block: new paths start at the top."""
    with global_attribute("name_scope_stack", []):
        yield


# ----------------------------------------------------------------------
# Names of traced tensors (a JAX reach, not a Keras one).

_names_local = threading.local()
_names_lock = threading.Lock()
_names_users = 0


def _tracer_name(tracer):
    """`tracer.name` inside `tracer_names`: its given name, else `tensor_<n>`."""
    stack = getattr(_names_local, "stack", None)
    if not stack:
        # Python then asks `Tracer.__getattr__`, which raises JAX's own
        # "DynamicJaxprTracer has no attribute name": as without the property.
        raise AttributeError("name")
    for registry in reversed(stack):
        entry = registry["names"].get(id(tracer))
        if entry is not None and entry[0] is tracer:
            return entry[1]
    registry = stack[-1]
    count = registry["count"]
    registry["count"] = count + 1
    name = "tensor" if count == 0 else f"tensor_{count}"
    registry["names"][id(tracer)] = (tracer, name)  # Holds the tracer: ids stay unique.
    return name


@contextlib.contextmanager
def tracer_names(named):
    """JAX tracers have a `.name` inside the block, as TensorFlow tensors do.

    TF1 code reads `tensor.name` (BERT's `get_shape_list` does, on every
    tensor it checks); a JAX tracer has no such attribute. Inside the block
    `jax.core.Tracer` has a `name` property: the name given here for the
    tracers of `named`, and `tensor`, `tensor_1`, ... (unique within the
    block, in the order asked) for any other, e.g. intermediate results.
    Outside, `tracer.name` raises JAX's AttributeError as before. The
    property is installed while at least one block is open (in any thread);
    names are per thread.

    Args:
        named: an iterable of `(tracer, name)` pairs.
    """
    global _names_users
    from jax._src import core

    registry = {"names": {id(t): (t, n) for t, n in named}, "count": 0}
    with _names_lock:
        if _names_users == 0:
            core.Tracer.name = property(_tracer_name)
        _names_users += 1
    if not hasattr(_names_local, "stack"):
        _names_local.stack = []
    _names_local.stack.append(registry)
    try:
        yield
    finally:
        stack = _names_local.stack
        del stack[next(i for i, r in enumerate(stack) if r is registry)]
        with _names_lock:
            _names_users -= 1
            if _names_users == 0:
                del core.Tracer.name


def take_initial_epoch(model):
    """The epoch a callback asked `fit` to start at (`BackupAndRestore` sets
    `model._initial_epoch` in `on_train_begin`), or None; cleared once read."""
    epoch = getattr(model, "_initial_epoch", None)
    model._initial_epoch = None
    return epoch


def mlir_context():
    """An MLIR context with JAX's dialects (StableHLO, CHLO, Shardy) registered.

    Reading back the StableHLO of an export (to strip its source locations)
    needs the dialects JAX registers; JAX builds such a context with its
    private `mlir.make_ir_context`.
    """
    from jax._src.interpreters import mlir

    return mlir.make_ir_context()


def write_saved_model_fingerprint(directory):
    """Rewrites `fingerprint.pb` of the SavedModel at `directory` from its `saved_model.pb`.

    TensorFlow writes the fingerprint (hashes of the graph and signatures)
    with `tf.saved_model.save`; after an edit of `saved_model.pb` it must be
    written again, with TensorFlow's private `fingerprinting_utils`.
    """
    from tensorflow.python.saved_model import fingerprinting_utils

    fingerprinting_utils.write_fingerprint(directory)


def initialize_random_seed_across_processes():
    """Gives Keras's global random seed one value on every process.

    `keras.distribution.initialize` does it after `jax.distributed.initialize`
    (a seed already set is kept; else the processes' seeds are summed), so
    that every process creates the same initial weights; its JAX backend's
    `initialize_rng` is private.
    """
    from keras.src.backend.jax.distribution_lib import initialize_rng

    initialize_rng()


# Iterating a tracer of symbolic length: TF1's TypeError.
from keras_tpu_estimator._keras_internals.tracer_iteration import tf1_iteration  # noqa: E402,F401

# A tracer's shape and dtype as the user's code reads them (TF1's types).
from keras_tpu_estimator._keras_internals.tensor_views import tracer_views  # noqa: E402,F401

# TF1 Keras's `layer.updates`: empty.
from keras_tpu_estimator._keras_internals.layer_updates import tf1_layer_updates  # noqa: E402,F401

# What a jaxpr binds, and a jaxpr cut to some outputs.
from keras_tpu_estimator._keras_internals.jaxprs import jaxpr_outputs_only  # noqa: E402,F401
from keras_tpu_estimator._keras_internals.jaxprs import uses_primitive  # noqa: E402,F401

# Initial values' random draws of constant keys, by one threefry call on CPU.
from keras_tpu_estimator._keras_internals.batched_random import batched_random_bits  # noqa: E402,F401,E501

# Keras layers created inside model_fn: kept in their own module.
from keras_tpu_estimator._keras_internals.layer_construction import after_build  # noqa: E402,F401
from keras_tpu_estimator._keras_internals.layer_construction import calling_layers  # noqa: E402,F401
from keras_tpu_estimator._keras_internals.layer_construction import constructions_paused  # noqa: E402,F401,E501
from keras_tpu_estimator._keras_internals.layer_construction import layer_constructions  # noqa: E402,F401,E501
from keras_tpu_estimator._keras_internals.layer_construction import layer_tree  # noqa: E402,F401
from keras_tpu_estimator._keras_internals.layer_construction import object_names  # noqa: E402,F401
from keras_tpu_estimator._keras_internals.layer_construction import reserve_object_name  # noqa: E402,F401,E501
from keras_tpu_estimator._keras_internals.layer_construction import rename_variable  # noqa: E402,F401
from keras_tpu_estimator._keras_internals.layer_construction import track_sublayers  # noqa: E402,F401
from keras_tpu_estimator._keras_internals.name_scopes import variable_scope_entry  # noqa: E402,F401
from keras_tpu_estimator._keras_internals.name_scopes import variable_scope_path  # noqa: E402,F401


# ----------------------------------------------------------------------
# Variables created in a traced build pass, initialized by one program.


@contextlib.contextmanager
def variables_created():
    """Lists every Keras variable constructed inside the block, in order.

    Yields:
        The list, filled as variables are created.
    """
    from keras.src.backend.common.variables import Variable as KerasVariable

    created = []
    original = KerasVariable.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        created.append(self)

    KerasVariable.__init__ = init
    try:
        yield created
    finally:
        KerasVariable.__init__ = original


def variable_sharding(variable):
    """The `jax.sharding.Sharding` of `variable`'s layout, or None without one."""
    layout = variable._layout
    return getattr(layout, "backend_layout", layout)


def set_initial_values(variables, values):
    """Gives `variables` `values`, already laid out as their layouts ask."""
    for variable, value in zip(variables, values):
        variable._value = value
