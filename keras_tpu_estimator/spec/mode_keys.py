"""`ModeKeys`: the modes a `model_fn` is called in."""


class ModeKeys:
    """The modes a `model_fn` is called in, with `tf.estimator.ModeKeys` values.

    The values are TensorFlow's strings, so `mode == "infer"` and
    `mode == tf.estimator.ModeKeys.PREDICT` keep working in ported code.

    Example:

    ```python
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"logits": logits})
    ```
    """

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


# Every mode, in the order TRAIN, EVAL, PREDICT.
MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)

