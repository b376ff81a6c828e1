"""`tf.contrib.layers`: layer functions with TF1's variable names, regularizers, initializers.

The layer functions (`conv2d`, `separable_conv2d`, `conv2d_transpose`,
`fully_connected`, `batch_norm`, `layer_norm`, `max_pool2d`, `avg_pool2d`,
`dropout`, `flatten`, `repeat`, `stack`, ...) create TF1's variables
(`Conv/weights`, `BatchNorm/moving_mean`, ...) through `tf1.get_variable`,
so TF1 and slim checkpoints load by name, and take their defaults from
`tf1.contrib.framework.arg_scope` (`slim.arg_scope`). `summaries`
(`summarize_activation`, ...) writes TF1's summaries of activations.

```python
net = tf1.contrib.layers.conv2d(images, 32, [3, 3], scope="conv1")
net = tf1.contrib.layers.layer_norm(x, begin_norm_axis=-1, begin_params_axis=-1)
reg = tf1.contrib.layers.l2_regularizer(1e-4)
```
"""

from keras_tpu_estimator.compat.v1.contrib.layers._convolutional import conv1d
from keras_tpu_estimator.compat.v1.contrib.layers._convolutional import conv2d
from keras_tpu_estimator.compat.v1.contrib.layers._convolutional import conv2d_transpose
from keras_tpu_estimator.compat.v1.contrib.layers._convolutional import conv3d
from keras_tpu_estimator.compat.v1.contrib.layers._convolutional import convolution
from keras_tpu_estimator.compat.v1.contrib.layers._convolutional import convolution1d
from keras_tpu_estimator.compat.v1.contrib.layers._convolutional import convolution2d
from keras_tpu_estimator.compat.v1.contrib.layers._convolutional import convolution2d_transpose
from keras_tpu_estimator.compat.v1.contrib.layers._convolutional import convolution3d
from keras_tpu_estimator.compat.v1.contrib.layers._convolutional import separable_conv2d
from keras_tpu_estimator.compat.v1.contrib.layers._convolutional import separable_convolution2d
from keras_tpu_estimator.compat.v1.contrib.layers._core import bias_add
from keras_tpu_estimator.compat.v1.contrib.layers._core import dropout
from keras_tpu_estimator.compat.v1.contrib.layers._core import flatten
from keras_tpu_estimator.compat.v1.contrib.layers._core import fully_connected
from keras_tpu_estimator.compat.v1.contrib.layers._core import linear
from keras_tpu_estimator.compat.v1.contrib.layers._core import one_hot_encoding
from keras_tpu_estimator.compat.v1.contrib.layers._core import relu
from keras_tpu_estimator.compat.v1.contrib.layers._core import relu6
from keras_tpu_estimator.compat.v1.contrib.layers._core import repeat
from keras_tpu_estimator.compat.v1.contrib.layers._core import softmax
from keras_tpu_estimator.compat.v1.contrib.layers._core import stack
from keras_tpu_estimator.compat.v1.contrib.layers._core import unit_norm
from keras_tpu_estimator.compat.v1.contrib.layers._initializers import variance_scaling_initializer
from keras_tpu_estimator.compat.v1.contrib.layers._initializers import xavier_initializer
from keras_tpu_estimator.compat.v1.contrib.layers._initializers import xavier_initializer_conv2d
from keras_tpu_estimator.compat.v1.contrib.layers._normalization import batch_norm
from keras_tpu_estimator.compat.v1.contrib.layers._layer_norm import layer_norm
from keras_tpu_estimator.compat.v1.contrib.layers._pooling import avg_pool2d
from keras_tpu_estimator.compat.v1.contrib.layers._pooling import max_pool2d
from keras_tpu_estimator.compat.v1.contrib.layers._regularizers import apply_regularization
from keras_tpu_estimator.compat.v1.contrib.layers._regularizers import l1_l2_regularizer
from keras_tpu_estimator.compat.v1.contrib.layers._regularizers import l1_regularizer
from keras_tpu_estimator.compat.v1.contrib.layers._regularizers import l2_regularizer
from keras_tpu_estimator.compat.v1.contrib.layers._regularizers import sum_regularizer
from keras_tpu_estimator.compat.v1.contrib.layers import summaries
from keras_tpu_estimator.compat.v1.contrib.layers.summaries import summarize_activation
from keras_tpu_estimator.compat.v1.contrib.layers.summaries import summarize_activations
from keras_tpu_estimator.compat.v1.contrib.layers.summaries import summarize_biases
from keras_tpu_estimator.compat.v1.contrib.layers.summaries import summarize_collection
from keras_tpu_estimator.compat.v1.contrib.layers.summaries import summarize_tensor
from keras_tpu_estimator.compat.v1.contrib.layers.summaries import summarize_tensors
from keras_tpu_estimator.compat.v1.contrib.layers.summaries import summarize_variables
from keras_tpu_estimator.compat.v1.contrib.layers.summaries import summarize_weights
