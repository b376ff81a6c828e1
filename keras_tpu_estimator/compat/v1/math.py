"""`tf.math`: the same operations as the `tf1` top level, under TF's newer path.

```python
x = tf1.math.rsqrt(tf1.math.reduce_mean(tf1.math.square(x), axis=-1, keepdims=True))
```
"""

from keras_tpu_estimator.compat.v1.nn import l2_normalize  # noqa: F401
from keras_tpu_estimator.compat.v1.nn import softmax  # noqa: F401
from keras_tpu_estimator.compat.v1.nn import softplus  # noqa: F401
from keras_tpu_estimator.compat.v1.nn import top_k  # noqa: F401
from keras_tpu_estimator.compat.v1.nn import log_softmax  # noqa: F401
from keras_tpu_estimator.compat.v1.nn import in_top_k  # noqa: F401
from keras_tpu_estimator.compat.v1.ops import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1.math_ops import *  # noqa: F401,F403
from keras_tpu_estimator.compat.v1.segment_ops import *  # noqa: F401,F403

# Keep last: on TensorFlow tensors (input_fn), TensorFlow's own functions run (see `_sides`).
from keras_tpu_estimator.compat.v1._sides import run_where_called as _run_where_called  # noqa: E402,E501

_run_where_called(globals())
