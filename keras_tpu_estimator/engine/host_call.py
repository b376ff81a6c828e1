"""Running a spec's `host_call` on the host, after each training loop.

The train step outputs the `host_call` tensors of every step of the loop;
the function runs on the host with one step's tensors, as numpy arrays,
every `experimental_host_call_every_n_steps` global steps (TPUEstimator's
outfeed, dequeued after the loop).
"""

import jax
import numpy as np

from keras_tpu_estimator import summary as summary_lib


def run_host_calls(fn, tensors, first_step, steps, every=1):
    """Calls `fn` with the tensors of each due step of a loop.

    While `fn` runs for the step at global step `s`, a summary written
    without `step=` is recorded at `s + 1` (TensorFlow's global step after
    that step's update): see `kte.summary.at_step`. Writers `fn` creates are
    kept for the whole training run (`summary.host_call_writers`).

    Args:
        fn: the host-call function: `fn(**tensors)` for a dict, else
            `fn(*tensors)`.
        tensors: the loop's tensors, each with a leading axis of one entry
            per step.
        first_step: the global step of the loop's first step.
        steps: the steps of the loop.
        every: call `fn` on steps whose global step divides by this.

    Example:

    ```python
    run_host_calls(host_call_fn, outputs["host_call"], first_step=100, steps=10)
    ```
    """
    if fn is None or tensors is None:
        return
    tensors = jax.tree.map(np.asarray, tensors)
    with summary_lib.host_call_writers():
        for i in range(steps):
            if (first_step + i) % every:
                continue
            values = jax.tree.map(lambda a: a[i], tensors)
            with summary_lib.at_step(first_step + i + 1):
                if isinstance(values, dict):
                    fn(**values)
                else:
                    fn(*values)
