"""`tf.contrib.layers.summaries`: TF1's summaries of activations, tensors and collections.

TF1 named each summary after the op that made the tensor: a histogram
`<op name>/activation` for `summarize_activation` (with, for a `Relu`,
`Relu6` or `Softplus` op, the scalars `<op name>/zeros`, the fraction of
the op's inputs below 0, and `<op name>/sixes`), and `<op name>` for
`summarize_tensor` (a scalar for a scalar, else a histogram). The
summaries are `tf1.summary.scalar` / `tf1.summary.histogram`: written
from `model_fn` every `save_summary_steps`, and added to the `summaries`
collection.

A variable of the store (`summarize_variables`, `summarize_weights`, a
`VariableView`) keeps its TF1 name (`conv1/weights`). A value computed in
`model_fn` is a JAX array, which records neither the op that made it nor
that op's inputs, so:

- its name stands in as `activation` (`summarize_activation`) or `tensor`
  (`summarize_tensor` without `tag`), made unique as TF1 made names
  (`activation`, `activation_1`, ...) under the open name scopes;
- the `zeros` and `sixes` scalars are not written (their op is unknown);
  write `tf1.summary.scalar(name + "/zeros", tf1.nn.zero_fraction(x))` for
  a ReLU output where they are wanted;
- a `name_filter` of `summarize_collection` matches only the items that
  have a TF1 name (variables); it raises on unnamed values.

```python
for end_point in end_points.values():
    tf1.contrib.layers.summaries.summarize_activation(end_point)  # activation, activation_1, ...
tf1.contrib.layers.summarize_tensor(loss, tag="total_loss")
```
"""

import functools
import re

from keras_tpu_estimator.compat.v1 import graph
from keras_tpu_estimator.compat.v1 import summary
from keras_tpu_estimator.compat.v1._variable_views import VariableView
from keras_tpu_estimator.model_fn import store

# TF1's GraphKeys for what the contrib layers collected.
ACTIVATIONS, WEIGHTS, BIASES = "activations", "weights", "biases"


def _op_name(tensor):
    """The TF1 op name of `tensor` when it has one (a variable's), else None."""
    op = getattr(tensor, "op", None)
    return getattr(op, "name", None) if op is not None else None


def _value(tensor):
    return tensor.value() if isinstance(tensor, VariableView) else tensor


def _summary_tags():
    found = []
    for item in graph.get_collection(graph.GraphKeys.SUMMARIES):
        found += getattr(item, "tags", [])
    return found


def is_summary_tag_unique(tag):
    """Whether no summary of the `summaries` collection has tag `tag`.

    Args:
        tag: a summary tag.

    Returns:
        True when `tag` is not in use in this `model_fn` call (always
        outside `model_fn`, which alone has collections).
    """
    return not store.in_model_fn_call() or tag not in _summary_tags()


def assert_summary_tag_unique(tag):
    """Raises unless `tag` is unused (see `is_summary_tag_unique`).

    Raises:
        ValueError: when a summary of the `summaries` collection has tag `tag`.
    """
    if not is_summary_tag_unique(tag):
        raise ValueError(f"Conflict with summary tag: {tag} already exists")


def _named(tag):
    """`tag` when known (checked unique, as TF1 did), else None (the summary picks one)."""
    if tag is not None:
        assert_summary_tag_unique(tag)
    return tag


def summarize_tensor(tensor, tag=None):
    """Writes a scalar summary of a scalar `tensor`, a histogram summary of any other.

    Args:
        tensor: a tensor or variable.
        tag: the summary's tag; default the tensor's TF1 name (a
            variable's), else `tensor` made unique.

    Returns:
        The summary (`SummaryOp` in `model_fn`), or None for a boolean
        tensor (TF1 skipped those and strings).

    Raises:
        ValueError: for a `tag` already in use.

    Example:

    ```python
    tf1.contrib.layers.summarize_tensor(learning_rate, tag="learning_rate")
    ```
    """
    if str(getattr(tensor, "dtype", "")) == "bool":
        return None
    name = _named(tag or _op_name(tensor)) or "tensor"
    value = _value(tensor)
    if len(tuple(value.shape)) == 0:
        return summary.scalar(name, value)
    return summary.histogram(name, value)


def summarize_activation(op):
    """Writes the histogram `<op name>/activation` of a layer's output (see the module
    docstring for the name of a JAX value and the ReLU scalars).

    Args:
        op: the activation tensor.

    Returns:
        The histogram summary (`SummaryOp` in `model_fn`).

    Raises:
        ValueError: for a named tensor whose tag is already in use.

    Example:

    ```python
    tf1.contrib.layers.summarize_activation(net)
    ```
    """
    name = _op_name(op)
    tag = _named(None if name is None else f"{name}/activation") or "activation"
    return summary.histogram(tag, _value(op))


def summarize_tensors(tensors, summarizer=summarize_tensor):
    """`summarizer(tensor)` for each of `tensors`, as a list."""
    return [summarizer(tensor) for tensor in tensors]


def summarize_collection(collection, name_filter=None, summarizer=summarize_tensor):
    """`summarizer` of each item of `collection` whose TF1 name matches `name_filter`.

    Args:
        collection: a collection key (`tf1.GraphKeys.GLOBAL_VARIABLES`,
            `"activations"`, ...).
        name_filter: a regular expression matched (`re.match`) against each
            item's TF1 op name; None: every item.
        summarizer: what summarizes one item.

    Returns:
        The list of summaries.

    Raises:
        ValueError: with `name_filter`, for an item without a TF1 name (a
            JAX value).
    """
    items = []
    for item in graph.get_collection(collection):
        if name_filter is not None:
            name = _op_name(item)
            if name is None:
                raise ValueError(
                    f"summarize_collection({collection!r}, name_filter={name_filter!r}): an "
                    "item of the collection is a JAX value, which has no TF1 op name to "
                    "match. Summarize it with summarize_tensor(x, tag=...) instead.")
            if not re.match(name_filter, name):
                continue
        items.append(item)
    return summarize_tensors(items, summarizer)


summarize_variables = functools.partial(summarize_collection, graph.GraphKeys.GLOBAL_VARIABLES)
summarize_weights = functools.partial(summarize_collection, WEIGHTS)
summarize_biases = functools.partial(summarize_collection, BIASES)


def summarize_activations(name_filter=None, summarizer=summarize_activation):
    """`summarize_activation` of each tensor of the `activations` collection."""
    return summarize_collection(ACTIVATIONS, name_filter, summarizer)


__all__ = ["assert_summary_tag_unique", "is_summary_tag_unique", "summarize_activation",
           "summarize_activations", "summarize_biases", "summarize_collection",
           "summarize_tensor", "summarize_tensors", "summarize_variables", "summarize_weights"]
