"""Reading a program's text into an AST, with errors that name the file.

Two kinds of text are refused with a `ValueError` naming the file, never a
`RecursionError` trace:

- text holding NUL bytes: not Python source (a binary file, or text saved
  as UTF-16);
- expressions or blocks nested too deeply. Python's own parser gives up on
  some (`RecursionError` while it builds the tree, `MemoryError` when its
  stack is full, a `SyntaxError` for too many nested parentheses); the
  converter walks the tree recursively, one frame a level, so a tree deeper
  than `MAX_DEPTH` levels is refused before the walk starts.

```python
tree = parse("x = tf.layers.dense(y, 2)\\n", "train.py")
parse("x = " + " + ".join(["a"] * 1000), "train.py")  # ValueError: ... line 1 ...
```
"""

import ast

# Levels of the AST the converter walks. A 1,000-term `a + b + ...` chain is
# ~1,000 levels; real programs stay under 50. Python's default recursion
# limit (1,000 frames) leaves room for the walk plus its callers.
MAX_DEPTH = 500

_HOW = (
    "Split it into smaller expressions (e.g. sum a long `a + b + ...` chain "
    "in steps, or with sum() over a list)."
)


def check_text(text, name):
    """Raises ValueError if `text` holds NUL bytes: it is not Python source then.

    Args:
        text: the file's text.
        name: how to name the file in the message (e.g. `"'train.py'"`).
    """
    position = text.find("\x00")
    if position >= 0:
        line = text.count("\n", 0, position) + 1
        raise ValueError(
            f"{name} is not Python source: it contains NUL bytes, the first on "
            f"line {line} (a binary file, or text saved as UTF-16? Save it as "
            "UTF-8 text)."
        )


def _too_deep(tree):
    """The line of the first node nested deeper than `MAX_DEPTH` levels, or None.

    Iterative, so that it cannot itself run out of recursion depth.
    """
    stack = [(tree, 1, 1)]
    while stack:
        node, depth, line = stack.pop()
        line = getattr(node, "lineno", line)
        if depth > MAX_DEPTH:
            return line
        stack.extend((child, depth + 1, line) for child in ast.iter_child_nodes(node))
    return None


def parse(source, filename):
    """Parses `source` like `ast.parse`, refusing what the converter cannot walk.

    Args:
        source: the program's text, a str.
        filename: the file's name, for messages.

    Returns:
        The `ast.Module`.

    Raises:
        SyntaxError: if `source` is not valid Python (Python's message).
        ValueError: if it holds NUL bytes, or nests too deeply for Python's
            parser or for the converter (more than `MAX_DEPTH` levels).
    """
    check_text(source, repr(filename))
    try:
        tree = ast.parse(source, filename=filename)
    except (RecursionError, MemoryError):
        raise ValueError(
            f"{filename!r} is nested too deeply for Python's parser: an "
            "expression or block nests thousands of levels. " + _HOW
        ) from None
    line = _too_deep(tree)
    if line is not None:
        raise ValueError(
            f"{filename!r} is nested too deeply to convert: on line "
            f"{line}, an expression or block nests more "
            f"than {MAX_DEPTH} levels. " + _HOW
        )
    return tree


def too_deep_error(filenames):
    """The ValueError for a `RecursionError` met while converting `filenames`."""
    return ValueError(
        f"{', '.join(map(repr, filenames))}: nested too deeply to convert (the "
        "converter's walk of the program ran out of recursion depth). " + _HOW
    )
