"""TensorBoard summaries: scalars and histograms written to event files.

TensorFlow programs wrote summaries from a TPUEstimator `host_call`, inside
`tf.contrib.summary.create_file_writer(model_dir).as_default()`. Here the
host call receives numpy values and writes with this module, into the
writer that `record_summaries` makes the default (`TPUEstimator.train`
records into `model_dir` while it trains):

```python
def host_call(global_step, loss):
    kte.summary.scalar("loss", loss[0], step=global_step[0])

with kte.summary.record_summaries("runs/model", step_fn=lambda: model.global_step):
    model.fit(...)              # the model_fn returns host_call=(host_call, [...])
kte.summary.read_scalars("runs/model")   # {'loss': [(0, 2.3), (1, 2.1), ...]}
```

Outside `record_summaries`, `scalar` and `histogram` write nothing and
return False, as `tf.summary` does without a default writer. The default
writer is per thread. TensorFlow is imported when a summary is first
written, not with this module; the event files are TensorFlow's own
(`tf.summary.create_file_writer`), so TensorBoard reads them.

`at_step(step)` records the summaries written without `step=` inside it at
`step` (a host call runs inside one, at the global step after its step).
`SummaryCallback` writes what TensorFlow's estimator wrote while training:
the `loss` and `global_step/sec`, every `RunConfig.save_summary_steps`.

The modules: `writers` (one shared event-file writer per directory, and
the writers host calls create), `recording` (the default writer, the
summaries, `read_scalars`) and `callback` (`SummaryCallback`).
"""

from keras_tpu_estimator.summary.callback import SummaryCallback
from keras_tpu_estimator.summary.recording import at_step
from keras_tpu_estimator.summary.recording import flush
from keras_tpu_estimator.summary.recording import histogram
from keras_tpu_estimator.summary.recording import read_scalars
from keras_tpu_estimator.summary.recording import record_summaries
from keras_tpu_estimator.summary.recording import scalar
from keras_tpu_estimator.summary.writers import host_call_writers
from keras_tpu_estimator.summary.writers import keep_writers
from keras_tpu_estimator.summary.writers import keeps_writers

__all__ = [
    "SummaryCallback",
    "at_step",
    "flush",
    "histogram",
    "host_call_writers",
    "keep_writers",
    "keeps_writers",
    "read_scalars",
    "record_summaries",
    "scalar",
]
