"""The estimator API over `EstimatorModel`: `TPUEstimator`, `Estimator`, `train_and_evaluate`.

Holds `tpu_estimator` (train/evaluate/predict from a `model_dir`), `args`
(argument checks), `train_plan` (how far training runs, its callbacks),
`predictions`, `exporting` (`export_saved_model`), `plain` (`Estimator`) and
`training_specs`. May import `model`, `checkpoint`, `export`, `hooks`,
`summary`, `model_fn.call` and `model_fn.store`, `inputs.input_fn` (`Estimator`
binds its `input_fn`'s arguments), `spec` and `config`; never `engine` or JAX.
"""

from keras_tpu_estimator.estimator.plain import Estimator
from keras_tpu_estimator.estimator.tpu_estimator import ExportSavedModelApiVersion
from keras_tpu_estimator.estimator.tpu_estimator import TPUEstimator
from keras_tpu_estimator.estimator.training_specs import EvalSpec
from keras_tpu_estimator.estimator.training_specs import Exporter
from keras_tpu_estimator.estimator.training_specs import TrainSpec
from keras_tpu_estimator.estimator.training_specs import train_and_evaluate

__all__ = [
    "Estimator",
    "EvalSpec",
    "ExportSavedModelApiVersion",
    "Exporter",
    "TPUEstimator",
    "TrainSpec",
    "train_and_evaluate",
]
