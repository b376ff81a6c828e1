"""Rewrites one module: the text edits and the report of a conversion.

Edits are computed from the syntax tree's node positions and applied to the
original text, so comments and formatting survive. The library's modules
are written with placeholders while the module is read, and get their local
names (`kte`, `tf1`, or a free name when the program already uses those)
once it is known which of the program's own bindings survive.
"""

import ast
import collections
import functools

from keras_tpu_estimator.convert import idioms as idioms_lib
from keras_tpu_estimator.convert import imports as imports_lib
from keras_tpu_estimator.convert import names as names_lib
from keras_tpu_estimator.convert import scopes as scopes_lib
from keras_tpu_estimator.convert import sides as sides_lib
from keras_tpu_estimator.convert import stand_ins
from keras_tpu_estimator.convert import vendored as vendored_lib

Change = collections.namedtuple("Change", ["line", "col", "level", "message"])
Change.__doc__ = """One entry of the report: `level` is INFO, WARNING or ERROR."""

_PLACEHOLDER = imports_lib.PLACEHOLDER


def _model_safe(name):
    """Whether TensorFlow name `name` runs as it is inside a JAX-traced `model_fn`."""
    return name in names_lib.PLAIN_VALUES or any(
        names_lib.is_under(name, safe) for safe in stand_ins.MODEL_SAFE)


class ModuleRewriter(imports_lib.ImportEdits, idioms_lib.Idioms):
    """Collects the edits and report entries of one module.

    Args:
        source: the module's text.
        tree: its `ast.Module`.
        sides: a `sides.Sides` of the tree the module belongs to.
        key: the module's key in `sides`.
    """

    def __init__(self, source, tree, sides, key):
        self.text = source
        self.source = source.encode("utf-8")
        self.tree = tree
        self.line_starts = [0]
        for line in self.source.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))
        self.scopes = scopes_lib.Scopes(tree, functools.partial(sides.superseded, key))
        self.sides, self.key = sides, key
        self.edits = []  # (start, end, text)
        self.changes = []
        self.uses = set()  # "kte", "tf1"
        self.used = collections.Counter()  # (id(scope), name) -> reads left on TensorFlow
        self.rewritten = collections.Counter()  # (id(scope), name) -> reads rewritten
        self.skip = set()  # ids of alias statements' values, visited once kept
        self.removed = []  # statements to remove
        self.unreached = True  # outside every def that a seed reaches

    # Positions and reports.

    def offset(self, line, col):
        return self.line_starts[line - 1] + col

    def span(self, node):
        return self.offset(node.lineno, node.col_offset), self.offset(
            node.end_lineno, node.end_col_offset)

    def segment(self, node):
        start, end = self.span(node)
        return self.source[start:end].decode("utf-8")

    def report(self, node, level, message):
        # col_offset counts UTF-8 bytes; report the character column, 1-based.
        line_text = self.source[self.line_starts[node.lineno - 1]:]
        col = len(line_text[: node.col_offset].decode("utf-8", "replace")) + 1
        self.add_change(node.lineno, col, level, message)

    def add_change(self, line, col, level, message):
        self.changes.append(Change(line, col, level, message))

    def replace(self, node, text, original, message=None):
        start, end = self.span(node)
        shown = imports_lib.shown(text)
        self.edits.append((start, end, text))
        self.report(node, "INFO", message or f"Renamed '{original}' to '{shown}'")

    # The walk.

    def run(self):
        if self.key in self.sides.vendored:
            self.names = {}
            self.add_change(1, 1, "WARNING", vendored_lib.MESSAGE)
            return self
        default = self.sides.module_side.get(self.key, sides_lib.MODEL)
        self.aliases = self.scopes.module_aliases()  # (statement, scope), read once
        for statement, _ in self.aliases:
            self.skip.add(id(statement.value))
        self.visit(self.tree, default)
        shared = self.sides.shared_functions(self.key)
        if shared:
            self.add_change(shared[0].lineno, 1, "INFO", (
                "Called by both model_fn and the input pipeline: "
                f"{', '.join(repr(node.name) for node in shared)}; converted to tf1, whose "
                "functions run TensorFlow's own ops on TensorFlow tensors"))
        self._keep_used_aliases()
        self._remove_unused_imports()
        self._remove_statements()
        self._add_imports()
        return self

    def visit(self, node, side):
        if self.unreached and isinstance(node, sides_lib._DEFS) and (
            id(node) in self.sides.side
        ):
            self.unreached = False  # inside code a seed reaches (see `sides`)
            try:
                self.visit(node, side)
            finally:
                self.unreached = True
            return
        if isinstance(node, sides_lib._DEFS):
            side = self.sides.of(node, side)
        if id(node) in self.skip:
            return
        if isinstance(node, ast.Expr) and self.visit_switch(node):
            return
        if isinstance(node, (ast.Attribute, ast.Name)) and self.visit_name(node, side):
            return
        if side == sides_lib.MODEL and self.visit_shape(node, side):
            return
        if isinstance(node, ast.Call) and (
            self.visit_resolver(node, side) or self.visit_iterator(node, side)
        ):
            return
        if sides_lib.is_dataset_call(node):
            self.visit(node.func, side)
            for child in list(node.args) + list(node.keywords):
                self.visit(child, sides_lib.INPUT)
            return
        for child in ast.iter_child_nodes(node):
            self.visit(child, side)

    def _resolve(self, node):
        parts, chain = scopes_lib.dotted(node)
        if parts is None:
            return None, None, None
        return self.scopes.resolve(chain[0]), parts, chain

    def _called_name(self, call):
        """The canonical TensorFlow name `call` calls, and its chain; (None, None) if none."""
        root, parts, chain = self._resolve(call.func)
        if root is None:
            return None, None
        return names_lib.normalize(".".join([root] + parts[1:])), chain

    def _count_use(self, name_node, counter=None):
        scope = self.scopes.scope_of.get(id(name_node))
        owner = self.scopes.owner(name_node.id, scope) if scope else None
        if owner is not None:
            (self.used if counter is None else counter)[(id(owner), name_node.id)] += 1

    def visit_name(self, node, side):
        """Rewrites or reports a TensorFlow name; False if `node` is not one."""
        root, parts, chain = self._resolve(node)
        if root is None:
            return False
        if not self.rewrite_name(node, root, parts, chain, side):
            self._count_use(chain[0])
        else:
            self._count_use(chain[0], self.rewritten)
        return True

    def rewrite_name(self, node, root, parts, chain, side):
        """Rewrites or reports one name; True if it no longer uses its binding."""
        full = names_lib.normalize(".".join([root] + parts[1:]))
        on_model = side == sides_lib.MODEL
        host_only = False  # reported as fine on the host only
        # The longest prefix of the chain that a table knows decides.
        for length in range(len(parts), 0, -1):
            raw = ".".join([root] + parts[1:length])
            name = names_lib.normalize(raw)
            prefix_node = chain[length - 1]
            original = ".".join(parts[:length])
            moved = names_lib.module_move(name)
            if moved:
                module = moved.split(".")[0]
                self.uses.add(module)
                self.replace(prefix_node, _PLACEHOLDER[module] + moved[len(module):], original)
                return True
            if name in names_lib.KTE_NAMES:
                self.uses.add(names_lib.KTE)
                target = names_lib.KTE_NAMES[name]
                self.replace(prefix_node, _PLACEHOLDER[names_lib.KTE] + target[3:], original)
                return True
            if name in names_lib.UNSUPPORTED and not (
                side != sides_lib.MODEL and name in names_lib.INPUT_SIDE_OK
            ) and not (side != sides_lib.INPUT and names_lib.compat_v1_supports(name) and (
                length == len(parts) or not names_lib.compat_v1_is_module(name[3:]))):
                if self.unreached and name in names_lib.HOST_RUNS:
                    self.report(node, "WARNING", (
                        f"'{full}' left on TensorFlow: no model_fn reaches this code, so it "
                        "may run on the host, where TensorFlow runs it; in model_fn it "
                        f"cannot be converted: {names_lib.UNSUPPORTED[name]}"))
                    host_only = True
                    break
                self.report(node, "ERROR",
                            f"'{full}' cannot be converted: {names_lib.UNSUPPORTED[name]}")
                return False
            if side != sides_lib.INPUT and name.startswith("tf.") and (
                on_model or names_lib.is_under(name, "tf.contrib")
                or not names_lib.is_under(raw, "tf.compat")
            ) and names_lib.compat_v1_has(name[3:]) and (
                length == len(parts) or not names_lib.compat_v1_is_module(name[3:])
            ):
                self.uses.add(names_lib.TF1)
                self.replace(prefix_node, _PLACEHOLDER[names_lib.TF1] + name[2:], original)
                bytes_use = names_lib.compat_v1_input_only(name)
                if on_model and not self.unreached and bytes_use:
                    self.report(node, "WARNING", (
                        f"'{full}' {bytes_use}, which only TensorFlow holds: tf1{name[2:]} "
                        "runs TensorFlow's op where the input pipeline calls it, and raises "
                        "TypeError where model_fn calls it (decode in input_fn and give "
                        "model_fn the images)"))
                return True
        in_model_fn = on_model and not self.unreached and not host_only
        if in_model_fn and any(names_lib.is_under(full, s) for s in stand_ins.TF2_SUMMARIES):
            self.report(node, "ERROR", f"'{full}' cannot be converted: "
                        f"{stand_ins.TF2_SUMMARY_ERROR}")
            return False
        if root == "tf" and ".".join([root] + parts[1:]) == full:
            # TensorFlow 2 itself, by its own name: TF1 names it lacks are respelled.
            spelling = names_lib.tf2_spelling(full, compat_v1=not on_model or self.unreached)
            if spelling:
                length, target = spelling
                text = parts[0] + target[2:]
                self.edits.append((*self.span(chain[length - 1]), text))
                self.report(chain[length - 1], "INFO",
                            f"Renamed '{'.'.join(parts[:length])}' to '{text}'")
                moved = "tf" + target[2:] + full[len(".".join([root] + parts[1:length])):]
                if in_model_fn and not _model_safe(moved):
                    self._report_left(node, moved)
                return False
        if host_only or any(names_lib.is_under(full, safe) for safe in names_lib.HOST_SAFE):
            if in_model_fn and not _model_safe(full):
                self._report_left(node, full)
            return False
        if full in names_lib.PLAIN_VALUES:
            return False
        if names_lib.is_under(full, "tf.contrib"):
            self.report(node, "ERROR", f"'{full}' has no equivalent in keras_tpu_estimator "
                        "(TensorFlow 2 has no tf.contrib)")
        elif names_lib.is_under(full, "tf.estimator"):
            self.report(node, "ERROR", f"'{full}' has no equivalent in keras_tpu_estimator")
        elif on_model and any(
            names_lib.is_under(full, "tf." + module) for module in names_lib.compat_v1_modules()
        ):
            module = next(m for m in names_lib.compat_v1_modules() if names_lib.is_under(
                full, "tf." + m))
            self.report(node, "ERROR",
                        f"'{full}' is not in keras_tpu_estimator.compat.v1.{module}: "
                        "rewrite it with keras.ops / keras.layers")
        elif on_model and full != "tf" and self.unreached:
            self.report(node, "WARNING",
                        f"'{full}' left on TensorFlow: it is not in "
                        "keras_tpu_estimator.compat.v1. No model_fn reaches this code, so "
                        "it may run on the host, where TensorFlow works; if model_fn "
                        "calls it, rewrite it with keras.ops (model_fn is traced by JAX)")
        elif on_model and full != "tf":
            self._report_left(node, full)
        return False

    def _report_left(self, node, full):
        self.report(node, "WARNING",
                    f"'{full}' left on TensorFlow: it is not in "
                    "keras_tpu_estimator.compat.v1, and model_fn is traced by JAX, "
                    "so TensorFlow ops cannot run there; rewrite it with keras.ops")

    def apply(self):
        """The converted text."""
        result = self.source
        for start, end, text in sorted(self.edits, key=lambda e: (e[0], e[1]), reverse=True):
            result = result[:start] + text.encode("utf-8") + result[end:]
        text = result.decode("utf-8")
        for key, placeholder in imports_lib.PLACEHOLDER.items():
            text = text.replace(placeholder, self.names.get(key, key))
        return text
