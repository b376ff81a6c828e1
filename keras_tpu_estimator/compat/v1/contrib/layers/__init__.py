"""`tf.contrib.layers`: layer functions with TF1's variable names, regularizers, initializers.

```python
net = tf1.contrib.layers.layer_norm(x, begin_norm_axis=-1, begin_params_axis=-1)
reg = tf1.contrib.layers.l2_regularizer(1e-4)
```
"""

from keras_tpu_estimator.compat.v1.contrib.layers._initializers import variance_scaling_initializer
from keras_tpu_estimator.compat.v1.contrib.layers._initializers import xavier_initializer
from keras_tpu_estimator.compat.v1.contrib.layers._initializers import xavier_initializer_conv2d
from keras_tpu_estimator.compat.v1.contrib.layers._normalization import layer_norm
from keras_tpu_estimator.compat.v1.contrib.layers._regularizers import apply_regularization
from keras_tpu_estimator.compat.v1.contrib.layers._regularizers import l1_l2_regularizer
from keras_tpu_estimator.compat.v1.contrib.layers._regularizers import l1_regularizer
from keras_tpu_estimator.compat.v1.contrib.layers._regularizers import l2_regularizer
from keras_tpu_estimator.compat.v1.contrib.layers._regularizers import sum_regularizer
