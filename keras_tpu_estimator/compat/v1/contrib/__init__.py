"""`tf.contrib` pieces that TPU `model_fn`s use: `contrib.layers`,
`contrib.metrics` (streaming Pearson's r, concat) for `metric_fn`s, and
`contrib.summary` for host calls.

`tf.contrib.tpu` maps to `tf1.tpu` and the `kte` estimator classes.
"""

from keras_tpu_estimator.compat.v1.contrib import estimator  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib import framework
from keras_tpu_estimator.compat.v1.contrib import image
from keras_tpu_estimator.compat.v1.contrib import layers
from keras_tpu_estimator.compat.v1.contrib import metrics
from keras_tpu_estimator.compat.v1.contrib import opt  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib import rnn  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib import slim
from keras_tpu_estimator.compat.v1.contrib import stateless  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib import summary
from keras_tpu_estimator.compat.v1.contrib import training

__all__ = ["framework", "layers", "metrics", "slim", "summary", "training"]
