"""The input side: what the user gives `fit`/`evaluate`/`predict`, read as batches.

Holds `reader` (`InputReader`: the input's source), `deployment` (`TPUContext`,
how often `input_fn` runs), `input_fn` (calling it, reading its result),
`graph` (TF1 input tensors run per batch), `checks`, `sources` (arrays and
batches as chunks), `grouped`, `tf_data`, `host_gather` and `transforms`.
May import `spec`, `config` and `distribute`; never `engine`, `model_fn`,
`model` or `estimator`.
"""

from keras_tpu_estimator.inputs.reader import InputReader
from keras_tpu_estimator.inputs.reader import steps_of

__all__ = ["InputReader", "steps_of"]
