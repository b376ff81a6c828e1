"""`tf.compat.v1.train.Saver` as a `Scaffold`'s saver: which checkpoint names restore which variables.

There are no sessions: `model_dir` checkpoints are written and read by the
estimator. What a TF1 program still says with a `Saver` is the mapping in
its `var_list`, returned through `scaffold_fn`:

```python
ema = tf1.train.ExponentialMovingAverage(0.9999)
saver = tf1.train.Saver(ema.variables_to_restore())   # {"dense/kernel/ExponentialMovingAverage": kernel, ...}
return tf1.train.Scaffold(saver=saver)                # EVAL and PREDICT use the averages
```

In EVAL and PREDICT (and so in export), each variable mapped from another
name reads the value stored under that name: `restore_pairs` gives those
`(variable, source)` pairs, and the steps bind the variable to the source's
value. Exported as `tf1.train.Saver`.
"""

import keras

from keras_tpu_estimator.compat.v1._train_variables import copy_initializer
from keras_tpu_estimator.compat.v1._train_variables import store_variable
from keras_tpu_estimator.compat.v1._variable_views import keras_variable
from keras_tpu_estimator.model_fn import store as store_lib


class Saver:
    """The variables a checkpoint restores, and from which names: `tf.compat.v1.train.Saver`.

    Only its `var_list` acts: returned in a `Scaffold` from the spec's
    `scaffold_fn` in EVAL or PREDICT mode, a dict `{checkpoint name:
    variable}` makes each variable whose name differs read the value saved
    under that name (EfficientNet's exponential moving averages), without
    changing the variable itself. The other arguments are accepted and
    ignored: `model_dir` checkpoints are the estimator's (`RunConfig`'s
    `keep_checkpoint_max`, ...).

    Args:
        var_list: None (every variable, under its own name), a list of
            variables (the same), or a dict `{checkpoint name: variable}`.

    Raises:
        TypeError: for another `var_list`, or a dict value that is no
            variable.

    Example:

    ```python
    def scaffold_fn():
        return tf1.train.Scaffold(saver=tf1.train.Saver(ema.variables_to_restore()))
    ```
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=None, pad_step_number=False, save_relative_paths=False,
                 filename=None):
        del reshape, sharded, max_to_keep, keep_checkpoint_every_n_hours, name
        del restore_sequentially, saver_def, builder, defer_build, allow_empty
        del write_version, pad_step_number, save_relative_paths, filename
        self._restore_map = _restore_map(var_list)

    def restore_map(self):
        """`{checkpoint name: keras.Variable}` of the variables mapped by name (dict `var_list`)."""
        return dict(self._restore_map)

    def restore_pairs(self):
        """`[(variable, source)]`: each variable that reads another name's value.

        Runs inside a `model_fn` build (the spec's `scaffold_fn` runs there).
        A name that is no variable of the store yet (an evaluation that
        never built training) becomes a non-trainable store variable shaped
        as its variable, which the checkpoint then loads.

        Raises:
            ValueError: for a name whose variable has another shape.
        """
        store = store_lib.current_call("train.Saver").store
        existing = store.variables_by_name()
        pairs = []
        for name, variable in self._restore_map.items():
            if name == variable.path:
                continue
            source = existing.get(name)
            if source is None:
                source = store_variable(
                    name, copy_initializer(variable), variable.shape, variable.dtype
                )
            if tuple(source.shape) != tuple(variable.shape):
                raise ValueError(
                    f"Saver var_list maps '{name}' (shape {tuple(source.shape)}) to "
                    f"'{variable.path}' (shape {tuple(variable.shape)}): the shapes "
                    "must match."
                )
            pairs.append((variable, source))
        return pairs

    def save(self, *args, **kwargs):
        raise RuntimeError(_NO_SESSIONS)

    def restore(self, *args, **kwargs):
        raise RuntimeError(_NO_SESSIONS)


_NO_SESSIONS = (
    "Saver.save and Saver.restore need a session, and there are none: the "
    "estimator writes and reads model_dir checkpoints itself (read them with "
    "kte.checkpoint, start from one with warm_start_from). A Saver acts as a "
    "Scaffold's saver returned by scaffold_fn, through its var_list."
)


def _restore_map(var_list):
    if var_list is None or isinstance(var_list, (list, tuple)):
        return {}
    if not isinstance(var_list, dict):
        raise TypeError(
            "Saver `var_list` must be None, a list of variables or a dict of "
            f"checkpoint name to variable. Received: var_list={var_list!r}"
        )
    result = {}
    for name, item in var_list.items():
        variable = keras_variable(item)
        if not isinstance(variable, keras.Variable):
            raise TypeError(
                f"Saver `var_list` maps '{name}' to {item!r}: the values must be "
                "variables."
            )
        result[str(name).removesuffix(":0")] = variable
    return result
