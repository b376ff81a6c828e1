"""Calling `model_fn`, and reading what its spec asks for.

`ModelFnProgram` calls the user's `model_fn` with the model's params and
config against a variable store. Building a mode runs it once on abstract
values, the JAX tracers the compiled step gives it (`build`); the spec it returns is then read into plain values:
`Training` (how to train), the evaluation metrics, the hooks.
"""

from typing import Callable
from typing import NamedTuple
from typing import Optional

import jax
import keras
import numpy as np

from keras_tpu_estimator.metrics import MetricUpdate
from keras_tpu_estimator.metrics import values as metric_values_lib
from keras_tpu_estimator.model_fn import initialization
from keras_tpu_estimator.model_fn import store as store_lib
from keras_tpu_estimator.model_fn import tensors as tensors_lib
from keras_tpu_estimator.model_fn import train_ops
from keras_tpu_estimator.model_fn.call import call_model_fn
from keras_tpu_estimator.spec import ModeKeys
from keras_tpu_estimator.spec import scaffold as scaffold_lib


class Training(NamedTuple):
    """How the TRAIN spec trains, read once when TRAIN is built.

    Attributes:
        optimizer: the Keras optimizer applying the gradients, or None when
            training by assignment.
        by_assignment: whether the spec's `train_op` is a TF1 training op
            (`compat.v1` optimizers, `assign`): see `train_ops`.
        variables: the variables differentiated.
        host_call_fn: the function of the spec's `host_call`, or None.
    """

    optimizer: Optional[keras.optimizers.Optimizer]
    by_assignment: bool
    variables: list
    host_call_fn: Optional[Callable]


class BuiltMode(NamedTuple):
    """What building a mode read from its spec.

    Attributes:
        hooks: the spec's hooks for the mode.
        reports: the `init_from_checkpoint` reports of the build pass.
        training: TRAIN: the `Training`; else None.
        metrics: EVAL: `{name: keras.metrics.Metric}` for the metric values
            not yet in the model's metrics; else empty.
        restores: EVAL and PREDICT: `[(variable, source)]`, the variables
            the scaffold's saver restores from another name's value
            (`spec.scaffold`); else empty.
    """

    hooks: list
    reports: list
    training: Optional[Training]
    metrics: dict
    restores: list = []


class ModelFnProgram:
    """A `model_fn` with its params and config, called against a store.

    Args:
        model_fn: the user's `model_fn`.
        params: the user's params (a dict, checked).
        config: the `RunConfig`.
        use_tpu: passed to `model_fn` as `params['use_tpu']`.
    """

    def __init__(self, model_fn, params, config, use_tpu):
        self.model_fn = model_fn
        self.params = params
        self.config = config
        self.use_tpu = use_tpu

    def model_fn_params(self, batch_size):
        """`params` as `model_fn` receives them for a batch of `batch_size`."""
        params = dict(self.params, use_tpu=self.use_tpu)
        if batch_size is not None:
            params["batch_size"] = batch_size
        return params

    @staticmethod
    def built_graph(store, mode):
        """A block in which TF1 code sees what `model_fn` built for `mode` in `store`
        (`model_fn.store.built_graph`)."""
        return store_lib.built_graph(store, mode)

    def call(self, store, features, labels, mode, global_step, building, config=None,
             then=None):
        """Calls `model_fn` with its variables in `store`; returns the spec.

        With `then`, returns `then(spec)`, called inside the same `model_fn`
        call (what the spec's `scaffold_fn` sees).
        """
        with store_lib.model_fn_call(
            store, mode, building, global_step, training=mode == ModeKeys.TRAIN
        ):
            spec = call_model_fn(
                self.model_fn,
                features,
                labels,
                mode,
                self.model_fn_params(leading_dim(features)),
                config or self.config,
            )
            return spec if then is None else then(spec)

    def build(self, store, mode, batch, step_dtype, optimizer=None, metrics=()):
        """Runs `model_fn` once on abstract values shaped like `batch`.

        Nothing is computed: the pass runs traced (`initialization.
        created_together`), and the variables it creates get their initial
        values from one compiled program when it ends (called inside an
        enclosing `created_together`, with that one's). No layer update (a
        BatchNormalization moving average) happens. Assignments
        (TF1 train ops) change nothing; `init_from_checkpoint` and
        `scaffold_fn` initialize what this pass created, after it.

        Args:
            store: the variable store the variables are created in.
            mode: a `ModeKeys` value.
            batch: `(features, labels)` of arrays or shape/dtype structs.
            step_dtype: the dtype of the global step.
            optimizer: the compiled optimizer (TRAIN with `train_op=None`).
            metrics: the names of the metrics the model already has (EVAL).

        Returns:
            A `BuiltMode`.
        """
        structs = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, dtype_name(a)), batch)
        def with_scaffold(spec):
            # In the model_fn call: scaffold_fn may read its variables, and
            # the saver's sources may need creating.
            scaffold = initialization.run_scaffold(spec)
            # TRAIN's saver would save and resume; only EVAL and PREDICT restore.
            return spec, [] if mode == ModeKeys.TRAIN else scaffold_lib.restore_pairs(scaffold)

        def build_pass():
            # The values the step sees, abstract: JAX tracers of the pass's
            # trace, with no value to compute (`initialization.abstract_values`).
            features, labels, step = initialization.abstract_values(
                (*structs, jax.ShapeDtypeStruct((), step_dtype))
            )
            if mode == ModeKeys.PREDICT:
                labels = None
            with initialization.build_pass(store) as build:
                spec, restores = self.call(
                    store, features, labels, mode, step, True, then=with_scaffold
                )
            # Read inside the trace: the spec may hold traced values.
            return BuiltMode(
                hooks_of(spec, mode),
                build.reports,  # Filled once the variables have their values.
                read_training(spec, store, optimizer) if mode == ModeKeys.TRAIN else None,
                new_metrics(spec, metrics) if mode == ModeKeys.EVAL else {},
                restores,
            )

        return initialization.created_together(build_pass)


def hooks_of(spec, mode):
    """The spec's hooks for `mode`."""
    return {
        ModeKeys.TRAIN: spec.training_hooks,
        ModeKeys.EVAL: spec.evaluation_hooks,
        ModeKeys.PREDICT: spec.prediction_hooks,
    }[mode]


def read_training(spec, store, fallback_optimizer):
    """Reads how the TRAIN `spec` trains.

    Args:
        spec: the TRAIN spec of the build pass.
        store: the model's store (its variables after the build).
        fallback_optimizer: the compiled optimizer, for `train_op=None`.

    Returns:
        A `Training`.

    Raises:
        ValueError: for a loss that is not a scalar, a TF1 `global_step`
            with a Keras optimizer, or no optimizer at all.
        TypeError: for a `train_op` of another kind.
    """
    if tuple(spec.loss.shape) not in ((), (1,)):
        raise ValueError(
            f"The loss returned by model_fn must be a scalar. Received "
            f"shape: {tuple(spec.loss.shape)}"
        )
    host_call_fn = spec.host_call[0] if spec.host_call is not None else None
    variables = list(store.trainable_variables)
    optimizer = spec.train_op
    if optimizer is not None and train_ops.is_train_op(optimizer):
        return Training(None, True, variables, host_call_fn)
    if train_ops.global_step_variable(store) is not None:
        raise ValueError(
            "model_fn created the TF1 `global_step` variable "
            "(compat.v1.train.get_or_create_global_step) but trains with a "
            "Keras optimizer, which counts steps itself: read the step with "
            "kte.get_global_step(), or train with a compat.v1.train optimizer."
        )
    if optimizer is None:
        optimizer = fallback_optimizer
        if optimizer is None:
            raise ValueError(
                "model_fn returned train_op=None and the model has no "
                "optimizer: return a keras optimizer as `train_op`, or "
                "call `compile(optimizer=...)`."
            )
    elif not isinstance(optimizer, keras.optimizers.Optimizer):
        raise TypeError(
            "`train_op` must be None, a keras.optimizers.Optimizer, or what "
            "a compat.v1 training op returns (minimize, apply_gradients, "
            f"group, assign). Received: {optimizer!r}"
        )
    return Training(optimizer, False, variables, host_call_fn)


def metric_values(spec):
    """`metric_fn(*tensors)` of the spec's `eval_metrics`: `{name: value}`.

    `metric_fn` sees its tensors as TF1 tensors, as `model_fn` does.
    """
    if spec.eval_metrics is None:
        return {}
    metric_fn, tensors = spec.eval_metrics
    with tensors_lib.tf1_tensors():
        return metric_values_lib.metric_values(metric_fn, tensors)


def new_metrics(spec, existing):
    """The Keras metrics for the EVAL `spec`'s metric values not in `existing`.

    A `kte.metrics` function's update creates its metric; a scalar is
    averaged (`keras.metrics.Mean`).

    Returns:
        `{name: keras.metrics.Metric}`.

    Raises:
        ValueError: for a metric named `loss` or a non-scalar value.
        TypeError: for a metric factory that returns no Keras metric.
    """
    metrics = {}
    for name, value in metric_values(spec).items():
        if name in existing:
            continue
        if name == "loss":
            raise ValueError(
                "eval_metrics must not define 'loss': it is always "
                "reported from the spec's loss."
            )
        if isinstance(value, MetricUpdate):
            metric = value.factory()
            if not isinstance(metric, keras.metrics.Metric):
                raise TypeError(
                    f"The factory of metric '{name}' must return a "
                    f"keras.metrics.Metric. It returned: {metric!r}"
                )
        elif tuple(getattr(value, "shape", ())) == ():
            metric = keras.metrics.Mean(name=name)
        else:
            raise ValueError(
                f"metric_fn returned '{name}' with shape "
                f"{tuple(value.shape)}: a metric value must be a scalar "
                "or a kte.metrics function."
            )
        metrics[name] = metric
    return metrics


def leading_dim(tree):
    """The batch dimension of `tree`: its leaves' smallest leading dimension.

    Leaves may differ there (an unlabeled batch `k` times the labeled one,
    each split along its own): the batch is the smallest, as the input side
    measures it (`inputs.checks.smallest_rows`). None without leaves.
    """
    dims = [leaf.shape[0] for leaf in jax.tree.leaves(tree) if len(leaf.shape)]
    dims = [d for d in dims if d is not None]
    return min(dims) if dims else None


def dtype_name(a):
    """The Keras dtype name of an array or shape/dtype struct."""
    return np.dtype(a.dtype).name if np.dtype(a.dtype).kind != "O" else "string"
