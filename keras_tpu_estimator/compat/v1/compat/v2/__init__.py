"""`tf.compat.v2` in a TF1 program: its `summary` module, which works in `model_fn`.

Layering: as `compat.v1` (may import `summary` and `compat.v1`'s own modules).
"""

from keras_tpu_estimator.compat.v1.compat.v2 import summary  # noqa: F401

__all__ = ["summary"]
