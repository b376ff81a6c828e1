"""model_fns, data, input_fns and model factories shared by the test files.

The test files import it by name (`from model_fns import ...`): tests/ is on
`sys.path` under pytest, as for `corpus_support`. A test that needs a variant
passes arguments (params, `loop`, ...) rather than copying a function here.
"""

import os

import keras
import numpy as np

import keras_tpu_estimator as kte
from keras_tpu_estimator.engine.logs import LOOP_FIRST_STEP
from keras_tpu_estimator.engine.logs import LOOP_LOSSES

BATCH = 16
DIM = 4


# -- Data and input_fns. ------------------------------------------------------


def linear_data(n=64, seed=0, binary=False):
    """x ~ N(0, 1) of shape (n, DIM) and y = x @ [1, ..., DIM] (float32), or
    whether that is > 0 (int32) if `binary`."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, DIM)).astype("float32")
    y = (x @ np.arange(1, DIM + 1, dtype="float32")).astype("float32")
    return (x, (y > 0).astype("int32")) if binary else (x, y)


def ones(steps):
    """`steps` batches of BATCH rows of 1.0, one feature."""
    return np.ones((BATCH * steps, 1), "float32")


def input_fn_of(x, y=None, repeat=False, calls=None):
    """An input_fn of features {"x": x} (and labels y) batched by params["batch_size"];
    `repeat` repeats forever and drops the last partial batch. Appends each
    call's batch size to `calls`."""

    def input_fn(params):
        import tensorflow as tf  # Only where a test uses tf.data.

        if calls is not None:
            calls.append(params["batch_size"])
        features = {"x": x}
        dataset = tf.data.Dataset.from_tensor_slices((features, y) if y is not None else features)
        if repeat:
            dataset = dataset.repeat()
        return dataset.batch(params["batch_size"], drop_remainder=repeat)

    return input_fn


def loop_logs(first_step, losses):
    """The `on_train_batch_end` logs of a loop starting at `first_step`."""
    return {"loss": float(np.mean(losses)), LOOP_FIRST_STEP: first_step,
            LOOP_LOSSES: np.array(losses, "float32")}


# -- model_fns. ---------------------------------------------------------------


def linear_fn_of(train_op=lambda: keras.optimizers.SGD(0.1)):
    """A model_fn of loss = mean(x) * w, w a scalar variable "w" starting at 1, trained by
    `train_op()`; predictions "y" = x[:, 0] * w."""

    def linear_fn(features, labels, mode):
        w = kte.get_variable("w", shape=(), initializer="ones")
        if mode == kte.ModeKeys.PREDICT:
            return kte.TPUEstimatorSpec(mode, predictions={"y": features[:, 0] * w})
        loss = keras.ops.mean(features) * w
        if mode == kte.ModeKeys.EVAL:
            return kte.TPUEstimatorSpec(mode, loss=loss)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op())

    return linear_fn


# SGD(0.1): on ones, the loss of step k is 1 - 0.1 k.
linear_fn = linear_fn_of()


def with_host_call(host_call, model_fn=linear_fn, rows=False):
    """`model_fn` with the host_call `host_call(step, loss)` of the global step and the loss
    (shape (1,) each), and of the batch's first feature column if `rows`."""

    def host_call_fn(features, labels, mode):
        spec = model_fn(features, labels, mode)
        step = keras.ops.reshape(kte.get_global_step(), (1,))
        tensors = [step, keras.ops.reshape(spec.loss, (1,))]
        if rows:
            tensors.append(features[:, 0])
        return spec._replace(host_call=(host_call, tensors))

    return host_call_fn


def regression_fn(features, labels, mode, params):
    """A Dense(1) layer "dense" on features["x"]: squared error, Adam(params["lr"]),
    the eval metric "mae", predictions "y" and "x0" (the first feature)."""
    dense = kte.get_or_create_layer("dense", lambda: keras.layers.Dense(1))
    predictions = dense(features["x"])[:, 0]
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"y": predictions, "x0": features["x"][:, 0]})
    loss = keras.ops.mean(keras.ops.square(predictions - labels))
    if mode == kte.ModeKeys.EVAL:
        def metric_fn(labels, predictions):
            return {"mae": kte.metrics.mean_absolute_error(labels, predictions)}

        metrics = (metric_fn, [labels, predictions])
        return kte.TPUEstimatorSpec(mode, loss=loss, eval_metrics=metrics)
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.Adam(params["lr"]))


# -- Models, estimators and their state. --------------------------------------


def estimator_model(model_fn, loop=4, batch=BATCH, host_call_every=1, **kwargs):
    """A compiled EstimatorModel running `loop` steps a loop, `batch` rows a batch
    in every mode; `kwargs` go to EstimatorModel (params, ...)."""
    config = kte.RunConfig(
        tpu_config=kte.TPUConfig(
            iterations_per_loop=loop, experimental_host_call_every_n_steps=host_call_every
        )
    )
    model = kte.EstimatorModel(
        model_fn, config=config, train_batch_size=batch, eval_batch_size=batch,
        predict_batch_size=batch, **kwargs,
    )
    model.compile()
    return model


def estimator_config(model_dir, save_every, loop=2, **kwargs):
    """The RunConfig of a TPUEstimator in `model_dir` saving every `save_every` steps,
    `loop` steps a loop, no step-rate logging; `kwargs` go to RunConfig."""
    return kte.RunConfig(
        model_dir=str(model_dir),
        save_checkpoints_steps=save_every,
        log_step_count_steps=None,
        tpu_config=kte.TPUConfig(iterations_per_loop=loop),
        **kwargs,
    )


def store_value(model, name):
    """The value of the model's store variable `name`, as numpy."""
    return np.asarray(model.store.variables_by_name()[name].value)


def write_tf1_checkpoint(directory, variables, step=5000):
    """Saves `variables` ({"scope/name": value}) and a global step of `step` with
    `tf.compat.v1.train.Saver`, as a TF1 model_dir or BERT `init_checkpoint` has
    them; returns the checkpoint prefix."""
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default():
        for path, value in variables.items():
            scope, _, name = path.rpartition("/")
            with tf.compat.v1.variable_scope(scope):
                tf.compat.v1.get_variable(name, initializer=value)
        global_step = tf.compat.v1.train.get_or_create_global_step()
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(global_step.assign(step))
            return saver.save(session, os.path.join(directory, "model.ckpt"), global_step=step)
