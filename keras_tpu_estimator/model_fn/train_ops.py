"""Training by assignment: how a TF1 `train_op` runs in a compiled JAX step.

A TF1 `model_fn` trains by side effect. `optimizer.minimize(loss)`, or
`tf.gradients(loss, tvars)` followed by `apply_gradients`, builds operations
that *assign* new values to variables, and one of them is returned as the
spec's `train_op`. JAX has no tape to ask for gradients after the fact, so
`EstimatorModel` runs such a `model_fn` twice inside one compiled step:

1. differentiated: `gradients(loss, variables)` records which loss was asked
   for and returns zeros of the right shapes; the step then differentiates
   each recorded loss with respect to every trainable variable;
2. not differentiated, traced as a function of the gradients: the i-th
   `gradients` call returns the gradients of the i-th recorded loss, and
   every assignment (`apply_gradients`, `variable.assign`) writes the
   variable's new value.

A variable's new value comes from the second pass when it depends on the
gradients (the optimizer's assignments, found by data dependence in the
pass's jaxpr, whatever optimizer made them), else from the first (batch-norm
moving statistics, counters: computed from the same forward computation as
the loss). Nothing reads the second pass's forward computation then, and XLA
removes it: the compiled step has the convolutions and FLOPs of a step
trained by gradients.
The step's global step is a variable `global_step` of the store, advanced by
exactly one per step whatever the `model_fn` assigns to it.

```python
def model_fn(features, labels, mode, params):
    loss = ...
    grads = tf1.gradients(loss, tf1.trainable_variables())   # recorded, then real
    grads, _ = tf1.clip_by_global_norm(grads, 1.0)
    train_op = optimizer.apply_gradients(zip(grads, tvars))   # assignments
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)
```
"""

import contextlib
import threading

import jax
import jax.numpy as jnp
from jax.extend import core as jax_core
import keras
import numpy as np

from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.spec import ModeKeys

GLOBAL_STEP = "global_step"

_state = threading.local()


class TrainOp:
    """What a TF1 training operation returns: a handle, not a value.

    `minimize`, `apply_gradients`, `group` and `no_op` return one. Its
    effects (the assignments) already happened when it is returned; the
    engine recognises it as the spec's `train_op` and runs the step by
    assignment.

    Args:
        name: the operation's name, for messages.
    """

    def __init__(self, name=None):
        self.name = name

    def __repr__(self):
        return f"TrainOp(name={self.name!r})"


def is_train_op(value):
    """Whether `value` can be a `train_op` trained by assignment.

    A `TrainOp`, a tensor or variable (what `tf.assign` returns), or a list
    or tuple of them (what TF1 accepted through `tf.group`).
    """
    if isinstance(value, (list, tuple)):
        return all(is_train_op(v) for v in value)
    # Tracers are `jax.Array`s too.
    return isinstance(value, (TrainOp, keras.Variable, keras.KerasTensor, jax.Array, np.ndarray))


def _as_variable(value, argument):
    if isinstance(value, keras.Variable):
        return value
    variable = getattr(value, "variable", None)  # compat.v1's VariableView.
    if isinstance(variable, keras.Variable):
        return variable
    raise TypeError(
        f"`{argument}` must hold variables (keras.Variable): gradients are "
        f"taken with respect to variables only. Received: {value!r}"
    )


class _Recording:
    """Pass 1: the `(loss, variables)` of every `gradients` call.

    `probes` maps `id(variable)` to its `(rows, squares)` probes: zeros the
    step differentiates alongside the variables, through which a row gather
    (`gather_probes`) reports the gradient of its rows (`rows`, the
    variable's shape) and the sum of their squares, row by row before
    summing duplicates (`squares`, a scalar). `gathered` holds the ids of the
    variables read that way.
    """

    def __init__(self, differentiated, probes=None):
        self.differentiated = {id(v): v for v in differentiated}
        self.probes = probes or {}
        self.gathered = set()
        self.requests = []


class _Replay:
    """Pass 2: the real gradients, `{id(variable): gradient}` per recorded call.

    `row_squares` holds, per call, `{id(variable): sum of squares}` for the
    gathered variables: TF1's `IndexedSlices` sum of squares (every gathered
    row, duplicates counted separately) when only gathers read the variable,
    else the dense gradient's (TF1 then aggregates densely). `tagged` maps
    `id(gradient)` to `(gradient, sum of squares)` for the arrays handed out
    (the array is kept so that its id stays unique).
    """

    def __init__(self, gradients, row_squares=None):
        self.gradients = gradients
        self.row_squares = row_squares or [{} for _ in gradients]
        self.tagged = {}
        self.calls = 0


@contextlib.contextmanager
def _active(state):
    previous = getattr(_state, "active", None)
    _state.active = state
    try:
        yield state
    finally:
        _state.active = previous


def replaying():
    """Whether the `model_fn` call in progress is pass 2 of a step trained by assignment.

    Pass 2 repeats pass 1's forward computation; what `model_fn` does once
    per step (writing a summary) happens in pass 1 only.
    """
    return isinstance(getattr(_state, "active", None), _Replay)


def gradients(ys, xs):
    """The gradients of `ys` (summed) with respect to the variables `xs`.

    In the differentiated pass of a training step, the request is recorded
    and zeros come back; in the second pass, the real gradients. Elsewhere
    (the build pass, evaluation) zeros come back.

    Args:
        ys: a scalar tensor, or a list of tensors whose sum is differentiated.
        xs: a list of variables.

    Returns:
        A list of arrays, one per variable of `xs`, shaped like it.

    Raises:
        TypeError: if `xs` holds something other than variables.
        ValueError: if a variable of `xs` is not differentiated by the step
            (not trainable, or created after the TRAIN mode was built), or
            `model_fn` asks for more gradients than in its first pass.
    """
    single = not isinstance(xs, (list, tuple))
    variables = [_as_variable(x, "xs") for x in ([xs] if single else list(xs))]
    state = getattr(_state, "active", None)
    if isinstance(state, _Replay):
        if state.calls >= len(state.gradients):
            raise ValueError(
                "model_fn asked for gradients more times in the second pass of "
                "the training step than in the first: model_fn must make the "
                "same `gradients`/`compute_gradients` calls on every call."
            )
        found, squares = state.gradients[state.calls], state.row_squares[state.calls]
        state.calls += 1
        result = [found[id(v)] for v in variables]
        for v, g in zip(variables, result):
            if id(v) in squares:
                state.tagged[id(g)] = (g, squares[id(v)])
    else:
        if isinstance(state, _Recording):
            strangers = [v.path for v in variables if id(v) not in state.differentiated]
            if strangers:
                raise ValueError(
                    f"Cannot take gradients with respect to {strangers}: the training "
                    "step differentiates the trainable variables that existed when "
                    "the TRAIN mode was built. Create them with trainable=True in "
                    "the TRAIN model_fn."
                )
            if isinstance(ys, (list, tuple)):
                ys = sum(jnp.sum(y) for y in ys)
            state.requests.append((jnp.reshape(ys, ()), variables))
        result = [jnp.zeros(v.shape, v.dtype) for v in variables]
    return result[0] if single else result


def gather_probes(variable):
    """The `(rows, squares)` probes of `variable` in the differentiated pass, or None.

    Called by a row gather (`compat.v1` `gather` / `embedding_lookup`) on a
    variable: when the step differentiates it, the gather sends the gradient
    of its rows to `rows` instead of the variable, and the sum of squares of
    those rows (before duplicates are summed) to `squares`. Elsewhere (the
    second pass, evaluation, a Keras optimizer's step) None: gather as usual.
    """
    state = getattr(_state, "active", None)
    if not isinstance(state, _Recording):
        return None
    probes = state.probes.get(id(variable))
    if probes is not None:
        state.gathered.add(id(variable))
    return probes


def row_square_sum(gradient):
    """TF1's sum of squares of a gradient `gradients` returned, or None.

    For the gradient of a variable read only by row gathers, TF1's gradient
    is `IndexedSlices` with one row per gathered index, and `tf.global_norm`
    sums the squares of those rows, duplicates separately: this returns that
    sum (for a variable read densely too, TF1's gradient is dense, and so is
    this sum; a dense read whose gradient is exactly zero counts as none).
    None for any other array (its own sum of squares is TF1's).
    """
    state = getattr(_state, "active", None)
    if not isinstance(state, _Replay):
        return None
    found = state.tagged.get(id(gradient))
    return None if found is None or found[0] is not gradient else found[1]


def tag_row_square_sum(gradient, square_sum):
    """Records `square_sum` as `gradient`'s TF1 sum of squares (see `row_square_sum`).

    For operations that keep the `IndexedSlices` structure, e.g. the
    rescaling of `clip_by_global_norm`. Outside the second pass, nothing.
    """
    state = getattr(_state, "active", None)
    if isinstance(state, _Replay) and gradient is not None:
        state.tagged[id(gradient)] = (gradient, square_sum)


def train_by_assignment(run, trainable_variables, trainable, rest_values, step_index):
    """One training step of a `model_fn` whose `train_op` assigns.

    Args:
        run: `run(trainable, rest_values) -> (outputs, new_values)`: runs
            `model_fn` with the variables bound to these values and returns
            the step's outputs (arrays: the loss, host-call tensors) and the
            values of all variables after it (the trainable ones, then the
            rest), traced.
        trainable_variables: the differentiated variables.
        trainable: their values.
        rest_values: the values of every other variable of the store.
        step_index: the position of `global_step` in `rest_values`.

    Returns:
        `(new_trainable, new_rest, outputs)`: the values after the step
        (`global_step` advanced by one) and the first pass's outputs.
    """
    recording = _Recording(trainable_variables)

    def first_pass(trainable, probes):
        recording.probes = {id(v): p for v, p in zip(trainable_variables, probes)}
        with _active(recording):
            outputs, values = run(trainable, rest_values)
        return [loss for loss, _ in recording.requests], (outputs, values)

    # Zeros that only row gathers use (XLA drops the others): see `gather_probes`.
    probes = [(jnp.zeros_like(t), jnp.zeros((), "float32")) for t in trainable]
    losses, pullback, (outputs, first_values) = jax.vjp(
        first_pass, list(trainable), probes, has_aux=True
    )
    found, row_squares = [], []
    for k in range(len(losses)):
        cotangent = [jnp.ones_like(l) if i == k else jnp.zeros_like(l) for i, l in enumerate(losses)]
        grads, probe_grads = pullback(cotangent)
        found.append({})
        row_squares.append({})
        for v, g, (rows, squares) in zip(trainable_variables, grads, probe_grads):
            if id(v) in recording.gathered:
                # TF1 aggregates a variable's gradients as IndexedSlices when every
                # consumer is a gather, else densely: a nonzero gradient outside the
                # gathers (`g`) means a dense read.
                dense = g + rows
                row_squares[-1][id(v)] = jnp.where(
                    jnp.any(g != 0), jnp.sum(jnp.square(dense.astype("float32"))), squares
                )
                g = dense
            found[-1][id(v)] = g
    values = _replay(run, trainable, rest_values, found, row_squares, first_values)
    new_trainable = values[: len(trainable)]
    new_rest = list(values[len(trainable) :])
    step = rest_values[step_index]
    new_rest[step_index] = (step + 1).astype(step.dtype)
    return new_trainable, new_rest, outputs


def _replay(run, trainable, rest_values, found, row_squares, first_values):
    """Pass 2: the variables' values after the assignments, given the gradients.

    Pass 2 is traced as a function of the gradients (`found`, `row_squares`)
    and only the values that depend on them come from it: the optimizer's
    assignments. Every other value (batch-norm moving statistics, counters,
    variables left alone) comes from pass 1 (`first_values`), which computed
    it from the same forward computation as the loss. Nothing then reads
    pass 2's forward computation, and XLA removes it: the step costs one
    forward and one backward computation, as a step trained by gradients.

    Args:
        run: as for `train_by_assignment`.
        trainable: the trainable values the step starts from.
        rest_values: the other values the step starts from.
        found: per recorded `gradients` call, `{id(variable): gradient}`.
        row_squares: per call, `{id(variable): sum of squares}` (see `_Replay`).
        first_values: the values of all variables after pass 1.

    Returns:
        The values of all variables after the step (the trainable ones, then
        the rest).
    """
    leaves, treedef = jax.tree.flatten((found, row_squares))

    def second_pass(leaves):
        with _active(_Replay(*jax.tree.unflatten(treedef, leaves))):
            _, values = run(list(trainable), rest_values)
        return [jnp.asarray(v) for v in values]

    closed = jax.make_jaxpr(second_pass)(leaves)
    dependent = _depends_on(closed.jaxpr, closed.jaxpr.invars)
    replayed = jax_core.jaxpr_as_fun(closed)(*leaves)
    return [r if d else f for r, d, f in zip(replayed, dependent, first_values)]


def _depends_on(jaxpr, sources):
    """Per output of `jaxpr`, whether it depends on the variables `sources`.

    An equation's outputs depend on the sources when any of its inputs does:
    a call (`pjit`, `cond`, `scan`) counts as a whole, which may count more
    than the data flow inside it, never less.
    """
    tainted = set(sources)

    def reads(atom):
        return not isinstance(atom, jax_core.Literal) and atom in tainted

    for eqn in jaxpr.eqns:
        if any(reads(atom) for atom in eqn.invars):
            tainted.update(eqn.outvars)
    return [reads(atom) for atom in jaxpr.outvars]


def global_step_variable(store):
    """The store's TF1 `global_step` variable, or None."""
    return store.created_variables.get(GLOBAL_STEP)


def create_global_step(store):
    """Creates the store's `global_step` variable (int, 0) at the top level, once.

    Its dtype is int64 when JAX has 64-bit types enabled, else int32 (JAX's
    default; TF1 used int64).
    """
    variable = global_step_variable(store)
    if variable is None:
        dtype = "int64" if jax.config.jax_enable_x64 else "int32"
        with _keras_internals.top_level_name_scope():
            variable = keras.Variable(
                np.zeros((), dtype), dtype=dtype, trainable=False, name=GLOBAL_STEP
            )
        store.created_variables[GLOBAL_STEP] = variable
    return variable


def current_store_global_step():
    """Inside `model_fn`: the `global_step` variable, created when building TRAIN.

    Returns the store's variable when it exists (its value is the step's);
    in a TRAIN build pass it is created; otherwise (evaluation of a model
    not built for training) the current step as a tensor.
    """
    context = store_lib.current_call("train.get_or_create_global_step")
    variable = global_step_variable(context.store)
    if variable is None and context.building and context.mode == ModeKeys.TRAIN:
        variable = create_global_step(context.store)
    return variable if variable is not None else context.global_step
