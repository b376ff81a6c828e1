"""Exporting a `model_fn` as a TensorFlow SavedModel for serving.

What `tf.estimator.export` gave TPUEstimator programs, on Keras's
`keras.export.ExportArchive` with the JAX backend:

- serving receivers: a `serving_input_receiver_fn` returns a
  `ServingInputReceiver` that says what the server receives
  (`receiver_tensors`, e.g. serialized `tf.train.Example`s) and which
  `features` `model_fn` gets from them (e.g. parsed);
- `export_saved_model`: `model_fn` runs in PREDICT mode on those features,
  converted from JAX to a TensorFlow graph (`jax2tf`, StableHLO), with the
  model's weights as SavedModel variables. Every `export_outputs` key of the
  spec becomes a signature; `serving_default` is always present.

```python
def serving_input_receiver_fn():
    x = kte.export.placeholder(shape=(None, 64), dtype="float32", name="x")
    return kte.export.ServingInputReceiver(features={"x": x}, receiver_tensors={"x": x})

path = estimator.export_saved_model("exports", serving_input_receiver_fn)
loaded = tf.saved_model.load(path)
loaded.signatures["serving_default"](x=tf.constant(batch))
```

`serving_input_receiver_fn` runs once, in a TensorFlow graph, so its code is
TensorFlow code (placeholders, `tf.io.parse_example`); `model_fn` runs in JAX
as it does for `predict`. TensorFlow is imported only when exporting.

The package has one module per concept: `receivers` (serving input
receivers), `tpu` (`inference_on_tpu`), `signatures` (the SavedModel
signatures from the spec's `export_outputs`, as TensorFlow Serving's
Predict, Classify and Regress APIs take them), `compatibility` (serving
programs the oldest possible TensorFlow loads: 2.16), `saved_model`
(writing the export directory) and `from_checkpoint` (exporting a
`model_dir`'s checkpoint, as `TPUEstimator.export_saved_model` does).

Layering: may import `checkpoint` and the shared modules (`spec`, `config`,
`distribute`, `log_lines`, `_keras_internals`); the model to export is passed
in, so never `model` or `estimator`.
"""

from keras_tpu_estimator.export.from_checkpoint import ExportSavedModelApiVersion
from keras_tpu_estimator.export.from_checkpoint import check_api_version
from keras_tpu_estimator.export.from_checkpoint import check_strip_default_attrs
from keras_tpu_estimator.export.from_checkpoint import export_checkpoint
from keras_tpu_estimator.export.from_checkpoint import serving_platforms
from keras_tpu_estimator.export.receivers import SINGLE_FEATURE_DEFAULT_NAME
from keras_tpu_estimator.export.receivers import SINGLE_RECEIVER_DEFAULT_NAME
from keras_tpu_estimator.export.receivers import ServingInputReceiver
from keras_tpu_estimator.export.receivers import TensorServingInputReceiver
from keras_tpu_estimator.export.receivers import build_parsing_serving_input_receiver_fn
from keras_tpu_estimator.export.receivers import build_raw_serving_input_receiver_fn
from keras_tpu_estimator.export.receivers import call_receiver_fn
from keras_tpu_estimator.export.receivers import placeholder
from keras_tpu_estimator.export.saved_model import export_model
from keras_tpu_estimator.export.saved_model import export_saved_model
from keras_tpu_estimator.export.saved_model import write_saved_model
from keras_tpu_estimator.export.signatures import DEFAULT_SERVING_SIGNATURE_DEF_KEY
from keras_tpu_estimator.export.signatures import build_archive
from keras_tpu_estimator.export.signatures import serving_signatures
from keras_tpu_estimator.export.tpu import inference_on_tpu
from keras_tpu_estimator.spec import ClassificationOutput
from keras_tpu_estimator.spec import ExportOutput
from keras_tpu_estimator.spec import PredictOutput
from keras_tpu_estimator.spec import RegressionOutput

__all__ = [
    "ClassificationOutput",
    "ExportOutput",
    "ExportSavedModelApiVersion",
    "PredictOutput",
    "RegressionOutput",
    "ServingInputReceiver",
    "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
    "export_checkpoint",
    "export_saved_model",
    "inference_on_tpu",
    "placeholder",
    "write_saved_model",
]
