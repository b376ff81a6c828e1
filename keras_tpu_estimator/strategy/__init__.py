"""`TPUStrategy`: `tf.contrib.distribute.TPUStrategy` on a JAX device mesh.

A tower (replica) is one device of a one-axis mesh `('batch',)`. The
strategy's `scope()` makes its `keras.distribution.DataParallel` the Keras
distribution, so variables created there are laid out on the mesh;
`call_for_each_tower(fn, ...)` runs `fn` once per tower as one SPMD program
(`jax.shard_map` over the `batch` axis), not as Python threads. Inside,
`get_tower_context()` gives the tower's id and `merge_call`, which gathers
the towers' values and runs a function on all of them ("cross-tower"),
handing its result back to every tower. `run_steps_on_dataset` runs many
steps as one compiled loop (`jax.lax.scan`), as `iterations_per_loop` does
for `TPUEstimator`.

Per-tower values are `PerReplica` objects: a global array whose axis 0 is
split over the towers. `reduce`, `unwrap` and friends read them.

```python
strategy = kte.TPUStrategy(steps_per_run=10)
with strategy.scope():
    dataset = strategy.distribute_dataset(lambda: tf.data.Dataset.range(64).batch(16))
    batch = next(iter(dataset))                      # 2 rows per tower on 8 devices
    sums = strategy.call_for_each_tower(lambda x: x.sum(), batch)
    total = strategy.reduce(kte.VariableAggregation.SUM, sums)
```

The package has one module per concept: `towers` (tower values and
contexts: `VariableAggregation`, `PerReplica`, `TowerContext`,
`get_tower_context`, `MultiStepContext`), `datasets` (`DistributedDataset`,
`DistributedIterator`) and `tpu_strategy` (`TPUStrategy`,
`current_strategy`).

Layering: may import `engine.loop` (its loop programs) and the shared modules;
never `model` or `estimator`.
"""

from keras_tpu_estimator.strategy.datasets import DistributedDataset
from keras_tpu_estimator.strategy.datasets import DistributedIterator
from keras_tpu_estimator.strategy.towers import MultiStepContext
from keras_tpu_estimator.strategy.towers import PerReplica
from keras_tpu_estimator.strategy.towers import TOWER_AXIS
from keras_tpu_estimator.strategy.towers import TowerContext
from keras_tpu_estimator.strategy.towers import VariableAggregation
from keras_tpu_estimator.strategy.towers import aggregation_name
from keras_tpu_estimator.strategy.towers import get_replica_context
from keras_tpu_estimator.strategy.towers import get_tower_context
from keras_tpu_estimator.strategy.towers import is_per_replica
from keras_tpu_estimator.strategy.towers import split_rows
from keras_tpu_estimator.strategy.towers import tower_context_scope
from keras_tpu_estimator.strategy.tpu_strategy import TPUStrategy
from keras_tpu_estimator.strategy.tpu_strategy import current_strategy

__all__ = [
    "DistributedDataset",
    "DistributedIterator",
    "MultiStepContext",
    "PerReplica",
    "TPUStrategy",
    "TowerContext",
    "VariableAggregation",
    "current_strategy",
    "get_replica_context",
    "get_tower_context",
]
