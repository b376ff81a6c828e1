"""Converting files and trees on disk, whole or not at all, and the report."""

import collections
import os
import shutil
import tempfile

from keras_tpu_estimator.convert.parsing import check_text


def _read(path, argument="input_path"):
    if os.path.isdir(path):
        raise IsADirectoryError(
            f"`{argument}` must be a Python file; {path!r} is a directory (convert a "
            "directory with `convert_tree`)."
        )
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"`{argument}` must be an existing Python file. Received: {path!r}"
        )
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"`{argument}` {path!r} is not UTF-8 text: {e}") from None
    check_text(text, f"`{argument}` {path!r}")
    return text


def _write_atomically(path, text, mode_from=None):
    """Writes `text` to a temporary file beside `path`, then renames it to `path`.

    Raises:
        OSError: naming `path` (never the temporary file) when it cannot be
            written.
    """
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".convert-", suffix=".py")
    except OSError as e:
        raise OSError(f"Cannot write {path!r}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        if mode_from and os.path.exists(mode_from):
            os.chmod(temporary, os.stat(mode_from).st_mode & 0o777)
        os.replace(temporary, path)
    except OSError as e:
        raise OSError(f"Cannot write {path!r}: {e.strerror}") from None
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def module_key(relative_path):
    """`official/resnet/imagenet_input.py` -> `official.resnet.imagenet_input`."""
    parts = relative_path[: -len(".py")].replace(os.sep, "/").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or "__init__"


def _python_files(root):
    found = {}
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                relative = os.path.relpath(os.path.join(directory, name), root)
                found[relative] = os.path.join(directory, name)
    return found


def _neighbours(path):
    """The other Python files beside `path`, read as context (never converted)."""
    directory = os.path.dirname(os.path.abspath(path))
    context = {}
    for name in sorted(os.listdir(directory)):
        full = os.path.join(directory, name)
        if name.endswith(".py") and full != os.path.abspath(path) and os.path.isfile(full):
            try:
                context[module_key(name)] = _read(full)
            except ValueError:
                continue
    return context


def output_file(input_path, output_path):
    """Where `convert_file(input_path, output_path)` writes, as `cp` would.

    An `output_path` that is an existing directory, or ends with a path
    separator, receives the file under its own name:
    `output_file("train.py", "out/")` is `"out/train.py"`.
    """
    output_path = os.fspath(output_path)
    if os.path.isdir(output_path) or output_path.endswith((os.sep, "/")):
        return os.path.join(output_path, os.path.basename(input_path))
    return output_path


def convert_file(input_path, output_path):
    """Converts one file; the output is written whole or not at all.

    The other Python files in the same directory are read (not converted)
    to find which of this file's functions belong to the input pipeline.

    Args:
        input_path: the TF1 program.
        output_path: where the converted program goes (may equal
            `input_path`); an existing directory (or a path ending with a
            separator) receives it under the input's file name, as with `cp`.
            Written to a temporary name in the same directory, then renamed.

    Returns:
        The `ConversionResult`.

    Raises:
        FileNotFoundError: if `input_path` is not a file or the directory of
            the output does not exist.
        IsADirectoryError: if `input_path` is a directory.
        OSError: if the output cannot be written (nothing is written then).
        SyntaxError: if the input is not valid Python.
        ValueError: if the input is not UTF-8 text, holds NUL bytes (it is
            not Python source) or nests too deeply to convert.

    Example:

    ```python
    convert_file("train.py", "converted/")   # writes converted/train.py
    ```
    """
    from keras_tpu_estimator.convert import convert_source

    output_path = output_file(input_path, output_path)
    source = _read(input_path)
    if not os.path.isdir(os.path.dirname(os.path.abspath(output_path))):
        raise FileNotFoundError(
            f"The directory of `output_path` must exist. Received: output_path={output_path!r}"
        )
    context = _neighbours(input_path)
    result = convert_source(source, filename=input_path, context=context)
    _write_atomically(output_path, result.source, mode_from=input_path)
    return result


def convert_tree(input_dir, output_dir=None):
    """Converts every Python file of a source tree; copies the other files.

    The tree is analysed as one program (see `convert_sources`). The output
    tree is built in a temporary directory beside `output_dir` and renamed
    into place, so it is written whole or not at all.

    Args:
        input_dir: the program's root directory.
        output_dir: where the converted tree goes; must not exist. None
            converts in place (each file replaced whole).

    Returns:
        `{relative path: ConversionResult}` of the Python files.

    Raises:
        FileNotFoundError: if `input_dir` is not a directory.
        FileExistsError: if `output_dir` exists.
        ValueError: if `output_dir` is inside `input_dir`.
        OSError: if the tree cannot be copied or written (nothing is written).
        SyntaxError: if a file is not valid Python (nothing is written).
        ValueError: if a file is not UTF-8 Python source or nests too deeply
            to convert (the message names it; nothing is written).
    """
    from keras_tpu_estimator.convert import convert_sources

    if not os.path.isdir(input_dir):
        raise FileNotFoundError(
            f"`input_dir` must be an existing directory. Received: {input_dir!r}"
        )
    if output_dir is not None:
        output_dir = os.path.normpath(output_dir)
        if os.path.exists(output_dir):
            raise FileExistsError(
                f"`output_dir` {output_dir!r} exists: choose a new directory, or convert "
                "in place (--inplace)"
            )
        if is_inside(output_dir, input_dir):
            raise ValueError(
                f"`output_dir` {output_dir!r} is inside `input_dir` {input_dir!r}: the "
                "converted tree cannot be written into the tree it is converted from. "
                "Choose a directory outside it."
            )
    files = _python_files(input_dir)
    sources = {module_key(rel): _read(path) for rel, path in files.items()}
    by_key = convert_sources(sources, {module_key(rel): path for rel, path in files.items()})
    results = {rel: by_key[module_key(rel)] for rel in files}
    if output_dir is None:
        for rel, path in files.items():
            if results[rel].source != sources[module_key(rel)]:
                _write_atomically(path, results[rel].source, mode_from=path)
        return results
    parent = os.path.dirname(os.path.abspath(output_dir))
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(dir=parent, prefix=".convert-")
    tree = os.path.join(staging, "tree")
    try:
        shutil.copytree(input_dir, tree, symlinks=True)
        for rel in files:
            _write_atomically(os.path.join(tree, rel), results[rel].source,
                              mode_from=files[rel])
        os.replace(tree, output_dir)
    except (OSError, shutil.Error) as e:
        # Name the files where they were to go, not in the staging directory.
        raise OSError(f"Cannot write the converted tree {output_dir!r}: "
                      + str(e).replace(tree, output_dir)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return results


def is_inside(path, directory):
    """Whether `path` is `directory` or under it (links resolved)."""
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return os.path.commonpath([path, directory]) == directory


def counts(result):
    """`Counter` of the levels of a result's changes."""
    return collections.Counter(c.level for c in result.changes)


def format_report(result, input_path, output_path):
    """The report of one conversion, in the style of `tf_upgrade_v2`.

    Every line names `input_path:line:col`, its level and what happened.
    """
    levels = counts(result)
    lines = [
        f"Converted {input_path!r} to {output_path!r}",
        f"{levels['INFO']} changes, {levels['WARNING']} warnings, "
        f"{levels['ERROR']} errors (calls left for you to convert)",
        "-" * 79,
    ]
    for change in result.changes:
        lines.append(f"{input_path}:{change.line}:{change.col}: {change.level}: {change.message}")
    return "\n".join(lines) + "\n"
