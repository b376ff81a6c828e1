"""`keras_tpu_estimator.compat.v1`: the `tf.compat.v1` that `model_fn`s use.

A TF1-shaped API on `keras.ops` and the library's variable store, for
porting TPUEstimator programs without rewriting their models: import it as
`tf1` and keep `import tensorflow as tf` for the `tf.data` input pipeline.

```python
import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1

def model_fn(features, labels, mode, params):
    training = mode == tf1.estimator.ModeKeys.TRAIN
    with tf1.variable_scope("cnn"):
        x = tf1.layers.conv2d(features["image"], 32, 3, activation=tf1.nn.relu)
        x = tf1.layers.max_pooling2d(x, 2, 2)
        x = tf1.layers.dropout(tf1.layers.flatten(x), 0.4, training=training)
        logits = tf1.layers.dense(x, 10)            # cnn/dense/kernel
    loss = tf1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    ...
```

Top level: tensor operations (`ops`, `array_ops`, `math_ops`), assertions
(`check_ops`), `cond`/`while_loop` (`control_flow`), random tensors
(`random_ops`), dtypes, initializers, variable scopes and `get_variable`
(`variables`), collections and `control_dependencies` (`graph`). Submodules
follow TF1's paths: `layers`, `nn`, `losses`, `metrics`, `estimator`,
`summary`, `logging`, `train`, `tpu`, `initializers`, `math`, `random`,
`feature_column`, `contrib.layers`. Everything runs inside `model_fn` (traced
by JAX); there is no TensorFlow graph underneath (feature columns also look
up and hash strings on the host, in the input pipeline).

Layering: may import `model_fn` (store, train ops, the build pass),
`inputs.transforms`, `checkpoint`, `hooks`, `metrics`, `summary` and the shared
modules; never `engine`, `model` or `estimator`.
"""

from keras_tpu_estimator.compat.v1 import compat  # noqa: F401
from keras_tpu_estimator.compat.v1 import contrib  # noqa: F401
from keras_tpu_estimator.compat.v1 import distribute  # noqa: F401
from keras_tpu_estimator.compat.v1 import estimator  # noqa: F401
from keras_tpu_estimator.compat.v1 import feature_column  # noqa: F401
from keras_tpu_estimator.compat.v1 import image  # noqa: F401
from keras_tpu_estimator.compat.v1 import initializers  # noqa: F401
from keras_tpu_estimator.compat.v1 import layers  # noqa: F401
from keras_tpu_estimator.compat.v1 import linalg  # noqa: F401
from keras_tpu_estimator.compat.v1 import logging  # noqa: F401
from keras_tpu_estimator.compat.v1 import losses  # noqa: F401
from keras_tpu_estimator.compat.v1 import math  # noqa: F401
from keras_tpu_estimator.compat.v1 import metrics  # noqa: F401
from keras_tpu_estimator.compat.v1 import nn  # noqa: F401
from keras_tpu_estimator.compat.v1 import random  # noqa: F401
from keras_tpu_estimator.compat.v1 import summary  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import DType  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import as_dtype  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import bfloat16  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import bool  # noqa: F401,A004
from keras_tpu_estimator.compat.v1.dtypes import complex64  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import complex128  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import double  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import float16  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import float32  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import float64  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import half  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import int8  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import int16  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import int32  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import int64  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import string  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import uint8  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import uint16  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import uint32  # noqa: F401
from keras_tpu_estimator.compat.v1.dtypes import uint64  # noqa: F401
from keras_tpu_estimator.compat.v1.graph import GraphKeys  # noqa: F401
from keras_tpu_estimator.compat.v1.graph import add_to_collection  # noqa: F401
from keras_tpu_estimator.compat.v1.graph import add_to_collections  # noqa: F401
from keras_tpu_estimator.compat.v1.graph import control_dependencies  # noqa: F401
from keras_tpu_estimator.compat.v1.graph import get_default_graph  # noqa: F401
from keras_tpu_estimator.compat.v1.graph import local_variables  # noqa: F401
from keras_tpu_estimator.compat.v1.graph import moving_average_variables  # noqa: F401
from keras_tpu_estimator.compat.v1.graph import get_collection  # noqa: F401
from keras_tpu_estimator.compat.v1.graph import get_collection_ref  # noqa: F401
from keras_tpu_estimator.compat.v1.graph import name_scope  # noqa: F401
from keras_tpu_estimator.compat.v1.initializers import constant_initializer  # noqa: F401
from keras_tpu_estimator.compat.v1.initializers import glorot_normal_initializer  # noqa: F401
from keras_tpu_estimator.compat.v1.initializers import glorot_uniform_initializer  # noqa: F401
from keras_tpu_estimator.compat.v1.initializers import ones_initializer  # noqa: F401
from keras_tpu_estimator.compat.v1.initializers import orthogonal_initializer  # noqa: F401
from keras_tpu_estimator.compat.v1.initializers import random_normal_initializer  # noqa: F401
from keras_tpu_estimator.compat.v1.initializers import random_uniform_initializer  # noqa: F401
from keras_tpu_estimator.compat.v1.initializers import truncated_normal_initializer  # noqa: F401
from keras_tpu_estimator.compat.v1.initializers import uniform_unit_scaling_initializer  # noqa: F401,E501
from keras_tpu_estimator.compat.v1.initializers import variance_scaling_initializer  # noqa: F401
from keras_tpu_estimator.compat.v1.initializers import zeros_initializer  # noqa: F401
from keras_tpu_estimator.compat.v1.ops import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1.array_ops import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1.check_ops import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1.control_flow import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1.math_ops import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1.random_ops import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1.scatter_ops import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1.segment_ops import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1.space_ops import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1.linalg_ops import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1.image import random_crop  # noqa: F401
from keras_tpu_estimator.compat.v1._script_ops import numpy_function  # noqa: F401
from keras_tpu_estimator.compat.v1._script_ops import py_func  # noqa: F401
from keras_tpu_estimator.compat.v1._script_ops import py_function  # noqa: F401
from keras_tpu_estimator.compat.v1._tensor import newaxis  # noqa: F401
from keras_tpu_estimator.compat.v1.variables import AUTO_REUSE  # noqa: F401
from keras_tpu_estimator.compat.v1.variables import Variable  # noqa: F401
from keras_tpu_estimator.compat.v1.variables import VariableV1  # noqa: F401
from keras_tpu_estimator.compat.v1.variables import VariableScope  # noqa: F401
from keras_tpu_estimator.compat.v1.variables import all_variables  # noqa: F401
from keras_tpu_estimator.compat.v1.variables import get_variable  # noqa: F401
from keras_tpu_estimator.compat.v1.variables import get_variable_scope  # noqa: F401
from keras_tpu_estimator.compat.v1.variables import global_variables  # noqa: F401
from keras_tpu_estimator.compat.v1.variables import model_variables  # noqa: F401
from keras_tpu_estimator.compat.v1.variables import trainable_variables  # noqa: F401
from keras_tpu_estimator.compat.v1.variables import variable_scope  # noqa: F401

# Training: optimizers, gradients, TPU wrappers.
from keras_tpu_estimator.compat.v1 import train  # noqa: F401,E402
from keras_tpu_estimator.compat.v1 import tpu  # noqa: F401,E402
from keras_tpu_estimator.compat.v1.training_ops import assign  # noqa: F401,E402
from keras_tpu_estimator.compat.v1.training_ops import assign_add  # noqa: F401,E402
from keras_tpu_estimator.compat.v1.training_ops import assign_sub  # noqa: F401,E402
from keras_tpu_estimator.compat.v1.training_ops import clip_by_global_norm  # noqa: F401,E402
from keras_tpu_estimator.compat.v1.training_ops import clip_by_norm  # noqa: F401,E402
from keras_tpu_estimator.compat.v1.training_ops import global_norm  # noqa: F401,E402
from keras_tpu_estimator.compat.v1.training_ops import gradients  # noqa: F401,E402
from keras_tpu_estimator.compat.v1.training_ops import group  # noqa: F401,E402
from keras_tpu_estimator.compat.v1.training_ops import no_op  # noqa: F401,E402
from keras_tpu_estimator.compat.v1.state_ops import *  # noqa: F401,F403,E402
from keras_tpu_estimator.compat.v1.print_ops import *  # noqa: F401,F403,E402,A004

# Keep last: every function of the namespace runs TensorFlow's own where it is
# called on TensorFlow tensors (a `Dataset.map` function), see `_sides`.
from keras_tpu_estimator.compat.v1._sides import run_where_called as _run_where_called  # noqa: E402,E501

_run_where_called(globals())
