"""One process of the 2-process tests in `test_multiprocess.py`.

Usage: python multiprocess_worker.py PROCESS_ID PORT OUT_JSON SCENARIO[,SCENARIO...]

Joins a 2-process JAX cluster on 127.0.0.1 (2 CPU devices per process) with
`kte.distribute.initialize` (its default timeouts), runs the scenarios in
order in the one cluster, each on this process's shard of a shared data set,
and writes what each saw to OUT_JSON (`{scenario: report}`). Scenarios:
"train" trains and evaluates an `EstimatorModel`; "estimator" trains,
evaluates (a last batch of another size on each process), predicts and
exports through `TPUEstimator` with one shared `model_dir`; "killed" trains
until process 1 kills itself (SIGKILL) as the checkpoint of step 8 starts;
"resume" trains on the model_dir "killed" left, to step 12; "sharded" saves
an array split over both processes' devices and restores it.
"""

import faulthandler
import json
import os
import signal
import sys

faulthandler.register(signal.SIGUSR1)  # The tests dump a hung worker's stacks.

process_id, port, out_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
scenarios = sys.argv[4].split(",")
work_dir = os.path.dirname(out_path)
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ["KERAS_BACKEND"] = "jax"

import jax  # noqa: E402

import keras_tpu_estimator as kte  # noqa: E402  (starts no JAX work)

jax.config.update("jax_cpu_collectives_implementation", "gloo")
kte.distribute.initialize(
    f"127.0.0.1:{port}", num_processes=2, process_id=process_id, initialization_timeout=60
)

import keras  # noqa: E402
import numpy as np  # noqa: E402

NUM_EXAMPLES = 256
# 250 rows, 125 per process: batches of 16 per process end with 13 rows, a
# global batch of 26 that does not divide over the 4 replicas.
NUM_UNEVEN = 250
rng = np.random.default_rng(0)
X = rng.normal(size=(NUM_EXAMPLES, 4)).astype("float32")
Y = (X @ np.array([1.0, -2.0, 0.5, 3.0], "float32") + 0.1).astype("float32")
IDS = np.arange(NUM_EXAMPLES, dtype="float32")


def input_fn(params, mode, num_examples=NUM_EXAMPLES):
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
    rows = np.arange(context.current_host, num_examples, context.num_hosts)
    batch = params["batch_size"]
    log = seen["train" if mode == kte.ModeKeys.TRAIN else "eval"]

    class Batches:  # Re-iterable: one pass per epoch.
        def __iter__(self):
            for start in range(0, len(rows), batch):
                index = rows[start:start + batch]
                log.extend(IDS[index].astype(int).tolist())
                yield {"x": X[index], "id": IDS[index]}, Y[index]
            if scenario in ("killed", "resume") and mode == kte.ModeKeys.TRAIN:
                yield from self

    return Batches()


def uneven_input_fn(params, mode):
    return input_fn(params, mode, NUM_UNEVEN)


def model_fn(features, labels, mode, params):
    dense = kte.get_or_create_layer("dense", lambda: keras.layers.Dense(1))
    predictions = keras.ops.squeeze(dense(features["x"]), -1)
    if mode == kte.ModeKeys.PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"id": features["id"], "y": predictions})
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


def serving_input_receiver_fn():
    x = kte.export.placeholder(shape=(None, 4), dtype="float32", name="x")
    ids = kte.export.placeholder(shape=(None,), dtype="float32", name="id")
    features = {"x": x, "id": ids}
    return kte.export.ServingInputReceiver(features=features, receiver_tensors=features)


class KillProcess1(kte.CheckpointSaverListener):
    """Process 1 dies (SIGKILL) as the checkpoint of step 8 starts."""

    def before_save(self, session, global_step_value):
        if process_id == 1 and global_step_value == 8:
            os.kill(os.getpid(), signal.SIGKILL)


def sharded():
    """An (8, 3) array split by rows over the 4 devices: each process holds half of it."""
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec

    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("batch",))
    sharding = NamedSharding(mesh, PartitionSpec("batch", None))
    full = np.arange(24, dtype="float32").reshape(8, 3)
    array = jax.make_array_from_callback(full.shape, sharding, lambda index: full[index])
    directory = kte.checkpoint.CheckpointDirectory(os.path.join(work_dir, "sharded_dir"))
    directory.save(3, {"w": array, "global_step": 3})
    target = jax.make_array_from_callback(full.shape, sharding,
                                          lambda index: np.zeros_like(full[index]))
    restored = directory.restore(targets={"w": target})["w"]
    return {
        "latest": os.path.basename(directory.latest_checkpoint()),
        "same_sharding": restored.sharding == sharding,
        "local": [np.asarray(s.data).tolist() for s in restored.addressable_shards],
        "expected_local": [full[s.index].tolist() for s in restored.addressable_shards],
    }


def train():
    """An `EstimatorModel` fits 2 epochs and evaluates."""
    config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=2))
    model = kte.EstimatorModel(model_fn, config=config, train_batch_size=32, eval_batch_size=32)
    model.compile()
    model.fit(input_fn, epochs=2, verbose=0)
    results = model.evaluate(input_fn, verbose=0, return_dict=True)
    return {
        "process_count": jax.process_count(),
        "devices": jax.device_count(),
        "global_step": model.global_step,
        "weights": [np.asarray(v.value).tolist() for v in model.store.variables],
        "results": results,
    }


def tpu_estimator():
    model_dir = os.path.join(work_dir, "model_dir")
    return model_dir, kte.TPUEstimator(
        model_fn=model_fn,
        config=kte.RunConfig(model_dir=model_dir, save_checkpoints_steps=4,
                             tpu_config=kte.TPUConfig(iterations_per_loop=2)),
        train_batch_size=32,
        eval_batch_size=32,
        predict_batch_size=32,
    )


def estimator():
    """TPUEstimator on both processes, one shared model_dir."""
    model_dir, estimator = tpu_estimator()
    estimator.train(input_fn, max_steps=8)
    results = estimator.evaluate(input_fn)
    predictions = list(estimator.predict(uneven_input_fn))
    export = estimator.export_saved_model(os.path.join(model_dir, "export"),
                                          serving_input_receiver_fn)
    uneven = estimator.evaluate(uneven_input_fn, name="uneven")
    return {
        "results": {k: float(v) for k, v in results.items()},
        "uneven_results": {k: float(v) for k, v in uneven.items()},
        "kernel": np.asarray(estimator.get_variable_value("dense/kernel")).tolist(),
        "checkpoint": os.path.basename(estimator.latest_checkpoint()),
        "predicted_ids": [int(p["id"]) for p in predictions],
        "export": os.fsdecode(export),
    }


def killed():
    _, estimator = tpu_estimator()
    estimator.train(input_fn, max_steps=100, saving_listeners=[KillProcess1()])
    sys.exit("process 1 was not killed")


def resume():
    model_dir, estimator = tpu_estimator()
    start = os.path.basename(estimator.latest_checkpoint())
    estimator.train(input_fn, max_steps=12)
    return {
        "start": start,
        "end": os.path.basename(estimator.latest_checkpoint()),
        "model_dir": sorted(os.listdir(model_dir)),
    }


SCENARIOS = {"sharded": sharded, "train": train, "estimator": estimator,
             "killed": killed, "resume": resume}
reports = {}
for scenario in scenarios:
    seen = {"train": [], "eval": [], "contexts": []}
    keras.utils.set_random_seed(0)  # Identical initial weights on both processes.
    reports[scenario] = {**SCENARIOS[scenario](), **seen}
with open(out_path + ".tmp", "w") as f:
    json.dump(reports, f)
os.replace(out_path + ".tmp", out_path)
