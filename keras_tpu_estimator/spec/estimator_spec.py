"""`EstimatorSpec`: what a plain `tf.estimator` `model_fn` returns."""

import collections

from keras_tpu_estimator.spec.checks import check_hooks
from keras_tpu_estimator.spec.checks import check_loss
from keras_tpu_estimator.spec.checks import check_mode
from keras_tpu_estimator.spec.checks import check_predictions
from keras_tpu_estimator.spec.checks import describe
from keras_tpu_estimator.spec.export_output import check_export_outputs


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
            f"eval_metric_ops={describe(eval_metric_ops)}"
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
            mode=check_mode(mode),
            predictions=check_predictions(predictions),
            loss=check_loss(loss),
            train_op=train_op,
            eval_metric_ops=_check_eval_metric_ops(eval_metric_ops),
            export_outputs=check_export_outputs(export_outputs),
            training_chief_hooks=check_hooks(
                training_chief_hooks, "training_chief_hooks"
            ),
            training_hooks=check_hooks(training_hooks, "training_hooks"),
            scaffold=scaffold,
            evaluation_hooks=check_hooks(evaluation_hooks, "evaluation_hooks"),
            prediction_hooks=check_hooks(prediction_hooks, "prediction_hooks"),
        )

