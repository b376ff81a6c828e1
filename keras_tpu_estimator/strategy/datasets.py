"""Distributed datasets: batches whose arrays are split over the towers.

`TPUStrategy.distribute_dataset` wraps a dataset in a `DistributedDataset`;
its `DistributedIterator` gives each batch with every array a `PerReplica`
of rows (`get_next()`), or as host arrays for `run_steps_on_dataset`
(`next_host_batch()`).

```python
dataset = strategy.distribute_dataset(lambda: tf.data.Dataset.range(64).batch(16))
iterator = dataset.make_one_shot_iterator()
batch = iterator.get_next()          # a PerReplica, 2 rows per tower on 8 devices
```
"""

import jax
import numpy as np

from keras_tpu_estimator.strategy.towers import split_rows


class DistributedDataset:
    """Batches of a dataset, each array split over the towers (`PerReplica`).

    Args:
        strategy: the `TPUStrategy` whose towers get the rows.
        dataset: a `tf.data.Dataset` or any iterable of batches whose batch
            size divides by the number of towers.

    Example:

    ```python
    for batch in strategy.distribute_dataset(dataset_fn):
        strategy.call_for_each_tower(step_fn, batch)
    ```
    """

    def __init__(self, strategy, dataset):
        self._strategy = strategy
        self._dataset = dataset

    def __iter__(self):
        return self.make_one_shot_iterator()

    def make_one_shot_iterator(self):
        """An iterator whose `get_next()` returns the next distributed batch.

        Returns:
            A `DistributedIterator`.
        """
        dataset = self._dataset
        if hasattr(dataset, "as_numpy_iterator"):
            return DistributedIterator(self._strategy, dataset.as_numpy_iterator())
        return DistributedIterator(self._strategy, iter(dataset))

    make_initializable_iterator = make_one_shot_iterator


class DistributedIterator:
    """Iterates a `DistributedDataset`; `get_next()` as in TF1.

    Args:
        strategy: the `TPUStrategy` whose towers get the rows.
        iterator: an iterator of host batches.

    Example:

    ```python
    iterator = strategy.distribute_dataset(dataset_fn).make_one_shot_iterator()
    batch = iterator.get_next()
    ```
    """

    def __init__(self, strategy, iterator):
        self._strategy = strategy
        self._iterator = iterator

    def next_host_batch(self):
        """The next batch as host arrays, or None at the end.

        Returns:
            The batch's structure with numpy arrays, or None.
        """
        batch = next(self._iterator, None)
        return None if batch is None else jax.tree.map(np.asarray, batch)

    def get_next(self):
        """The next batch, its arrays `PerReplica` values of rows.

        Returns:
            The batch's structure with a `PerReplica` for every array.

        Raises:
            StopIteration: at the end of the input.
            ValueError: for a batch whose rows do not split over the towers.
        """
        batch = self.next_host_batch()
        if batch is None:
            raise StopIteration
        mesh = self._strategy.distribution.device_mesh.backend_mesh
        return jax.tree.map(lambda array: split_rows(array, mesh), batch)

    def __iter__(self):
        return self

    __next__ = get_next
