"""TF1 Keras's `layer.updates`: empty, while a block is open.

TF1's Keras layers listed the assignments their calls made (batch
normalization's moving statistics) in `layer.updates` and
`layer.get_updates_for(inputs)`, for programs to run them under
`tf.control_dependencies(model.updates)`. Keras 3 has neither: a layer's
state updates happen inside the step, so there is nothing left to run.
Inside `tf1_layer_updates()` every Keras layer answers both with `[]`. A
Keras reach (class attributes added while at least one block is open, in
any thread).
"""

import keras

from keras_tpu_estimator._keras_internals.shared_patch import SharedPatch


def _get_updates_for(layer, inputs=None):
    del layer, inputs
    return []


def _install():
    keras.layers.Layer.updates = property(lambda layer: [])
    keras.layers.Layer.get_updates_for = _get_updates_for


def _uninstall():
    del keras.layers.Layer.updates
    del keras.layers.Layer.get_updates_for


_patch = SharedPatch(_install, _uninstall)


def tf1_layer_updates():
    """Inside the block, `layer.updates` and `layer.get_updates_for(x)` are `[]`.

    Example:

    ```python
    with tf1_layer_updates():
        with tf1.control_dependencies(model.updates):  # [] here
            train_op = optimizer.minimize(loss)
    ```
    """
    return _patch.active()
