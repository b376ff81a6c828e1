"""What a `model_fn` returns: specs, modes and export outputs.

A `model_fn` is called once per mode and describes that mode with a spec:

```python
def model_fn(features, labels, mode, params):
    logits = kte.get_or_create_layer("logits", lambda: keras.layers.Dense(10))(
        features["x"])
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"logits": logits})
    loss = keras.ops.mean(
        keras.losses.sparse_categorical_crossentropy(labels, logits, True))
    return kte.TPUEstimatorSpec(
        mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
```

`TPUEstimatorSpec` and `EstimatorSpec` are the namedtuples of
`tf.compat.v1.estimator.tpu.TPUEstimatorSpec` and `tf.estimator.EstimatorSpec`,
with the same fields and the same checks on construction; tensors may be any
array (NumPy, JAX, Keras). `as_tpu_spec` turns either into a `TPUEstimatorSpec`,
the one shape the model handles, and `check_spec` checks that it is complete
for the mode `model_fn` was called in.
"""

import collections
import collections.abc
import inspect
import math
import numbers


class ModeKeys:
    """The modes a `model_fn` is called in, with `tf.estimator.ModeKeys` values.

    The values are TensorFlow's strings, so `mode == "infer"` and
    `mode == tf.estimator.ModeKeys.PREDICT` keep working in ported code.
    """

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


_MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)


def _describe(value):
    """`repr(value)`, shortened for error messages."""
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _is_tensor(value):
    """Whether `value` is array-like: it has a shape and a dtype, or is a number.

    NumPy and JAX arrays, tracers, `keras.KerasTensor`s and `tf.Tensor`s all
    qualify; no TensorFlow type is required.
    """
    if isinstance(value, numbers.Number):
        return True
    return hasattr(value, "shape") and hasattr(value, "dtype")


def _check_mode(mode):
    if not (isinstance(mode, str) and mode in _MODES):
        raise ValueError(
            f"Argument `mode` must be one of {list(_MODES)} (see `ModeKeys`). "
            f"Received: mode={_describe(mode)}"
        )
    return mode


def _check_predictions(predictions):
    if predictions is None or _is_tensor(predictions):
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError(
            "Argument `predictions` must be None, a tensor or a dict of "
            f"tensors. Received: predictions={_describe(predictions)}"
        )
    for key, value in predictions.items():
        if not _is_tensor(value):
            raise ValueError(
                "Argument `predictions` must be None, a tensor or a dict of "
                f"tensors. Received: predictions[{key!r}]={_describe(value)}"
            )
    return dict(predictions)


def _check_loss(loss):
    if loss is None:
        return None
    if not _is_tensor(loss):
        raise ValueError(
            f"Argument `loss` must be a scalar tensor. Received: "
            f"loss={_describe(loss)}"
        )
    shape = tuple(getattr(loss, "shape", ()))
    if all(isinstance(d, int) for d in shape) and math.prod(shape) != 1:
        raise ValueError(
            f"Argument `loss` must be a scalar tensor. Received a tensor of "
            f"shape {shape}: loss={_describe(loss)}"
        )
    return loss


def _check_host_call(host_call, name):
    """Checks a `(function, tensors)` pair: `eval_metrics` or `host_call`.

    The function will be called as `function(*tensors)` for a list or tuple,
    `function(**tensors)` for a dict; a call its signature cannot take is
    reported now rather than inside a compiled step.
    """
    if host_call is None:
        return None
    if not (
        isinstance(host_call, (tuple, list))
        and len(host_call) == 2
        and callable(host_call[0])
        and isinstance(host_call[1], (tuple, list, dict))
    ):
        raise ValueError(
            f"Argument `{name}` must be None or a pair (function, tensors), "
            "where tensors is a list, tuple or dict of tensors passed to the "
            f"function. Received: {name}={_describe(host_call)}"
        )
    function, tensors = host_call
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # Some builtins have no signature.
        return tuple(host_call)
    try:
        if isinstance(tensors, dict):
            signature.bind(**tensors)
        else:
            signature.bind(*tensors)
    except TypeError as error:
        given = (
            f"the tensors {sorted(tensors)}"
            if isinstance(tensors, dict)
            else f"{len(tensors)} tensors"
        )
        raise ValueError(
            f"In `{name}`, the function {getattr(function, '__name__', function)}"
            f"{signature} cannot be called with {given}: {error}"
        ) from None
    return tuple(host_call)


def _check_hooks(hooks, name):
    if hooks is None:
        return ()
    if isinstance(hooks, (str, bytes, dict)) or not isinstance(
        hooks, collections.abc.Iterable
    ):
        raise ValueError(
            f"Argument `{name}` must be None or an iterable of hooks. "
            f"Received: {name}={_describe(hooks)}"
        )
    return tuple(hooks)


def _check_export_outputs(export_outputs):
    if export_outputs is None:
        return None
    if not isinstance(export_outputs, dict):
        raise ValueError(
            "Argument `export_outputs` must be None or a dict of signature "
            "name to `ExportOutput`. Received: "
            f"export_outputs={_describe(export_outputs)}"
        )
    for key, value in export_outputs.items():
        if not isinstance(key, str) or not isinstance(value, ExportOutput):
            raise ValueError(
                "Argument `export_outputs` must be None or a dict of signature "
                "name (a string) to `ExportOutput` (`PredictOutput`, "
                "`ClassificationOutput`, `RegressionOutput`). Received: "
                f"export_outputs[{key!r}]={_describe(value)}"
            )
    return dict(export_outputs)


def _check_callable(value, name):
    if value is not None and not callable(value):
        raise ValueError(
            f"Argument `{name}` must be None or a callable. "
            f"Received: {name}={_describe(value)}"
        )
    return value


# ----------------------------------------------------------------------
# Export outputs.


class ExportOutput:
    """The outputs of one serving signature, as `tf.estimator.export.ExportOutput`.

    Subclasses hold their tensors in `outputs`, a dict keyed by the output
    names TensorFlow gives that kind of signature. `export_outputs` of a spec
    maps signature names to instances of the subclasses.
    """

    outputs = None

    def __repr__(self):
        return f"{type(self).__name__}({self.outputs!r})"


def _check_output_tensor(value, owner, name):
    if not _is_tensor(value):
        raise ValueError(
            f"{owner} `{name}` must be a tensor. Received: "
            f"{name}={_describe(value)}"
        )
    return value


class PredictOutput(ExportOutput):
    """Named tensors returned by a `predict` signature.

    Args:
        outputs: a tensor, or a dict of string name to tensor. A single tensor
            is named `"output"`, as TensorFlow names it.

    Raises:
        ValueError: if a key is not a string or a value is not a tensor.

    Example:

    ```python
    export_outputs = {"serving_default": kte.PredictOutput({"logits": logits})}
    ```
    """

    def __init__(self, outputs):
        if not isinstance(outputs, dict):
            outputs = {"output": outputs}
        for key, value in outputs.items():
            if not isinstance(key, str):
                raise ValueError(
                    "PredictOutput keys must be strings. Received: "
                    f"key {key!r} in outputs={_describe(outputs)}"
                )
            _check_output_tensor(value, "PredictOutput", f"outputs[{key!r}]")
        self.outputs = dict(outputs)


class ClassificationOutput(ExportOutput):
    """Scores and/or classes returned by a `classify` signature.

    Args:
        scores: optional tensor of shape `(batch, num_classes)`, the score of
            each class. Output name `"scores"`.
        classes: optional tensor of shape `(batch, num_classes)`, the class
            labels. Output name `"classes"`.

    Raises:
        ValueError: if neither is given, or one is not a tensor.

    Example:

    ```python
    kte.ClassificationOutput(scores=keras.ops.softmax(logits))
    ```
    """

    def __init__(self, scores=None, classes=None):
        if scores is None and classes is None:
            raise ValueError(
                "At least one of `scores` and `classes` must be given to "
                "ClassificationOutput. Received: scores=None, classes=None"
            )
        self.scores = scores
        self.classes = classes
        self.outputs = {}
        if scores is not None:
            self.outputs["scores"] = _check_output_tensor(
                scores, "ClassificationOutput", "scores"
            )
        if classes is not None:
            self.outputs["classes"] = _check_output_tensor(
                classes, "ClassificationOutput", "classes"
            )


class RegressionOutput(ExportOutput):
    """The value returned by a `regress` signature.

    Args:
        value: a tensor of shape `(batch,)` or `(batch, 1)`. Output name
            `"outputs"`.

    Raises:
        ValueError: if `value` is not a tensor.

    Example:

    ```python
    kte.RegressionOutput(value=predictions)
    ```
    """

    def __init__(self, value):
        self.value = _check_output_tensor(value, "RegressionOutput", "value")
        self.outputs = {"outputs": value}


# ----------------------------------------------------------------------
# Specs.


def _identity_metrics(**metric_values):
    """The `eval_metrics` function of a converted `EstimatorSpec`."""
    return metric_values


def _call_host_call(host_call):
    function, tensors = host_call
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
            mode=_check_mode(mode),
            predictions=_check_predictions(predictions),
            loss=_check_loss(loss),
            train_op=train_op,
            eval_metrics=_check_host_call(eval_metrics, "eval_metrics"),
            export_outputs=_check_export_outputs(export_outputs),
            scaffold_fn=_check_callable(scaffold_fn, "scaffold_fn"),
            host_call=_check_host_call(host_call, "host_call"),
            training_hooks=_check_hooks(training_hooks, "training_hooks"),
            evaluation_hooks=_check_hooks(evaluation_hooks, "evaluation_hooks"),
            prediction_hooks=_check_hooks(prediction_hooks, "prediction_hooks"),
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
                else _call_host_call(self.eval_metrics)
            ),
            export_outputs=self.export_outputs,
            scaffold=None if self.scaffold_fn is None else self.scaffold_fn(),
            training_hooks=self.training_hooks + hooks,
            evaluation_hooks=self.evaluation_hooks + hooks,
            prediction_hooks=self.prediction_hooks + hooks,
        )


_SPEC_FIELDS = (
    "mode",
    "predictions",
    "loss",
    "train_op",
    "eval_metric_ops",
    "export_outputs",
    "training_chief_hooks",
    "training_hooks",
    "scaffold",
    "evaluation_hooks",
    "prediction_hooks",
)


def _check_eval_metric_ops(eval_metric_ops):
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, dict) or not all(
        isinstance(key, str) for key in eval_metric_ops
    ):
        raise ValueError(
            "Argument `eval_metric_ops` must be None or a dict of metric name "
            "(a string) to metric value. Received: "
            f"eval_metric_ops={_describe(eval_metric_ops)}"
        )
    return dict(eval_metric_ops)


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _SPEC_FIELDS)):
    """What a plain `tf.estimator` `model_fn` returns, as `tf.estimator.EstimatorSpec`.

    Accepted from `model_fn` and converted by `as_tpu_spec`; the fields and
    their checks are those of `TPUEstimatorSpec`, except:

    Args:
        eval_metric_ops: a dict of metric name to metric value, already
            computed (instead of `eval_metrics`). None becomes `{}`.
        training_chief_hooks: hooks run on the chief only; not supported by
            TPUEstimator (`as_tpu_spec` rejects them).
        scaffold: a scaffold object (instead of `scaffold_fn`).

    Raises:
        ValueError: if a field has the wrong type or shape.

    Example:

    ```python
    return kte.EstimatorSpec(
        mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
    ```
    """

    __slots__ = ()

    def __new__(
        cls,
        mode,
        predictions=None,
        loss=None,
        train_op=None,
        eval_metric_ops=None,
        export_outputs=None,
        training_chief_hooks=None,
        training_hooks=None,
        scaffold=None,
        evaluation_hooks=None,
        prediction_hooks=None,
    ):
        return super().__new__(
            cls,
            mode=_check_mode(mode),
            predictions=_check_predictions(predictions),
            loss=_check_loss(loss),
            train_op=train_op,
            eval_metric_ops=_check_eval_metric_ops(eval_metric_ops),
            export_outputs=_check_export_outputs(export_outputs),
            training_chief_hooks=_check_hooks(
                training_chief_hooks, "training_chief_hooks"
            ),
            training_hooks=_check_hooks(training_hooks, "training_hooks"),
            scaffold=scaffold,
            evaluation_hooks=_check_hooks(evaluation_hooks, "evaluation_hooks"),
            prediction_hooks=_check_hooks(prediction_hooks, "prediction_hooks"),
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
            f"Received: spec={_describe(spec)}"
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
    _check_mode(mode)
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
