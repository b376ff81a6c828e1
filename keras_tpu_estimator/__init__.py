"""Run TPUEstimator programs (`model_fn`, `input_fn`, `TPUConfig`) on Keras 3 + JAX.

```python
import keras_tpu_estimator as kte

model = kte.EstimatorModel(model_fn, params={...}, train_batch_size=256,
                           config=kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=50)))
model.compile()
model.fit(train_input_fn, epochs=3)
```
"""

from keras_tpu_estimator import _backend
from keras_tpu_estimator._backend import tf_ffi_build as _tf_ffi_build

# First: a machine's first import compiles the custom call that runs
# TensorFlow's CPU kernels, on a thread beside the imports below.
_tf_ffi_build.start()

# Before any other import of the package: Keras on JAX, even when TensorFlow
# (which imports Keras) was imported first.
_keras = _backend.use_jax_backend()

from keras_tpu_estimator import compilation_cache  # noqa: E402

compilation_cache.enable_default()

from keras_tpu_estimator._keras_internals import callback_cache as _callback_cache  # noqa: E402

_callback_cache.install()  # Programs calling TensorFlow's kernels are cached too.

from keras_tpu_estimator._backend import routing as _routing  # noqa: E402

_routing.install()  # On CPU: TensorFlow's oneDNN convolutions, im2col, tiled max pools.

from keras_tpu_estimator import checkpoint  # noqa: E402
from keras_tpu_estimator import export  # noqa: E402
from keras_tpu_estimator import distribute  # noqa: E402
from keras_tpu_estimator import hooks  # noqa: E402
from keras_tpu_estimator import metrics  # noqa: E402
from keras_tpu_estimator import summary  # noqa: E402
from keras_tpu_estimator import compat  # noqa: E402  (after the modules compat.v1 builds on)
from keras_tpu_estimator.checkpoint import WarmStartSettings  # noqa: E402
from keras_tpu_estimator.inputs.deployment import TPUContext  # noqa: E402
from keras_tpu_estimator.config import InputPipelineConfig  # noqa: E402
from keras_tpu_estimator.config import RunConfig  # noqa: E402
from keras_tpu_estimator.config import TPUConfig  # noqa: E402
from keras_tpu_estimator.estimator.tpu_estimator import ExportSavedModelApiVersion  # noqa: E402
from keras_tpu_estimator.estimator.tpu_estimator import TPUEstimator  # noqa: E402
from keras_tpu_estimator.estimator.plain import Estimator  # noqa: E402
from keras_tpu_estimator.estimator.training_specs import EvalSpec  # noqa: E402
from keras_tpu_estimator.estimator.training_specs import Exporter  # noqa: E402
from keras_tpu_estimator.estimator.training_specs import TrainSpec  # noqa: E402
from keras_tpu_estimator.estimator.training_specs import train_and_evaluate  # noqa: E402
from keras_tpu_estimator.export import inference_on_tpu  # noqa: E402
from keras_tpu_estimator.hooks import CheckpointSaverHook  # noqa: E402
from keras_tpu_estimator.hooks import CheckpointSaverListener  # noqa: E402
from keras_tpu_estimator.hooks import LoggingTensorHook  # noqa: E402
from keras_tpu_estimator.hooks import NanLossDuringTrainingError  # noqa: E402
from keras_tpu_estimator.hooks import NanTensorHook  # noqa: E402
from keras_tpu_estimator.hooks import SessionRunArgs  # noqa: E402
from keras_tpu_estimator.hooks import SessionRunContext  # noqa: E402
from keras_tpu_estimator.hooks import SessionRunHook  # noqa: E402
from keras_tpu_estimator.hooks import SessionRunValues  # noqa: E402
from keras_tpu_estimator.hooks import StopAtStepHook  # noqa: E402
from keras_tpu_estimator.model.estimator_model import EstimatorModel  # noqa: E402
from keras_tpu_estimator.model_fn.store import VariableStore  # noqa: E402
from keras_tpu_estimator.model_fn.store import get_global_step  # noqa: E402
from keras_tpu_estimator.model_fn.store import get_or_create_layer  # noqa: E402
from keras_tpu_estimator.model_fn.store import get_variable  # noqa: E402
from keras_tpu_estimator.model_fn.store import variable_scope  # noqa: E402
from keras_tpu_estimator.spec import ClassificationOutput  # noqa: E402
from keras_tpu_estimator.spec import EstimatorSpec  # noqa: E402
from keras_tpu_estimator.spec import ExportOutput  # noqa: E402
from keras_tpu_estimator.spec import ModeKeys  # noqa: E402
from keras_tpu_estimator.spec import PredictOutput  # noqa: E402
from keras_tpu_estimator.spec import RegressionOutput  # noqa: E402
from keras_tpu_estimator.spec import TPUEstimatorSpec  # noqa: E402
from keras_tpu_estimator.strategy import PerReplica  # noqa: E402
from keras_tpu_estimator.strategy import TPUStrategy  # noqa: E402
from keras_tpu_estimator.strategy import VariableAggregation  # noqa: E402
from keras_tpu_estimator.strategy import get_replica_context  # noqa: E402
from keras_tpu_estimator.strategy import get_tower_context  # noqa: E402

__version__ = "0.1.0"

# The public names (the API reference documents each; tests/test_docs.py checks).
__all__ = [
    "checkpoint",
    "export",
    "distribute",
    "hooks",
    "metrics",
    "summary",
    "compat",
    "WarmStartSettings",
    "TPUContext",
    "InputPipelineConfig",
    "RunConfig",
    "TPUConfig",
    "ExportSavedModelApiVersion",
    "TPUEstimator",
    "Estimator",
    "TrainSpec",
    "EvalSpec",
    "Exporter",
    "train_and_evaluate",
    "inference_on_tpu",
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "LoggingTensorHook",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunHook",
    "SessionRunValues",
    "StopAtStepHook",
    "EstimatorModel",
    "VariableStore",
    "get_global_step",
    "get_or_create_layer",
    "get_variable",
    "variable_scope",
    "ClassificationOutput",
    "EstimatorSpec",
    "ExportOutput",
    "ModeKeys",
    "PredictOutput",
    "RegressionOutput",
    "TPUEstimatorSpec",
    "PerReplica",
    "TPUStrategy",
    "VariableAggregation",
    "get_replica_context",
    "get_tower_context",
]


def __getattr__(name):
    # `kte.convert` (the source converter) is imported on first use, so that
    # `python -m keras_tpu_estimator.convert` does not import it twice.
    if name == "convert":
        import importlib

        return importlib.import_module("keras_tpu_estimator.convert")
    raise AttributeError(f"module 'keras_tpu_estimator' has no attribute {name!r}")
