"""`tf.compat.v1.summary` for host calls, on `kte.summary`.

In TPUEstimator programs summaries are written in the `host_call`, which here
runs on the host with numpy values: `scalar` and `histogram` write to the
event file of the enclosing `kte.summary.record_summaries` (which
`TPUEstimator.train` opens on `model_dir`) at the step of that host call.
Inside `model_fn` itself nothing can be written (it is compiled): return the
tensors through `host_call`.

```python
def host_call_fn(gs, loss, lr):
    tf1.summary.scalar("loss", loss[0], step=gs[0])
    tf1.summary.scalar("learning_rate", lr[0], step=gs[0])
```
"""

import numpy as np

from keras_tpu_estimator import summary as _summary


def _check_host(name, value):
    import jax

    if isinstance(value, jax.core.Tracer) or type(value).__name__ == "KerasTensor":
        raise RuntimeError(
            f"summary {name!r} was written inside model_fn, which is compiled: "
            "pass the tensor through the spec's `host_call` and write it there."
        )


def scalar(name, tensor, collections=None, family=None, step=None):
    """Writes a scalar summary; returns True when written (see `kte.summary.scalar`)."""
    _check_host(name, tensor)
    return _summary.scalar(name if family is None else f"{family}/{name}", np.asarray(tensor), step)


def histogram(name, values, collections=None, family=None, step=None):
    """Writes a histogram summary (see `kte.summary.histogram`)."""
    _check_host(name, values)
    return _summary.histogram(name if family is None else f"{family}/{name}", np.asarray(values), step)


def merge_all(key=None, scope=None, name=None):
    """Returns None: summaries are written when made, there is nothing to merge."""
    return None


flush = _summary.flush
