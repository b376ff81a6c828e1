"""Export outputs: what a serving signature returns (`ExportOutput` and kinds)."""

import keras

from keras_tpu_estimator.spec.checks import describe
from keras_tpu_estimator.spec.checks import is_tensor


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
    if not is_tensor(value):
        raise ValueError(
            f"{owner} `{name}` must be a tensor. Received: "
            f"{name}={describe(value)}"
        )
    return value


def _dtype(value):
    return keras.backend.standardize_dtype(getattr(value, "dtype", type(value)))


def _check_dtype(value, owner, name, allowed, kinds):
    """`value` if its dtype is one of `kinds` (`keras.backend.is_*_dtype` tests)."""
    dtype = _dtype(value)
    if not any(test(dtype) for test in kinds):
        raise ValueError(
            f"{owner} `{name}` must be a tensor of {allowed}. Received: "
            f"{name} of dtype {dtype}"
        )
    return value


def _is_float(dtype):
    return keras.backend.is_float_dtype(dtype)


def _is_int(dtype):
    return keras.backend.is_int_dtype(dtype)


def _is_string(dtype):
    return dtype == "string"


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
                    f"key {key!r} in outputs={describe(outputs)}"
                )
            _check_output_tensor(value, "PredictOutput", f"outputs[{key!r}]")
        self.outputs = dict(outputs)


class ClassificationOutput(ExportOutput):
    """Scores and/or classes returned by a `classify` signature.

    As `tf.estimator.export.ClassificationOutput`, the export makes it a
    TensorFlow Serving Classify signature (`tensorflow/serving/classify`)
    when the receiver takes one string tensor (serialized
    `tf.train.Example`s, input `inputs`), and leaves it out otherwise.

    Args:
        scores: optional float tensor of shape `(batch, num_classes)`, the
            score of each class. Output name `"scores"` (float32).
        classes: optional tensor of shape `(batch, num_classes)`, the class
            labels: integers (JAX has no strings; the signature returns them
            as strings, as TensorFlow Serving wants) or strings. Output name
            `"classes"`.

    Raises:
        ValueError: if neither is given, one is not a tensor, `scores` is
            not floating point, or `classes` neither integer nor string.

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
            _check_output_tensor(scores, "ClassificationOutput", "scores")
            self.outputs["scores"] = _check_dtype(
                scores, "ClassificationOutput", "scores", "floats", [_is_float]
            )
        if classes is not None:
            _check_output_tensor(classes, "ClassificationOutput", "classes")
            self.outputs["classes"] = _check_dtype(
                classes, "ClassificationOutput", "classes",
                "integer class ids or string labels", [_is_int, _is_string],
            )


class RegressionOutput(ExportOutput):
    """The value returned by a `regress` signature.

    As `tf.estimator.export.RegressionOutput`, the export makes it a
    TensorFlow Serving Regress signature (`tensorflow/serving/regress`) when
    the receiver takes one string tensor (serialized `tf.train.Example`s,
    input `inputs`), and leaves it out otherwise.

    Args:
        value: a float tensor of shape `(batch,)` or `(batch, 1)`. Output
            name `"outputs"` (float32).

    Raises:
        ValueError: if `value` is not a floating point tensor.

    Example:

    ```python
    kte.RegressionOutput(value=predictions)
    ```
    """

    def __init__(self, value):
        _check_output_tensor(value, "RegressionOutput", "value")
        self.value = _check_dtype(value, "RegressionOutput", "value", "floats", [_is_float])
        self.outputs = {"outputs": value}


def check_export_outputs(export_outputs):
    """Returns a spec's `export_outputs` (a dict copied) if `None` or well formed.

    Args:
        export_outputs: `None`, or a dict of signature name (a string) to
            `ExportOutput`.

    Returns:
        `None` or a new dict.

    Raises:
        ValueError: if it is neither.
    """
    if export_outputs is None:
        return None
    if not isinstance(export_outputs, dict):
        raise ValueError(
            "Argument `export_outputs` must be None or a dict of signature "
            "name to `ExportOutput`. Received: "
            f"export_outputs={describe(export_outputs)}"
        )
    for key, value in export_outputs.items():
        if not isinstance(key, str) or not isinstance(value, ExportOutput):
            raise ValueError(
                "Argument `export_outputs` must be None or a dict of signature "
                "name (a string) to `ExportOutput` (`PredictOutput`, "
                "`ClassificationOutput`, `RegressionOutput`). Received: "
                f"export_outputs[{key!r}]={describe(value)}"
            )
    return dict(export_outputs)

