"""The build pass: variables get their initial values, and nothing else changes them.

`EstimatorModel` builds a mode by running `model_fn` once on a sample batch:
layers and variables are created there. A TF1 `model_fn` also runs its
training operations in that call (`apply_gradients` assigns), and asks for
warm starts with `init_from_checkpoint` (in `model_fn` itself or in the
spec's `scaffold_fn`). As in TF1, where those were graph operations run
later, none of it may change a variable during the build:

- assignments made during the build pass are ignored;
- `init_from_checkpoint` requests wait for the end of the pass, and then set
  the initial values of the variables this pass *created* only (TF1 changed
  initializers, which run once: a mode built later, say EVAL after TRAIN,
  must not load the checkpoint over trained weights);
- `scaffold_fn` runs once per build pass, after `model_fn`.

The pass computes no value: `created_together` runs it inside a JAX trace
(`jax.make_jaxpr`), so what `model_fn` computes outside its symbolic
inputs (a TF1 optimizer's slot updates, constant loss weights, clipping) is
traced and dropped instead of compiled and run op by op. A variable created
there holds its traced initial value; when the pass ends, every such
variable is initialized by ONE compiled program, laid out by its layout
(`out_shardings`), and only then do the deferred initializers run.

```python
def build():
    with initialization.build_pass(store) as build:
        spec = model_fn(...)
        initialization.run_scaffold(spec)
    return spec, build

spec, build = initialization.created_together(build)
build.reports    # what each init_from_checkpoint loaded
```
"""

import contextlib
import threading

import jax
import jax.extend.core
import numpy as np

from keras_tpu_estimator import _keras_internals

_state = threading.local()


class BuildPass:
    """What one build pass created and asked to initialize.

    Attributes:
        store: the `VariableStore` being built.
        reports: the value each deferred initializer returned (for
            `init_from_checkpoint`, a `kte.checkpoint.WarmStartReport`), in
            call order, once the pass has ended.
    """

    def __init__(self, store):
        self.store = store
        self._existing = {id(v) for v in store.variables}
        self._pending = []
        self.reports = []

    def new_variables(self):
        """`{path: variable}` for the variables created since the pass began."""
        return {
            path: v for path, v in self.store.variables_by_name().items()
            if id(v) not in self._existing
        }


@contextlib.contextmanager
def build_pass(store):
    """Runs the enclosed build of `store`: assignments ignored, initializers deferred.

    On a normal exit, every deferred initializer runs, in call order:
    inside `created_together`, once its variables hold their initial values.

    Args:
        store: the `VariableStore` the enclosed `model_fn` call builds.

    Yields:
        The `BuildPass`.
    """
    previous = getattr(_state, "build", None)
    build = BuildPass(store)
    _state.build = build
    try:
        with _keras_internals.assignments_ignored():
            yield build
    finally:
        _state.build = previous
    together = getattr(_state, "together", None)
    if together is not None:
        together.append(build)
    else:
        _run_pending(build)


def _run_pending(build):
    for initializer in build._pending:
        build.reports.append(initializer(build))


def created_together(fn, inspect=None):
    """Runs `fn()` traced; the variables it creates are initialized by one program.

    Inside, JAX operations on concrete values are traced, not run: a
    variable created there holds its traced initial value (its initializer
    applied in the trace). After `fn` returns, the initial values of every
    variable it created are computed by one `jax.jit` whose outputs are laid
    out as the variables' layouts ask, and assigned; then the deferred
    initializers of the build passes inside `fn` run. Nested calls join the
    outermost.

    Args:
        fn: a zero-argument callable; it must not keep traced values (other
            than its variables' initial values) beyond its call.
        inspect: optional; called with the `ClosedJaxpr` of what `fn`
            traced (e.g. to see which operations a `model_fn` uses), unless
            the call joins an outer one.

    Returns:
        What `fn` returned.

    Example:

    ```python
    layer = initialization.created_together(
        lambda: keras.layers.Dense(4, kernel_initializer=keras.initializers.Ones()))
    ```
    """
    if getattr(_state, "together", None) is not None:
        return fn()
    box = {}

    def traced():
        with _keras_internals.variables_created() as created:
            box["result"] = fn()
        box["variables"] = [
            v for v in created
            if isinstance(_keras_internals.current_values([v])[0], jax.core.Tracer)
        ]
        return _keras_internals.current_values(box["variables"])

    _state.together = builds = []
    try:
        closed = jax.make_jaxpr(traced)()
    finally:
        _state.together = None
    if inspect is not None:
        inspect(closed)
    pending = getattr(_state, "restore_pending", None)
    if pending is not None and _host_zeros_can_hold(box["variables"]):
        pending.append(_hold_placeholders(box["variables"], closed))
    else:
        initialize(box["variables"], closed)
    for build in builds:
        _run_pending(build)
    return box["result"]


@contextlib.contextmanager
def restore_pending():
    """Inside, built variables wait for a checkpoint before any initial value is computed.

    TF1 ran no initializer of a variable it restored: a `Scaffold`'s
    `init_op` ran only when there was no checkpoint. Inside the block,
    `created_together` computes no initial value; its variables hold zeros
    made on the host (no program is compiled or run), and their deferred
    initializers (`init_from_checkpoint`) run as usual. When the block
    ends, even by an exception, every variable still holding its zeros (no
    checkpoint was restored, or it had no value for the variable) gets its
    initial value, by one program, as outside the block.

    Example:

    ```python
    with initialization.restore_pending():
        model.build_for(ModeKeys.EVAL, input_fn)
        checkpoints.load(model)  # Only what it lacks is initialized.
    ```
    """
    if getattr(_state, "restore_pending", None) is not None:
        yield  # Nested: the outermost block initializes.
        return
    _state.restore_pending = pending = []
    try:
        yield
    finally:
        _state.restore_pending = None
        for variables, closed, placeholders in pending:
            waiting = [value is placeholder for value, placeholder in
                       zip(_keras_internals.current_values(variables), placeholders)]
            if any(waiting):
                initialize([v for v, w in zip(variables, waiting) if w],
                           _keras_internals.jaxpr_outputs_only(closed, waiting))


def _host_zeros_can_hold(variables):
    """Whether numpy has every variable's dtype (not so for a typed PRNG key)."""
    return not any(jax.dtypes.issubdtype(value.dtype, jax.dtypes.extended)
                   for value in _keras_internals.current_values(variables))


def _hold_placeholders(variables, closed):
    """Gives `variables` zeros laid out by their layouts; `(variables, closed, zeros)`."""
    placeholders = [
        jax.device_put(np.zeros(value.shape, value.dtype),
                       _keras_internals.variable_sharding(variable))  # None: the default device.
        for variable, value in zip(variables, _keras_internals.current_values(variables))
    ]
    _keras_internals.set_initial_values(variables, placeholders)
    return variables, closed, placeholders


def abstract_values(structs):
    """Values of the shapes and dtypes of `structs`, known only by those: what the step sees.

    Called in the trace of `created_together`, returns JAX tracers of that
    trace, as the compiled step gives `model_fn` tracers of its own: the build
    pass and the step run the same code on the same kind of value (indexing,
    operators, Keras layers, compat.v1 ops). Their value is never computed;
    one that a variable's initial value needed would raise when the variables
    are initialized.

    Args:
        structs: a tree of `jax.ShapeDtypeStruct`s (None leaves stay None).

    Returns:
        The tree with a tracer in place of each struct.
    """

    def unknown():
        raise ValueError(
            "A variable's initial value depends on model_fn's inputs: initial values "
            "are computed before any batch is seen. Initialize from constants or "
            "initializers (assign data-dependent values in the training step)."
        )

    def value(struct):
        # As the step receives it: 64-bit inputs are 32-bit without x64.
        dtype = jax.dtypes.canonicalize_dtype(struct.dtype)
        return jax.pure_callback(unknown, jax.ShapeDtypeStruct(struct.shape, dtype))

    return jax.tree.map(value, structs)


def initialize(variables, closed):
    """Gives `variables` the outputs of `closed` (a `ClosedJaxpr`), in one program.

    Variables with a layout get their value laid out by it (`out_shardings`);
    any without (no distribution) are computed by a second program.
    """
    if not variables:
        return
    shardings = [_keras_internals.variable_sharding(v) for v in variables]
    laid_out = [i for i, s in enumerate(shardings) if s is not None]
    plain = [i for i, s in enumerate(shardings) if s is None]
    for group, out_shardings in (
        (laid_out, [shardings[i] for i in laid_out]),
        (plain, None),
    ):
        if not group:
            continue
        # Only what the initial values need: the build's loss, optimizer and
        # summaries were traced too, and would cost tracing and compile time.
        # Random values by one threefry call (`batched_random`): XLA:CPU
        # compiles each call alone, at 0.2-0.4 s per variable.
        members = set(group)
        compute = _keras_internals.batched_random_bits(_keras_internals.jaxpr_outputs_only(
            closed, [i in members for i in range(len(variables))]))
        values = jax.jit(compute, out_shardings=out_shardings)()
        _keras_internals.set_initial_values([variables[i] for i in group], values)


def defer_to_end_of_build(initializer):
    """Runs `initializer(build)` when the current build pass ends.

    Args:
        initializer: a callable taking the `BuildPass` (its `store`, its
            `new_variables()`); what it returns is kept in
            `BuildPass.reports`.

    Returns:
        True if a build pass is in progress (the call is deferred), False
        otherwise (nothing is done: a compiled step, where initial values no
        longer matter).
    """
    build = getattr(_state, "build", None)
    if build is None:
        return False
    build._pending.append(initializer)
    return True


def in_build_pass():
    """Whether a build pass is in progress."""
    return getattr(_state, "build", None) is not None


def run_scaffold(spec):
    """Calls the spec's `scaffold_fn`, if any (TPUEstimator's contract: once per graph).

    Initialization happens through `init_from_checkpoint`, saving through
    `model_dir` checkpoints; of its result (a TF1 `Scaffold`) only the saver's
    renamed variables act (`spec.scaffold`).

    Returns:
        What `scaffold_fn` returned, or None.
    """
    scaffold_fn = getattr(spec, "scaffold_fn", None)
    return scaffold_fn() if scaffold_fn is not None else None
