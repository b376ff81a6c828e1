"""`tf.compat.v1.tpu`: `CrossShardOptimizer` and `cross_replica_sum`, as no-ops of the global view.

On a TPU, TF1 ran one copy of `model_fn` per core (shard), each on its part
of the batch, so the program had to combine the shards itself:
`CrossShardOptimizer` summed the gradients of all shards (with the loss
divided by the number of shards, for a mean), and `cross_replica_sum` added
a tensor over the shards.

Here `model_fn` runs once, in the global SPMD view: its tensors hold the
whole global batch, and the compiler inserts the cross-device reductions.
A loss averaged over the batch is already the mean over all shards, its
gradient already the global-mean gradient, and a sum over the batch already
a sum over all replicas. Both functions therefore change nothing.

One difference remains: BERT-style code calls `tf.gradients` itself and
only `apply_gradients` through the wrapper, so on N shards TF1 applied N
times the mean gradient (clipped per shard). Here it applies the mean
gradient, as `minimize` users always got.

```python
optimizer = tf1.tpu.CrossShardOptimizer(tf1.train.AdamOptimizer(1e-3))
train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
```
"""

from keras_tpu_estimator.compat.v1 import _tpu_experimental as experimental  # noqa: F401
from keras_tpu_estimator.compat.v1._optimizers import Optimizer
from keras_tpu_estimator.compat.v1.variables import bfloat16_scope  # noqa: F401

_REDUCTIONS = ("weighted_mean", "weighted_sum", "mean", "sum")


class CrossShardOptimizer(Optimizer):
    """Wraps an optimizer, as `tf.compat.v1.tpu.CrossShardOptimizer`; changes nothing.

    Every call goes to the wrapped optimizer: in the global view the
    gradients are already those of the whole batch (see this module).

    Args:
        opt: the `compat.v1.train.Optimizer` to wrap.
        reduction: TF1's `losses.Reduction.MEAN` (`"weighted_mean"`, the
            default) or `SUM` (`"weighted_sum"`). With SUM, TF1 applied the
            sum of the shards' gradients; here the gradient of the global
            loss is applied, which is the same when the loss sums over the
            batch, and 1/shards of it when the loss averages.
        name: ignored.
        group_assignment: must be None (all replicas form one group).

    Raises:
        TypeError: if `opt` is not a `compat.v1.train.Optimizer`.
        ValueError: for another `reduction`, or a `group_assignment`.
    """

    def __init__(self, opt, reduction="weighted_mean", name=None, group_assignment=None):
        if not isinstance(opt, Optimizer):
            raise TypeError(
                "CrossShardOptimizer wraps a compat.v1.train.Optimizer. Received: "
                f"opt={opt!r}"
            )
        if reduction not in _REDUCTIONS:
            raise ValueError(
                f"Unsupported reduction: {reduction!r}. Allowed: "
                "losses.Reduction.MEAN ('weighted_mean') or SUM ('weighted_sum')."
            )
        if group_assignment is not None:
            raise ValueError(
                "CrossShardOptimizer(group_assignment=...) is not supported: the "
                "global view reduces over all replicas. Received: "
                f"group_assignment={group_assignment!r}"
            )
        super().__init__(False, opt.get_name())
        self._opt = opt
        self._reduction = reduction

    def compute_gradients(self, loss, var_list=None, **kwargs):
        return self._opt.compute_gradients(loss, var_list=var_list, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._opt.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def get_slot(self, var, name):
        return self._opt.get_slot(var, name)

    def get_slot_names(self):
        return self._opt.get_slot_names()

    def variables(self):
        return self._opt.variables()


def cross_replica_sum(x, group_assignment=None, name=None):
    """Returns `x`: in the global view it already holds every replica's contribution.

    TF1 ran `model_fn` per shard, so a per-shard statistic (a batch sum, a
    count) had to be added over the shards. Here `x` is computed on the
    whole global batch, which is that sum already; adding it over replicas
    again would count every example N times.

    Args:
        x: a tensor.
        group_assignment: must be None (all replicas form one group).
        name: ignored.

    Returns:
        `x`, unchanged.

    Raises:
        ValueError: for a `group_assignment`.
    """
    del name
    if group_assignment is not None:
        raise ValueError(
            "cross_replica_sum(group_assignment=...) is not supported: the global "
            f"view has one group. Received: group_assignment={group_assignment!r}"
        )
    return x


def outside_compilation(computation, *args, **kwargs):
    """Runs `computation(*args, **kwargs)` as part of the step and returns its outputs.

    TF1 placed such a computation on the TPU host's CPU (NMS in RetinaNet's
    PREDICT, summaries); where it runs never changed its values. Here the
    step is one XLA program on whatever device runs it, so the computation
    is traced into it like the rest of `model_fn`; its outputs are the same.

    ```python
    predictions = tf1.tpu.outside_compilation(postprocess, (cls_outputs, box_outputs))
    ```

    Args:
        computation: a callable of tensors (TF1's ops, traced by JAX).
        *args: its positional arguments.
        **kwargs: its keyword arguments.

    Returns:
        What `computation` returns.

    Raises:
        TypeError: if `computation` is not callable.
    """
    if not callable(computation):
        raise TypeError(
            "outside_compilation(computation=...) must be a callable of tensors. "
            f"Received: computation={computation!r}")
    return computation(*args, **kwargs)
