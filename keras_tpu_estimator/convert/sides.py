"""Which side of the program each function is on, by data flow across a tree.

A converted program runs its code in three places:

- `"model"`: traced by JAX inside the compiled steps (`model_fn`,
  `metric_fn`, everything they call). TF1 names become `tf1.*`.
- `"input"`: the `tf.data` pipeline, traced by TensorFlow (`input_fn`,
  serving receivers, functions handed to `Dataset.map/apply/interleave/
  filter` or `map_and_batch`, everything they call, and modules imported
  only by input code). TensorFlow names stay.
- `"host"`: Python on the host with numpy values (`host_call` functions).
  TensorFlow names stay, unless TensorFlow 2 lacks them.

Seeds are found by role (the `model_fn=`, `input_fn=`, `host_call=` and
`eval_metrics=` arguments, dataset transformations) and by the names the
estimator API gives them (`*model_fn*`, `*input_fn*`, `*host_call*`); the
functions, classes and methods a seed refers to, in its own module or in
another module of the tree, share its side. Code no seed reaches is model
side, except in input modules.
"""

import ast
import collections

from keras_tpu_estimator.convert import scopes as scopes_lib
from keras_tpu_estimator.convert import vendored as vendored_lib

MODEL, INPUT, HOST = "model", "input", "host"

# Dataset transformations whose function arguments belong to the input pipeline.
DATASET_METHODS = frozenset(
    ["map", "filter", "flat_map", "interleave", "apply", "map_and_batch",
     "parallel_interleave", "from_generator", "map_with_legacy_function"]
)
_ROLE_KEYWORDS = {
    "model_fn": MODEL, "eval_metrics": MODEL, "host_call": HOST, "input_fn": INPUT,
    "serving_input_receiver_fn": INPUT, "serving_input_fn": INPUT,
}
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def is_dataset_call(node):
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in DATASET_METHODS
    )


def _seed_side(name):
    lowered = name.lower()
    if "input_fn" in lowered or "serving_input" in lowered:
        return INPUT
    if "model_fn" in lowered or "metric_fn" in lowered:
        return MODEL
    if "host_call" in lowered:
        return HOST
    return None


class _Module:
    """One module's definitions and the tree modules it imports."""

    def __init__(self, key, tree):
        self.key = key
        self.tree = tree
        self.defs = collections.defaultdict(list)  # name -> defs (any depth)
        self.methods = collections.defaultdict(list)  # name -> defs in class bodies
        self.imports = {}  # local name -> the dotted path it names ("pkg.utils")
        self.imported_modules = set()
        self.stars = []  # the dotted paths of `from pkg.utils import *`
        # Module-level `Name = other.Name` re-exports: name -> the value's expression.
        self.assigned = {
            node.targets[0].id: node.value for node in tree.body
            if isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, (ast.Name, ast.Attribute))
        }
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defs[node.name].append(node)
            if isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.methods[statement.name].append(statement)

    def package(self):
        return self.key.rsplit(".", 1)[0] if "." in self.key else ""


class Sides:
    """The side of every function of every module of a tree.

    Args:
        modules: `{key: ast.Module}`, keys being dotted module paths
            relative to the tree's root (`"official.resnet.imagenet_input"`).
    """

    def __init__(self, modules):
        self.modules = {key: _Module(key, tree) for key, tree in modules.items()}
        self.vendored = {
            key for key, tree in modules.items() if vendored_lib.is_vendored_estimator(tree)}
        self._found = {}
        for module in self.modules.values():
            self._collect_imports(module)
        self.side = {}  # id(def node) -> side
        self.module_side = {key: MODEL for key in self.modules}
        self._classify()

    def shared_functions(self, key):
        """The functions of module `key` that both model and input code call, by line."""
        found = [node for module, node in self.shared if module.key == key
                 and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        return sorted(found, key=lambda node: node.lineno)

    def of(self, node, default):
        """The side of def `node`; `default` if none was found."""
        return self.side.get(id(node), default)

    # Imports between modules of the tree.

    def _find(self, dotted_name):
        """The key of the tree's module `dotted_name` names, or None."""
        if dotted_name not in self._found:
            matches = [k for k in self.modules if k.endswith("." + dotted_name)]
            self._found[dotted_name] = dotted_name if dotted_name in self.modules else (
                matches[0] if len(matches) == 1 else None)
        return self._found[dotted_name]

    def _find_from(self, dotted_name, importer, used=()):
        """The module `import dotted_name` in `importer` names, also where the tree
        has several (three `utils.py` in tensorflow/tpu's `official/`).

        As Python's path would: the exact key, else the one module ending so,
        else the importer's sibling, else the one sharing the most of its
        package path and then defining the most of the names `used` of it.
        """
        found = self._find(dotted_name)
        if found:
            return found
        matches = [k for k in self.modules if k.endswith("." + dotted_name)]
        if not matches:
            return None
        package = importer.key.split(".")[:-1]
        sibling = ".".join(package + [dotted_name])
        if sibling in self.modules:
            return sibling

        def score(key):
            shared = 0
            for a, b in zip(key.split(".")[:-1], package):
                if a != b:
                    break
                shared += 1
            defined = self.modules[key].defs.keys() | self.modules[key].assigned.keys()
            return shared, len(set(used) & defined)

        ranked = sorted(matches, key=score, reverse=True)
        if len(ranked) > 1 and score(ranked[0]) == score(ranked[1]):
            return None
        return ranked[0]

    def _collect_imports(self, module):
        """Every form of import: `import utils`, `import utils as u`,
        `import pkg.mod`, `from pkg import mod`, `from . import mod`,
        `from mod import f`. Each local name is recorded with the dotted path
        it stands for; `_defs_at` reads the rest of a chain through it."""
        attributes = collections.defaultdict(set)  # local name -> `local.X` read
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                attributes[node.value.id].add(node.attr)
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    target = self._find_from(alias.name, module, attributes[local])
                    if not target:
                        continue
                    module.imported_modules.add(target)
                    if alias.asname or "." not in alias.name:
                        module.imports[local] = target
                    else:  # `import pkg.mod` binds `pkg`; `pkg.mod.f` reads f of it
                        module.imports.setdefault(local, local)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    package = module.key.split(".")[: -node.level]
                    base = ".".join(package + ([base] if base else []))
                if [alias.name for alias in node.names] == ["*"]:
                    if self._find(base):
                        module.imported_modules.add(self._find(base))
                        module.stars.append(base)
                    continue
                names = [alias.name for alias in node.names]
                owner = self._find_from(base, module, names) if base else None
                for alias in node.names:
                    local = alias.asname or alias.name
                    path = f"{base}.{alias.name}" if base else alias.name
                    submodule = self._find(path)
                    if submodule or owner:
                        module.imported_modules.add(submodule or owner)
                        module.imports[local] = submodule or f"{owner}.{alias.name}"

    def superseded(self, importer, base, name, level=0):
        """What an import names when it imports a vendored `tpu_estimator.py`.

        Args:
            importer: the key of the importing module.
            base: the module of `from base import name`, or the module
                `import base` imports (then `name` is None).
            name: the name imported from `base`, or None.
            level: the dots of a relative import.

        Returns:
            `"tf.estimator.tpu"` (or a name in it) when the import names a
            module of the tree that `vendored` supersedes, else None.
        """
        if level:
            package = importer.split(".")[:-level]
            base = ".".join(package + ([base] if base else []))
        path = f"{base}.{name}" if base and name else (base or name or "")
        if self._find(path) in self.vendored:
            return vendored_lib.ESTIMATOR_MODULE
        if base and name and self._find(base) in self.vendored:
            return f"{vendored_lib.ESTIMATOR_MODULE}.{name}"
        return None

    def _defs_at(self, path, seen=None):
        """The defs that dotted `path` names: `module.f`, `pkg.module.Class`.

        `seen`: the `(module, name)` pairs already followed (an import cycle
        ends there).
        """
        parts = path.split(".")
        for length in range(len(parts) - 1, 0, -1):
            key = self._find(".".join(parts[:length]))
            if key:
                return self._exported(self.modules[key], parts[length],
                                      set() if seen is None else seen)
        return []

    def _exported(self, module, name, seen):
        """The defs `module.name` stands for: defined there, or re-exported
        (`from other import name`, `name = other.name`, `from other import *`)."""
        if (module.key, name) in seen or module.key in self.vendored:
            return []
        seen.add((module.key, name))
        found = [(module, d) for d in module.defs.get(name, ())]
        if found:
            return found
        if name in module.imports:
            return self._defs_at(module.imports[name], seen)
        if name in module.assigned:
            return self._targets(module, module.assigned[name], seen)
        for star in module.stars:
            found += self._exported(self.modules[self._find(star)], name, seen)
        return found

    # References.

    def _targets(self, module, node, seen=None):
        """The defs (with their modules) that expression `node` may name."""
        if isinstance(node, ast.Lambda):
            return [(module, node)]
        if isinstance(node, ast.Name):
            found = [(module, d) for d in module.defs.get(node.id, ())]
            if node.id in module.imports:
                found += self._defs_at(module.imports[node.id])
            if not found and (node.id in module.assigned or module.stars):
                found = self._exported(module, node.id, set() if seen is None else seen)
            return found
        if isinstance(node, ast.Attribute):
            parts, _ = scopes_lib.dotted(node)
            if parts is None:
                return []
            if parts[0] in module.imports:
                return self._defs_at(".".join([module.imports[parts[0]]] + parts[1:]))
            if parts[0] in ("self", "cls") and len(parts) == 2:
                return [(module, d) for d in module.methods.get(parts[1], ())]
        return []

    def _references(self, module, node):
        found = []
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Name, ast.Attribute)):
                found += self._targets(module, sub)
        return found

    # Classification.

    def _seeds(self):
        seeds = {MODEL: [], INPUT: [], HOST: []}
        for module in self.modules.values():
            if module.key in self.vendored:
                continue  # superseded: nothing of it runs (see `vendored`)
            for name, nodes in module.defs.items():
                side = _seed_side(name)
                if side:
                    seeds[side] += [(module, n) for n in nodes]
            for node in ast.walk(module.tree):
                if is_dataset_call(node):
                    for arg in list(node.args) + [k.value for k in node.keywords]:
                        seeds[INPUT] += self._argument_targets(module, arg)
                if isinstance(node, ast.Call):
                    for keyword in node.keywords:
                        side = _ROLE_KEYWORDS.get(keyword.arg)
                        if side:
                            seeds[side] += self._argument_targets(module, keyword.value)
        return seeds

    def _argument_targets(self, module, node):
        # A function argument: a name, `self.method`, a lambda, or a tuple /
        # functools.partial(...) around one.
        if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
            return self._argument_targets(module, node.elts[0])
        if isinstance(node, ast.Call) and node.args:
            return self._argument_targets(module, node.args[0])
        return self._targets(module, node)

    def _reach(self, seeds, stop=frozenset()):
        """Every def `seeds` reach, not going into the defs of `stop` (ids)."""
        seen, todo = {}, list(seeds)
        while todo:
            module, node = todo.pop()
            if id(node) in seen or id(node) in stop:
                continue
            seen[id(node)] = (module, node)
            todo += self._references(module, node)
        return seen

    def _classify(self):
        seeds = self._seeds()
        # A host_call function model_fn returns runs on the host, not in model_fn.
        model = self._reach(seeds[MODEL], stop={id(node) for _, node in seeds[HOST]})
        host = {k: v for k, v in self._reach(seeds[HOST]).items() if k not in model}
        input_reach = self._reach(seeds[INPUT])
        inputs = {k: v for k, v in input_reach.items() if k not in model and k not in host}
        # Reached from both: model side, and `compat.v1` runs TensorFlow's
        # ops where they are called on TensorFlow tensors (`compat.v1._sides`).
        self.shared = [v for k, v in input_reach.items() if k in model]
        for side, found in ((MODEL, model), (HOST, host), (INPUT, inputs)):
            for key in found:
                self.side[key] = side
        self._classify_modules(model, host, inputs)

    def _classify_modules(self, model, host, inputs):
        """Input modules: modules whose functions are all input side, or
        that only input modules import."""
        owners = collections.defaultdict(set)
        for found, side in ((model, MODEL), (host, HOST), (inputs, INPUT)):
            for module, _ in found.values():
                owners[module.key].add(side)
        importers = collections.defaultdict(set)
        for module in self.modules.values():
            for target in module.imported_modules:
                if target != module.key:
                    importers[target].add(module.key)
        changed = True
        while changed:
            changed = False
            for key in self.modules:
                if self.module_side[key] == INPUT or owners[key] - {INPUT}:
                    continue
                only_input_importers = importers[key] and all(
                    self.module_side[k] == INPUT for k in importers[key]
                )
                if owners[key] == {INPUT} or only_input_importers:
                    self.module_side[key] = INPUT
                    changed = True
