"""A TPUEstimator-style program on scikit-learn's bundled digits (no download).

The `model_fn` and `input_fn` are written as for `TPUEstimator`: the input
function reads `params['batch_size']` and returns a `tf.data.Dataset`; the
model function returns a `TPUEstimatorSpec` with a loss, an optimizer, and
`eval_metrics=(metric_fn, tensors)`. `EstimatorModel` runs them with Keras's
`fit`, `evaluate` and `predict` on JAX, 20 steps per on-device loop.

    python examples/digits.py
"""

import os
import time

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

import keras_tpu_estimator as kte  # noqa: E402


def load():
    digits = load_digits()
    x = (digits.data / 16.0).astype("float32")
    y = digits.target.astype("int32")
    return train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)


def make_input_fn(x, y, training):
    def input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices(({"pixels": x}, y))
        if training:
            dataset = dataset.shuffle(len(x), seed=0, reshuffle_each_iteration=True)
            return dataset.batch(params["batch_size"], drop_remainder=True)
        return dataset.batch(params["batch_size"])

    return input_fn


def model_fn(features, labels, mode, params):
    x = features["pixels"]
    for i in range(2):
        x = kte.get_or_create_layer(
            f"hidden_{i}", lambda: keras.layers.Dense(params["hidden_units"], activation="relu")
        )(x)
        x = kte.get_or_create_layer(f"dropout_{i}", lambda: keras.layers.Dropout(0.1, seed=i))(x)
    logits = kte.get_or_create_layer("logits", lambda: keras.layers.Dense(10))(x)

    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(
            mode,
            predictions={"class": keras.ops.argmax(logits, -1), "probabilities": keras.ops.softmax(logits)},
        )

    loss = keras.ops.mean(
        keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    )
    if mode == kte.ModeKeys.EVAL:

        def metric_fn(labels, logits):
            return {
                "accuracy": kte.metrics.accuracy(labels=labels, predictions=keras.ops.argmax(logits, -1)),
                "mean_logit": keras.ops.mean(logits),
            }

        return kte.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))

    # The learning rate decays with the global step, as TF1 programs do it.
    step = keras.ops.cast(kte.get_global_step(), "float32")
    learning_rate = params["learning_rate"] * 0.5 ** (step / 500.0)
    # Keras optimizers take a float, a schedule or a callable: a callable
    # makes the rate computed here take effect on every step.
    optimizer = keras.optimizers.Adam(lambda: learning_rate)
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=optimizer)


def main():
    keras.utils.set_random_seed(0)
    x_train, x_test, y_train, y_test = load()
    model = kte.EstimatorModel(
        model_fn,
        params={"hidden_units": 128, "learning_rate": 3e-3},
        config=kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=20)),
        train_batch_size=64,
        eval_batch_size=64,
        predict_batch_size=64,
    )
    model.compile()
    start = time.perf_counter()
    model.fit(make_input_fn(x_train, y_train, training=True), epochs=30, verbose=2)
    results = model.evaluate(make_input_fn(x_test, y_test, training=False), return_dict=True, verbose=0)
    predictions = model.predict(make_input_fn(x_test, None, training=False), verbose=0)
    accuracy = float(np.mean(predictions["class"] == y_test))
    print(f"test examples: {len(y_test)}, predictions: {len(predictions['class'])}")
    print("evaluate:", {k: round(float(v), 4) for k, v in results.items()})
    print(f"test accuracy from predict: {accuracy:.4f} ({time.perf_counter() - start:.1f}s)")
    if accuracy < 0.95:
        raise SystemExit(f"accuracy {accuracy:.4f} is below 0.95")


if __name__ == "__main__":
    main()
