"""`tf.linalg`: the matrix operations of the `tf1` top level, under TF's `linalg` names.

`diag`, `diag_part` and `set_diag` are `tf1.matrix_diag`, `matrix_diag_part`
and `matrix_set_diag` (batched matrices, bands of diagonals);
`tensor_diag` and `tensor_diag_part` are TF1's `tf.diag` and `tf.diag_part`.

```python
mask = tf1.linalg.band_part(tf1.ones([n, n]), -1, 0)      # lower triangle
scores = tf1.linalg.set_diag(scores, tf1.zeros([batch, n]))
```
"""

from keras_tpu_estimator.compat.v1.array_ops import eye  # noqa: F401
from keras_tpu_estimator.compat.v1.array_ops import matrix_band_part as band_part  # noqa: F401
from keras_tpu_estimator.compat.v1.array_ops import matrix_transpose  # noqa: F401
from keras_tpu_estimator.compat.v1.array_ops import matrix_transpose as transpose  # noqa: F401
from keras_tpu_estimator.compat.v1.linalg_ops import diag as tensor_diag  # noqa: F401
from keras_tpu_estimator.compat.v1.linalg_ops import diag_part as tensor_diag_part  # noqa: F401
from keras_tpu_estimator.compat.v1.linalg_ops import matrix_diag as diag  # noqa: F401
from keras_tpu_estimator.compat.v1.linalg_ops import matrix_diag_part as diag_part  # noqa: F401
from keras_tpu_estimator.compat.v1.linalg_ops import matrix_set_diag as set_diag  # noqa: F401
from keras_tpu_estimator.compat.v1.math_ops import norm  # noqa: F401
from keras_tpu_estimator.compat.v1.math_ops import tensordot  # noqa: F401
from keras_tpu_estimator.compat.v1.nn import l2_normalize  # noqa: F401
from keras_tpu_estimator.compat.v1.ops import einsum  # noqa: F401
from keras_tpu_estimator.compat.v1.ops import matmul  # noqa: F401

# Keep last: on TensorFlow tensors (input_fn), TensorFlow's own functions run (see `_sides`).
from keras_tpu_estimator.compat.v1._sides import run_where_called as _run_where_called  # noqa: E402,E501

_run_where_called(globals())
