"""`EstimatorModel.summary()`: what `model_fn` created, by scope path.

Keras's summary lists a model's sublayers with their output shapes. A
`model_fn` has no layer graph: it creates layers (`get_or_create_layer`) and
bare variables (`get_variable`, TF1's `tf.get_variable`) under scope paths.
The summary lists those, one row each, with the shapes of their variables and
their parameter counts, then Keras's totals (trainable, non-trainable and
optimizer parameters), drawn like Keras's own table.
"""

import re
import shutil

import jax.numpy as jnp
import numpy as np
import rich.console
import rich.markup
import rich.table


class Summary:
    """`summary()` of `EstimatorModel` (a mixin, as Keras's `Trainer`)."""

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False,
                show_trainable=False, layer_range=None):
        """Prints the layers and variables `model_fn` created, like Keras's summary.

        One row per layer (`get_or_create_layer`) and bare variable
        (`get_variable`), by scope path, with its variables' shapes and its
        parameter count; then the trainable, non-trainable and optimizer
        totals. Nested layers are always expanded (`expand_nested` is
        accepted for Keras's signature). See `print_summary`.

        Raises:
            ValueError: if the model is not built yet (model_fn has not run).
        """
        del expand_nested  # Every variable is listed, nested layers' too.
        print_summary(self, line_length, positions, print_fn, show_trainable,
                                    layer_range)


def print_summary(model, line_length=None, positions=None, print_fn=None,
                  show_trainable=False, layer_range=None):
    """Prints the layers and variables `model_fn` created, with the totals.

    Args:
        model: a built `EstimatorModel`.
        line_length: the width of the table; defaults to the terminal's, at
            most 100.
        positions: where the columns end, as fractions of `line_length`
            (or absolute widths); defaults to `[0.45, 0.8, 1.0]`.
        print_fn: called with the summary text; defaults to `print`.
        show_trainable: add a column saying whether each row trains.
        layer_range: `(first, last)` regexes of scope paths: only the rows
            from the first path matching `first` to the last matching `last`.

    Raises:
        ValueError: for a model not built yet, a `layer_range` that matches
            no path, or `positions` that leave a column no room.
    """
    if not model.built:
        raise ValueError(
            "This model has not yet been built: model_fn creates its layers and "
            "variables on the first fit, evaluate or predict (or `build_for`). "
            "Call one of them before `summary()`."
        )
    rows = _rows(model.store)
    rows = rows[slice(*_range(rows, layer_range))]
    headers = ["Layer or variable (type)", "Variables", "Param #"]
    if show_trainable:
        headers.append("Trainable")
    line_length = line_length or min(100, shutil.get_terminal_size().columns - 4)
    default = [0.4, 0.72, 0.88, 1.0] if show_trainable else [0.45, 0.8, 1.0]
    widths = _widths(positions or default, line_length, len(headers))
    table = rich.table.Table(
        *[rich.table.Column(h, justify="right" if h == "Param #" else "left", width=w,
                            no_wrap=True)
          for h, w in zip(headers, widths)],
        width=sum(widths) + len(widths) + 1, show_lines=True,
    )
    for path, kind, variables in rows:
        fields = [
            f"{rich.markup.escape(path)} ({kind})",
            "\n".join(f"{rich.markup.escape(name)} {tuple(v.shape)}".strip() for name, v in variables),
            f"{_count(v for _, v in variables):,}",
        ]
        if show_trainable:
            fields.append("Y" if any(v.trainable for _, v in variables) else "N")
        table.add_row(*fields)

    console = rich.console.Console(highlight=False, width=sum(widths) + len(widths) + 1)
    with console.capture() as capture:
        console.print(f'Model: "{rich.markup.escape(model.name)}"')
        console.print(table)
        for label, weights in _totals(model):
            console.print(f" {label}: {_count(weights):,} ({_bytes(weights)})")
    (print_fn or print)(capture.get().rstrip("\n"))


def _rows(store):
    """`[(path, type, [(name, variable)])]`: a row per layer and bare variable."""
    rows, in_layers = [], set()
    for path, layer in store.created_layers.items():
        variables = [(_relative(v.path, path), v) for v in layer.variables]
        in_layers.update(id(v) for _, v in variables)
        rows.append((path, type(layer).__name__, variables))
    for path, variable in store.created_variables.items():
        if id(variable) not in in_layers:
            rows.append((path, "Variable", [("", variable)]))
    return rows


def _relative(variable_path, layer_path):
    prefix = layer_path + "/"
    return variable_path[len(prefix):] if variable_path.startswith(prefix) else variable_path


def _range(rows, layer_range):
    if layer_range is None:
        return 0, len(rows)
    if len(layer_range) != 2:
        raise ValueError(
            "`layer_range` must be a list or tuple of 2 strings (the first and "
            f"last scope paths, as regexes). Received: layer_range={layer_range!r}"
        )
    first = [i for i, row in enumerate(rows) if re.match(layer_range[0], row[0])]
    last = [i for i, row in enumerate(rows) if re.match(layer_range[1], row[0])]
    if not first or not last:
        raise ValueError(
            "`layer_range` matches no layer or variable path of the model. "
            f"Received: layer_range={layer_range!r}; paths: {[r[0] for r in rows]}"
        )
    return min(first), max(last) + 1


def _widths(positions, line_length, columns):
    if positions[-1] <= 1:
        positions = [int(p * line_length) for p in positions]
    ends = list(positions[:columns])
    widths = [end - start - 1 for start, end in zip([0] + ends, ends)]
    if len(ends) < columns or min(widths) < 4:
        raise ValueError(
            f"`positions` must give each of the {columns} columns some width. "
            f"Received: positions={positions!r} with line_length={line_length}"
        )
    return widths


def _totals(model):
    optimizer = getattr(model, "optimizer", None)
    lines = [
        ("Total params", model.variables + (optimizer.variables if optimizer else [])),
        ("Trainable params", model.trainable_variables),
        ("Non-trainable params", model.non_trainable_variables),
    ]
    if optimizer is not None:
        lines.append(("Optimizer params", optimizer.variables))
    return lines


def _count(variables):
    return int(sum(np.prod(v.shape, dtype=np.int64) for v in variables))


def _bytes(variables):
    size = sum(np.prod(v.shape, dtype=np.int64) * jnp.dtype(v.dtype).itemsize for v in variables)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.2f} {unit}"
        size /= 1024
