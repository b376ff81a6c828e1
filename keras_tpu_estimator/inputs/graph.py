"""An `input_fn` that returns TensorFlow tensors, read as TensorFlow 1 read it.

TensorFlow 1 called `input_fn` in a graph, and the tensors it returned ran
at every step: those of an iterator (`make_one_shot_iterator(ds).get_next()`,
`make_initializable_iterator`) gave a new batch each time, random ops new
numbers. Called eagerly, the same code gives one batch. So an `input_fn`
whose result holds TensorFlow tensors is called again in a graph
(`GraphInput`), as TensorFlow 1 called it; when its tensors change from one
run to the next (they depend on an iterator or another stateful op), a
session runs them once per batch until the iterator ends
(`tf.errors.OutOfRangeError`). Tensors that cannot change (constants and
what is computed from them) are the arrays they hold, as the eager call
gave them. An `input_fn` that works only in a graph
(`make_initializable_iterator`, placeholders) is called in a graph at once,
and so is one that makes a one-shot iterator (`eager_iterators_refused`):
called eagerly, its `get_next()` would read the first batch then and there
(a generator would run twice, a stream would lose that batch).

Example:

```python
def input_fn(params):
    dataset = tf.data.Dataset.range(100).batch(params["batch_size"])
    return {"x": tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()}, None

graph = GraphInput(lambda: input_fn({"batch_size": 8}))
graph.changing  # True: one batch per run.
[features["x"] for features, _ in graph]  # 13 batches: 0-7, 8-15, ..., 96-99.
```
"""

import contextlib
import threading

import jax

# Stateful ops whose value does not change from one run to the next unless
# something assigns them: reading them alone makes no new batch.
_STEADY_OPS = frozenset({
    "VarHandleOp", "ReadVariableOp", "VariableV2", "Variable", "VarIsInitializedOp",
    "HashTableV2", "MutableHashTableV2", "LookupTableFindV2", "LookupTableSizeV2",
    "Placeholder", "PlaceholderWithDefault",
})


def holds_tensors(result):
    """Whether what an `input_fn` returned holds TensorFlow tensors."""
    leaves = jax.tree.leaves(result)
    if not any(type(leaf).__module__.startswith("tensorflow") for leaf in leaves):
        return False
    import tensorflow as tf

    return any(isinstance(leaf, tf.Tensor) for leaf in leaves)


def runs_only_in_a_graph(error):
    """Whether `error`, raised by an eager call, says its code needs a graph.

    TensorFlow's graph-only functions (`make_initializable_iterator`,
    `placeholder`, ...) raise a `RuntimeError` that names eager execution.
    """
    return isinstance(error, RuntimeError) and "eager" in str(error).lower()


class EagerIteratorRefused(RuntimeError):
    """A one-shot iterator made eagerly where `eager_iterators_refused` holds."""


_REFUSING = threading.local()  # Per thread: tf.data's own threads make iterators too.
_INSTALLED = []


@contextlib.contextmanager
def eager_iterators_refused():
    """Refuses one-shot iterators made eagerly, on this thread, while active.

    `tf.compat.v1.data.make_one_shot_iterator(ds)` (or the method of a TF1
    dataset) made eagerly would read the dataset there: its `get_next()`
    is the first batch, read before the `input_fn` is called again in a
    graph (`GraphInput`) and read from the start. Refused, the eager call
    stops before reading anything, with an `EagerIteratorRefused` that
    `runs_only_in_a_graph` recognizes, and the input is read once, in the
    graph. TensorFlow makes every one-shot iterator through the private
    `DatasetV1._make_one_shot_iterator`, wrapped here once (the one reach
    into TensorFlow's internals of the input side); the wrapper changes
    nothing outside this context.

    Example:

    ```python
    with eager_iterators_refused():
        tf.compat.v1.data.make_one_shot_iterator(dataset)  # EagerIteratorRefused
    ```
    """
    _install()
    was = getattr(_REFUSING, "active", False)
    _REFUSING.active = True
    try:
        yield
    finally:
        _REFUSING.active = was


def _install():
    if _INSTALLED:
        return
    import tensorflow as tf

    dataset_v1 = tf.compat.v1.data.Dataset
    make = getattr(dataset_v1, "_make_one_shot_iterator", None)
    if make is None:  # Another TensorFlow: iterators read eagerly, as before.
        _INSTALLED.append(None)
        return

    def _make_one_shot_iterator(self):
        if getattr(_REFUSING, "active", False) and tf.executing_eagerly():
            raise EagerIteratorRefused(
                "A one-shot iterator made in eager mode is read in a graph instead."
            )
        return make(self)

    dataset_v1._make_one_shot_iterator = _make_one_shot_iterator
    _INSTALLED.append(make)


class GraphInput:
    """The tensors of an `input_fn` called in a graph, run once per batch.

    Args:
        call: calls the `input_fn` (no arguments) and returns its result.
        seed: the graph's random seed (`RunConfig.tf_random_seed`), or None.

    Attributes:
        changing: whether the tensors change from one run to the next (an
            iterator, random ops): each run is then a new batch.

    Raises:
        Whatever `call` raises in a graph; TypeError or ValueError for a
        result that is not `(features, labels)` or features.
    """

    def __init__(self, call, seed=None):
        import tensorflow as tf

        from keras_tpu_estimator.inputs.input_fn import check_input_fn_result

        tf1 = tf.compat.v1
        self._graph = tf.Graph()
        with self._graph.as_default():
            if seed is not None:
                tf1.set_random_seed(seed)
            result = check_input_fn_result(call())
            if not isinstance(result, (tuple, list)):
                result = (result, None)
            self._structure = tf.nest.map_structure(
                lambda t: t if t is None or isinstance(t, tf.Tensor) else tf.constant(t),
                tuple(result),
            )
            self._fetches = [t for t in tf.nest.flatten(self._structure) if t is not None]
            ops = _ops_behind(self._fetches)
            self.changing = any(
                op.op_def.is_stateful and op.type not in _STEADY_OPS for op in ops
            )
            initializers = [
                tf1.global_variables_initializer(),
                tf1.local_variables_initializer(),
                tf1.tables_initializer(),
            ] + [
                # An initializable iterator's initializer, which a TF1 program
                # ran itself or left to a hook; one fed by a placeholder stays
                # with the program (its run then says what is missing).
                op for op in self._graph.get_operations()
                if op.type == "MakeIterator"
                and not any(o.type == "Placeholder" for o in _ops_behind(op.inputs))
            ]
        self._graph.finalize()
        self._session = tf1.Session(graph=self._graph)
        self._session.run(initializers)

    def __iter__(self):
        """Yields `(features, labels)` of numpy arrays, one run each, until
        the input ends."""
        import tensorflow as tf

        while True:
            try:
                values = iter(self._session.run(self._fetches))
            except tf.errors.OutOfRangeError:
                return
            except tf.errors.FailedPreconditionError as error:
                raise ValueError(
                    "The input_fn's tensors could not be read: an iterator is not "
                    "initialized (`make_initializable_iterator` with a placeholder fed by "
                    "a hook, or an initializer never run). Return a tf.data.Dataset "
                    f"instead. TensorFlow said: {error.message.splitlines()[0]}"
                ) from None
            yield tf.nest.map_structure(
                lambda t: None if t is None else next(values), self._structure
            )

    def close(self):
        self._session.close()


def _ops_behind(tensors):
    """The ops the `tensors` are computed from (inputs and control inputs)."""
    seen, pending = {}, [t.op for t in tensors]
    while pending:
        op = pending.pop()
        if op.name in seen:
            continue
        seen[op.name] = op
        pending.extend(t.op for t in op.inputs)
        pending.extend(op.control_inputs)
    return list(seen.values())
