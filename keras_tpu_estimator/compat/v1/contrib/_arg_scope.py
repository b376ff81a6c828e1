"""`arg_scope` and `add_arg_scope`: default arguments for a block of layer calls.

As in `tf.contrib.framework`, a function decorated with `add_arg_scope` takes
its keyword arguments from the innermost `arg_scope` that lists it, and
arguments written at the call win:

```python
with tf1.contrib.slim.arg_scope([slim.conv2d], padding="SAME",
                                weights_regularizer=slim.l2_regularizer(4e-5)):
    x = slim.conv2d(x, 32, 3)                  # padding="SAME"
    x = slim.conv2d(x, 32, 3, padding="VALID")  # the call wins
```
"""

import contextlib
import functools
import threading

_local = threading.local()


def _stack():
    if not hasattr(_local, "stack"):
        _local.stack = [{}]
    return _local.stack


def _key(op):
    return getattr(op, "_arg_scope_key", None) or (op.__module__, op.__name__)


def current_arg_scope():
    """The innermost scope: a dict `{op key: {argument: value}}`."""
    return _stack()[-1]


def has_arg_scope(func):
    """Whether `func` was decorated with `add_arg_scope`."""
    return getattr(func, "_arg_scope_key", None) is not None


def arg_scoped_arguments(func):
    """The argument names `func` takes (what an `arg_scope` may set for it)."""
    import inspect

    return list(inspect.signature(func).parameters)


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
    """
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError(
                "arg_scope(list_ops_or_scope=<a scope dict>) takes no keyword "
                f"arguments; got {sorted(kwargs)}")
        scope = dict(list_ops_or_scope)
    elif isinstance(list_ops_or_scope, (list, tuple)):
        scope = {key: dict(value) for key, value in current_arg_scope().items()}
        for op in list_ops_or_scope:
            if not has_arg_scope(op):
                raise ValueError(
                    f"arg_scope(list_ops_or_scope=...): {op!r} is not decorated "
                    "with @add_arg_scope; only such ops take arguments from a scope")
            scope.setdefault(_key(op), {}).update(kwargs)
    else:
        raise TypeError(
            "arg_scope(list_ops_or_scope=...) takes a list or tuple of ops or a "
            f"scope dict; got {list_ops_or_scope!r}")
    _stack().append(scope)
    try:
        yield scope
    finally:
        _stack().pop()


def add_arg_scope(func):
    """Decorates `func` so that `arg_scope` can set its keyword arguments.

    Args:
        func: the function.

    Returns:
        A function that calls `func` with the innermost scope's arguments for
        it, overridden by those of the call.
    """
    key = (func.__module__, func.__name__)

    @functools.wraps(func)
    def scoped(*args, **kwargs):
        defaults = current_arg_scope().get(key)
        if defaults:
            kwargs = {**defaults, **kwargs}
        return func(*args, **kwargs)

    scoped._arg_scope_key = key
    return scoped
