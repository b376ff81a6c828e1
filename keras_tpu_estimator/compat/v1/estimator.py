"""`tf.compat.v1.estimator` names used inside `model_fn`: `ModeKeys`, specs, exports.

The estimators themselves are `kte.TPUEstimator` (and `kte.RunConfig`,
`kte.TPUConfig`); this module keeps `tf.estimator.ModeKeys.TRAIN`,
`tf.estimator.EstimatorSpec` and `tf.estimator.export.PredictOutput` spelled
as in TF1 code.

```python
if mode == tf1.estimator.ModeKeys.PREDICT:
    return tf1.estimator.EstimatorSpec(mode, predictions={"classes": classes})
```
"""

import types

from keras_tpu_estimator.spec import ClassificationOutput
from keras_tpu_estimator.spec import EstimatorSpec  # noqa: F401
from keras_tpu_estimator.spec import ExportOutput
from keras_tpu_estimator.spec import ModeKeys  # noqa: F401
from keras_tpu_estimator.spec import PredictOutput
from keras_tpu_estimator.spec import RegressionOutput
from keras_tpu_estimator.spec import TPUEstimatorSpec  # noqa: F401


def _export_namespace():
    names = dict(
        ExportOutput=ExportOutput,
        PredictOutput=PredictOutput,
        ClassificationOutput=ClassificationOutput,
        RegressionOutput=RegressionOutput,
    )
    try:
        from keras_tpu_estimator import export as export_lib
    except ImportError:  # The export module is optional here.
        export_lib = None
    for name in ("ServingInputReceiver", "TensorServingInputReceiver",
                 "build_raw_serving_input_receiver_fn",
                 "build_parsing_serving_input_receiver_fn"):
        if hasattr(export_lib, name):
            names[name] = getattr(export_lib, name)
    return types.SimpleNamespace(**names)


export = _export_namespace()
"""`tf.estimator.export`: export outputs and serving input receivers."""
