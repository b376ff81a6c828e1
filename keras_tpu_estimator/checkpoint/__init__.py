"""Checkpoints of a `model_dir`: save, restore, inspect, warm-start.

A checkpoint is a flat dict `name -> array`, one directory per training step,
written by `orbax.checkpoint` (no home-made format):

```
model_dir/
    100/          # complete checkpoint of step 100
    200/
    300.orbax-checkpoint-tmp-1712345678/   # a save in progress (or killed)
```

Orbax writes every save into a temporary directory and renames it when done,
so a process killed mid-save leaves a temporary directory that is never taken
for a checkpoint: `latest_step()` and `latest_checkpoint()` only see complete
ones.

The modules, one concept each:

- `directory`: `CheckpointDirectory`, the checkpoints of one directory;
- `paths`: the layout of a `model_dir` (`latest_checkpoint`, the
  TensorFlow-style names `model.ckpt-<step>`);
- `readers`: reading any checkpoint, also TensorFlow's (`checkpoint_reader`,
  `list_variables`, `load_variable`);
- `model_state`: an `EstimatorModel`'s checkpoint (`model_values`,
  `save_model`, `restore_model`);
- `warm_starting`: `WarmStartSettings`, `warm_start`;
- `saver`: `CheckpointSaver`, the Keras callback saving during `fit` (never
  NaN weights: `NonFiniteWeightsError`);
- `trainer_lock`: `TrainerLock`, one training process per `model_dir`;
- `model_dir`: `ModelDirCheckpoints`, the estimator's view of its `model_dir`.

```python
checkpoints = kte.checkpoint.CheckpointDirectory("runs/mnist", max_to_keep=3)
kte.checkpoint.save_model(checkpoints, model)          # at model.global_step
kte.checkpoint.restore_model(checkpoints, other_model)  # the latest step
kte.checkpoint.list_variables(checkpoints.latest_checkpoint())
kte.checkpoint.warm_start(model, kte.checkpoint.WarmStartSettings(
    "tf1_run/model.ckpt-5000", vars_to_warm_start="encoder/.*"))
```
"""

from keras_tpu_estimator.checkpoint.directory import CheckpointDirectory
from keras_tpu_estimator.checkpoint.model_dir import ModelDirCheckpoints
from keras_tpu_estimator.checkpoint.model_state import GLOBAL_STEP
from keras_tpu_estimator.checkpoint.model_state import OPTIMIZER_PREFIX
from keras_tpu_estimator.checkpoint.model_state import model_values
from keras_tpu_estimator.checkpoint.model_state import restore_model
from keras_tpu_estimator.checkpoint.model_state import save_model
from keras_tpu_estimator.checkpoint.paths import TF_STYLE_PREFIX
from keras_tpu_estimator.checkpoint.paths import checkpoint_step
from keras_tpu_estimator.checkpoint.paths import latest_checkpoint
from keras_tpu_estimator.checkpoint.paths import tf_style_path
from keras_tpu_estimator.checkpoint.readers import CheckpointReader
from keras_tpu_estimator.checkpoint.readers import DamagedCheckpointError
from keras_tpu_estimator.checkpoint.readers import checkpoint_reader
from keras_tpu_estimator.checkpoint.readers import list_variables
from keras_tpu_estimator.checkpoint.readers import load_variable
from keras_tpu_estimator.checkpoint.saver import CheckpointSaver
from keras_tpu_estimator.checkpoint.saver import NonFiniteWeightsError
from keras_tpu_estimator.checkpoint.trainer_lock import ModelDirInUseError
from keras_tpu_estimator.checkpoint.trainer_lock import TrainerLock
from keras_tpu_estimator.checkpoint.warm_starting import WarmStartReport
from keras_tpu_estimator.checkpoint.warm_starting import WarmStartSettings
from keras_tpu_estimator.checkpoint.warm_starting import load_from_reader
from keras_tpu_estimator.checkpoint.warm_starting import warm_start

__all__ = [
    "CheckpointDirectory",
    "ModelDirCheckpoints",
    "GLOBAL_STEP",
    "OPTIMIZER_PREFIX",
    "model_values",
    "restore_model",
    "save_model",
    "TF_STYLE_PREFIX",
    "checkpoint_step",
    "latest_checkpoint",
    "tf_style_path",
    "CheckpointReader",
    "DamagedCheckpointError",
    "checkpoint_reader",
    "list_variables",
    "load_variable",
    "CheckpointSaver",
    "NonFiniteWeightsError",
    "ModelDirInUseError",
    "TrainerLock",
    "WarmStartReport",
    "WarmStartSettings",
    "load_from_reader",
    "warm_start",
]
