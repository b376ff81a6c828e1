"""`tf.distribute`, as far as TPUEstimator programs use it: `cluster_resolver`.

`cluster_resolver.TPUClusterResolver` answers as a local run does (no master,
an empty cluster, this machine's accelerators); JAX finds the devices.
"""

from keras_tpu_estimator.compat.v1.distribute import cluster_resolver

__all__ = ["cluster_resolver"]
