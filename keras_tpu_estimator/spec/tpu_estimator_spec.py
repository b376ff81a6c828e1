"""`TPUEstimatorSpec`, the spec the model handles, and the checks of a returned spec.

`as_tpu_spec` turns an `EstimatorSpec` into a `TPUEstimatorSpec` (and
`TPUEstimatorSpec.as_estimator_spec` goes the other way); `check_spec`
checks that a spec is complete for the mode `model_fn` was called in.
"""

import collections

from keras_tpu_estimator.spec.checks import check_call_pair
from keras_tpu_estimator.spec.checks import check_callable
from keras_tpu_estimator.spec.checks import check_hooks
from keras_tpu_estimator.spec.checks import check_loss
from keras_tpu_estimator.spec.checks import check_mode
from keras_tpu_estimator.spec.checks import check_predictions
from keras_tpu_estimator.spec.checks import describe
from keras_tpu_estimator.spec.estimator_spec import EstimatorSpec
from keras_tpu_estimator.spec.export_output import check_export_outputs
from keras_tpu_estimator.spec.mode_keys import ModeKeys


def _identity_metrics(**metric_values):
    """The `eval_metrics` function of a converted `EstimatorSpec`."""
    return metric_values


def _call_pair(pair):
    """Calls `function` of a `(function, tensors)` pair on its tensors."""
    function, tensors = pair
    if isinstance(tensors, dict):
        return function(**tensors)
    return function(*tensors)


class _HostCallHook:
    """Carries a `host_call` through an `EstimatorSpec`, whose fields have none.

    `TPUEstimatorSpec.as_estimator_spec` puts it in the hooks, as TensorFlow
    does, and `as_tpu_spec` takes it back out.
    """

    def __init__(self, host_call):
        self.host_call = host_call

    def __repr__(self):
        return f"_HostCallHook({self.host_call!r})"

    def begin(self):
        """Nothing: a hook in form only (as TensorFlow's host call hook is one), for the checks."""


_TPU_SPEC_FIELDS = (
    "mode",
    "predictions",
    "loss",
    "train_op",
    "eval_metrics",
    "export_outputs",
    "scaffold_fn",
    "host_call",
    "training_hooks",
    "evaluation_hooks",
    "prediction_hooks",
)


class TPUEstimatorSpec(collections.namedtuple("TPUEstimatorSpec", _TPU_SPEC_FIELDS)):
    """What a `model_fn` returns, as `tf.compat.v1.estimator.tpu.TPUEstimatorSpec`.

    Which fields a mode needs (checked by `check_spec` once `model_fn`
    returns): TRAIN and EVAL need `loss`, PREDICT needs `predictions`.

    Args:
        mode: a `ModeKeys` value, the mode `model_fn` was called in.
        predictions: a tensor or a dict of string name to tensor (PREDICT).
        loss: a scalar tensor (TRAIN, EVAL).
        train_op: what trains the model (TRAIN): a
            `keras.optimizers.Optimizer`, None for the compiled one, or what
            a `compat.v1` training op returns (`minimize`,
            `apply_gradients`, `group`, `assign`), trained by assignment.
        eval_metrics: a pair `(metric_fn, tensors)` (EVAL): `tensors` is a
            list or tuple passed positionally, or a dict passed by keyword,
            and `metric_fn` returns a dict of metric name to metric value.
        export_outputs: a dict of signature name to `ExportOutput`.
        scaffold_fn: a function returning a scaffold, called on the host.
        host_call: a pair `(function, tensors)` like `eval_metrics`; the
            function runs on the host with each step's tensors, typically to
            write summaries.
        training_hooks: an iterable of hooks run while training.
        evaluation_hooks: an iterable of hooks run while evaluating.
        prediction_hooks: an iterable of hooks run while predicting.

    Raises:
        ValueError: if a field has the wrong type or shape; the message names
            the field and the value received.

    Example:

    ```python
    def metric_fn(labels, logits):
        return {"accuracy": kte.metrics.accuracy(labels, keras.ops.argmax(logits, -1))}

    spec = kte.TPUEstimatorSpec(
        mode=kte.ModeKeys.EVAL,
        loss=loss,
        eval_metrics=(metric_fn, [labels, logits]))
    ```
    """

    __slots__ = ()

    def __new__(
        cls,
        mode,
        predictions=None,
        loss=None,
        train_op=None,
        eval_metrics=None,
        export_outputs=None,
        scaffold_fn=None,
        host_call=None,
        training_hooks=None,
        evaluation_hooks=None,
        prediction_hooks=None,
    ):
        return super().__new__(
            cls,
            mode=check_mode(mode),
            predictions=check_predictions(predictions),
            loss=check_loss(loss),
            train_op=train_op,
            eval_metrics=check_call_pair(eval_metrics, "eval_metrics"),
            export_outputs=check_export_outputs(export_outputs),
            scaffold_fn=check_callable(scaffold_fn, "scaffold_fn"),
            host_call=check_call_pair(host_call, "host_call"),
            training_hooks=check_hooks(training_hooks, "training_hooks"),
            evaluation_hooks=check_hooks(evaluation_hooks, "evaluation_hooks"),
            prediction_hooks=check_hooks(prediction_hooks, "prediction_hooks"),
        )

    def as_estimator_spec(self):
        """Returns the equivalent `EstimatorSpec`, as TensorFlow's CPU path does.

        `eval_metrics` is called on its tensors and the dict it returns
        becomes `eval_metric_ops`; `scaffold_fn` is called for `scaffold`; a
        `host_call` travels in the hooks and `as_tpu_spec` recovers it.

        Returns:
            An `EstimatorSpec`.
        """
        hooks = () if self.host_call is None else (_HostCallHook(self.host_call),)
        return EstimatorSpec(
            mode=self.mode,
            predictions=self.predictions,
            loss=self.loss,
            train_op=self.train_op,
            eval_metric_ops=(
                None
                if self.eval_metrics is None
                else _call_pair(self.eval_metrics)
            ),
            export_outputs=self.export_outputs,
            scaffold=None if self.scaffold_fn is None else self.scaffold_fn(),
            training_hooks=self.training_hooks + hooks,
            evaluation_hooks=self.evaluation_hooks + hooks,
            prediction_hooks=self.prediction_hooks + hooks,
        )


def as_tpu_spec(spec):
    """Returns `spec` as a `TPUEstimatorSpec`, the one shape the model handles.

    A `TPUEstimatorSpec` is returned as is. An `EstimatorSpec` is converted:
    `eval_metric_ops` becomes `eval_metrics=(fn, eval_metric_ops)` where `fn`
    returns its keyword arguments, `scaffold` becomes a `scaffold_fn`
    returning it, and a `host_call` carried by `as_estimator_spec` is
    restored.

    Args:
        spec: an `EstimatorSpec` or a `TPUEstimatorSpec`.

    Returns:
        A `TPUEstimatorSpec`.

    Raises:
        ValueError: if `spec` is neither, or has `training_chief_hooks`
            (which TPUEstimator does not support either).

    Example:

    ```python
    spec = kte.EstimatorSpec("eval", loss=loss, eval_metric_ops={"auc": auc})
    metric_fn, tensors = as_tpu_spec(spec).eval_metrics
    metric_fn(**tensors)  # {"auc": auc}
    ```
    """
    if isinstance(spec, TPUEstimatorSpec):
        return spec
    if not isinstance(spec, EstimatorSpec):
        raise ValueError(
            "Argument `spec` must be an EstimatorSpec or a TPUEstimatorSpec. "
            f"Received: spec={describe(spec)}"
        )
    if spec.training_chief_hooks:
        raise ValueError(
            "training_chief_hooks returned by EstimatorSpec is not supported "
            "in TPUEstimator. If you want to pass training hooks, please pass "
            "via training_hooks."
        )
    hooks = spec.training_hooks + spec.evaluation_hooks + spec.prediction_hooks
    host_calls = [hook.host_call for hook in hooks if isinstance(hook, _HostCallHook)]

    def user_hooks(hooks):
        return tuple(hook for hook in hooks if not isinstance(hook, _HostCallHook))

    scaffold = spec.scaffold
    return TPUEstimatorSpec(
        mode=spec.mode,
        predictions=spec.predictions,
        loss=spec.loss,
        train_op=spec.train_op,
        eval_metrics=(
            (_identity_metrics, spec.eval_metric_ops) if spec.eval_metric_ops else None
        ),
        export_outputs=spec.export_outputs,
        scaffold_fn=None if scaffold is None else (lambda: scaffold),
        host_call=host_calls[0] if host_calls else None,
        training_hooks=user_hooks(spec.training_hooks),
        evaluation_hooks=user_hooks(spec.evaluation_hooks),
        prediction_hooks=user_hooks(spec.prediction_hooks),
    )


def check_spec(spec, mode):
    """Checks that `spec`, returned by `model_fn` in `mode`, is complete.

    TRAIN and EVAL need a `loss`, PREDICT needs `predictions`, and the spec's
    own `mode` must be the mode `model_fn` was called in.

    Args:
        spec: an `EstimatorSpec` or a `TPUEstimatorSpec`.
        mode: the `ModeKeys` value `model_fn` was called with.

    Returns:
        `spec`, unchanged.

    Raises:
        ValueError: if `mode` is not a `ModeKeys` value, the modes differ, or
            a field the mode needs is missing.

    Example:

    ```python
    spec = check_spec(model_fn(features, labels, mode), mode)
    ```
    """
    check_mode(mode)
    if spec.mode != mode:
        raise ValueError(
            f"model_fn was called with mode={mode!r} but returned a "
            f"{type(spec).__name__} with mode={spec.mode!r}. Return the "
            "`mode` model_fn receives."
        )
    required = "predictions" if mode == ModeKeys.PREDICT else "loss"
    if getattr(spec, required) is None:
        raise ValueError(
            f"Missing {required}: in mode {mode!r}, model_fn must return a "
            f"{type(spec).__name__} with `{required}` set. "
            f"Received: {required}=None"
        )
    return spec

