"""`tf.contrib` pieces that TPU `model_fn`s use: `contrib.layers`.

`tf.contrib.tpu` and `tf.contrib.summary` map to `tf1.tpu` / `tf1.summary`
and the `kte` estimator classes.
"""

from keras_tpu_estimator.compat.v1.contrib import layers
from keras_tpu_estimator.compat.v1.contrib import summary

__all__ = ["layers", "summary"]
