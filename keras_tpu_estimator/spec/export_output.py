"""Export outputs: what a serving signature returns (`ExportOutput` and kinds)."""

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

