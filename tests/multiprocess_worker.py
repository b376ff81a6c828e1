"""One process of the 2-process tests in `test_multiprocess.py`.

Usage: python multiprocess_worker.py PROCESS_ID PORT OUT_JSON SCENARIO

Joins a 2-process JAX cluster on 127.0.0.1 (2 CPU devices per process),
trains an `EstimatorModel` on this process's shard of a shared data set and
writes what it saw to OUT_JSON. SCENARIO "train" trains and evaluates;
"endless" trains until killed (for the failure test); "estimator" trains
and evaluates through `TPUEstimator` with one shared `model_dir`.
"""

import json
import os
import sys

process_id, port, out_path, scenario = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ["KERAS_BACKEND"] = "jax"

import jax  # noqa: E402

jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(
    f"127.0.0.1:{port}",
    num_processes=2,
    process_id=process_id,
    initialization_timeout=60,
    heartbeat_timeout_seconds=5,
    shutdown_timeout_seconds=10,
)

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_tpu_estimator as kte  # noqa: E402

NUM_EXAMPLES = 256
rng = np.random.default_rng(0)
X = rng.normal(size=(NUM_EXAMPLES, 4)).astype("float32")
Y = (X @ np.array([1.0, -2.0, 0.5, 3.0], "float32") + 0.1).astype("float32")
IDS = np.arange(NUM_EXAMPLES, dtype="float32")
seen = {"train": [], "eval": [], "contexts": []}


def input_fn(params, mode):
    context = params["context"]
    seen["contexts"].append({
        "mode": mode,
        "batch_size": params["batch_size"],
        "num_hosts": context.num_hosts,
        "current_host": context.current_host,
        "num_replicas": context.num_replicas,
        "invocation_index": context.invocation_index,
        "total_invocations": context.total_invocations,
    })
    rows = np.arange(context.current_host, NUM_EXAMPLES, context.num_hosts)
    batch = params["batch_size"]
    log = seen["train" if mode == kte.ModeKeys.TRAIN else "eval"]

    class Batches:  # Re-iterable: one pass per epoch.
        def __iter__(self):
            for start in range(0, len(rows), batch):
                index = rows[start:start + batch]
                log.extend(IDS[index].astype(int).tolist())
                yield {"x": X[index], "id": IDS[index]}, Y[index]
            if scenario == "endless":
                yield from self

    return Batches()


def model_fn(features, labels, mode, params):
    dense = kte.get_or_create_layer("dense", lambda: keras.layers.Dense(1))
    predictions = keras.ops.squeeze(dense(features["x"]), -1)
    loss = keras.ops.mean(keras.ops.square(predictions - labels))
    ones = keras.ops.ones_like(features["id"])
    return kte.TPUEstimatorSpec(
        mode,
        loss=loss,
        train_op=keras.optimizers.SGD(0.05),
        eval_metrics=(
            lambda ids, ones: {
                "count": kte.metrics.keras_metric(keras.metrics.Sum, ones),
                "id_sum": kte.metrics.keras_metric(keras.metrics.Sum, ids),
            },
            [features["id"], ones],
        ),
    )


class Started(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        with open(out_path + ".started", "w") as f:
            f.write(str(batch))


keras.utils.set_random_seed(0)  # Identical initial weights on both processes.
if scenario == "estimator":
    # TPUEstimator on both processes, one shared model_dir.
    model_dir = os.path.join(os.path.dirname(out_path), "model_dir")
    estimator = kte.TPUEstimator(
        model_fn=model_fn,
        config=kte.RunConfig(model_dir=model_dir, save_checkpoints_steps=4,
                             tpu_config=kte.TPUConfig(iterations_per_loop=2)),
        train_batch_size=32,
        eval_batch_size=32,
    )
    estimator.train(input_fn, max_steps=8)
    results = estimator.evaluate(input_fn)
    with open(out_path + ".tmp", "w") as f:
        json.dump({
            "results": {k: float(v) for k, v in results.items()},
            "kernel": np.asarray(estimator.get_variable_value("dense/kernel")).tolist(),
            "checkpoint": os.path.basename(estimator.latest_checkpoint()),
            **seen,
        }, f)
    os.replace(out_path + ".tmp", out_path)
    sys.exit(0)
config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=2))
model = kte.EstimatorModel(model_fn, config=config, train_batch_size=32, eval_batch_size=32)
model.compile()
if scenario == "endless":
    model.fit(input_fn, epochs=1, steps_per_epoch=10**6, verbose=0, callbacks=[Started()])
model.fit(input_fn, epochs=2, verbose=0)
results = model.evaluate(input_fn, verbose=0, return_dict=True)
weights = [np.asarray(v.value).tolist() for v in model.store.variables]
with open(out_path + ".tmp", "w") as f:
    json.dump({
        "process_count": jax.process_count(),
        "devices": jax.device_count(),
        "global_step": model.global_step,
        "weights": weights,
        "results": results,
        **seen,
    }, f)
os.replace(out_path + ".tmp", out_path)
