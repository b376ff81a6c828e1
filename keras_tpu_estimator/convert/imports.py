"""The imports and module aliases of a converted module.

Once a module's names are rewritten: alias statements (`tf1 = tf.compat.v1`)
and TensorFlow imports that nothing reads any more are removed; a `tf.contrib`
import still read is replaced by a placeholder that raises when used (the
module imports on TensorFlow 2; the uses are reported); the library's modules
(`kte`, `tf1`) and the modules names were moved to (`keras`, `tensorflow`)
are imported under a free local name.
"""

import ast

from keras_tpu_estimator.convert import names as names_lib
from keras_tpu_estimator.convert import scopes as scopes_lib
from keras_tpu_estimator.convert import sides as sides_lib

# Local names stand in for the modules the rewrite imports, until it is
# known which names are free.
PLACEHOLDER = {
    names_lib.KTE: "\0kte\0", names_lib.TF1: "\0tf1\0", "keras": "\0keras\0",
    "tf": "\0tf\0",
}
IMPORTS = {
    names_lib.KTE: names_lib.KTE_MODULE, names_lib.TF1: names_lib.TF1_MODULE,
    "keras": "keras", "tf": "tensorflow",
}
_NO_CONTRIB = (
    "TensorFlow 2 has no tf.contrib, and the converter knows no equivalent: "
    "rewrite this call (the conversion report names each use)"
)
_FALLBACK = {names_lib.KTE: "kte_", names_lib.TF1: "tf1_", "keras": "keras_", "tf": "tf_"}


def shown(text):
    """`text` with its placeholders spelled as their default local names."""
    for key, placeholder in PLACEHOLDER.items():
        text = text.replace(placeholder, key)
    return text


class ImportEdits:
    """The import and alias edits of `rewriter.ModuleRewriter` (a mixin)."""

    def _keep_used_aliases(self):
        """Alias statements (`tf1 = tf.compat.v1`) stay if something still reads them."""
        kept = set()
        changed = True
        while changed:
            changed = False
            for statement, scope in self.aliases:
                name = statement.targets[0].id
                if id(statement) in kept or not self.used[(id(scope), name)]:
                    continue
                kept.add(id(statement))
                self.skip.discard(id(statement.value))
                self.visit(statement.value, sides_lib.HOST)
                changed = True
        for statement, scope in self.aliases:
            name = statement.targets[0].id
            if id(statement) in kept:
                continue
            if self.rewritten[(id(scope), name)]:
                self._count_use(scopes_lib.dotted(statement.value)[1][0], self.rewritten)
                self.removed.append(statement)
                self.report(statement, "INFO", f"Removed '{self.segment(statement)}': "
                            "nothing uses it after conversion")
            else:  # never read: converted like any other statement
                self.skip.discard(id(statement.value))
                self.visit(statement.value, sides_lib.HOST)

    def _remove_unused_imports(self):
        for statement, scope in self._tensorflow_imports():
            locals_ = [(a, a.asname or (a.name.split(".")[0] if isinstance(
                statement, ast.Import) else a.name)) for a in statement.names]
            tf_locals = [
                (a, local) for a, local in locals_
                if self.scopes.lookup(local, scope) is not None
                and self._is_tensorflow_alias(statement, a)
            ]
            # A tf.contrib import nothing reads goes too: TensorFlow 2 cannot import it.
            unused = [
                (a, local) for a, local in tf_locals
                if not self.used[(id(scope), local)] and (
                    self.rewritten[(id(scope), local)] or self._is_contrib(statement, a))
            ]
            text = self.segment(statement)
            unused_aliases = [u[0] for u in unused]
            contrib = [(a, local) for a, local in tf_locals
                       if a not in unused_aliases and self._is_contrib(statement, a)]
            # A binding of the contrib module itself (not of `tensorflow`) is
            # replaced by a placeholder, so the module imports on TensorFlow 2.
            stubs = [(a, local) for a, local in contrib
                     if isinstance(statement, ast.ImportFrom) or a.asname]
            for a, local in contrib:
                self.report(statement, "ERROR", (
                    f"'{text}' fails on TensorFlow 2 (no tf.contrib): replaced by "
                    f"'{local} = tf1.unsupported.Unsupported(...)', which raises "
                    "NotImplementedError where it is used; convert the remaining uses of "
                    f"'{local}' (reported here)") if (a, local) in stubs else (
                    f"'{text}' fails on TensorFlow 2 (no tf.contrib): "
                    "convert the remaining uses of its names, then remove it"))
            if not unused and not stubs:
                continue
            if len(unused) == len(statement.names):
                self.removed.append(statement)
                self.report(statement, "INFO",
                            f"Removed '{text}': nothing uses it after conversion")
                continue
            stubbed = [a for a, _ in stubs]
            left = [a for a in statement.names if a not in unused_aliases + stubbed]
            parts = []
            if left:
                aliases = ", ".join(a.name + (f" as {a.asname}" if a.asname else "")
                                    for a in left)
                head = "import " if isinstance(statement, ast.Import) else (
                    f"from {'.' * statement.level}{statement.module or ''} import ")
                parts.append(head + aliases)
            for a, local in stubs:
                self.uses.add(names_lib.TF1)
                module = getattr(statement, "module", None)
                contrib_name = names_lib.canonical(f"{module}.{a.name}" if module else a.name)
                parts.append(f"{local} = {PLACEHOLDER[names_lib.TF1]}.unsupported.Unsupported("
                             f"{contrib_name[3:]!r}, {_NO_CONTRIB!r})")
            self.edits.append((*self.span(statement), "; ".join(parts)))
            if unused:
                self.report(statement, "INFO", f"Removed {[u[1] for u in unused]} from "
                            f"'{text}': nothing uses them after conversion")

    @staticmethod
    def _is_contrib(statement, alias):
        return names_lib.is_under(alias.name, "tensorflow.contrib") or names_lib.is_under(
            getattr(statement, "module", None) or "", "tensorflow.contrib")

    def tensorflow_v1(self, node):
        """Text naming `tf.compat.v1` where `node` is.

        Through a binding of TensorFlow the module has there (then counted as
        read, so that its import stays), else through `tensorflow`, imported.
        """
        scope = next((self.scopes.scope_of[id(n)] for n in ast.walk(node)
                      if isinstance(n, ast.Name) and id(n) in self.scopes.scope_of),
                     self.scopes.module)
        current = scope
        while current is not None:
            for name in sorted(current.bindings):
                value = self.scopes.lookup(name, scope)
                if value in ("tf", "tf.compat.v1"):
                    self.used[(id(self.scopes.owner(name, scope)), name)] += 1
                    return name if value == "tf.compat.v1" else name + ".compat.v1"
            current = current.parent
        self.uses.add("tf")
        return PLACEHOLDER["tf"] + ".compat.v1"

    def _is_tensorflow_alias(self, statement, alias):
        if (id(statement), alias.name) in self.scopes.superseded_imports:
            return True  # a vendored tpu_estimator.py, read as TensorFlow's (see `vendored`)
        if isinstance(statement, ast.Import):
            return names_lib.is_tensorflow(alias.name)
        return bool(statement.module) and not statement.level and names_lib.is_tensorflow(
            statement.module)

    def _tensorflow_imports(self):
        """Every import statement naming TensorFlow, with the scope it binds in."""
        return [
            (statement, scope) for statement, scope in self.scopes.import_statements
            if any(self._is_tensorflow_alias(statement, a) for a in statement.names)
        ]

    def _remove_statements(self):
        """Deletes the removed statements' lines; an emptied block gets `pass`."""
        removed = {id(s) for s in self.removed}
        emptied = set()
        for node in ast.walk(self.tree):
            for field in ("body", "orelse", "finalbody"):
                body = getattr(node, field, None)
                if isinstance(body, list) and body and all(id(s) in removed for s in body):
                    emptied.add(id(body[0]))
        for statement in self.removed:
            start = self.line_starts[statement.lineno - 1]
            end = self.line_starts[statement.end_lineno] if statement.end_lineno < len(
                self.line_starts) else len(self.source)
            line = self.source[start:end].decode("utf-8")
            indent = line[: len(line) - len(line.lstrip())]
            text = f"{indent}pass\n" if id(statement) in emptied else ""
            if self.offset(statement.lineno, statement.col_offset) != start + len(
                indent.encode()
            ) or self.source[self.offset(statement.end_lineno, statement.end_col_offset):end].strip(
                b" \t\r\n;"
            ) and not self.source[
                self.offset(statement.end_lineno, statement.end_col_offset):end
            ].lstrip(b" \t").startswith(b"#"):
                # Shares its line with other code: remove the statement alone.
                self.edits.append((*self.span(statement), "pass" if text else "None"))
                continue
            self.edits.append((start, end, text))

    def _alias_name(self, key):
        existing = self.scopes.ours.get(key)
        if existing:
            return existing, True
        removed = {(id(s), n) for s, n in self._removed_bindings()}
        candidate = key
        while not all((id(scope), candidate) in removed
                      for scope in self.scopes.scopes_binding(candidate)):
            candidate = _FALLBACK[key] if candidate == key else candidate + "_"
        return candidate, False

    def _removed_bindings(self):
        removed_ids = {id(s) for s in self.removed}
        out = []
        for statement, scope in self.aliases:
            if id(statement) in removed_ids:
                out.append((scope, statement.targets[0].id))
        for statement, scope in self._tensorflow_imports():
            if id(statement) in removed_ids:
                for a in statement.names:
                    out.append((scope, a.asname or a.name.split(".")[0]))
        return out

    def _add_imports(self):
        self.names = {}
        lines = []
        for key in IMPORTS:
            if key not in self.uses:
                continue
            name, present = self._alias_name(key)
            self.names[key] = name
            if not present:
                lines.append(f"import {IMPORTS[key]}" + (
                    "" if name == IMPORTS[key] else f" as {name}"))
        if not lines:
            return
        first_tf_import, last_import = None, None
        for node in self.tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                last_import = node
                if first_tf_import is None and any(
                    self._is_tensorflow_alias(node, a) for a in node.names
                ):
                    first_tf_import = node
        if first_tf_import is not None:
            position = self.line_starts[first_tf_import.lineno - 1]
            line = first_tf_import.lineno
        elif last_import is not None:
            position = self.line_starts[last_import.end_lineno]
            line = last_import.end_lineno + 1
        else:
            position, line = self._after_docstring()
        newline = "\r\n" if b"\r\n" in self.source else "\n"
        text = "".join(s + newline for s in lines)
        if position == len(self.source) and self.source and not self.source.endswith(
            newline.encode()
        ):
            text = newline + text
        self.edits.append((position, position, text))
        for statement in lines:
            self.add_change(line, 1, "INFO", f"Added '{statement}'")

    def _after_docstring(self):
        body = self.tree.body
        index = 0
        if body and isinstance(body[0], ast.Expr) and isinstance(
            getattr(body[0], "value", None), ast.Constant
        ) and isinstance(body[0].value.value, str):
            index = 1
        while index < len(body) and isinstance(body[index], ast.ImportFrom) and (
            body[index].module == "__future__"
        ):
            index += 1
        if index == 0:
            return 0, 1
        end = body[index - 1].end_lineno
        return self.line_starts[end], end + 1
