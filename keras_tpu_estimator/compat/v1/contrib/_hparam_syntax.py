"""The `name=value,...` grammar of `tf.contrib.training.HParams.parse`, and its type rules.

TF1 programs take their hyper-parameters from one flag
(`--hparams=learning_rate=0.3,layers=[64,64],use_bn=false`) and parse it
into an `HParams`. The grammar, as TF1 documented it:

- a clause is `name=value` or `name=[v1,v2,...]` (or `name[i]=value`,
  which yields `{i: value}` and which `HParams.set_hparam` then refuses);
  clauses are separated by a comma and optional spaces;
- a name starts with a letter and continues with letters, digits, `_`, `.`;
- a value is parsed by the hyper-parameter's type: `int(...)`,
  `float(...)`, `str(...)`; a bool takes `true`/`True`/`false`/`False` or an
  integer (`0` is False);
- list elements are separated by commas or spaces; empty ones are skipped.

```python
parse_values("lr=0.3,sizes=[1, 2]", {"lr": float, "sizes": int})
# {'lr': 0.3, 'sizes': [1, 2]}
```
"""

import numbers
import re

# One clause: a name, an optional [index], '=', then a scalar or a [list],
# then the end or a comma.
_CLAUSE = re.compile(
    r"(?P<name>[a-zA-Z][\w.]*)"
    r"(\[\s*(?P<index>\d+)\s*\])?"
    r"\s*=\s*"
    r"((?P<val>[^,\[]*)|\[(?P<vals>[^\]]*)\])"
    r"($|,\s*)"
)


def _parse_error(name, value_type, text, values):
    return ValueError(
        f"Could not parse hparam '{name}' of type '{value_type.__name__}' "
        f"with value '{text}' in {values}"
    )


def _reuse_error(name, values):
    return ValueError(f"Multiple assignments to variable '{name}' in {values}")


def _bool_parser(name, values):
    def parse(text):
        if text in ("true", "True"):
            return True
        if text in ("false", "False"):
            return False
        try:
            return bool(int(text))
        except ValueError:
            raise _parse_error(name, bool, text, values) from None

    return parse


def parse_values(values, type_map, ignore_unknown=False):
    """Parses `name=value` clauses into a dict, by the types of `type_map`.

    Args:
        values: the string, e.g. `"lr=0.1,layers=[64,32],opt=adam"`.
        type_map: the type of each name (of a list's elements for lists).
        ignore_unknown: skip names `type_map` lacks instead of failing.

    Returns:
        A dict of name to a value, a list of values, or (for `name[i]=v`
        clauses) a dict of index to value.

    Raises:
        ValueError: for a malformed clause (`Malformed hyperparameter value:
            ...`), an unknown name, a value its type cannot parse, a name
            assigned twice, or a list assigned to an index.

    Example:

    ```python
    parse_values("a=1,b=[x, y]", {"a": int, "b": str})   # {'a': 1, 'b': ['x', 'y']}
    ```
    """
    if not isinstance(values, str):
        raise ValueError(
            f"Hyperparameter values must be a string of 'name=value' clauses. "
            f"Received: values={values!r}"
        )
    results = {}
    position = 0
    while position < len(values):
        match = _CLAUSE.match(values, position)
        if not match:
            raise ValueError(f"Malformed hyperparameter value: {values[position:]}")
        position = match.end()
        name, index = match.group("name"), match.group("index")
        if name not in type_map:
            if ignore_unknown:
                continue
            raise ValueError(f"Unknown hyperparameter type for {name}")
        value_type = type_map[name]
        parse = _bool_parser(name, values) if value_type is bool else value_type
        if match.group("val") is not None:
            text = match.group("val")
            try:
                value = parse(text)
            except (ValueError, TypeError):
                raise _parse_error(name, value_type, text, values) from None
            if index is None:
                if name in results:
                    raise _reuse_error(name, values)
                results[name] = value
            else:
                slots = results.setdefault(name, {})
                if not isinstance(slots, dict):
                    raise _reuse_error(name, values)
                if int(index) in slots:
                    raise _reuse_error(f"{name}[{int(index)}]", values)
                slots[int(index)] = value
        else:
            if index is not None:
                raise ValueError("Assignment of a list to a list index.")
            if name in results:
                raise _reuse_error(name, values)
            text = match.group("vals")
            try:
                results[name] = [parse(e) for e in re.split("[ ,]", text) if e]
            except (ValueError, TypeError):
                raise _parse_error(name, value_type, text, values) from None
    return results


def cast_to_type(name, param_type, value):
    """`value` as a `param_type` hyper-parameter, if TF1 allowed that conversion.

    An int widens to a float; nothing else converts between strings, bools
    and numbers. A hyper-parameter whose value was None takes anything.

    Raises:
        ValueError: `Could not cast hparam '<name>' of type '<type>' from value <value>`.
    """
    failure = ValueError(
        f"Could not cast hparam '{name}' of type '{param_type}' from value {value!r}"
    )
    if issubclass(param_type, type(None)):
        return value
    if issubclass(param_type, (str, bytes)) and not isinstance(value, (str, bytes)):
        raise failure
    if issubclass(param_type, bool) != isinstance(value, bool):
        raise failure
    if issubclass(param_type, numbers.Integral) and not isinstance(value, numbers.Integral):
        raise failure
    if issubclass(param_type, numbers.Number) and not isinstance(value, numbers.Number):
        raise failure
    return param_type(value)
