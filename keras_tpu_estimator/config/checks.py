"""Argument checks shared by `TPUConfig`, `RunConfig` and their parsers.

Each check returns the value it accepts (normalized to a Python `int` where
it says so) and raises a `ValueError` naming the argument and the value
otherwise:

```python
check_int("save_summary_steps", 100, minimum=0)  # 100
check_number("session_creation_timeout_secs", 0, 0, strict=True)  # ValueError
```
"""

import numbers


def is_int(value):
    """Whether `value` is an integer (a `numbers.Integral`), `bool` excluded.

    Args:
        value: any object.

    Returns:
        `True` for `int`s and NumPy integers, `False` for `True`, `False`
        and everything else.

    Example:

    >>> is_int(3), is_int(True), is_int(3.0)
    (True, False, False)
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(name, value, minimum, allow_none=False):
    """Returns `value` as an int, if it is one and is >= `minimum`.

    Args:
        name: the argument's name, for the error message.
        value: the value received.
        minimum: the smallest value allowed, or `None` for no bound.
        allow_none: whether `None` is accepted (and returned).

    Returns:
        `int(value)`, or `None` if `value` is `None` and `allow_none`.

    Raises:
        ValueError: otherwise; the message names `name` and `value`.

    Example:

    >>> check_int("keep_checkpoint_max", 5, 0)
    5
    """
    if value is None and allow_none:
        return None
    if is_int(value) and (minimum is None or value >= minimum):
        return int(value)
    what = "an int" if minimum is None else f"an int >= {minimum}"
    if allow_none:
        what += " or None"
    raise ValueError(f"`{name}` must be {what}. Received: {name}={value!r}")


def check_number(name, value, minimum, allow_none=False, strict=False):
    """Returns `value` if it is a real number >= (or > if `strict`) `minimum`.

    Args:
        name: the argument's name, for the error message.
        value: the value received.
        minimum: the bound.
        allow_none: whether `None` is accepted (and returned).
        strict: require `value > minimum` rather than `>=`.

    Returns:
        `value`, unchanged.

    Raises:
        ValueError: if `value` is not such a number (`bool` is not one);
            the message names `name` and `value`.

    Example:

    >>> check_number("save_checkpoints_secs", 0.5, 0)
    0.5
    """
    if value is None and allow_none:
        return None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if value > minimum or (value == minimum and not strict):
            return value
    what = f"a number {'>' if strict else '>='} {minimum}"
    if allow_none:
        what += " or None"
    raise ValueError(f"`{name}` must be {what}. Received: {name}={value!r}")
