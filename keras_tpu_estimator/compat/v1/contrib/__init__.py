"""`tf.contrib`, as far as TPU programs use it inside and around `model_fn`.

`layers` and `slim` (the layer functions, `arg_scope`, `slim.nets.inception`,
slim's example decoder), `framework` (slim's variables, warm starts from
checkpoints), `rnn` (TF1's cells), `metrics` (streaming Pearson's r, concat),
`summary` (TF1's summary writers), `image` (projective transforms), `opt`
(LARS), `estimator` (gradient clipping), `stateless` (seeded random numbers)
and `training` (`HParams`, checkpoint iterators).

`tf.contrib.tpu` maps to `tf1.tpu` and the `kte` estimator classes.
"""

from keras_tpu_estimator.compat.v1.contrib import estimator
from keras_tpu_estimator.compat.v1.contrib import framework
from keras_tpu_estimator.compat.v1.contrib import image
from keras_tpu_estimator.compat.v1.contrib import layers
from keras_tpu_estimator.compat.v1.contrib import metrics
from keras_tpu_estimator.compat.v1.contrib import opt
from keras_tpu_estimator.compat.v1.contrib import rnn
from keras_tpu_estimator.compat.v1.contrib import slim
from keras_tpu_estimator.compat.v1.contrib import stateless
from keras_tpu_estimator.compat.v1.contrib import summary
from keras_tpu_estimator.compat.v1.contrib import training

__all__ = ["estimator", "framework", "image", "layers", "metrics", "opt", "rnn", "slim",
           "stateless", "summary", "training"]
