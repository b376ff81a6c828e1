"""TensorFlow-compatible APIs for porting TPUEstimator programs.

`keras_tpu_estimator.compat.v1` mirrors the parts of `tf.compat.v1` that
`model_fn`s call, on `keras.ops` and the library's variable store:

```python
import keras_tpu_estimator.compat.v1 as tf1

def model_fn(features, labels, mode, params):
    logits = tf1.layers.dense(features["x"], 10)   # variables dense/kernel, dense/bias
    ...
```

Layering: may import `model_fn` (store, train ops, the build pass),
`inputs.transforms`, `checkpoint`, `hooks`, `metrics`, `summary` and the shared
modules; never `engine`, `model` or `estimator`.
"""

from keras_tpu_estimator.compat import v1

__all__ = ["v1"]
