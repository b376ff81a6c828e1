"""Specification of `keras_tpu_estimator.spec`: modes, specs, export outputs."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from keras_tpu_estimator.spec import ClassificationOutput
from keras_tpu_estimator.spec import EstimatorSpec
from keras_tpu_estimator.spec import ExportOutput
from keras_tpu_estimator.spec import ModeKeys
from keras_tpu_estimator.spec import PredictOutput
from keras_tpu_estimator.spec import RegressionOutput
from keras_tpu_estimator.spec import TPUEstimatorSpec
from keras_tpu_estimator.spec import as_tpu_spec
from keras_tpu_estimator.spec import check_spec

LOSS = np.float32(0.5)
LOGITS = np.zeros((4, 3), np.float32)
LABELS = np.zeros((4,), np.int32)


def metric_fn(labels, logits):
    return {"mean_logit": logits.mean(), "count": labels.shape[0]}


HOOK_FIELDS = ["training_hooks", "evaluation_hooks", "prediction_hooks"]
PAIR_FIELDS = ["eval_metrics", "host_call"]


# ----------------------------------------------------------------------
# ModeKeys


@pytest.mark.parametrize(
    "key, value", [("TRAIN", "train"), ("EVAL", "eval"), ("PREDICT", "infer")]
)
def test_mode_keys_have_tensorflow_values(key, value):
    assert getattr(ModeKeys, key) == value


# ----------------------------------------------------------------------
# TPUEstimatorSpec construction


def test_tpu_spec_has_tensorflow_fields_in_order():
    assert TPUEstimatorSpec._fields == (
        "mode", "predictions", "loss", "train_op", "eval_metrics",
        "export_outputs", "scaffold_fn", "host_call", "training_hooks",
        "evaluation_hooks", "prediction_hooks",
    )  # fmt: skip


def test_tpu_spec_defaults_are_none_and_empty_hooks():
    spec = TPUEstimatorSpec(ModeKeys.TRAIN)
    assert spec.mode == "train"
    assert spec.predictions is spec.loss is spec.train_op is None
    assert spec.eval_metrics is spec.export_outputs is None
    assert spec.scaffold_fn is spec.host_call is None
    assert spec.training_hooks == spec.evaluation_hooks == spec.prediction_hooks == ()


def test_tpu_spec_is_a_namedtuple_taking_keywords_and_positions():
    spec = TPUEstimatorSpec("eval", None, LOSS)
    assert isinstance(spec, tuple)
    assert spec == TPUEstimatorSpec(mode="eval", loss=LOSS)


@pytest.mark.parametrize("spec_class", [TPUEstimatorSpec, EstimatorSpec])
@pytest.mark.parametrize("mode", ["predict", "TRAIN", "", None, 1])
def test_spec_rejects_unknown_mode(spec_class, mode):
    with pytest.raises(
        ValueError, match=r"`mode` must be one of \['train', 'eval', 'infer'\]"
    ):
        spec_class(mode)


@pytest.mark.parametrize(
    "predictions",
    [LOGITS, jnp.ones(3), np.float32(1.0), 2.0, {"logits": LOGITS, "id": 7}],
    ids=["numpy", "jax", "numpy-scalar", "python-number", "dict"],
)
def test_predictions_may_be_a_tensor_or_a_dict_of_tensors(predictions):
    spec = TPUEstimatorSpec(ModeKeys.PREDICT, predictions=predictions)
    if isinstance(predictions, dict):
        assert spec.predictions == predictions
    else:
        assert spec.predictions is predictions


@pytest.mark.parametrize(
    "predictions, received",
    [
        ([LOGITS], "predictions=[array"),
        ("logits", "predictions='logits'"),
        ({"logits": [1, 2]}, "predictions['logits']=[1, 2]"),
    ],
)
def test_predictions_must_be_tensors(predictions, received):
    with pytest.raises(ValueError, match=re.escape(received)):
        TPUEstimatorSpec(ModeKeys.PREDICT, predictions=predictions)


@pytest.mark.parametrize("loss", [LOSS, 0.5, jnp.float32(1.0), np.ones((1,))], ids=str)
def test_loss_is_a_scalar_tensor(loss):
    assert TPUEstimatorSpec(ModeKeys.TRAIN, loss=loss).loss is loss


@pytest.mark.parametrize(
    "loss", [np.ones((4,)), np.ones((2, 2)), [0.5], "0.5"], ids=str
)
def test_loss_must_be_a_scalar_tensor(loss):
    with pytest.raises(ValueError, match="`loss` must be a scalar tensor"):
        TPUEstimatorSpec(ModeKeys.TRAIN, loss=loss)


def test_spec_is_built_from_traced_values_inside_jit():
    @jax.jit
    def step(x):
        spec = TPUEstimatorSpec(
            ModeKeys.EVAL,
            loss=jnp.mean(x),
            predictions={"y": x * 2},
            eval_metrics=(lambda y: {"m": y.sum()}, [x]),
        )
        return spec.loss, spec.predictions

    loss, predictions = step(jnp.arange(4.0))
    assert loss == 1.5
    np.testing.assert_array_equal(predictions["y"], [0, 2, 4, 6])


@pytest.mark.parametrize("field", PAIR_FIELDS)
@pytest.mark.parametrize(
    "value",
    [
        (metric_fn, [LABELS, LOGITS]),
        (metric_fn, (LABELS, LOGITS)),
        (metric_fn, {"labels": LABELS, "logits": LOGITS}),
        [metric_fn, [LABELS, LOGITS]],
    ],
    ids=["list", "tuple", "dict", "pair-as-list"],
)
def test_function_tensor_pairs_are_stored_as_tuples(field, value):
    spec = TPUEstimatorSpec(ModeKeys.EVAL, loss=LOSS, **{field: value})
    assert getattr(spec, field) == tuple(value)
    assert isinstance(getattr(spec, field), tuple)


@pytest.mark.parametrize("field", PAIR_FIELDS)
@pytest.mark.parametrize(
    "value",
    [
        metric_fn,
        (metric_fn,),
        (metric_fn, [LABELS], [LOGITS]),
        ("metric_fn", [LABELS, LOGITS]),
        (metric_fn, LOGITS),
        (metric_fn, "labels"),
        {"metric_fn": metric_fn},
    ],
    ids=[
        "bare-function", "one-element", "three-elements", "not-callable",
        "tensor-not-list", "string-not-list", "dict",
    ],
)  # fmt: skip
def test_function_tensor_pairs_reject_other_shapes(field, value):
    message = (
        rf"`{field}` must be None or a pair \(function, tensors\).*Received: {field}="
    )
    with pytest.raises(ValueError, match=message):
        TPUEstimatorSpec(ModeKeys.EVAL, loss=LOSS, **{field: value})


@pytest.mark.parametrize("field", PAIR_FIELDS)
@pytest.mark.parametrize(
    "tensors, given",
    [
        ([LABELS], "1 tensors"),
        ([LABELS, LOGITS, LOGITS], "3 tensors"),
        ({"labels": LABELS, "scores": LOGITS}, "the tensors ['labels', 'scores']"),
    ],
)
def test_function_tensor_pairs_must_fit_the_function(field, tensors, given):
    with pytest.raises(
        ValueError,
        match=re.escape(
            f"In `{field}`, the function metric_fn(labels, logits) cannot be called with {given}"
        ),
    ):
        TPUEstimatorSpec(ModeKeys.EVAL, loss=LOSS, **{field: (metric_fn, tensors)})


def test_function_tensor_pairs_accept_varargs_functions():
    spec = TPUEstimatorSpec(
        ModeKeys.TRAIN, loss=LOSS, host_call=(lambda *t: None, [1, 2, 3])
    )
    assert len(spec.host_call[1]) == 3


class _Hook:
    """A SessionRunHook by its methods (as TF1 code subclasses)."""

    def begin(self):
        pass


H1, H2 = _Hook(), _Hook()
T, E, P = _Hook(), _Hook(), _Hook()  # A training, evaluation and prediction hook.


@pytest.mark.parametrize("field", HOOK_FIELDS)
@pytest.mark.parametrize(
    "make_hooks, expected",
    [
        (lambda: [], ()),
        (lambda: [H1, H2], (H1, H2)),
        (lambda: (H1,), (H1,)),
        (lambda: (h for h in [H1]), (H1,)),
    ],
    ids=["empty", "list", "tuple", "generator"],
)
def test_hooks_are_stored_as_tuples(field, make_hooks, expected):
    spec = TPUEstimatorSpec(ModeKeys.TRAIN, loss=LOSS, **{field: make_hooks()})
    assert getattr(spec, field) == expected


@pytest.mark.parametrize("field", HOOK_FIELDS)
@pytest.mark.parametrize(
    "hooks", [object(), 3, "hook", {"a": 1}], ids=["object", "int", "str", "dict"]
)
def test_hooks_must_be_an_iterable(field, hooks):
    with pytest.raises(
        ValueError,
        match=f"`{field}` must be None or an iterable of hooks.*Received: {field}=",
    ):
        TPUEstimatorSpec(ModeKeys.TRAIN, loss=LOSS, **{field: hooks})


def test_export_outputs_map_names_to_export_outputs():
    outputs = {
        "serving_default": PredictOutput(LOGITS),
        "reg": RegressionOutput(LOGITS[:, 0]),
    }
    spec = TPUEstimatorSpec(
        ModeKeys.PREDICT, predictions=LOGITS, export_outputs=outputs
    )
    assert spec.export_outputs == outputs


@pytest.mark.parametrize(
    "export_outputs, received",
    [
        ([PredictOutput(LOGITS)], "export_outputs=["),
        ({"serving_default": LOGITS}, "export_outputs['serving_default']=array"),
        ({1: PredictOutput(LOGITS)}, "export_outputs[1]=PredictOutput"),
    ],
    ids=["list", "tensor-value", "int-key"],
)
def test_export_outputs_reject_anything_else(export_outputs, received):
    with pytest.raises(ValueError, match=re.escape(received)):
        TPUEstimatorSpec(
            ModeKeys.PREDICT, predictions=LOGITS, export_outputs=export_outputs
        )


def test_scaffold_fn_must_be_callable():
    assert TPUEstimatorSpec(ModeKeys.TRAIN, scaffold_fn=len).scaffold_fn is len
    with pytest.raises(
        ValueError,
        match="`scaffold_fn` must be None or a callable. Received: scaffold_fn='scaffold'",
    ):
        TPUEstimatorSpec(ModeKeys.TRAIN, scaffold_fn="scaffold")


def test_train_op_is_stored_unchecked():
    train_op = object()
    assert (
        TPUEstimatorSpec(ModeKeys.TRAIN, loss=LOSS, train_op=train_op).train_op
        is train_op
    )


# ----------------------------------------------------------------------
# check_spec


@pytest.mark.parametrize(
    "mode, fields",
    [
        (ModeKeys.TRAIN, {"loss": LOSS}),
        (ModeKeys.EVAL, {"loss": LOSS}),
        (ModeKeys.PREDICT, {"predictions": LOGITS}),
    ],
)
def test_check_spec_accepts_a_complete_spec(mode, fields):
    spec = TPUEstimatorSpec(mode, **fields)
    assert check_spec(spec, mode) is spec


@pytest.mark.parametrize(
    "mode, fields, missing",
    [
        (ModeKeys.TRAIN, {"predictions": LOGITS}, "loss"),
        (ModeKeys.EVAL, {"predictions": LOGITS}, "loss"),
        (ModeKeys.PREDICT, {"loss": LOSS}, "predictions"),
    ],
)
@pytest.mark.parametrize("spec_class", [TPUEstimatorSpec, EstimatorSpec])
def test_check_spec_requires_the_fields_of_the_mode(spec_class, mode, fields, missing):
    with pytest.raises(
        ValueError,
        match=f"Missing {missing}: in mode '{mode}'.*Received: {missing}=None",
    ):
        check_spec(spec_class(mode, **fields), mode)


def test_check_spec_requires_the_mode_model_fn_was_called_with():
    spec = TPUEstimatorSpec(ModeKeys.EVAL, loss=LOSS)
    with pytest.raises(
        ValueError,
        match="called with mode='train' but returned a TPUEstimatorSpec with mode='eval'",
    ):
        check_spec(spec, ModeKeys.TRAIN)


def test_check_spec_rejects_unknown_mode():
    with pytest.raises(ValueError, match="`mode` must be one of"):
        check_spec(TPUEstimatorSpec(ModeKeys.TRAIN, loss=LOSS), "training")


# ----------------------------------------------------------------------
# Export outputs


def test_predict_output_names_a_single_tensor_output():
    assert PredictOutput(LOGITS).outputs == {"output": LOGITS}


def test_predict_output_keeps_the_given_names():
    outputs = {"logits": LOGITS, "classes": LABELS}
    assert PredictOutput(outputs).outputs == outputs


@pytest.mark.parametrize(
    "outputs, message",
    [
        ({1: LOGITS}, "PredictOutput keys must be strings"),
        ({"logits": "x"}, "PredictOutput `outputs['logits']` must be a tensor"),
        ([LOGITS], "PredictOutput `outputs['output']` must be a tensor"),
    ],
)
def test_predict_output_rejects_non_tensors_and_non_string_keys(outputs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        PredictOutput(outputs)


@pytest.mark.parametrize(
    "kwargs, keys",
    [
        ({"scores": LOGITS}, ["scores"]),
        ({"classes": LABELS}, ["classes"]),
        ({"scores": LOGITS, "classes": LABELS}, ["scores", "classes"]),
    ],
)
def test_classification_output_names_scores_and_classes(kwargs, keys):
    output = ClassificationOutput(**kwargs)
    assert list(output.outputs) == keys
    assert output.scores is kwargs.get("scores")
    assert output.classes is kwargs.get("classes")


def test_classification_output_needs_scores_or_classes():
    with pytest.raises(ValueError, match="At least one of `scores` and `classes`"):
        ClassificationOutput()


@pytest.mark.parametrize("field", ["scores", "classes"])
def test_classification_output_values_must_be_tensors(field):
    with pytest.raises(
        ValueError, match=f"ClassificationOutput `{field}` must be a tensor"
    ):
        ClassificationOutput(**{field: ["a"]})


def test_regression_output_names_its_value_outputs():
    value = LOGITS[:, 0]
    output = RegressionOutput(value)
    assert output.value is value
    assert output.outputs == {"outputs": value}


def test_regression_output_value_must_be_a_tensor():
    with pytest.raises(ValueError, match="RegressionOutput `value` must be a tensor"):
        RegressionOutput([1.0])


@pytest.mark.parametrize(
    "output",
    [
        PredictOutput(LOGITS),
        ClassificationOutput(scores=LOGITS),
        RegressionOutput(LOGITS[:, 0]),
    ],
    ids=lambda output: type(output).__name__,
)
def test_export_outputs_are_export_output(output):
    assert isinstance(output, ExportOutput)


# ----------------------------------------------------------------------
# EstimatorSpec


def test_estimator_spec_has_tensorflow_fields_in_order():
    assert EstimatorSpec._fields == (
        "mode", "predictions", "loss", "train_op", "eval_metric_ops",
        "export_outputs", "training_chief_hooks", "training_hooks", "scaffold",
        "evaluation_hooks", "prediction_hooks",
    )  # fmt: skip


def test_estimator_spec_defaults_like_tensorflow():
    spec = EstimatorSpec(ModeKeys.EVAL, loss=LOSS)
    assert spec.eval_metric_ops == {}
    assert spec.training_chief_hooks == spec.training_hooks == ()
    assert spec.evaluation_hooks == spec.prediction_hooks == ()
    assert spec.scaffold is spec.export_outputs is None


@pytest.mark.parametrize(
    "eval_metric_ops",
    [[("accuracy", LOSS)], (metric_fn, [LABELS]), {1: LOSS}],
    ids=["list", "pair", "int-key"],
)
def test_estimator_spec_eval_metric_ops_must_be_a_dict_by_name(eval_metric_ops):
    with pytest.raises(
        ValueError,
        match="`eval_metric_ops` must be None or a dict.*Received: eval_metric_ops=",
    ):
        EstimatorSpec(ModeKeys.EVAL, loss=LOSS, eval_metric_ops=eval_metric_ops)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"loss": np.ones(3)}, "`loss` must be a scalar"),
        ({"predictions": [1]}, "`predictions` must be None, a tensor or a dict"),
        ({"export_outputs": {"a": LOGITS}}, "`export_outputs` must be None or a dict"),
        (
            {"training_chief_hooks": 3},
            "`training_chief_hooks` must be None or an iterable",
        ),
        ({"evaluation_hooks": 3}, "`evaluation_hooks` must be None or an iterable"),
    ],
)
def test_estimator_spec_checks_fields_like_tpu_spec(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EstimatorSpec(ModeKeys.EVAL, **kwargs)


# ----------------------------------------------------------------------
# as_tpu_spec and as_estimator_spec


def test_as_tpu_spec_returns_a_tpu_spec_unchanged():
    spec = TPUEstimatorSpec(ModeKeys.TRAIN, loss=LOSS)
    assert as_tpu_spec(spec) is spec


def test_as_tpu_spec_keeps_the_shared_fields():
    outputs = {"serving_default": PredictOutput(LOGITS)}
    spec = as_tpu_spec(
        EstimatorSpec(
            ModeKeys.PREDICT, predictions={"y": LOGITS}, loss=LOSS, train_op="op",
            export_outputs=outputs, training_hooks=[T], evaluation_hooks=[E],
            prediction_hooks=[P],
        )
    )  # fmt: skip
    assert isinstance(spec, TPUEstimatorSpec)
    assert (spec.mode, spec.predictions, spec.loss, spec.train_op) == (
        "infer", {"y": LOGITS}, LOSS, "op",
    )  # fmt: skip
    assert spec.export_outputs == outputs
    assert (spec.training_hooks, spec.evaluation_hooks, spec.prediction_hooks) == (
        (T,), (E,), (P,),
    )  # fmt: skip
    assert spec.eval_metrics is spec.scaffold_fn is spec.host_call is None


def test_as_tpu_spec_turns_eval_metric_ops_into_eval_metrics():
    ops = {"accuracy": LOSS, "auc": (LOSS, "update_op")}
    metric_fn, tensors = as_tpu_spec(
        EstimatorSpec(ModeKeys.EVAL, loss=LOSS, eval_metric_ops=ops)
    ).eval_metrics
    assert tensors == ops
    assert metric_fn(**tensors) == ops


def test_as_tpu_spec_turns_scaffold_into_scaffold_fn():
    scaffold = object()
    spec = as_tpu_spec(EstimatorSpec(ModeKeys.TRAIN, loss=LOSS, scaffold=scaffold))
    assert spec.scaffold_fn() is scaffold


def test_as_tpu_spec_rejects_training_chief_hooks_like_tpu_estimator():
    spec = EstimatorSpec(ModeKeys.TRAIN, loss=LOSS, training_chief_hooks=[H1])
    with pytest.raises(
        ValueError,
        match="training_chief_hooks returned by EstimatorSpec is not supported in TPUEstimator",
    ):
        as_tpu_spec(spec)


@pytest.mark.parametrize(
    "spec", [None, {"loss": LOSS}, (ModeKeys.TRAIN, None, LOSS)], ids=str
)
def test_as_tpu_spec_rejects_non_specs(spec):
    with pytest.raises(
        ValueError, match="`spec` must be an EstimatorSpec or a TPUEstimatorSpec"
    ):
        as_tpu_spec(spec)


@pytest.mark.parametrize(
    "tensors",
    [[LABELS, LOGITS], {"labels": LABELS, "logits": LOGITS}],
    ids=["list", "dict"],
)
def test_as_estimator_spec_computes_eval_metric_ops(tensors):
    spec = TPUEstimatorSpec(ModeKeys.EVAL, loss=LOSS, eval_metrics=(metric_fn, tensors))
    assert spec.as_estimator_spec().eval_metric_ops == {"mean_logit": 0.0, "count": 4}


def test_as_estimator_spec_calls_scaffold_fn():
    scaffold = object()
    spec = TPUEstimatorSpec(ModeKeys.TRAIN, loss=LOSS, scaffold_fn=lambda: scaffold)
    assert spec.as_estimator_spec().scaffold is scaffold


def test_as_estimator_spec_keeps_the_shared_fields():
    outputs = {"serving_default": PredictOutput(LOGITS)}
    spec = TPUEstimatorSpec(
        ModeKeys.PREDICT, predictions=LOGITS, loss=LOSS, train_op="op",
        export_outputs=outputs, training_hooks=[T], evaluation_hooks=[E],
        prediction_hooks=[P],
    ).as_estimator_spec()  # fmt: skip
    assert isinstance(spec, EstimatorSpec)
    assert (spec.mode, spec.predictions, spec.loss, spec.train_op) == (
        "infer",
        LOGITS,
        LOSS,
        "op",
    )
    assert spec.export_outputs == outputs
    assert (spec.training_hooks, spec.evaluation_hooks, spec.prediction_hooks) == (
        (T,), (E,), (P,),
    )  # fmt: skip
    assert spec.eval_metric_ops == {} and spec.scaffold is None


def test_host_call_survives_a_round_trip_through_estimator_spec():
    host_call = (lambda loss: None, [LOSS])
    spec = TPUEstimatorSpec(
        ModeKeys.TRAIN, loss=LOSS, host_call=host_call, training_hooks=[T]
    )
    estimator_spec = spec.as_estimator_spec()
    assert len(estimator_spec.training_hooks) == 2  # "t" and the host call, as in TF
    back = as_tpu_spec(estimator_spec)
    assert back.host_call == host_call
    assert back.training_hooks == (T,)
    assert back.evaluation_hooks == back.prediction_hooks == ()
