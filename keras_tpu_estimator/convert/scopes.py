"""Which names in a module stand for TensorFlow, resolved by Python's scoping rules.

A program names TensorFlow in many ways: `import tensorflow.compat.v1 as tf`,
`from tensorflow.compat.v1 import estimator as tf_estimator`,
`from tensorflow.contrib import tpu as contrib_tpu`, `tf1 = tf.compat.v1`,
imports inside functions. `Scopes` records every binding of every scope
(module, class body, function, lambda) and resolves a name where it is used:
a function's local `estimator = ...` hides a module-level
`from tensorflow.compat.v1 import estimator`, as it does when Python runs it.
"""

import ast

from keras_tpu_estimator.convert import names as names_lib

OTHER = "other"  # a binding that is not TensorFlow


def dotted(node):
    """`['tf', 'layers', 'dense']` and the chain's nodes for `tf.layers.dense`."""
    nodes = []
    while isinstance(node, ast.Attribute):
        nodes.append(node)
        node = node.value
    if not isinstance(node, ast.Name):
        return None, None
    nodes.append(node)
    nodes.reverse()
    return [nodes[0].id] + [n.attr for n in nodes[1:]], nodes


class Scope:
    """The names one module, class body or function binds."""

    def __init__(self, kind, parent):
        self.kind = kind  # "module", "class" or "function"
        self.parent = parent
        self.bindings = {}  # name -> [binding]; a binding is OTHER, "tf..." or an ast node
        self.declared_global = set()

    def bind(self, name, binding=OTHER):
        self.bindings.setdefault(name, []).append(binding)


class Scopes:
    """Every scope of a module and the scope each name is used in.

    Args:
        tree: the module's `ast.Module`.
        superseded: optional `(base, name, level) -> TensorFlow name or None`:
            what an import of one of the program's own modules stands for
            when the library supersedes that module (a vendored
            `tpu_estimator.py`, see `sides.Sides.superseded`).
    """

    def __init__(self, tree, superseded=None):
        self.superseded = superseded or (lambda base, name, level: None)
        self.superseded_imports = set()  # (id(statement), alias.name) read as TensorFlow
        self.module = Scope("module", None)
        self.all_scopes = [self.module]  # every scope of the module
        self.scope_of = {}  # id(ast.Name) -> Scope where it is read
        self.alias_statements = []  # (ast.Assign, Scope) of `x = <tensorflow name>`
        self.import_statements = []  # (ast.Import or ast.ImportFrom, Scope it binds in)
        self.ours = {}  # "kte"/"tf1" -> local name already imported for it
        self._resolving = set()
        self._visit_body(tree.body, self.module)

    # Resolution.

    def resolve(self, name_node):
        """The canonical TensorFlow name (`"tf.compat.v1"`) a Name stands for, or None."""
        scope = self.scope_of.get(id(name_node))
        if scope is None:
            return None
        return self.lookup(name_node.id, scope)

    def lookup(self, name, scope):
        """What `name` stands for when read in `scope` (None if not TensorFlow)."""
        owner = self.owner(name, scope)
        return None if owner is None else self._value(owner.bindings[name], owner)

    def owner(self, name, scope):
        """The scope whose binding of `name` a read in `scope` sees, or None."""
        current, first = scope, True
        while current is not None:
            if name in current.declared_global and current is not self.module:
                current = self.module
                continue
            # Class bodies are visible to their own statements only.
            if (first or current.kind != "class") and name in current.bindings:
                return current
            current, first = current.parent, False
        return None

    def _value(self, bindings, scope):
        values = {self._binding_value(b, scope) for b in bindings}
        if len(values) == 1:
            return values.pop()
        return None

    def _binding_value(self, binding, scope):
        if not isinstance(binding, ast.AST):
            return None if binding == OTHER else binding
        key = id(binding)
        if key in self._resolving:
            return None
        self._resolving.add(key)
        try:
            name = self.resolve_chain(binding, scope)
            return name if name is not None and names_lib.is_module(name) else None
        finally:
            self._resolving.discard(key)

    def resolve_chain(self, node, scope=None):
        """The canonical TensorFlow name of a dotted chain, or None."""
        parts, chain = dotted(node)
        if parts is None:
            return None
        root = self.resolve(chain[0]) if scope is None else self.lookup(parts[0], scope)
        if root is None:
            return None
        return ".".join([root] + parts[1:])

    def module_aliases(self):
        """The `(statement, scope)` of every `x = <TensorFlow module>` statement."""
        return [
            (statement, scope) for statement, scope in self.alias_statements
            if self._binding_value(statement.value, scope) is not None
        ]

    def scopes_binding(self, name):
        """The scopes of the module that bind `name`."""
        return [scope for scope in self.all_scopes if name in scope.bindings]

    # Collection.

    def _visit_body(self, statements, scope):
        for statement in statements:
            self._visit(statement, scope)

    def _bind_arguments(self, arguments, scope):
        for arg in arguments.posonlyargs + arguments.args + arguments.kwonlyargs:
            scope.bind(arg.arg)
        for arg in (arguments.vararg, arguments.kwarg):
            if arg is not None:
                scope.bind(arg.arg)

    def _bind_target(self, target, scope):
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                scope.bind(node.id)
            elif isinstance(node, ast.Name):
                self.scope_of[id(node)] = scope
            elif isinstance(node, ast.Starred):
                continue

    def _visit(self, node, scope):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for child in node.args.defaults + [d for d in node.args.kw_defaults if d]:
                self._visit(child, scope)
            inner = self._scope("function", scope)
            self._bind_arguments(node.args, inner)
            if isinstance(node, ast.Lambda):
                self._visit(node.body, inner)
                return
            scope.bind(node.name)
            for decorator in node.decorator_list:
                self._visit(decorator, scope)
            self._visit_body(node.body, inner)
            return
        if isinstance(node, ast.ClassDef):
            scope.bind(node.name)
            for child in node.bases + node.keywords + node.decorator_list:
                self._visit(child, scope)
            self._visit_body(node.body, self._scope("class", scope))
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self.import_statements.append((node, scope))
        if isinstance(node, ast.Import):
            for alias in node.names:
                stands_for = self.superseded(alias.name, None, 0)
                if stands_for and (alias.asname or "." not in alias.name):
                    self.superseded_imports.add((id(node), alias.name))
                    scope.bind(alias.asname or alias.name, stands_for)
                    continue
                self._bind_import(alias.name, alias.asname, scope)
            return
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                full = f"{node.module}.{alias.name}" if node.module and not node.level else None
                local = alias.asname or alias.name
                stands_for = self.superseded(node.module, alias.name, node.level)
                if full and names_lib.is_tensorflow(full):
                    scope.bind(local, names_lib.canonical(full))
                elif stands_for:
                    self.superseded_imports.add((id(node), alias.name))
                    scope.bind(local, stands_for)
                else:
                    scope.bind(local)
            return
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            if isinstance(node, ast.Global):
                scope.declared_global.update(node.names)
            return
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
            node.targets[0], ast.Name
        ) and dotted(node.value)[0] is not None:
            self._visit(node.value, scope)
            scope.bind(node.targets[0].id, node.value)
            self.alias_statements.append((node, scope))
            return
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                self.scope_of[id(node)] = scope
            else:
                scope.bind(node.id)
            return
        if isinstance(node, ast.ExceptHandler) and node.name:
            scope.bind(node.name)
        if isinstance(node, ast.alias):
            return
        for child in ast.iter_child_nodes(node):
            self._visit(child, scope)

    def _bind_import(self, module, asname, scope):
        local = asname or module.split(".")[0]
        if names_lib.is_tensorflow(module):
            scope.bind(local, names_lib.canonical(module if asname else module.split(".")[0]))
            return
        scope.bind(local)
        if scope is self.module and module == "keras":
            self.ours.setdefault("keras", local)
        if scope is self.module and asname:
            if module == names_lib.KTE_MODULE:
                self.ours.setdefault(names_lib.KTE, asname)
            elif module == names_lib.TF1_MODULE:
                self.ours.setdefault(names_lib.TF1, asname)

    def _scope(self, kind, parent):
        scope = Scope(kind, parent)
        self.all_scopes.append(scope)
        return scope
