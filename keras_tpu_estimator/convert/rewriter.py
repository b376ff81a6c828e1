"""Rewrites one module: the text edits and the report of a conversion.

Edits are computed from the syntax tree's node positions and applied to the
original text, so comments and formatting survive. The library's modules
are written with placeholders while the module is read, and get their local
names (`kte`, `tf1`, or a free name when the program already uses those)
once it is known which of the program's own bindings survive.
"""

import ast
import collections

from keras_tpu_estimator.convert import names as names_lib
from keras_tpu_estimator.convert import scopes as scopes_lib
from keras_tpu_estimator.convert import sides as sides_lib

Change = collections.namedtuple("Change", ["line", "col", "level", "message"])
Change.__doc__ = """One entry of the report: `level` is INFO, WARNING or ERROR."""

_PLACEHOLDER = {names_lib.KTE: "\0kte\0", names_lib.TF1: "\0tf1\0"}
_IMPORTS = {names_lib.KTE: names_lib.KTE_MODULE, names_lib.TF1: names_lib.TF1_MODULE}
_FALLBACK = {names_lib.KTE: "kte_", names_lib.TF1: "tf1_"}


def _shape_of(node):
    """`X` when `node` is `X.shape` or `X.get_shape()`, else None."""
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return node.value
    if (isinstance(node, ast.Call) and not node.args and not node.keywords
            and isinstance(node.func, ast.Attribute) and node.func.attr == "get_shape"):
        return node.func.value
    return None


class ModuleRewriter:
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
        self.scopes = scopes_lib.Scopes(tree)
        self.sides, self.key = sides, key
        self.edits = []  # (start, end, text)
        self.changes = []
        self.uses = set()  # "kte", "tf1"
        self.used = collections.Counter()  # (id(scope), name) -> reads left on TensorFlow
        self.rewritten = collections.Counter()  # (id(scope), name) -> reads rewritten
        self.skip = set()  # ids of alias statements' values, visited once kept
        self.removed = []  # statements to remove

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
        self.changes.append(Change(node.lineno, col, level, message))

    def replace(self, node, text, original, message=None):
        start, end = self.span(node)
        shown = text.replace(_PLACEHOLDER[names_lib.KTE], "kte").replace(
            _PLACEHOLDER[names_lib.TF1], "tf1")
        self.edits.append((start, end, text))
        self.report(node, "INFO", message or f"Renamed '{original}' to '{shown}'")

    # The walk.

    def run(self):
        default = self.sides.module_side.get(self.key, sides_lib.MODEL)
        self.aliases = self.scopes.module_aliases()  # (statement, scope), read once
        for statement, _ in self.aliases:
            self.skip.add(id(statement.value))
        self.visit(self.tree, default)
        self._keep_used_aliases()
        self._remove_unused_imports()
        self._remove_statements()
        self._add_imports()
        return self

    def visit(self, node, side):
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
        if isinstance(node, ast.Call) and self.visit_resolver(node):
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

    def visit_switch(self, statement):
        """`tf.disable_v2_behavior()` and friends: the statement is removed."""
        call = statement.value
        if not isinstance(call, ast.Call):
            return False
        name, chain = self._called_name(call)
        if name not in names_lib.BEHAVIOUR_SWITCHES:
            return False
        self._count_use(chain[0], self.rewritten)
        self.removed.append(statement)
        self.report(statement, "INFO",
                    f"Removed '{self.segment(statement)}': input pipelines run on "
                    "TensorFlow 2 as it is, and model_fn runs on JAX")
        return True

    def visit_resolver(self, call):
        """A TPU cluster resolver becomes `None`: JAX finds the devices."""
        name, _ = self._called_name(call)
        if name not in names_lib.CLUSTER_RESOLVERS:
            return False
        self.replace(call, "None", name, message=(
            f"Replaced '{name}(...)' by None: keras_tpu_estimator needs no TPU name, "
            "zone or project; JAX finds the devices (TPU, GPU or CPU) of this machine"))
        return True

    def visit_shape(self, node, side):
        """TF1 `TensorShape`/`Dimension` idioms on the plain tuples JAX shapes are."""
        if isinstance(node, ast.Attribute) and node.attr in ("ndims", "rank"):
            tensor = _shape_of(node.value)
            if tensor is not None:
                return self._wrap_shape(node, tensor, "len", side)
        if isinstance(node, ast.Call) and not node.args and not node.keywords and isinstance(
            node.func, ast.Attribute
        ) and node.func.attr == "as_list":
            tensor = _shape_of(node.func.value)
            if tensor is not None:
                return self._wrap_shape(node, tensor, "list", side)
        if isinstance(node, ast.Attribute) and node.attr == "value" and isinstance(
            node.value, ast.Subscript
        ) and _shape_of(node.value.value) is not None:
            subscript = node.value
            start, end = self.span(node)
            self.edits.append((self.span(subscript)[1], end, ""))
            self.report(node, "INFO",
                        f"Rewrote '{self.segment(node)}' to '{self.segment(subscript)}': "
                        "JAX shapes hold ints, not Dimensions")
            self.visit(subscript, side)
            return True
        if _shape_of(node) is not None and isinstance(node, ast.Call):
            tensor = node.func.value
            self.edits.append((self.span(tensor)[1], self.span(node)[1], ".shape"))
            self.report(node, "INFO", f"Rewrote '{self.segment(node)}' to "
                        f"'{self.segment(tensor)}.shape'")
            self.visit(tensor, side)
            return True
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            if self._called_name(node)[0] in ("tf.dimension_value", "tf.Dimension"):
                start, end = self.span(node)
                argument = node.args[0]
                self.edits.append((start, self.span(argument)[0], ""))
                self.edits.append((self.span(argument)[1], end, ""))
                self.report(node, "INFO", f"Rewrote '{self.segment(node)}' to "
                            f"'{self.segment(argument)}': JAX shapes hold ints")
                self.visit(argument, side)
                return True
        return False

    def _wrap_shape(self, node, tensor, function, side):
        start, end = self.span(node)
        tensor_end = self.span(tensor)[1]
        self.edits.append((start, start, function + "("))
        self.edits.append((tensor_end, end, ".shape)"))
        self.report(node, "INFO", f"Rewrote '{self.segment(node)}' to "
                    f"'{function}({self.segment(tensor)}.shape)'")
        self.visit(tensor, side)
        return True

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
        # The longest prefix of the chain that a table knows decides.
        for length in range(len(parts), 0, -1):
            raw = ".".join([root] + parts[1:length])
            name = names_lib.normalize(raw)
            prefix_node = chain[length - 1]
            original = ".".join(parts[:length])
            if name in names_lib.KTE_NAMES:
                self.uses.add(names_lib.KTE)
                target = names_lib.KTE_NAMES[name]
                self.replace(prefix_node, _PLACEHOLDER[names_lib.KTE] + target[3:], original)
                return True
            if name in names_lib.UNSUPPORTED and not (
                side != sides_lib.MODEL and name in names_lib.INPUT_SIDE_OK
            ):
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
                return True
            if name in names_lib.TF2_MOVES:
                if raw == name and root == "tf":  # TensorFlow 2 itself, by its own name
                    target = names_lib.TF2_MOVES[name]
                    self.edits.append((*self.span(prefix_node), parts[0] + target[2:]))
                    self.report(prefix_node, "INFO",
                                f"Renamed '{original}' to '{parts[0] + target[2:]}'")
                return False
        if any(names_lib.is_under(full, safe) for safe in names_lib.HOST_SAFE):
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
        elif on_model and full != "tf":
            self.report(node, "WARNING",
                        f"'{full}' left on TensorFlow: it is not in "
                        "keras_tpu_estimator.compat.v1, and model_fn is traced by JAX, "
                        "so TensorFlow ops cannot run there; rewrite it with keras.ops")
        return False

    # Imports and aliases.

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
            unused = [
                (a, local) for a, local in tf_locals
                if not self.used[(id(scope), local)] and self.rewritten[(id(scope), local)]
            ]
            text = self.segment(statement)
            contrib = [a for a, _ in tf_locals if a not in [u[0] for u in unused] and (
                names_lib.is_under(a.name, "tensorflow.contrib") or names_lib.is_under(
                    getattr(statement, "module", None) or "", "tensorflow.contrib"))]
            if contrib:
                self.report(statement, "ERROR",
                            f"'{text}' fails on TensorFlow 2 (no tf.contrib): "
                            "convert the remaining uses of its names, then remove it")
            if not unused:
                continue
            if len(unused) == len(statement.names):
                self.removed.append(statement)
                self.report(statement, "INFO",
                            f"Removed '{text}': nothing uses it after conversion")
                continue
            left = [a for a in statement.names if a not in [u[0] for u in unused]]
            aliases = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in left)
            head = "import " if isinstance(statement, ast.Import) else (
                f"from {'.' * statement.level}{statement.module or ''} import ")
            self.edits.append((*self.span(statement), head + aliases))
            self.report(statement, "INFO", f"Removed {[u[1] for u in unused]} from '{text}': "
                        "nothing uses them after conversion")

    @staticmethod
    def _is_tensorflow_alias(statement, alias):
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
        for key in (names_lib.KTE, names_lib.TF1):
            if key not in self.uses:
                continue
            name, present = self._alias_name(key)
            self.names[key] = name
            if not present:
                lines.append(f"import {_IMPORTS[key]} as {name}")
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
            self.changes.append(Change(line, 1, "INFO", f"Added '{statement}'"))

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

    def apply(self):
        """The converted text."""
        result = self.source
        for start, end, text in sorted(self.edits, key=lambda e: (e[0], e[1]), reverse=True):
            result = result[:start] + text.encode("utf-8") + result[end:]
        text = result.decode("utf-8")
        for key, placeholder in _PLACEHOLDER.items():
            text = text.replace(placeholder, self.names.get(key, key))
        return text
