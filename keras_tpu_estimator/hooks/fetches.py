"""What a hook fetches: tensors of `model_fn`, the global step, names.

TensorFlow 1 hooks fetch tensors: a hook built inside `model_fn` holds the
tensors it will ask for (`LoggingTensorHook(tensors={"loss": loss})`,
ELECTRA's `ETAHook(dict(loss=total_loss), ...)`), and a hook's `begin()`
takes the global step (`tf.train.get_or_create_global_step()`).
Here `model_fn` runs twice over: once on symbolic tensors to build a mode,
then traced into the compiled step. So:

- when a mode is built, `register(hooks)` walks the spec's hooks and gives
  every symbolic tensor they hold a *slot*: where it sits in the hook list
  (`"0._to_log['loss']"`);
- the compiled step walks the hooks of its own trace the same way
  (`traced_values`) and outputs the value at each slot;
- after each on-device loop every step's values travel in the callback
  logs (`HookValues`), and a fetched tensor resolves through its slot: to
  the value of the run's step with `use_tpu=False` (a run is a step, as
  TensorFlow ran hooks around every step), of the loop's last step on a TPU
  (as TensorFlow's `session.run` of a TPU loop gave the last iteration's).

Outside `model_fn`, `get_or_create_global_step()` returns `GLOBAL_STEP`: a
hook that fetches it (or `session.run`s it) gets the global step.

`check_fetches` and `resolve` check and resolve a hook's fetches, nested in
lists, tuples and dicts: tensors, the global step, variables, and the names
of `FETCHABLE`.
"""

import types
import weakref

import jax
import keras
import numpy as np

from keras_tpu_estimator.hooks._common import describe
from keras_tpu_estimator.spec import ModeKeys

# How deep the walk looks into a hook's attributes, and how many values it
# visits at most: hooks hold their tensors in attributes, dicts and lists.
_MAX_DEPTH = 4
_MAX_VISITS = 10_000
# A tensor larger than this (elements) is not output by every step: a hook
# that holds, say, the input batch would otherwise cost a copy per step.
MAX_FETCH_ELEMENTS = 1 << 20


class GlobalStepHandle:
    """The global step as hooks fetch it, outside `model_fn`.

    What `tf.compat.v1.train.get_or_create_global_step()` returns when
    called outside `model_fn`, in a hook's `begin()`: fetched through
    `SessionRunArgs` or `session.run`, it gives the global step (an int).
    There is no graph: it is a handle, not a tensor.
    """

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "<global_step: a handle hooks fetch the global step with>"

    @property
    def name(self):
        return "global_step:0"

    @property
    def op(self):  # TF1 code reads `global_step.op.name`.
        return types.SimpleNamespace(name="global_step")


GLOBAL_STEP = GlobalStepHandle()

#: The names a hook may fetch in each mode (besides tensors, the global step, variables).
FETCHABLE = {
    ModeKeys.TRAIN: ("loss", "global_step", "losses"),
    ModeKeys.EVAL: ("global_step",),
    ModeKeys.PREDICT: ("global_step",),
}


def is_symbolic(value):
    """Whether `value` is a tensor of a `model_fn` run: symbolic (build) or traced (step)."""
    return isinstance(value, (keras.KerasTensor, jax.core.Tracer))


_LEAVES = (str, bytes, int, float, complex, bool, type(None), type, types.ModuleType,
           types.FunctionType, types.MethodType, keras.Variable, keras.layers.Layer,
           np.ndarray, jax.Array)


def _walk(hook, prefix):
    """`[(slot, tensor)]` for every symbolic tensor `hook` holds, in a fixed order."""
    found, seen, visits = [], set(), [0]

    def walk(value, slot, depth):
        if is_symbolic(value):
            found.append((slot, value))
            return
        visits[0] += 1
        if (depth > _MAX_DEPTH or visits[0] > _MAX_VISITS or id(value) in seen
                or isinstance(value, _LEAVES)):
            return
        seen.add(id(value))
        if isinstance(value, dict):
            for key, item in list(value.items()):
                walk(item, f"{slot}[{key!r}]", depth + 1)
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                walk(item, f"{slot}[{index}]", depth + 1)
        elif hasattr(value, "__dict__"):
            for key, item in list(vars(value).items()):
                walk(item, f"{slot}.{key}", depth + 1)

    walk(hook, prefix, 0)
    return found


def _walk_all(hooks):
    return [found for index, hook in enumerate(hooks or []) for found in _walk(hook, str(index))]


# hook -> {id(tensor): (slot, tensor)}; the tensors are kept so their ids stay theirs.
_TABLES = weakref.WeakKeyDictionary()
_PLAIN_TABLES = {}  # Hooks that cannot be weakly referenced: id(hook) -> (hook, table).


def register(hooks):
    """Gives each symbolic tensor the `hooks` of a build pass hold a slot.

    Args:
        hooks: the spec's hooks of one mode, as the build pass returned them.

    Returns:
        The slots, in order (empty when the hooks hold no tensor): the keys
        `traced_values` gives in the compiled step. Tensors of more than
        `MAX_FETCH_ELEMENTS` elements get none (fetching one is an error).
    """
    slots = []
    for index, hook in enumerate(hooks or []):
        found = [(slot, t) for slot, t in _walk(hook, str(index)) if _size(t) <= MAX_FETCH_ELEMENTS]
        table = {id(tensor): (slot, tensor) for slot, tensor in found}
        slots += [slot for slot, _ in found]
        try:
            _TABLES[hook] = table
        except TypeError:
            _PLAIN_TABLES[id(hook)] = (hook, table)
    return slots


def _size(tensor):
    shape = tuple(tensor.shape)
    return float("inf") if None in shape else int(np.prod(shape, dtype=np.int64))


def table_of(hook):
    """`{id(tensor): (slot, tensor)}` registered for `hook` (empty if none)."""
    try:
        table = _TABLES.get(hook)
    except TypeError:
        table = None
    if table is None:
        entry = _PLAIN_TABLES.get(id(hook))
        table = entry[1] if entry is not None and entry[0] is hook else None
    return table or {}


def traced_values(hooks, slots):
    """`{slot: tensor}` of the traced step's `hooks`, for the slots registered.

    Args:
        hooks: the spec's hooks of the traced `model_fn` call.
        slots: the slots `register` gave the build pass's hooks of the mode.

    Returns:
        The traced tensors at those slots (a dict, empty without slots).

    Raises:
        ValueError: when the traced hooks hold other tensors than the built
            ones (a `model_fn` whose hooks change between calls).
    """
    if not slots:
        return {}
    found = dict(_walk_all(hooks))
    missing = [slot for slot in slots if slot not in found]
    if missing:
        raise ValueError(
            "The hooks model_fn returned in the compiled step do not hold the "
            f"tensors its first call's hooks held: {missing} are missing. "
            "model_fn must return the same hooks, holding the same tensors, on "
            "every call."
        )
    return {slot: found[slot] for slot in slots}


class HookValues:
    """The values the spec's hooks fetch, at every step of one loop: what the logs carry.

    Args:
        steps: `{slot: value}` of each step of the loop, in order (numpy).
    """

    def __init__(self, steps):
        self.steps = list(steps)

    @property
    def values(self):
        """`{slot: value}` of the loop's last step."""
        return self.steps[-1] if self.steps else {}

    def at(self, step):
        """`{slot: value}` of the loop's step `step` (0 is its first)."""
        return self.steps[step]

    def __repr__(self):
        return f"HookValues({sorted(self.values)}, steps={len(self.steps)})"


def step_values(outputs, steps, stacked):
    """`[{slot: numpy value}]` of each step of a loop, from its `hook_fetches` outputs.

    Args:
        outputs: the loop's stacked (or, for one unstacked step, plain)
            `{slot: array}`.
        steps: the steps the loop ran.
        stacked: whether the outputs have a leading step axis.
    """
    from keras_tpu_estimator import distribute  # Hooks import no JAX placement at load.

    arrays = {slot: np.asarray(distribute.host_local(value)) for slot, value in (outputs or {}).items()}
    if not stacked:
        return [arrays]
    return [{slot: array[step] for slot, array in arrays.items()} for step in range(steps)]


def loop_logs(fetched, steps, stacked):
    """The logs entry of a loop's hook values: `{LOOP_HOOK_VALUES: HookValues}`, or `{}`.

    Args:
        fetched: the loop's `hook_fetches` outputs, `{slot: array}`.
        steps: the steps the loop ran.
        stacked: whether the outputs have a leading step axis.
    """
    from keras_tpu_estimator.engine.logs import LOOP_HOOK_VALUES

    if not fetched:
        return {}
    return {LOOP_HOOK_VALUES: HookValues(step_values(fetched, steps, stacked))}


def resolve_tensor(hook, tensor, values):
    """The value of a `model_fn` tensor `hook` fetched, from one step's values.

    Args:
        hook: the hook that fetches it.
        tensor: the tensor of `model_fn` it holds.
        values: `{slot: value}` of the step the run reports (None before any).

    Raises:
        ValueError: for a tensor not registered for `hook`, or no values yet.
    """
    entry = table_of(hook).get(id(tensor))
    if entry is None or entry[1] is not tensor:
        raise unknown_tensor_error(hook, tensor)
    if values is None or entry[0] not in values:
        raise ValueError(
            f"{tensor!r} fetched by {hook!r} has no value yet: a tensor of "
            "model_fn has a value after each loop of the mode it was built "
            "in (in after_run), not before the first."
        )
    return values[entry[0]]


def is_registered(hook, value):
    """Whether `value` is a tensor registered for `hook`."""
    entry = table_of(hook).get(id(value))
    return entry is not None and entry[1] is value


def unknown_tensor_error(hook, tensor):
    """The ValueError for a fetched tensor that no spec hook holds."""
    if _size(tensor) > MAX_FETCH_ELEMENTS:
        return ValueError(
            f"{hook!r} fetched {tensor!r}, of shape {tuple(tensor.shape)}: hooks "
            f"fetch tensors of at most {MAX_FETCH_ELEMENTS} elements, which the "
            "compiled steps output every step. Fetch a reduction of it (a mean, "
            "a slice), built in model_fn."
        )
    return ValueError(
        f"{hook!r} fetched {tensor!r}, a tensor this runtime cannot fetch. A "
        "hook fetches a tensor of model_fn when it holds it: build the hook "
        "inside model_fn with the tensor (LoggingTensorHook(tensors={'loss': "
        "loss}) in the spec's training_hooks). It also fetches the global step "
        "(tf1.train.get_or_create_global_step()) and the names 'loss', "
        "'losses' and 'global_step'."
    )


# ----------------------------------------------------------------------
# Checking and resolving what `SessionRunArgs` and `session.run` fetch.


def check_feed_dict(feed_dict, owner):
    """Raises ValueError for a non-empty `feed_dict`: there is no graph to feed."""
    if feed_dict:
        raise ValueError(
            f"{owner} gave feed_dict={describe(feed_dict)}: there is no graph "
            "to feed on this runtime; `feed_dict` must be None."
        )


def variable_of(fetch):
    """The `keras.Variable` of a variable or TF1 variable view; else None."""
    if isinstance(fetch, keras.Variable):
        return fetch
    variable = getattr(fetch, "variable", None)
    return variable if isinstance(variable, keras.Variable) else None


def _is_leaf_fetch(fetch, mode, hook):
    """Whether `fetch` is one thing a hook may fetch in `mode` (not a structure)."""
    if isinstance(fetch, str):
        return fetch in FETCHABLE[mode]
    if fetch is GLOBAL_STEP or variable_of(fetch) is not None:
        return True
    if is_symbolic(fetch):
        return hook is not None and is_registered(hook, fetch)
    return False


def check_fetches(fetches, mode, owner, hook=None):
    """Raises ValueError unless `fetches` is None or fetchable things, nested."""
    names = FETCHABLE[mode]

    def check(fetch):
        if fetch is None:
            return
        if isinstance(fetch, dict):
            for value in fetch.values():
                check(value)
            return
        if isinstance(fetch, (list, tuple)):
            for value in fetch:
                check(value)
            return
        if not _is_leaf_fetch(fetch, mode, hook):
            fail(fetch)

    def fail(fetch):
        if is_symbolic(fetch):
            raise unknown_tensor_error(hook, fetch)
        raise ValueError(
            f"{owner} asked to fetch {describe(fetches)}: {describe(fetch)} "
            "cannot be fetched. A hook fetches the tensors of model_fn it holds "
            "(built in model_fn and returned in the spec's hooks), the global "
            "step (tf1.train.get_or_create_global_step()), variables, and by "
            f"name: in mode {mode!r} the names are {list(names)} (or lists, "
            "tuples and dicts of these)."
            + (
                " 'loss' is the loss of the run's (last) step, 'losses' the "
                "loss of every step of the run."
                if mode == ModeKeys.TRAIN
                else ""
            )
        )

    check(fetches)


def resolve(fetches, values):
    """The values of checked `fetches`, in their structure."""
    if fetches is None:
        return None
    if isinstance(fetches, dict):
        return {k: resolve(v, values) for k, v in fetches.items()}
    if isinstance(fetches, (list, tuple)):
        items = [resolve(v, values) for v in fetches]
        if isinstance(fetches, tuple) and hasattr(fetches, "_fields"):
            return type(fetches)(*items)
        return type(fetches)(items)
    return values(fetches)
