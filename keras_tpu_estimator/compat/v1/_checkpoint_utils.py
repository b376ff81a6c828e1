"""Reading checkpoints from `model_fn`: `init_from_checkpoint`, `list_variables`, `Scaffold`.

TF1's warm start: `tf.compat.v1.train.init_from_checkpoint` in `model_fn`
or `scaffold_fn` sets initial values from a TensorFlow 1.x/2.x checkpoint
(BERT's `init_checkpoint`) or one of this library's. Exported as
`tf1.train.*`.
"""


import keras

from keras_tpu_estimator import checkpoint as checkpoint_lib
from keras_tpu_estimator.compat.v1._variable_views import keras_variable
from keras_tpu_estimator.log_lines import logger
from keras_tpu_estimator.model_fn import initialization
from keras_tpu_estimator.model_fn import store as store_lib



class Scaffold:
    """What a `scaffold_fn` returns, as `tf.compat.v1.train.Scaffold`.

    Only a return value: warm starts go through `init_from_checkpoint`
    inside `scaffold_fn` (run once per build, after `model_fn`), saving
    through `model_dir` checkpoints. The arguments are kept as attributes;
    in EVAL and PREDICT a `saver` (`tf1.train.Saver`) whose `var_list` maps
    other names to variables makes them read those names' values
    (`Saver(ema.variables_to_restore())`: the moving averages).
    """

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None,
                 saver=None, copy_from_scaffold=None, local_init_feed_dict=None):
        self.init_op, self.init_fn, self.saver = init_op, init_fn, saver


def list_variables(ckpt_dir_or_file):
    """`[(name, shape), ...]` of a checkpoint (TF1's, TF2's or this library's), sorted."""
    return [(name, list(shape)) for name, shape in checkpoint_lib.list_variables(ckpt_dir_or_file)]


def load_variable(ckpt_dir_or_file, name):
    """The value of `name` in a checkpoint, as a numpy array."""
    return checkpoint_lib.load_variable(ckpt_dir_or_file, name)


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Initializes variables from a checkpoint, as `tf.compat.v1.train.init_from_checkpoint`.

    Call it in `model_fn` or in the spec's `scaffold_fn`. As in TF1 it sets
    *initial* values: it acts when the variables are created (the first
    build of a mode), before a `model_dir` checkpoint is restored over them,
    and never over trained weights. The checkpoint may be written by
    TensorFlow 1.x/2.x (`model.ckpt-1000`, a TF `model_dir`) or by this
    library.

    `assignment_map` maps checkpoint names to model variables, TF1's forms:

    - `{"ckpt/scope/": "model/scope/"}`: every model variable under
      `model/scope/` from the same name under `ckpt/scope/`;
    - `{"/": "model/scope/"}` (checkpoint root) and `{"ckpt/scope/": "/"}`
      (model root);
    - `{"ckpt/var": "model/var"}` or `{"ckpt/var": variable}`: one variable
      (BERT's `get_assignment_map_from_checkpoint` form; `:0` is dropped).

    What was loaded is logged (logger `"keras_tpu_estimator"`) and kept as
    a `kte.checkpoint.WarmStartReport` (matched, unmatched: not in the
    checkpoint, shape_mismatched: left as they were) in the model's
    `init_from_checkpoint_reports`.

    Args:
        ckpt_dir_or_file: a checkpoint prefix or directory.
        assignment_map: a dict as above.

    Raises:
        ValueError: if there is no checkpoint at `ckpt_dir_or_file`,
            `assignment_map` is not a dict, a single-variable entry names
            no model variable, or a scope entry maps to a non-scope.
        RuntimeError: outside `model_fn` and `scaffold_fn`.

    Example:

    ```python
    def scaffold_fn():
        tf1.train.init_from_checkpoint(init_checkpoint, {"bert/": "bert/"})
        return tf1.train.Scaffold()
    ```
    """
    if not isinstance(assignment_map, dict):
        raise ValueError(
            "Argument `assignment_map` of init_from_checkpoint must be a dict of "
            f"checkpoint name to variable or scope. Received: {assignment_map!r}"
        )
    if not initialization.in_build_pass():
        store_lib.current_call("compat.v1.train.init_from_checkpoint")  # Raises outside model_fn.
        return None  # A compiled step: the initial values were set at build.
    reader = checkpoint_lib.checkpoint_reader(ckpt_dir_or_file)
    pairs = [(key, _map_target(key, value)) for key, value in assignment_map.items()]
    initialization.defer_to_end_of_build(lambda build: _initialize(reader, pairs, build))
    return None


def _map_target(key, value):
    if not isinstance(key, str) or not key:
        raise ValueError(
            f"The keys of `assignment_map` must be checkpoint names. Received: {key!r}"
        )
    if isinstance(value, str):
        return value.split(":")[0]
    variable = keras_variable(value)
    if not isinstance(variable, keras.Variable):
        raise ValueError(
            "The values of `assignment_map` must be variable or scope names, or "
            f"variables. Received: {key!r}: {value!r}"
        )
    return variable


def _initialize(reader, pairs, build):
    """Loads `pairs` (checkpoint name, target) into the variables `build` created.

    Returns:
        A `kte.checkpoint.WarmStartReport`.
    """
    model = build.store.variables_by_name()
    new_variables = build.new_variables()
    wanted = {}  # model path -> checkpoint name
    for key, target in pairs:
        if isinstance(target, keras.Variable):
            wanted[target.path] = key
            continue
        if target in model and not key.endswith("/"):
            wanted[target] = key
            continue
        if not key.endswith("/"):
            raise ValueError(
                f"init_from_checkpoint: {target!r} is not a variable of the model, so "
                f"the entry {key!r}: {target!r} is taken as a scope, and a scope must "
                "map to a scope: 'scope/': 'other_scope/'."
            )
        prefix = "" if target in ("", "/") else target.rstrip("/") + "/"
        source = "" if key == "/" else key
        for path in model:
            if path.startswith(prefix):
                wanted[path] = source + path[len(prefix):]
    # A variable created by an earlier build is already initialized (or trained).
    wanted = {path: name for path, name in wanted.items() if path in new_variables}
    report = checkpoint_lib.load_from_reader(reader, wanted, new_variables)
    matched, unmatched, mismatched = report
    logger.info("init_from_checkpoint: initialized %d variables from %s: %s",
                len(matched), reader.path, matched)
    if unmatched:
        logger.warning("init_from_checkpoint: %d variables are not in %s and keep their "
                       "initial values: %s", len(unmatched), reader.path, unmatched)
    if mismatched:
        logger.warning("init_from_checkpoint: %d variables have another shape in %s and "
                       "were not loaded (name, model shape, checkpoint shape): %s",
                       len(mismatched), reader.path, mismatched)
    return report
