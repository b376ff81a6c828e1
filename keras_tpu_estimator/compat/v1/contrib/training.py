"""`tf.contrib.training`: `HParams` and the checkpoint iterators of evaluation jobs.

TPU programs keep their hyper-parameters in an `HParams` (AmoebaNet, NAS-Net,
RetinaNet's augmentation policies), override them from a `--hparams` flag and
write them to JSON; their evaluation jobs wait for each new checkpoint of the
training job's `model_dir`:

```python
hparams = tf1.contrib.training.HParams(learning_rate=0.1, layers=[64, 64], use_bn=True)
hparams.parse("learning_rate=0.3,layers=[32]")
for ckpt in tf1.contrib.training.checkpoints_iterator(model_dir, timeout=600):
    estimator.evaluate(eval_input_fn, checkpoint_path=ckpt)
```

Everything here runs on the host, in plain Python, as in TF1.
`checkpoints_iterator` and `wait_for_new_checkpoint` are
`tf1.train.checkpoints_iterator`'s (`model_dir/model.ckpt-<step>` paths);
TF1's `tf.contrib.training.python.training.evaluation` module is this one
(the converter folds that spelling onto `tf.contrib.training`).
`HParams(hparam_def=...)` and `to_proto`/`from_proto` (the `HParamDef`
protocol buffer, gone with `tf.contrib`) are not supported.
"""

import json

from keras_tpu_estimator.compat.v1._checkpoint_management import checkpoints_iterator
from keras_tpu_estimator.compat.v1._checkpoint_management import wait_for_new_checkpoint
from keras_tpu_estimator.compat.v1.contrib._hparam_syntax import cast_to_type
from keras_tpu_estimator.compat.v1.contrib._hparam_syntax import parse_values

__all__ = ["HParams", "checkpoints_iterator", "parse_values", "wait_for_new_checkpoint"]


class HParams:
    """Named hyper-parameters with types, as `tf.contrib.training.HParams`.

    Each keyword becomes an attribute. Its type is the value's type (a
    list's: its first element's, and the hyper-parameter is a list); later
    assignments through `set_hparam`, `parse`, `parse_json` and
    `override_from_dict` must fit it: an int widens to a float, nothing else
    converts. Attribute assignment (`hparams.x = v`) is not checked, as in TF1.

    Args:
        hparam_def: must be None: the `HParamDef` protocol buffer left with
            `tf.contrib`.
        model_structure: any object, kept for `get_model_structure`.
        **kwargs: the hyper-parameters: ints, floats, bools, strings, None,
            or non-empty lists of these.

    Raises:
        ValueError: for a `hparam_def`, a name that is an attribute of
            `HParams` (`values`, `parse`, ...), or an empty list.

    Example:

    ```python
    hparams = HParams(learning_rate=0.1, layers=[64, 64], optimizer="adam")
    hparams.parse("learning_rate=0.3,layers=[128]")
    hparams.learning_rate      # 0.3
    hparams.values()           # {'learning_rate': 0.3, 'layers': [128], 'optimizer': 'adam'}
    ```
    """

    _HAS_DYNAMIC_ATTRIBUTES = True

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        if hparam_def is not None:
            raise ValueError(
                "HParams(hparam_def=...) is not supported: the HParamDef protocol "
                "buffer left with tf.contrib. Pass the values as keywords, or "
                "restore them from to_json() with parse_json()."
            )
        self._hparam_types = {}
        self._model_structure = model_structure
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        """Adds the hyper-parameter `name`, typed by `value`.

        Raises:
            ValueError: if `name` is already an attribute with a value other
                than None (`Hyperparameter name is reserved: <name>`), or
                `value` is an empty list.
        """
        if getattr(self, name, None) is not None:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name, value):
        """Sets the existing hyper-parameter `name` to `value`, checking its type.

        Raises:
            KeyError: if there is no hyper-parameter `name`.
            ValueError: for a list given to a single value or the reverse, or
                a value of an incompatible type.
        """
        param_type, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
            setattr(self, name, [cast_to_type(name, param_type, v) for v in value])
        else:
            if is_list:
                raise ValueError(f"Must pass a list for multi-valued parameter: {name}.")
            setattr(self, name, cast_to_type(name, param_type, value))

    def del_hparam(self, name):
        """Removes the hyper-parameter `name`; nothing happens if there is none."""
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values):
        """Overrides hyper-parameters from a `name=value,...` string.

        Args:
            values: comma-separated clauses `name=value` or `name=[v1,v2]`;
                a bool takes `true`/`false` (or an integer).

        Returns:
            self.

        Raises:
            ValueError: for a malformed string, an unknown name, a value its
                type cannot parse, or a name given twice.

        Example:

        ```python
        HParams(lr=0.1, sizes=[1]).parse("lr=0.5,sizes=[2,3]").values()
        # {'lr': 0.5, 'sizes': [2, 3]}
        ```
        """
        types = {name: param_type for name, (param_type, _) in self._hparam_types.items()}
        return self.override_from_dict(parse_values(values, types))

    def override_from_dict(self, values_dict):
        """Sets each hyper-parameter of `values_dict` (as `set_hparam`); returns self."""
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def set_model_structure(self, model_structure):
        self._model_structure = model_structure

    def get_model_structure(self):
        return self._model_structure

    def to_json(self, indent=None, separators=None, sort_keys=False):
        """The hyper-parameters as a JSON object; callables are left out.

        Args:
            indent, separators, sort_keys: as `json.dumps`.

        Returns:
            A string.
        """

        def without_callables(value):
            if isinstance(value, dict):
                return {k: without_callables(v) for k, v in value.items() if not callable(v)}
            if isinstance(value, list):
                return [without_callables(v) for v in value if not callable(v)]
            return value

        return json.dumps(without_callables(self.values()), indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def parse_json(self, values_json):
        """Overrides hyper-parameters from a JSON object (as `override_from_dict`); returns self."""
        return self.override_from_dict(json.loads(values_json))

    def values(self):
        """A dict of every hyper-parameter's name and value."""
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key, default=None):
        """The value of `key`, or `default` if there is no such hyper-parameter.

        Raises:
            ValueError: if `key` exists and `default` (not None) does not fit
                its type.
        """
        if key not in self._hparam_types:
            return default
        if default is not None:
            param_type, is_list = self._hparam_types[key]
            type_text = f"list<{param_type}>" if is_list else str(param_type)
            failure = (f"Hparam '{key}' of type '{type_text}' is incompatible with "
                       f"default={default}")
            if is_list != isinstance(default, list):
                raise ValueError(failure)
            try:
                for value in default if is_list else [default]:
                    cast_to_type(key, param_type, value)
            except ValueError as error:
                raise ValueError(f"{failure}. {error}") from None
        return getattr(self, key)

    def __contains__(self, key):
        return key in self._hparam_types

    def __str__(self):
        return str(sorted(self.values().items()))

    def __repr__(self):
        return f"{type(self).__name__}({self})"
