"""`arg_scope` and `add_arg_scope`: default arguments for a block of layer calls.

As in `tf.contrib.framework` (and `tf_slim`), a function decorated with
`add_arg_scope` takes its keyword arguments from the innermost `arg_scope`
that lists it, and arguments written at the call win:

```python
with tf1.contrib.slim.arg_scope([slim.conv2d], padding="SAME",
                                weights_regularizer=slim.l2_regularizer(4e-5)):
    x = slim.conv2d(x, 32, 3)                  # padding="SAME"
    x = slim.conv2d(x, 32, 3, padding="VALID")  # the call wins
```

A nested `arg_scope` starts from the enclosing one's defaults and adds its
own; `with arg_scope(...) as sc` yields a dict that `arg_scope(sc)`
re-enters later (TF1 programs return it from their `*_arg_scope()`
functions). As in TF1, the scope stack is one for the process, so a scope
opened around `estimator.train(...)` reaches the `model_fn` it calls.
An argument given positionally and by a scope is Python's "multiple values"
error, as in TF1.
"""

import contextlib
import functools
import inspect

# The stack of scopes, innermost last (TF1's `_ARGSTACK`): one per process.
_STACK = [{}]
# `{key: names of the keyword arguments}` of every decorated function.
_DECORATED = {}


def arg_scope_func_key(op):
    """The key under which scopes hold `op`'s defaults (one per decorated function)."""
    return getattr(op, "_key_op", None) or _key_of(op)


def _key_of(func):
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", type(func).__name__)
    return f"{getattr(func, '__module__', None)}.{name}@{id(func):x}"


def current_arg_scope():
    """The innermost scope: a dict `{op key: {argument: value}}`."""
    return _STACK[-1]


def has_arg_scope(func):
    """Whether `func` was decorated with `add_arg_scope`."""
    return arg_scope_func_key(func) in _DECORATED


def arg_scoped_arguments(func):
    """The keyword arguments (those with defaults) an `arg_scope` may set for `func`.

    Raises:
        ValueError: if `func` was not decorated with `add_arg_scope`.
    """
    if not has_arg_scope(func):
        raise ValueError(f"arg_scoped_arguments({func!r}): not decorated with @add_arg_scope.")
    return list(_DECORATED[arg_scope_func_key(func)])


@contextlib.contextmanager
def arg_scope(list_ops_or_scope, **kwargs):
    """Sets default keyword arguments of the listed ops for a block.

    Args:
        list_ops_or_scope: a list or tuple of functions decorated with
            `add_arg_scope`, or a scope dict (as an earlier `arg_scope`
            yielded) to enter again, with no `kwargs`.
        **kwargs: the defaults, merged over the enclosing scope's.

    Yields:
        The scope dict, which a later `arg_scope(scope)` re-enters.

    Raises:
        ValueError: if an op was not decorated with `add_arg_scope`, or a
            scope dict is given with `kwargs`.
        TypeError: if `list_ops_or_scope` is neither a list, a tuple nor
            a dict.

    Example:

    ```python
    with slim.arg_scope([slim.conv2d, slim.fully_connected],
                        weights_regularizer=slim.l2_regularizer(1e-4)):
        with slim.arg_scope([slim.conv2d], padding="VALID") as sc:
            net = slim.conv2d(images, 32, [3, 3])
    with slim.arg_scope(sc):      # the same defaults again
        net = slim.conv2d(net, 64, [3, 3])
    ```
    """
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError(
                "arg_scope(list_ops_or_scope=<a scope dict>) takes no keyword "
                f"arguments; got {sorted(kwargs)}")
        scope = dict(list_ops_or_scope)
    elif isinstance(list_ops_or_scope, (list, tuple)):
        scope = dict(current_arg_scope())
        for op in list_ops_or_scope:
            if not has_arg_scope(op):
                raise ValueError(
                    f"arg_scope(list_ops_or_scope=...): {op!r} is not decorated "
                    "with @add_arg_scope; only such ops take arguments from a scope")
            key = arg_scope_func_key(op)
            scope[key] = {**scope.get(key, {}), **kwargs}
    else:
        raise TypeError(
            "arg_scope(list_ops_or_scope=...) takes a list or tuple of ops or a "
            f"scope dict; got {list_ops_or_scope!r}")
    _STACK.append(scope)
    try:
        yield scope
    finally:
        _STACK.pop()


def add_arg_scope(func):
    """Decorates `func` so that `arg_scope` can set its keyword arguments.

    Args:
        func: the function.

    Returns:
        A function that calls `func` with the innermost scope's arguments for
        it, overridden by those of the call. It keeps `func`'s name,
        docstring and signature.

    Example:

    ```python
    @add_arg_scope
    def conv_bn(inputs, filters, is_training=True, scope=None): ...

    with arg_scope([conv_bn], is_training=False):
        net = conv_bn(net, 64)          # is_training=False
    ```
    """
    key = _key_of(func)

    @functools.wraps(func)
    def func_with_args(*args, **kwargs):
        defaults = current_arg_scope().get(key)
        if defaults:
            kwargs = {**defaults, **kwargs}
        return func(*args, **kwargs)

    _DECORATED[key] = tuple(
        name for name, parameter in inspect.signature(func).parameters.items()
        if parameter.default is not inspect.Parameter.empty)
    func_with_args._key_op = key
    return func_with_args
