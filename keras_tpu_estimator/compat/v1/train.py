"""`tf.compat.v1.train`: optimizers, the global step, learning-rate schedules, EMA, warm start.

The optimizers keep TF1's update rules and variable names (`dense/kernel/Adam`,
`dense/kernel/Adam_1`, `beta1_power`, ...), so TF1 checkpoints, `get_slot`
and name filters keep working. They train by assignment: `minimize` and
`apply_gradients` assign new values inside the step (see
`keras_tpu_estimator.train_ops`), and their result is the spec's `train_op`.
A `train.Optimizer` subclass written as BERT, ALBERT or ELECTRA write theirs
(slots from `get_variable`, updates with `assign`) works the same way.

```python
def model_fn(features, labels, mode, params):
    ...
    global_step = tf1.train.get_or_create_global_step()
    learning_rate = tf1.train.exponential_decay(0.1, global_step, 1000, 0.96)
    optimizer = tf1.tpu.CrossShardOptimizer(tf1.train.MomentumOptimizer(learning_rate, 0.9))
    train_op = optimizer.minimize(loss, global_step=global_step)
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)
```

The global step advances by exactly one per training step, whether the
program increments it (`minimize(global_step=...)`,
`global_step.assign(global_step + 1)`) or not.

This module is the `tf1.train` namespace; each concept lives in a module of
its own: `_optimizers`, `_global_step`, `_learning_rate_decay`,
`_moving_averages`, `_checkpoint_utils` (warm start) and
`_checkpoint_management` (finding checkpoints), on `_train_variables` (the
variables optimizers and EMA create).
"""

# Everything `tf1.train` has exported, helpers included (`variables_lib`,
# `VariableView`, `assign`, `TrainOp`, `logger`, ...): the converter derives
# the TF1 names it supports from this namespace.

from keras_tpu_estimator.compat.v1 import variables as variables_lib  # noqa: F401
from keras_tpu_estimator.compat.v1._checkpoint_management import checkpoints_iterator  # noqa: F401
from keras_tpu_estimator.compat.v1._checkpoint_management import latest_checkpoint  # noqa: F401
from keras_tpu_estimator.compat.v1._checkpoint_management import wait_for_new_checkpoint  # noqa: F401
from keras_tpu_estimator.compat.v1._checkpoint_utils import Scaffold  # noqa: F401
from keras_tpu_estimator.compat.v1._checkpoint_utils import init_from_checkpoint  # noqa: F401
from keras_tpu_estimator.compat.v1._checkpoint_utils import list_variables  # noqa: F401
from keras_tpu_estimator.compat.v1._checkpoint_utils import load_variable  # noqa: F401
from keras_tpu_estimator.compat.v1._checkpoint_utils import logger  # noqa: F401
from keras_tpu_estimator.compat.v1._global_step import create_global_step  # noqa: F401
from keras_tpu_estimator.compat.v1._global_step import get_global_step  # noqa: F401
from keras_tpu_estimator.compat.v1._global_step import get_or_create_global_step  # noqa: F401
from keras_tpu_estimator.compat.v1._learning_rate_decay import cosine_decay  # noqa: F401
from keras_tpu_estimator.compat.v1._learning_rate_decay import exponential_decay  # noqa: F401
from keras_tpu_estimator.compat.v1._learning_rate_decay import inverse_time_decay  # noqa: F401
from keras_tpu_estimator.compat.v1._learning_rate_decay import piecewise_constant  # noqa: F401
from keras_tpu_estimator.compat.v1._learning_rate_decay import polynomial_decay  # noqa: F401
from keras_tpu_estimator.compat.v1._moving_averages import ExponentialMovingAverage  # noqa: F401
from keras_tpu_estimator.compat.v1._moving_averages import assign_moving_average  # noqa: F401
from keras_tpu_estimator.compat.v1._optimizers import AdagradOptimizer  # noqa: F401
from keras_tpu_estimator.compat.v1._optimizers import AdamOptimizer  # noqa: F401
from keras_tpu_estimator.compat.v1._optimizers import GradientDescentOptimizer  # noqa: F401
from keras_tpu_estimator.compat.v1._optimizers import MomentumOptimizer  # noqa: F401
from keras_tpu_estimator.compat.v1._optimizers import Optimizer  # noqa: F401
from keras_tpu_estimator.compat.v1._optimizers import RMSPropOptimizer  # noqa: F401
from keras_tpu_estimator.compat.v1._saver import Saver  # noqa: F401
from keras_tpu_estimator.compat.v1._variable_views import VariableView  # noqa: F401
from keras_tpu_estimator.compat.v1._variable_views import keras_variable  # noqa: F401
from keras_tpu_estimator.compat.v1.training_ops import assign  # noqa: F401
from keras_tpu_estimator.compat.v1.training_ops import assign_add  # noqa: F401
from keras_tpu_estimator.compat.v1.training_ops import gradients  # noqa: F401
from keras_tpu_estimator.model_fn.train_ops import TrainOp  # noqa: F401
# Adadelta and `train.experimental` (the mixed-precision rewrite) live in their own modules.
from keras_tpu_estimator.compat.v1 import _train_experimental as experimental  # noqa: E402,F401
from keras_tpu_estimator.compat.v1._optimizers_extra import AdadeltaOptimizer  # noqa: E402,F401
