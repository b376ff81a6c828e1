"""TF1 idioms rewritten as a whole expression or statement, not by name.

- `tf.disable_v2_behavior()` and the other behaviour switches: removed;
- TPU cluster resolvers: the library's local one (JAX finds the devices);
- TF1 `TensorShape`/`Dimension` idioms in model code: tuple operations;
- `ds.make_one_shot_iterator()` / `ds.make_initializable_iterator()`, the
  `Dataset` methods TensorFlow 2 removed: `tf.compat.v1.data.make_*_iterator(ds)`.
"""

import ast

from keras_tpu_estimator.convert import imports as imports_lib
from keras_tpu_estimator.convert import names as names_lib
from keras_tpu_estimator.convert import stand_ins

# Dataset methods TensorFlow 2 removed, and the functions that replace them.
ITERATOR_METHODS = ("make_one_shot_iterator", "make_initializable_iterator")


def _shape_of(node):
    """`X` when `node` is `X.shape` or `X.get_shape()`, else None."""
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return node.value
    if (isinstance(node, ast.Call) and not node.args and not node.keywords
            and isinstance(node.func, ast.Attribute) and node.func.attr == "get_shape"):
        return node.func.value
    return None


class Idioms:
    """The idiom rewrites of `rewriter.ModuleRewriter` (a mixin)."""

    def visit_switch(self, statement):
        """`tf.disable_v2_behavior()`, `initialize_tpu_system(resolver)` and
        friends: the statement is removed."""
        call = statement.value
        if not isinstance(call, ast.Call):
            return False
        name, chain = self._called_name(call)
        if name in names_lib.BEHAVIOUR_SWITCHES:
            why = "input pipelines run on TensorFlow 2 as it is, and model_fn runs on JAX"
        elif name in names_lib.DEVICE_SETUP:
            why = "JAX connects to and initializes this machine's devices (TPU, GPU or CPU) itself"
        else:
            return False
        self._count_use(chain[0], self.rewritten)
        self.removed.append(statement)
        self.report(statement, "INFO", f"Removed '{self.segment(statement)}': {why}")
        return True

    def visit_resolver(self, call, side):
        """A TPU cluster resolver becomes the library's local one: JAX finds the devices."""
        name, chain = self._called_name(call)
        if name not in stand_ins.CLUSTER_RESOLVERS:
            return False
        self._count_use(chain[0], self.rewritten)
        self.uses.add(names_lib.TF1)
        target = imports_lib.PLACEHOLDER[names_lib.TF1] + stand_ins.RESOLVER[3:]
        self.replace(call.func, target, name, message=(
            f"Renamed '{name}' to '{stand_ins.RESOLVER}', which answers as a local run "
            "(get_master() is '', cluster_spec() is empty): keras_tpu_estimator needs no "
            "TPU name, zone or project; JAX finds the devices (TPU, GPU or CPU) of this "
            "machine"))
        for child in list(call.args) + list(call.keywords):
            self.visit(child, side)
        return True

    def visit_shape(self, node, side):
        """TF1 `TensorShape`/`Dimension` idioms on the plain tuples JAX shapes are."""
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
                and _shape_of(node.right) is not None):
            # `'%s' % shape`: a TensorShape was one value; a tuple is the arguments.
            start, end = self.span(node.right)
            self.edits.append((start, start, "("))
            self.edits.append((end, end, ",)"))
            self.report(node, "INFO", f"Rewrote '% {self.segment(node.right)}' to "
                        f"'% ({self.segment(node.right)},)': JAX shapes are tuples")
            self.visit(node.right, side)
            return True
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

    def visit_iterator(self, call, side):
        """`ds.make_one_shot_iterator()` -> `tf.compat.v1.data.make_one_shot_iterator(ds)`."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in ITERATOR_METHODS
                and not call.args and not call.keywords):
            return False
        if self._resolve(func.value)[0] is not None:  # `tf.data.X.make_...`: not a dataset
            return False
        prefix = self.tensorflow_v1(call)
        start, end = self.span(call)
        value_start, value_end = self.span(func.value)
        text = f"{prefix}.data.{func.attr}("
        self.edits.append((start, value_start, text))
        self.edits.append((value_end, end, ")"))
        self.report(call, "INFO", f"Rewrote '{self.segment(call)}' to "
                    f"'{imports_lib.shown(text)}{self.segment(func.value)})': TensorFlow 2 "
                    f"datasets have no {func.attr} method")
        self.visit(func.value, side)
        return True
