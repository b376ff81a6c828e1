"""The arguments a user's function is given, by the names it declares.

TPUEstimator passes `model_fn` and `input_fn` only the arguments they name,
by keyword. `keyword_parameters` reads which those are, with
`inspect.signature`: plain functions, `functools.partial`s, bound methods and
callable objects alike.
"""

import functools
import inspect


def keyword_parameters(fn, name):
    """Returns the parameters of `fn` a caller passes by keyword.

    Args:
        fn: the user's function.
        name: its argument name in errors (`"model_fn"`, `"input_fn"`).

    Returns:
        A pair `(parameters, takes_kwargs)`: the `inspect.Parameter`s that can
        be passed by keyword, less those a `functools.partial` already binds,
        and whether `fn` has a `**kwargs` parameter.

    Raises:
        ValueError: if `fn` is not callable, its signature cannot be read,
            or it has required positional-only arguments.

    Example:

    ```python
    keyword_parameters(lambda features, mode=None: None, "model_fn")
    # ([<Parameter "features">, <Parameter "mode=None">], False)
    ```
    """
    if not callable(fn):
        raise ValueError(f"Argument `{name}` must be callable. Received: {name}={fn!r}")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"Cannot read the arguments of {name} ({fn}): {error}"
        ) from None
    bound = fn.keywords if isinstance(fn, functools.partial) else {}
    parameters = []
    positional_only = []
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            if parameter.default is inspect.Parameter.empty:
                positional_only.append(parameter.name)
        elif (
            parameter.kind
            in (
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                inspect.Parameter.KEYWORD_ONLY,
            )
            and parameter.name not in bound
        ):
            parameters.append(parameter)
    if positional_only:
        raise ValueError(
            f"{name} ({fn}) has positional-only arguments {positional_only}: "
            f"the arguments of {name} are passed by keyword."
        )
    takes_kwargs = any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()
    )
    return parameters, takes_kwargs
