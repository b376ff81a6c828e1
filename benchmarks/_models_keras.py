"""The corpus models that are simple in plain Keras, for `bench_models.py`.

Same layers, initializers, loss and optimizer as the programs' `model_fn`s
(see `_models_jax.py`), built with `keras.layers` and trained by
`keras.Model.fit`. Keras's batch norm moves its variance with the biased
batch variance (TensorFlow's fused one with the unbiased): same cost.
"""

import keras
from keras import layers

from _models_jax import MEAN_RGB, RESNET_BLOCKS, STDDEV_RGB, resnet_learning_rate


def mnist(learning_rate=0.05):
    """mnist_tpu.py's model_fn: conv 5x5 32 relu, max pool 2, conv 5x5 32
    relu, max pool 2, dense 1024 relu, dropout 0.4, dense 10; SGD with
    exponential decay."""
    model = keras.Sequential([
        keras.Input((28, 28, 1)),
        layers.Rescaling(1.0 / 255),
        layers.Conv2D(32, 5, padding="same", activation="relu"),
        layers.MaxPooling2D(2, 2, padding="same"),
        layers.Conv2D(32, 5, padding="same", activation="relu"),
        layers.MaxPooling2D(2, 2, padding="same"),
        layers.Flatten(),
        layers.Dense(1024, activation="relu"),
        layers.Dropout(0.4),
        layers.Dense(10),
    ])
    schedule = keras.optimizers.schedules.ExponentialDecay(learning_rate, 100000, 0.96)
    return model, keras.optimizers.SGD(schedule)


class ResnetSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """resnet_main.learning_rate_schedule, from the optimizer's step."""

    def __init__(self, params):
        super().__init__()
        self.params = params
        self._rate = resnet_learning_rate(params)

    def __call__(self, step):
        steps_per_epoch = self.params["num_train_images"] / self.params["train_batch_size"]
        return self._rate(keras.ops.cast(step, "float32") / steps_per_epoch)


def resnet(params):
    """resnet_model_fn's ResNet v1 (basic blocks) with L2 weight decay on
    every non-batch-norm variable and Nesterov momentum."""
    decay = keras.regularizers.L2(params["weight_decay"] / 2)  # TF's l2_loss = sum(w^2) / 2
    init = keras.initializers.VarianceScaling(1.0, "fan_in", "truncated_normal")

    def conv_bn(x, filters, size, stride, relu, zero_gamma=False):
        if stride > 1:
            pad = ((size - 1) // 2, size - 1 - (size - 1) // 2)
            x = layers.ZeroPadding2D((pad, pad))(x)
        x = layers.Conv2D(filters, size, stride, "same" if stride == 1 else "valid",
                          use_bias=False, kernel_initializer=init, kernel_regularizer=decay)(x)
        x = layers.BatchNormalization(
            momentum=params["bn_momentum"], epsilon=1e-5,
            gamma_initializer="zeros" if zero_gamma else "ones")(x)
        return layers.ReLU()(x) if relu else x

    size = params["image_size"]
    inputs = keras.Input((size, size, 3))
    x = layers.Normalization(mean=MEAN_RGB, variance=STDDEV_RGB ** 2)(inputs)
    x = conv_bn(x, 64, 7, 2, True)
    x = layers.MaxPooling2D(3, 2, padding="same")(x)
    blocks = RESNET_BLOCKS[params["resnet_depth"]]
    for g, (filters, count) in enumerate(zip((64, 128, 256, 512), blocks)):
        for b in range(count):
            stride = 1 if g == 0 or b else 2
            shortcut = conv_bn(x, filters, 1, stride, False) if b == 0 else x
            y = conv_bn(x, filters, 3, stride, True)
            y = conv_bn(y, filters, 3, 1, False, zero_gamma=True)
            x = layers.ReLU()(layers.Add()([y, shortcut]))
    x = layers.GlobalAveragePooling2D()(x)
    logits = layers.Dense(params["num_label_classes"],
                          kernel_initializer=keras.initializers.RandomNormal(stddev=0.01),
                          kernel_regularizer=decay, bias_regularizer=decay)(x)
    optimizer = keras.optimizers.SGD(ResnetSchedule(params), momentum=params["momentum"],
                                     nesterov=True)
    return keras.Model(inputs, logits), optimizer


MODELS = {"mnist": mnist, "resnet": resnet}
