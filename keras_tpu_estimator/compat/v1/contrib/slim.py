"""`tf.contrib.slim`: the `contrib.layers` functions, `arg_scope`, and the model variables.

As TF1's `slim` namespace, this module re-exports every public name of
`tf1.contrib.layers` (`conv2d`, `separable_conv2d`, `fully_connected`,
`batch_norm`, `max_pool2d`, `dropout`, `l2_regularizer`, ...), the arg
scopes (`arg_scope`, `add_arg_scope`, ...) and `tf1.contrib.framework`'s
variable functions (`model_variable`, `get_variables_to_restore`,
`assign_from_checkpoint_fn`, ...), and slim's host-side data description
(`slim.tfexample_decoder`, `slim.dataset`, `slim.parallel_reader.get_data_files`)
for `input_fn`. Variables get slim's names
(`Conv/weights`, `Conv/BatchNorm/moving_mean`), so slim checkpoints load.

```python
slim = tf1.contrib.slim

def model_fn(features, labels, mode, params):
    training = mode == tf1.estimator.ModeKeys.TRAIN
    with slim.arg_scope([slim.conv2d], normalizer_fn=slim.batch_norm,
                        normalizer_params={"is_training": training, "scale": True}):
        net = slim.conv2d(features["image"], 32, [3, 3], scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
    logits = slim.fully_connected(slim.flatten(net), 10, activation_fn=None, scope="logits")
```
"""

import types as _types

from keras_tpu_estimator.compat.v1.contrib import _slim_dataset as dataset  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib import _slim_parallel_reader as parallel_reader  # noqa: F401,E501
from keras_tpu_estimator.compat.v1.contrib import _tfexample_decoder as tfexample_decoder  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib import slim_nets as nets  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib import framework as _framework
from keras_tpu_estimator.compat.v1.contrib import layers as _layers
from keras_tpu_estimator.compat.v1.contrib._arg_scope import add_arg_scope  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib._arg_scope import arg_scope  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib._arg_scope import arg_scope_func_key  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib._arg_scope import arg_scoped_arguments  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib._arg_scope import current_arg_scope  # noqa: F401
from keras_tpu_estimator.compat.v1.contrib._arg_scope import has_arg_scope  # noqa: F401


def _reexport(module):
    """Makes `module`'s public functions and classes names of this module too."""
    for name in dir(module):
        value = getattr(module, name)
        if not name.startswith("_") and not isinstance(value, _types.ModuleType):
            globals().setdefault(name, value)


_reexport(_layers)  # first: the layer functions win any name both modules have
_reexport(_framework)
