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

Modules, one concept each: `mode_keys` (`ModeKeys`), `export_output`
(`ExportOutput` and its kinds), `estimator_spec` (`EstimatorSpec`),
`tpu_estimator_spec` (`TPUEstimatorSpec`, `as_tpu_spec`, `check_spec`),
`checks` (the field checks both specs share) and `arguments` (which arguments
a `model_fn` or `input_fn` takes by name).

Layering: may import `_keras_internals` only; every layer may import it.
"""

from keras_tpu_estimator.spec.checks import describe
from keras_tpu_estimator.spec.estimator_spec import EstimatorSpec
from keras_tpu_estimator.spec.export_output import ClassificationOutput
from keras_tpu_estimator.spec.export_output import ExportOutput
from keras_tpu_estimator.spec.export_output import PredictOutput
from keras_tpu_estimator.spec.export_output import RegressionOutput
from keras_tpu_estimator.spec.mode_keys import ModeKeys
from keras_tpu_estimator.spec.tpu_estimator_spec import TPUEstimatorSpec
from keras_tpu_estimator.spec.tpu_estimator_spec import as_tpu_spec
from keras_tpu_estimator.spec.tpu_estimator_spec import check_spec

__all__ = [
    "ClassificationOutput",
    "EstimatorSpec",
    "ExportOutput",
    "ModeKeys",
    "PredictOutput",
    "RegressionOutput",
    "TPUEstimatorSpec",
    "as_tpu_spec",
    "check_spec",
    "describe",
]
