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

```python
with initialization.build_pass(store) as build:
    spec = model_fn(...)
    initialization.run_scaffold(spec)
build.reports    # what each init_from_checkpoint loaded
```
"""

import contextlib
import threading

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

    On a normal exit, every deferred initializer runs, in call order.

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
    for initializer in build._pending:
        build.reports.append(initializer(build))


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
