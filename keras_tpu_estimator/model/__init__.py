"""`EstimatorModel`, the Keras face of a `model_fn`: compile, fit, evaluate, predict.

Holds `estimator_model` (the `keras.Model`, its parts and building),
`trainer` (`fit`/`evaluate`/`predict` as one chunk loop), `batches` (the
one-batch calls), `saving` (`.keras` files) and `summary`. May import `inputs`
(to read input), `engine` (to run it), `model_fn.call`, `distribute`,
`strategy`, `summary`, `hooks.fetches`, `spec`, `config` and, in `export()`
only, `export`; never `estimator` or `checkpoint` (no `model_dir` files).
"""

from keras_tpu_estimator.model.estimator_model import EstimatorModel

__all__ = ["EstimatorModel"]
