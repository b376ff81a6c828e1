"""Specification of the package's layers: every module imports only what its layer may.

`docs/architecture.md` draws the layers (estimator → model → engine →
inputs / model_fn → spec, config, ...) and each package's `__init__.py` says
what it may import. This table is that rule, checked on every module's
module-level imports (an import inside a function, for a rarely used path,
is allowed upwards). An entry is a package or module (`"model"`), or one
module of a package (`"engine.logs"`).
"""

import ast
import pathlib

import pytest

import keras_tpu_estimator

PACKAGE = pathlib.Path(keras_tpu_estimator.__file__).parent

# What every layer may use.
SHARED = {"_keras_internals", "log_lines", "spec", "config", "distribute"}

MAY_IMPORT = {
    "__init__": None,  # The public face imports whatever it exports.
    "_backend": {"log_lines", "_keras_internals.callback_cache",
                 "_keras_internals.tf_eager_context"},
    "_keras_internals": set(),
    "compilation_cache": set(),
    "log_lines": set(),
    "config": set(),
    "distribute": {"_keras_internals"},
    "spec": {"_keras_internals"},
    "metrics": {"spec"},
    "model_fn": {"_keras_internals", "spec", "config"},
    "inputs": {"spec", "config", "distribute", "log_lines"},
    "engine": SHARED | {
        "model_fn", "inputs.sources", "inputs.checks", "metrics", "hooks.fetches", "summary",
        "_backend.warm_up", "_backend.host_memory", "_backend.compiler_options",
    },
    "model": SHARED | {
        "engine", "inputs", "model_fn.call", "model_fn.initialization", "hooks.fetches",
        "summary", "strategy",
    },
    "estimator": SHARED | {
        "model", "model_fn.call", "model_fn.store", "inputs.input_fn", "checkpoint", "export",
        "hooks", "summary",
    },
    # Beside the layers: callbacks read the logs contract, never the model.
    "hooks": SHARED | {"engine.logs"},
    "checkpoint": SHARED | {"engine.logs", "hooks"},
    "summary": SHARED | {
        "engine.logs", "model_fn.store", "model_fn.train_ops", "_backend.warm_up",
    },
    "export": SHARED | {"checkpoint", "_backend.lowering"},
    "strategy": SHARED | {"engine.loop"},
    "compat": SHARED | {
        "model_fn", "inputs.transforms", "checkpoint", "hooks", "metrics", "summary",
    },
    "convert": set(),
}


def _unit(parts):
    """`("engine", "logs")` for keras_tpu_estimator/engine/logs.py."""
    return parts[0].removesuffix(".py")


def _target(module, name):
    """The module an import names: `engine.logs` for `from ...engine import logs`."""
    parts = module.split(".")[1:]
    candidate = PACKAGE.joinpath(*parts, name)
    if name and (candidate.with_suffix(".py").exists() or candidate.is_dir()):
        parts.append(name)
    return parts


def _imports(path):
    """The library modules `path` imports at module level, as part lists."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "keras_tpu_estimator"):
            for alias in node.names:
                yield _target(node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("keras_tpu_estimator."):
                    yield alias.name.split(".")[1:]


def _allowed(parts, allowed):
    return not parts or any(
        ".".join(parts[:len(entry.split("."))]) == entry for entry in allowed
    )


MODULES = sorted(
    path for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts
)


def test_every_top_level_name_has_a_row():
    units = {_unit(path.relative_to(PACKAGE).parts) for path in MODULES}
    assert units == set(MAY_IMPORT)


@pytest.mark.parametrize(
    "path", MODULES, ids=[str(path.relative_to(PACKAGE)) for path in MODULES]
)
def test_a_module_imports_only_what_its_layer_may(path):
    unit = _unit(path.relative_to(PACKAGE).parts)
    allowed = MAY_IMPORT[unit]
    if allowed is None:
        return
    upward = [
        ".".join(parts) for parts in _imports(path)
        if parts and parts[0] != unit and not _allowed(parts, allowed)
    ]
    assert not upward, f"{unit} may not import {upward} (see docs/architecture.md)"


PACKAGES = sorted(
    str(path.parent.relative_to(PACKAGE)) for path in PACKAGE.rglob("__init__.py")
    if path.parent != PACKAGE and path.parent.parent in (PACKAGE, PACKAGE / "compat")
)


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_docstring_says_what_it_may_import(package):
    doc = (PACKAGE / package / "__init__.py").read_text().split('"""')[1].lower()
    assert "may import" in doc or "imports no other" in doc
