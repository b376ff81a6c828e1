"""`tf.contrib.layers` pooling: `max_pool2d`, `avg_pool2d`.

TF1's defaults: `stride=2`, `padding='VALID'`, 'NHWC'; with 'SAME' the
average leaves the padding out, as TF1's.

```python
with slim.arg_scope([slim.max_pool2d, slim.avg_pool2d], stride=1, padding="SAME"):
    branch_3 = slim.avg_pool2d(net, [3, 3], scope="AvgPool_0a_3x3")
```
"""

from keras import ops

from keras_tpu_estimator.compat.v1.contrib._arg_scope import add_arg_scope
from keras_tpu_estimator.compat.v1.contrib.layers import _common


def _pool(function, keras_op, inputs, kernel_size, stride, padding, data_format,
          outputs_collections):
    format_ = _common.image_data_format(data_format, function)
    padding = _common.padding_argument(padding, function)
    inputs = _common.as_tensor(inputs)
    if len(inputs.shape) != 4:
        raise ValueError(f"{function} takes 4D inputs; received shape {tuple(inputs.shape)}")
    pool = _common.sizes(kernel_size, 2, "kernel_size", function)
    strides = _common.sizes(stride, 2, "stride", function)
    outputs = keras_op(inputs, pool, strides, padding, format_)
    return _common.collect_outputs(outputs_collections, outputs)


@add_arg_scope
def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format=_common.NHWC,
               outputs_collections=None, scope=None):
    """2D max pooling, as `tf.contrib.layers.max_pool2d`.

    Args:
        inputs: a 4D tensor ('NHWC' or 'NCHW').
        kernel_size: an int or `[kh, kw]`.
        stride: an int or `[sh, sw]`.
        padding: 'VALID' or 'SAME'.
        data_format: 'NHWC' or 'NCHW'.
        outputs_collections: collections the output joins.
        scope: ignored (TF1 named operations with it, never variables).

    Returns:
        The pooled tensor.

    Raises:
        ValueError: for an invalid `data_format`, `padding` or size, or
            inputs that are not 4D.
    """
    return _pool("max_pool2d", ops.max_pool, inputs, kernel_size, stride, padding, data_format,
                 outputs_collections)


@add_arg_scope
def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format=_common.NHWC,
               outputs_collections=None, scope=None):
    """2D average pooling (padding left out of the average), as `tf.contrib.layers.avg_pool2d`.

    Arguments, result and errors as `max_pool2d`.
    """
    return _pool("avg_pool2d", ops.average_pool, inputs, kernel_size, stride, padding,
                 data_format, outputs_collections)
