"""Exports that older TensorFlow (and TensorFlow Serving) can load.

The serving program of an export is StableHLO inside `XlaCallModule` ops,
written by `jax.export`. Three things decide which TensorFlow runs it:

- the calling convention (the op's `version` attribute): TensorFlow 2.15
  reads versions up to 8, 2.16 to 2.19 up to 9, 2.20 and later 10. JAX
  writes 10 by default; the export writes the oldest JAX can
  (`jax.export.minimum_supported_calling_convention_version`, 9), through
  `calling_convention()`.
- the StableHLO version of the serialized program (a portable artifact):
  JAX targets a version about a month older than itself, newer than any
  released TensorFlow's. `make_loadable` re-serializes each program for the
  StableHLO of the oldest TensorFlow in `TENSORFLOW_VERSIONS` that can run
  it (the program's operations must exist in that version).
- source locations: the MLIR of TensorFlow 2.18 and older cannot read the
  source ranges JAX records, so they are stripped (debug information only).

Measured with the `saved_model_cli`-style round trip of the tests on
TensorFlow 2.15.1 to 2.21.0 (see `docs/exporting.md`): an export of this
JAX loads and runs in TensorFlow 2.16 and later; 2.15 rejects calling
convention 9 and JAX can no longer write 8.
"""

import contextlib

from keras_tpu_estimator.log_lines import logger as _log

# (TensorFlow version, its StableHLO version, the newest XlaCallModule
# calling convention it runs), from each release's
# tensorflow/include/external/stablehlo/stablehlo/dialect/Version.h and
# from loading exports in it.
TENSORFLOW_VERSIONS = (
    ("2.15", "0.14.24", 8),
    ("2.16", "0.17.7", 9),
    ("2.17", "1.1.1", 9),
    ("2.18", "1.7.3", 9),
    ("2.19", "1.9.1", 9),
    ("2.20", "1.12.1", 10),
    ("2.21", "1.13.7", 10),
)


@contextlib.contextmanager
def calling_convention():
    """Within it, `jax.export` writes its oldest calling convention.

    Example:

    ```python
    with calling_convention():
        archive.write_out(path)
    ```
    """
    import jax

    previous = jax.config.jax_export_calling_convention_version
    jax.config.update(
        "jax_export_calling_convention_version",
        jax.export.minimum_supported_calling_convention_version,
    )
    try:
        yield
    finally:
        jax.config.update("jax_export_calling_convention_version", previous)


def make_loadable(saved_model):
    """Re-serializes every `XlaCallModule` program for the oldest TensorFlow.

    Each program is stripped of its source locations and written for the
    StableHLO of the oldest TensorFlow in `TENSORFLOW_VERSIONS` that runs
    its calling convention and has all its operations; a program no listed
    version can express is left as JAX wrote it.

    Args:
        saved_model: the `SavedModel` proto of `saved_model.pb`, changed in
            place.

    Returns:
        The oldest TensorFlow version (a string such as `"2.16"`) that loads
        every program, or None if one was left as JAX wrote it.

    Example:

    ```python
    make_loadable(proto)  # "2.16"
    ```
    """
    oldest = []
    for meta_graph in saved_model.meta_graphs:
        nodes = list(meta_graph.graph_def.node)
        for function in meta_graph.graph_def.library.function:
            nodes.extend(function.node_def)
        for node in nodes:
            if node.op == "XlaCallModule":
                module, version = _retarget(node.attr["module"].s, node.attr["version"].i)
                node.attr["module"].s = module
                oldest.append(version)
    if None in oldest:
        return None
    return max(oldest, key=_version_key, default=TENSORFLOW_VERSIONS[0][0])


def _version_key(version):
    return tuple(int(part) for part in version.split("."))


def _retarget(module, calling_convention):
    """`(module, TensorFlow version)`: `module` written for the oldest TensorFlow."""
    from jaxlib.mlir import ir
    from jaxlib.mlir import passmanager
    from jaxlib.mlir.dialects import stablehlo

    from keras_tpu_estimator import _keras_internals

    with _keras_internals.mlir_context() as context:
        diagnostics = []
        context.attach_diagnostic_handler(lambda d: diagnostics.append(str(d)) or True)
        parsed = ir.Module.parse(stablehlo.deserialize_portable_artifact_str(module))
        passmanager.PassManager.parse("builtin.module(strip-debuginfo)").run(parsed.operation)
        stripped = parsed.operation.get_asm(binary=True)
        for tensorflow, target, newest_convention in TENSORFLOW_VERSIONS:
            if calling_convention > newest_convention:
                continue
            try:
                # Parsed again: a failed serialization may leave it half converted.
                return (stablehlo.serialize_portable_artifact(ir.Module.parse(stripped), target),
                        tensorflow)
            except ValueError:
                _log.info(
                    "The serving program cannot be written for TensorFlow %s "
                    "(StableHLO %s): %s", tensorflow, target, "; ".join(diagnostics)[:500],
                )
                diagnostics.clear()
    _log.warning(
        "The serving program uses StableHLO newer than TensorFlow %s's: it is "
        "exported as JAX wrote it, for a TensorFlow as recent as this JAX.",
        TENSORFLOW_VERSIONS[-1][0],
    )
    return module, None
