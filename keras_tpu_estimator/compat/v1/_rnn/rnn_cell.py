"""`tf.nn.rnn_cell`: TF1's recurrent cells, with TF1's variable names.

```python
cell = tf1.nn.rnn_cell.MultiRNNCell(
    [tf1.nn.rnn_cell.BasicLSTMCell(256) for _ in range(2)])
outputs, state = tf1.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf1.float32)
# rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel, .../cell_1/basic_lstm_cell/bias, ...
```

See `keras_tpu_estimator.compat.v1._rnn` for how cells, wrappers and loops
are built.
"""

from keras_tpu_estimator.compat.v1._rnn.cell_base import LSTMStateTuple  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.cell_base import RNNCell  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.cells import BasicLSTMCell  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.cells import BasicRNNCell  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.cells import GRUCell  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.cells import LSTMCell  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.wrappers import DeviceWrapper  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.wrappers import DropoutWrapper  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.wrappers import MultiRNNCell  # noqa: F401
from keras_tpu_estimator.compat.v1._rnn.wrappers import ResidualWrapper  # noqa: F401

__all__ = ["BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell",
           "LSTMCell", "LSTMStateTuple", "MultiRNNCell", "RNNCell", "ResidualWrapper"]
