"""`Estimator`: `tf.estimator.Estimator` on one device, over `TPUEstimator`.

TPU programs keep a plain `tf.estimator.Estimator` beside their
`TPUEstimator` for GPU/CPU runs (RetinaNet, Mask R-CNN, AmoebaNet): the same
`model_fn` returning an `EstimatorSpec`, and an `input_fn` that batches by
itself, often with a `params['batch_size']` of the user's own. This class is
that estimator: `TPUEstimator(use_tpu=False)` with no batch sizes, so a step
takes the batch the data gives, `params` reach `model_fn` and `input_fn`
exactly as given (`batch_size` is not reserved), and `train`, `evaluate`,
`predict` and `export_saved_model` keep their `tf.estimator.Estimator`
meaning, `model_dir` checkpoints included.

```python
est = kte.Estimator(model_fn, model_dir="runs/linear", params={"batch_size": 32})
est.train(input_fn, max_steps=1000)
est.evaluate(eval_input_fn)             # {'loss', 'global_step', metrics...}
```

Differences from TensorFlow: steps are compiled for a batch shape, so a
final short *training* batch (a dataset not repeated whose size does not
divide) is skipped; `evaluate` and `predict` count every example, a final
short batch included, as TensorFlow did.
"""

import collections.abc
import copy

from keras_tpu_estimator.config import RunConfig
from keras_tpu_estimator.estimator.tpu_estimator import TPUEstimator
from keras_tpu_estimator.inputs.input_fn import call_input_fn
from keras_tpu_estimator.model_fn.call import check_model_fn
from keras_tpu_estimator.spec import ModeKeys


class Estimator(TPUEstimator):
    """`tf.estimator.Estimator`: a `model_fn` trained, evaluated and served on one device.

    Args:
        model_fn: `model_fn(features, labels, mode, params, config)` (any of
            the last four may be left out) returning an `EstimatorSpec` (or a
            `TPUEstimatorSpec`).
        model_dir: where checkpoints and summaries go; None: the config's,
            or a temporary directory.
        config: a `kte.RunConfig`; None: `RunConfig()`.
        params: a dict given to `model_fn` and `input_fn` as it is (a deep
            copy); no key is reserved.
        warm_start_from: a checkpoint path or a `kte.WarmStartSettings`,
            used when `model_dir` has no checkpoint yet.

    Raises:
        ValueError: for a `model_fn` with arguments other than the five, a
            `params` that is not a dict, or a `config` that is not a
            `kte.RunConfig`.

    Example:

    ```python
    def input_fn(params):
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(params["batch_size"])

    est = kte.Estimator(model_fn, params={"batch_size": 64, "learning_rate": 0.1})
    est.train(input_fn, steps=100)
    ```
    """

    def __init__(self, model_fn, model_dir=None, config=None, params=None,
                 warm_start_from=None):
        accepted = check_model_fn(model_fn)
        if params is not None and not isinstance(params, collections.abc.Mapping):
            raise ValueError(
                f"Argument `params` must be None or a dict. Received: params={params!r}"
            )
        if config is None:
            config = RunConfig()
        elif not isinstance(config, RunConfig):
            raise ValueError(
                "`config` must be a `kte.RunConfig` (TensorFlow's "
                f"tf.estimator.RunConfig converts to it). Received: config={config!r}"
            )
        self._user_params = copy.deepcopy(dict(params or {}))
        self._user_model_fn = model_fn

        def plain_model_fn(features, labels, mode, config):
            arguments = {"features": features}
            if "labels" in accepted:
                arguments["labels"] = labels
            elif labels is not None:
                raise ValueError("model_fn does not take labels, but input_fn returns labels.")
            if "mode" in accepted:
                arguments["mode"] = mode
            if "params" in accepted:
                arguments["params"] = copy.deepcopy(self._user_params)
            if "config" in accepted:
                arguments["config"] = config
            return model_fn(**arguments)

        super().__init__(model_fn=plain_model_fn, model_dir=model_dir, config=config,
                         use_tpu=False, warm_start_from=warm_start_from)

    @property
    def params(self):
        """A copy of the `params` given to the constructor."""
        return copy.deepcopy(self._user_params)

    def _input(self, input_fn, mode):
        """`input_fn` called as `tf.estimator.Estimator` calls it: with the user's params."""
        if not callable(input_fn):
            raise ValueError(
                f"Argument `input_fn` must be callable. Received: input_fn={input_fn!r}"
            )

        def bound_input_fn():
            return call_input_fn(input_fn, copy.deepcopy(self._user_params), mode, self.config)

        return bound_input_fn

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains from the latest checkpoint, as `tf.estimator.Estimator.train`.

        Args:
            input_fn: a function of any of `params`, `mode`, `config`
                returning a `tf.data.Dataset` of `(features, labels)` batches
                (or a `(features, labels)` pair of batched arrays).
            hooks, steps, max_steps, saving_listeners: as `TPUEstimator.train`.

        Returns:
            self.
        """
        return super().train(self._input(input_fn, ModeKeys.TRAIN), hooks=hooks, steps=steps,
                             max_steps=max_steps, saving_listeners=saving_listeners)

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates a checkpoint, as `tf.estimator.Estimator.evaluate`.

        Every example counts once, a final short batch included; `loss` is
        the mean of the per-batch losses, as in TensorFlow.

        Returns:
            A dict with `loss`, `global_step` and the metrics.
        """
        return super().evaluate(self._input(input_fn, ModeKeys.EVAL), steps=steps, hooks=hooks,
                                checkpoint_path=checkpoint_path, name=name)

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields predictions, as `tf.estimator.Estimator.predict` (lazily)."""
        return super().predict(self._input(input_fn, ModeKeys.PREDICT),
                               predict_keys=predict_keys, hooks=hooks,
                               checkpoint_path=checkpoint_path,
                               yield_single_examples=yield_single_examples)
