"""The TF1 layer object under `tf1.layers`: naming, store lookup, dtype.

`Layer` is what every `tf1.layers` class builds on: it picks the layer's
name by TF1's rules at its first call, gets its Keras layer from the
variable store, and collects its regularization penalties.
"""

import re

import keras
import numpy as np

from keras_tpu_estimator.compat.v1._variable_views import VariableView
from keras_tpu_estimator.compat.v1.graph import GraphKeys
from keras_tpu_estimator.compat.v1.graph import add_to_collection
from keras_tpu_estimator.compat.v1.graph import current_graph
from keras_tpu_estimator.compat.v1.variables import absolute_scope
from keras_tpu_estimator.compat.v1.variables import check_reuse
from keras_tpu_estimator.compat.v1.variables import variable_scope
from keras_tpu_estimator.model_fn import store as store_lib


def _regularize(regularizer, value):
    if regularizer is not None and value is not None:
        penalty = regularizer(value)
        if penalty is not None:  # TF1's 0.0-scale regularizers give None: nothing added.
            add_to_collection(GraphKeys.REGULARIZATION_LOSSES, penalty)


def _check_training(training, layer):
    if training is None or isinstance(training, (bool, np.bool_)):
        return bool(training)
    raise ValueError(
        f"Argument `training` of tf1.layers.{layer} must be a Python bool "
        "(e.g. `mode == tf1.estimator.ModeKeys.TRAIN`): it decides what is "
        f"compiled. Received: training={training!r}"
    )


def _padding(padding, layer):
    if not isinstance(padding, str) or padding.lower() not in ("valid", "same"):
        raise ValueError(
            f"Argument `padding` of tf1.layers.{layer} must be 'valid' or "
            f"'same' (any case). Received: padding={padding!r}"
        )
    return padding.lower()


def _to_snake_case(name):
    """TF1's `to_snake_case`: `TpuBatchNormalization` -> `tpu_batch_normalization`."""
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()
    return name if name[0] != "_" else "private" + name


def _sizes(value):
    """TF1 takes a list where Keras takes a tuple (`pool_size=[3, 3]`)."""
    return tuple(value) if isinstance(value, list) else value


def _dtype_policy(inputs, float32_parameters=False):
    """The Keras dtype policy of a TF1 layer first called on `inputs`.

    TF1's layers take their dtype from their first input, and ask for
    variables of that dtype; `tf1.tpu.bfloat16_scope` stores a variable asked
    for in bfloat16 in float32 and reads it cast to bfloat16. So a layer on
    bfloat16 inputs computes in bfloat16 with float32 variables inside the
    scope (Keras's `mixed_bfloat16`) and with bfloat16 variables outside it
    (`bfloat16`); float16 inputs give float16 variables (`float16`). Batch
    normalization (`float32_parameters`) keeps float32 parameters for
    half-precision inputs, as TF1's. A float32 (or non-float) input gives
    None: Keras's global policy, float32 unless the program set another. A
    program that set one (`keras.config.set_dtype_policy("mixed_bfloat16")`)
    gets it for every layer: it chose Keras's rules over TF1's.
    """
    if keras.config.dtype_policy().name != "float32":
        return None
    dtype = getattr(inputs, "dtype", None)
    dtype = keras.backend.standardize_dtype(dtype) if dtype is not None else None
    if dtype not in ("bfloat16", "float16"):
        return None
    if float32_parameters or (dtype == "bfloat16" and current_graph().bfloat16):
        return f"mixed_{dtype}"
    return dtype


class Layer:
    """A TF1 layer object: named and created at its first call, reused after.

    `tf1.layers.Dense(10)` etc. behave as TF1's layer classes: the first call
    picks the name and gets the Keras layer from the variable store; later
    calls of the same object share it. The functional forms
    (`tf1.layers.dense`) create one object and call it.

    Names follow TF1's rules. Unnamed, a layer is named after its class
    (`dense`, `batch_normalization`; a subclass after its own class,
    `TpuBatchNormalization` -> `tpu_batch_normalization`), made unique in its
    scope (`dense_1`, ...). A `name` given to the class is made unique the
    same way (`tpu_batch_normalization`, `tpu_batch_normalization_1`), while
    the functional forms use `name` as is (a second `dense(x, 3, name="a")`
    without `reuse` is TF1's "already exists" error).

    Attributes:
        name: the layer's name, once called.
        keras_layer: the Keras layer, once called.
        variables, trainable_variables, weights: `VariableView`s.
    """

    base_name = "layer"

    def __init__(self, name=None, trainable=True, _reuse=None, _scope=None, **kwargs):
        self.name = name
        self.trainable = trainable
        self._reuse = _reuse
        self._scope = _scope
        self._config = kwargs
        self.keras_layer = None
        self._path = self._call = None

    def _make(self):
        """Returns a new Keras layer (stateful layers override this)."""
        raise NotImplementedError

    # Half-precision inputs keep float32 parameters everywhere (TF1's batch
    # normalization raises its parameters to float32).
    float32_parameters = False

    def _base_name(self):
        """TF1's base name: the given name, else the class's (a subclass's own)."""
        if self.name is not None:
            return self.name
        cls = type(self)
        return cls.base_name if "base_name" in cls.__dict__ else _to_snake_case(cls.__name__)

    def _pick_path(self):
        """Enters the layer's variable scope as TF1's `Layer._set_scope` did; its path."""
        base = self._base_name()
        if self._scope is not None or self._reuse:
            with variable_scope(self._scope or base, reuse=self._reuse) as vs:
                path, reuse = vs.name, vs.reuse
            check_reuse(path, reuse, what="Layer")
            return path
        used = store_lib.used_in_call()
        while True:
            # A path a Keras layer or `get_or_create_layer` took is not free
            # either: TF1 would have named the next one.
            with variable_scope(None, default_name=base) as vs:
                path, reuse = vs.name, vs.reuse
            if reuse or path not in used:
                break
        check_reuse(path, reuse, what="Layer")
        return path

    def _keras_layer(self, inputs=None):
        """Gets the store's Keras layer; True when this call of model_fn first uses it
        (a layer shared with `reuse` was used before: its penalties are counted once).

        A new layer's dtype policy follows `inputs` (see `_dtype_policy`).

        The name is picked at the object's first call and kept: an object
        made once and called in every `model_fn` call (a layer built outside
        `model_fn`) is found again by that name, as TF1 re-entered its scope.
        """
        call = store_lib.call_state("compat.v1.call", object)
        if self.keras_layer is not None and self._call is call:
            return False
        first_call = self.keras_layer is None
        self._call = call
        if self.name is None and self._scope is None:
            # TF1's layers took an automatic Keras name too (`dense` makes the
            # next `keras.layers.Dense` `dense_1`), in every call alike.
            keras.backend.get_uid(self._base_name())
        if first_call:
            self._path = self._pick_path()
        path = self._path
        self._dtype = _dtype_policy(inputs, self.float32_parameters)

        def factory():
            layer = self._make()
            layer.trainable = self.trainable
            return layer

        newly_used = path not in store_lib.used_in_call()
        parent, _, last = path.rpartition("/")
        with absolute_scope(parent):
            self.keras_layer = store_lib.get_or_create_layer(last, factory)
        self.name = last
        return newly_used

    def _views(self, variables):
        return [VariableView(v) for v in variables]

    @property
    def variables(self):
        return self._views(self.keras_layer.weights) if self.keras_layer else []

    weights = variables

    @property
    def trainable_variables(self):
        return self._views(self.keras_layer.trainable_weights) if self.keras_layer else []

    trainable_weights = trainable_variables

    def __getattr__(self, attribute):
        if attribute.startswith("_") or self.__dict__.get("keras_layer") is None:
            raise AttributeError(attribute)
        value = getattr(self.__dict__["keras_layer"], attribute)
        return VariableView(value) if isinstance(value, keras.Variable) else value

    def __call__(self, inputs, training=None):
        first = self._keras_layer(inputs)
        outputs = self.keras_layer(inputs)
        if first:
            self._add_regularization(outputs)
        self._add_activity_regularization(outputs)
        return outputs

    def _add_regularization(self, outputs):
        """The weights' penalties: once per `model_fn` call, when the layer is first used."""
        config = self._config
        for attribute in ("kernel", "bias", "beta", "gamma"):
            regularizer = config.get(f"{attribute}_regularizer")
            if regularizer is not None:
                _regularize(regularizer, getattr(self.keras_layer, attribute, None))

    def _add_activity_regularization(self, outputs):
        """The outputs' penalty, at every call, divided by the batch size as TF1's."""
        regularizer = self._config.get("activity_regularizer")
        if regularizer is None:
            return
        penalty = regularizer(outputs)
        if penalty is not None:
            batch = outputs.shape[0]
            if batch is None:  # A symbolic build pass.
                batch = keras.ops.cast(keras.ops.shape(outputs)[0], penalty.dtype)
            add_to_collection(GraphKeys.REGULARIZATION_LOSSES, penalty / batch)
