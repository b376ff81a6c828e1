"""Checkpoints of a `model_dir`: save, restore, inspect, warm-start.

A checkpoint is a flat dict `name -> array`, written as TensorFlow 1's
`Saver` wrote it, by TensorFlow's own ops (`tf.raw_ops.SaveV2`,
`MergeV2Checkpoints`), with TF1 variable names (`dense/kernel`,
`global_step`):

```
model_dir/
    checkpoint                           # the state file: the checkpoints, latest last
    model.ckpt-100.index
    model.ckpt-100.data-00000-of-00001
    model.ckpt-100.meta
    model.ckpt-200.index ...
    model.ckpt-300_temp/                 # a save in progress (or killed)
```

`tf.train.latest_checkpoint`, `tf.train.load_checkpoint`, TensorBoard and
TensorFlow's own estimators read such a `model_dir`, and this library resumes
from theirs. A save is written under a temporary name and renamed when
complete (the `.index` last), the state file last: a process killed mid-save
leaves the previous checkpoint the latest.

The modules, one concept each:

- `directory`: `CheckpointDirectory`, the checkpoints of one directory;
- `tf_files`: TensorFlow's checkpoint files and state file, through its ops;
- `paths`: the layout of a `model_dir` (`latest_checkpoint`,
  `checkpoint_prefix`, the names `model.ckpt-<step>`);
- `readers`: reading any TensorFlow checkpoint (`checkpoint_reader`,
  `list_variables`, `load_variable`);
- `model_state`: an `EstimatorModel`'s checkpoint (`model_values`,
  `save_model`, `restore_model`, `load_checkpoint`);
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

Layering: may import `engine.logs` (the saver reads the loop logs), `hooks` and
the shared modules (`spec`, `config`, `distribute`, `log_lines`,
`_keras_internals`); never `model` or `estimator`.
"""

from keras_tpu_estimator.checkpoint.directory import CheckpointDirectory
from keras_tpu_estimator.checkpoint.global_step import load_global_step_from_checkpoint_dir
from keras_tpu_estimator.checkpoint.model_dir import ModelDirCheckpoints
from keras_tpu_estimator.checkpoint.model_state import GLOBAL_STEP
from keras_tpu_estimator.checkpoint.model_state import OPTIMIZER_PREFIX
from keras_tpu_estimator.checkpoint.model_state import load_checkpoint
from keras_tpu_estimator.checkpoint.model_state import model_values
from keras_tpu_estimator.checkpoint.model_state import restore_model
from keras_tpu_estimator.checkpoint.model_state import save_model
from keras_tpu_estimator.checkpoint.paths import TF_STYLE_PREFIX
from keras_tpu_estimator.checkpoint.paths import checkpoint_prefix
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
    "load_checkpoint",
    "model_values",
    "restore_model",
    "save_model",
    "TF_STYLE_PREFIX",
    "checkpoint_prefix",
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
