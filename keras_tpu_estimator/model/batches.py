"""One batch at a time: Keras's `*_on_batch` methods and `model(x)`.

Keras users step a model by hand with `train_on_batch`, `test_on_batch`,
`predict_on_batch`, or call it on features. On an `EstimatorModel` the first
three run one step of `fit`/`evaluate`/`predict` on the batch given (its size
is the batch size); calling the model runs `model_fn` in PREDICT mode,
eagerly, with the current variables.
"""

import jax
import keras

from keras_tpu_estimator.spec import ModeKeys

PREDICT = ModeKeys.PREDICT


class OneBatch:
    """The one-batch methods of `EstimatorModel` (a mixin, as Keras's `Trainer`)."""

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                       return_dict=False):
        """Runs one training step on one batch of arrays, like Keras.

        Args:
            x: the features: arrays (a dict of arrays, or one array), or
                `(features, labels)`.
            y: the labels, when `x` holds only features.
            sample_weight: not supported (`model_fn` weighs its loss).
            class_weight: not supported.
            return_dict: return `{"loss": loss}` instead of the loss.

        Returns:
            The step's loss (a float), or a dict with `return_dict`.

        Raises:
            ValueError: for `sample_weight`/`class_weight`, or `x` that is
                not arrays.
        """
        _refuse_weights(sample_weight=sample_weight, class_weight=class_weight)
        history = self.fit(x, y, batch_size=_batch_size_of(x), epochs=1, steps_per_epoch=1,
                           verbose=0, shuffle=False)
        loss = history.history["loss"][-1]
        return {"loss": loss} if return_dict else loss

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """Evaluates one batch of arrays: the loss and every metric, like Keras.

        Args:
            x: the features, or `(features, labels)`.
            y: the labels, when `x` holds only features.
            sample_weight: not supported (`metric_fn` weighs its metrics).
            return_dict: return a dict, as `evaluate(return_dict=True)`.

        Returns:
            What `evaluate` returns for this one batch.
        """
        _refuse_weights(sample_weight=sample_weight)
        return self.evaluate(x, y, batch_size=_batch_size_of(x), steps=1, verbose=0,
                             return_dict=return_dict)

    def predict_on_batch(self, x):
        """Returns `model_fn`'s PREDICT `predictions` for one batch of arrays."""
        return self.predict(x, batch_size=_batch_size_of(x), verbose=0)

    def __call__(self, inputs, training=False):
        # Not Keras's `Layer.__call__`: its name scope would enter the
        # variables' paths, and model_fn takes no symbolic Keras inputs.
        return self.call(inputs, training=training)

    def call(self, inputs, training=False):
        """`model(features)`: `model_fn`'s PREDICT `predictions`, computed eagerly.

        `model_fn` runs once in PREDICT mode on `inputs` with the model's
        current variables (the model is built for PREDICT first if needed).
        Unlike `predict`, nothing is compiled and the batch need not divide
        over the replicas.

        Args:
            inputs: the features, as `model_fn` receives them.
            training: must be False: `model_fn` trains only in TRAIN mode,
                with labels (see `train_on_batch`).

        Returns:
            The `predictions` of the PREDICT spec (a dict of tensors, or a
            tensor).

        Example:

        ```python
        probabilities = model({"x": x[:4]})["probabilities"]
        ```
        """
        if training:
            raise ValueError(
                "EstimatorModel runs model_fn in PREDICT mode when called: "
                f"`training` must be False. Received: training={training!r}. "
                "Use `train_on_batch(x, y)` for a training step."
            )
        self.build_from_batch(PREDICT, (inputs, None))
        step = keras.ops.convert_to_tensor(self.global_step)
        spec = self.call_model_fn(inputs, None, PREDICT, step)
        return spec.predictions


def _batch_size_of(x):
    """The number of examples of a batch of arrays (`*_on_batch`)."""
    leaves = jax.tree.leaves(x)
    if not leaves or not all(hasattr(leaf, "shape") and len(leaf.shape) for leaf in leaves):
        raise ValueError(
            "`x` must be a batch of arrays (an array, a dict of arrays, or "
            f"`(features, labels)`), for the methods `*_on_batch`. Received: x={x!r}"
        )
    return int(leaves[0].shape[0])


def _refuse_weights(**weights):
    given = sorted(name for name, value in weights.items() if value is not None)
    if given:
        raise ValueError(
            f"EstimatorModel does not take {', '.join(f'`{n}`' for n in given)}: "
            "model_fn weighs its loss and metric_fn its metrics."
        )
