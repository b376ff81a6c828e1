"""Run configuration: `TPUConfig`, `RunConfig` and `InputPipelineConfig`.

These are the configuration objects of `tf.estimator.tpu`, with the same
argument names, defaults and error messages, so legacy programs construct
them unchanged:

```python
config = kte.RunConfig(
    model_dir="~/models/mnist",
    save_checkpoints_steps=1000,
    tpu_config=kte.TPUConfig(iterations_per_loop=100, num_cores_per_replica=2),
)
```

Both are immutable and validated when they are built: a bad value fails at
the line that wrote it, naming the argument and the value. `TPUConfig` is a
namedtuple (use `_replace`), `RunConfig` has read-only properties (use
`replace`). Arguments that only meant something to a TensorFlow session or
cluster (`session_config`, `device_fn`, `master`, ...) are accepted and kept,
and change nothing. This package only describes a run; it does no JAX work.

Modules, one concept each:

- `input_pipeline`: `InputPipelineConfig`, how `input_fn` is deployed.
- `iterations`: `IterationsPerLoop` and `parse_iterations_per_loop`.
- `tpu_config`: `TPUConfig`.
- `run_config`: `RunConfig`.
- `checks`: the argument checks they share.

Layering: imports no other part of the library; every layer may import it.
"""

from keras_tpu_estimator.config.input_pipeline import InputPipelineConfig
from keras_tpu_estimator.config.input_pipeline import PIPELINE_NAMES
from keras_tpu_estimator.config.iterations import IterationsPerLoop
from keras_tpu_estimator.config.iterations import parse_iterations_per_loop
from keras_tpu_estimator.config.run_config import RunConfig
from keras_tpu_estimator.config.tpu_config import TPUConfig

__all__ = [
    "PIPELINE_NAMES",
    "InputPipelineConfig",
    "IterationsPerLoop",
    "RunConfig",
    "TPUConfig",
    "parse_iterations_per_loop",
]
