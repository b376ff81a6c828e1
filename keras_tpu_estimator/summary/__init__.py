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

TF1's summaries (`tf1.summary.scalar`, `histogram`, `image`, `audio`,
`text`, and `tf1.contrib.summary`'s) work in host calls and in `model_fn`:
made in `model_fn`, they are written from the compiled step every
`save_summary_steps` steps, their values leaving the device only then
(`traced`); the events are TF1's own (`protos`).

The modules: `writers` (one shared event-file writer per directory, and
the writers host calls create), `recording` (the default writer, the
summaries, `read_scalars`), `callback` (`SummaryCallback`), `protos` (TF1's
summary protos from numpy values), `tf1` (where a TF1 summary is written:
`model_fn`, host, or TensorFlow's own), `traced` (writing from the compiled
step), `contrib` (`tf.contrib.summary`'s writers and recording rules) and
`tf2` (TensorFlow 2's `tf.compat.v2.summary` in `model_fn`: written at the
steps its `record_if` condition holds, by TensorFlow's own functions).

Layering: may import `engine.logs`, `model_fn.store` and `model_fn.train_ops`
(the global step of TF1 summaries) and the shared modules; never `model` or
`estimator`.
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
