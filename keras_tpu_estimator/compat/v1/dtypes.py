"""TF1's `tf.dtypes`: `DType`, `as_dtype` and the dtype constants.

The types live with what `model_fn` receives (`model_fn.dtypes`), whose
tensors' `.dtype` is a `DType`; this is their public TF1 namespace.

```python
tf1.cast(mask, tf1.float32)
if logits.dtype == tf1.bfloat16: ...
```
"""

from keras_tpu_estimator.model_fn.dtypes import DType  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import as_dtype  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import bfloat16  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import bool  # noqa: F401,A004
from keras_tpu_estimator.model_fn.dtypes import complex64  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import complex128  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import double  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import float16  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import float32  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import float64  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import half  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import int8  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import int16  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import int32  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import int64  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import string  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import uint8  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import uint16  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import uint32  # noqa: F401
from keras_tpu_estimator.model_fn.dtypes import uint64  # noqa: F401
