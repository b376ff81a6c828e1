"""`tf.contrib.rnn`: TF1's cells and unrolled loops under their contrib names.

The cells are `tf1.nn.rnn_cell`'s; `LSTMBlockCell` is `LSTMCell`'s math
under the block cell's arguments and default name `lstm_cell`.

```python
from keras_tpu_estimator.compat.v1.contrib import rnn as contrib_rnn

cell = contrib_rnn.DropoutWrapper(contrib_rnn.BasicLSTMCell(512), output_keep_prob=0.7)
```
"""

from keras_tpu_estimator.compat.v1._rnn.cell_base import LSTMStateTuple  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.cell_base import RNNCell  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.cells import BasicLSTMCell  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.cells import BasicRNNCell  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.cells import GRUCell  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.cells import LSTMBlockCell  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.cells import LSTMCell  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.loops import static_bidirectional_rnn  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.loops import stack_bidirectional_dynamic_rnn  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.loops import static_rnn  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.wrappers import DeviceWrapper  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.wrappers import DropoutWrapper  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.wrappers import MultiRNNCell  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.wrappers import ResidualWrapper  # noqa: F401

__all__ = ["BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell",
           "LSTMBlockCell", "LSTMCell", "LSTMStateTuple", "MultiRNNCell", "RNNCell",
           "ResidualWrapper", "stack_bidirectional_dynamic_rnn", "static_bidirectional_rnn",
           "static_rnn"]
