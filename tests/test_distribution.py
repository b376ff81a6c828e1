"""TPUConfig -> mesh, variable layouts, input_partition_dims, input deployments."""

import warnings

import keras
import numpy as np
import pytest
from jax.sharding import PartitionSpec

import keras_tpu_estimator as kte
from keras_tpu_estimator.inputs import deployment as context_lib
from keras_tpu_estimator import distribute
from keras_tpu_estimator.engine import placement
from keras_tpu_estimator.engine.logs import LOOP_LOSSES

IPC = kte.InputPipelineConfig
TRAIN, EVAL, PREDICT = kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL, kte.ModeKeys.PREDICT

rng = np.random.default_rng(0)
X = rng.normal(size=(640, 8)).astype("float32")
Y = rng.integers(0, 4, size=640).astype("int32")


def _config(**tpu):
    return kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=5, **tpu))


def mlp_fn(features, labels, mode, params):
    hidden = kte.get_or_create_layer("hidden", lambda: keras.layers.Dense(16, activation="relu"))
    logits = kte.get_or_create_layer("logits", lambda: keras.layers.Dense(4))(hidden(features))
    loss = keras.ops.mean(
        keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    )
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1))


class _LastLoopLosses(keras.callbacks.Callback):
    """Keeps the per-step losses of the last training loop, from the logs."""

    reads_loop_logs = True

    def on_train_batch_end(self, batch, logs=None):
        self.losses = logs[LOOP_LOSSES]


def _trained(config, callbacks=(), **kwargs):
    keras.utils.set_random_seed(0)
    model = kte.EstimatorModel(mlp_fn, config=config, train_batch_size=32, **kwargs)
    model.compile()
    model.fit((X, Y), epochs=1, steps_per_epoch=20, shuffle=False, verbose=0,
              callbacks=list(callbacks))
    return model


def _built(config, **kwargs):
    """A model whose variables exist (laid out), without training it."""
    model = kte.EstimatorModel(mlp_fn, config=config, train_batch_size=32, **kwargs)
    model.build_for(TRAIN, X, Y)
    return model


def _specs(model):
    return {v.path: v.value.sharding.spec for v in model.store.variables}


# ----------------------------------------------------------------------
# num_cores_per_replica -> mesh


@pytest.mark.parametrize("cores, shape", [(2, (4, 2)), (4, (2, 4)), (8, (1, 8))])
def test_cores_per_replica_builds_a_batch_by_model_mesh(cores, shape):
    distribution = distribute.distribution_for(_config(num_cores_per_replica=cores))
    assert isinstance(distribution, keras.distribution.ModelParallel)
    assert distribution.device_mesh.shape == shape
    assert tuple(distribution.device_mesh.axis_names) == ("batch", "model")
    assert distribute.num_replicas(distribution) == shape[0]


@pytest.mark.parametrize("cores", [None, 1])
def test_one_core_per_replica_is_data_parallel(cores):
    distribution = distribute.distribution_for(_config(num_cores_per_replica=cores))
    assert isinstance(distribution, keras.distribution.DataParallel)
    assert distribute.num_replicas(distribution) == 8


def test_cores_per_replica_must_divide_the_devices():
    with pytest.raises(ValueError, match=r"num_cores_per_replica \(16\).*devices \(8\)"):
        distribute.distribution_for(_config(num_cores_per_replica=16))


# ----------------------------------------------------------------------
# Variable layouts


def test_model_parallel_kernels_are_really_sharded():
    specs = _specs(_trained(_config(num_cores_per_replica=2)))
    assert specs["hidden/kernel"] == PartitionSpec(None, "model")
    assert specs["logits/kernel"] == PartitionSpec(None, "model")
    assert all(axis is None for axis in specs["hidden/bias"])


def test_model_parallel_loss_equals_data_parallel_after_20_steps():
    data_loop, model_loop = _LastLoopLosses(), _LastLoopLosses()
    data_parallel = _trained(_config(), callbacks=[data_loop])
    model_parallel = _trained(_config(num_cores_per_replica=4), callbacks=[model_loop])
    assert data_parallel.global_step == model_parallel.global_step == 20
    np.testing.assert_allclose(model_loop.losses, data_loop.losses, atol=1e-4)


@pytest.mark.parametrize(
    "path, shape, axes",
    [
        ("dense/kernel", (8, 16), (None, "model")),
        ("conv2d/kernel", (3, 3, 4, 8), (None, None, None, "model")),
        ("embedding/embeddings", (100, 8), (None, "model")),
        ("dense/bias", (16,), (None,)),
        ("dense/kernel", (8, 3), (None, None)),  # 3 does not split in 2.
        ("batch_normalization/moving_mean", (16,), (None,)),
    ],
)
def test_default_layouts(path, shape, axes):
    assert distribute.default_layout(path, shape, model_size=2) == axes


def test_default_layouts_shard_conv_and_embedding_layers():
    def model_fn(features, labels, mode):
        embedded = kte.get_or_create_layer("embedding", lambda: keras.layers.Embedding(10, 8))(
            features["ids"]
        )
        conv = kte.get_or_create_layer("conv", lambda: keras.layers.Conv2D(4, 3))(features["image"])
        loss = keras.ops.mean(embedded) + keras.ops.mean(conv)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1))

    model = kte.EstimatorModel(model_fn, config=_config(num_cores_per_replica=2), train_batch_size=8)
    features = {"ids": np.zeros((8, 3), "int32"), "image": np.zeros((8, 6, 6, 2), "float32")}
    model.build_for(TRAIN, features, np.zeros(8, "float32"))
    specs = _specs(model)
    assert specs["embedding/embeddings"] == PartitionSpec(None, "model")
    assert specs["conv/kernel"] == PartitionSpec(None, None, None, "model")


def test_layout_map_rules_decide_the_layouts():
    model = _built(
        _config(num_cores_per_replica=2),
        layout_map={".*hidden/kernel": ("model", None), "logits/bias": ("model",)},
    )
    specs = _specs(model)
    assert specs["hidden/kernel"] == PartitionSpec("model", None)
    assert specs["logits/bias"] == PartitionSpec("model")
    assert all(axis is None for axis in specs["logits/kernel"])  # No rule: replicated.


def test_a_keras_layout_map_is_accepted():
    mesh = keras.distribution.DeviceMesh((4, 2), ["batch", "model"])
    layout_map = keras.distribution.LayoutMap(mesh)
    layout_map[".*kernel"] = (None, "model")
    specs = _specs(_built(_config(num_cores_per_replica=2), layout_map=layout_map))
    assert specs["hidden/kernel"] == PartitionSpec(None, "model")


def test_rules_that_match_nothing_are_reported():
    with pytest.warns(UserWarning, match=r"\['dense.\*kernel'\] match no variable"):
        _built(
            _config(num_cores_per_replica=2),
            layout_map={"dense.*kernel": (None, "model"), ".*hidden/kernel": (None, "model")},
        )


def test_matching_rules_are_not_reported():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        _built(_config(num_cores_per_replica=2), layout_map={".*kernel": (None, "model")})


@pytest.mark.parametrize(
    "layout_map, message",
    [
        ({".*kernel": ("data", None)}, r"layout_map\['\.\*kernel'\] must be a tuple of mesh axis"),
        ({".*kernel": "model"}, r"must be a tuple of mesh axis names"),
        ({"(": (None,)}, r"not a valid regex"),
        ([".*kernel"], r"`layout_map` must be a dict"),
    ],
)
def test_malformed_rules_are_rejected(layout_map, message):
    with pytest.raises(ValueError, match=message):
        kte.EstimatorModel(mlp_fn, config=_config(num_cores_per_replica=2), layout_map=layout_map)


def test_a_rule_of_the_wrong_rank_names_the_variable():
    with pytest.raises(ValueError, match=r"matches variable 'hidden/kernel' of shape \(8, 16\)"):
        _built(_config(num_cores_per_replica=2), layout_map={".*hidden/kernel": ("model",)})


def test_a_path_matching_two_rules_is_an_error():
    with pytest.raises(ValueError, match="matches several partition rules"):
        _built(
            _config(num_cores_per_replica=2),
            layout_map={".*kernel": (None, "model"), "hidden/.*": (None, "model")},
        )


def test_a_dimension_that_does_not_split_is_reported():
    with pytest.raises(ValueError, match=r"dimension 1 \(size 4\) of 'logits/kernel'"):
        _built(_config(num_cores_per_replica=8), layout_map={".*kernel": (None, "model")})


# ----------------------------------------------------------------------
# input_partition_dims


def _spatial_config(dims, cores):
    return _config(
        num_cores_per_replica=cores,
        per_host_input_for_training=IPC.PER_HOST_V2,
        input_partition_dims=dims,
    )


@pytest.mark.parametrize(
    "dims, cores, image_shard",
    [
        ([[1, 2, 1, 1], None], 2, (2, 4, 8, 3)),  # H over the 2 cores of a replica.
        ([[1, 2, 2, 1], None], 4, (4, 4, 4, 3)),  # H and W over 4 cores.
        ([[1, 1, 4, 1], [1]], 4, (4, 8, 2, 3)),
    ],
)
def test_input_partition_dims_split_images_over_the_cores(dims, cores, image_shard):
    config = _spatial_config(dims, cores)
    distribution = distribute.distribution_for(config)
    images, labels = np.zeros((8, 8, 8, 3), "float32"), np.zeros((8,), "int32")
    placed_images, placed_labels = placement.put_batches(
        (images, labels), distribution, stacked=False,
        partition_dims=config.tpu_config.input_partition_dims,
    )
    assert placed_images.sharding.shard_shape(images.shape) == image_shard
    # Labels: split over the replicas only, whole on every core of one.
    replicas = 8 // cores
    assert placed_labels.sharding.shard_shape(labels.shape) == (8 // replicas,)


def test_input_partition_dims_train_like_the_unpartitioned_model():
    def model_fn(features, labels, mode):
        conv = kte.get_or_create_layer("conv", lambda: keras.layers.Conv2D(4, 3, padding="same"))
        pooled = keras.ops.mean(conv(features), axis=(1, 2))
        logits = kte.get_or_create_layer("logits", lambda: keras.layers.Dense(4))(pooled)
        loss = keras.ops.mean(
            keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
        )
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1))

    images = rng.normal(size=(32, 8, 8, 3)).astype("float32")
    labels = rng.integers(0, 4, size=32).astype("int32")
    losses = []
    for config in (_config(num_cores_per_replica=2), _spatial_config([[1, 2, 1, 1], None], 2)):
        keras.utils.set_random_seed(0)
        model = kte.EstimatorModel(model_fn, config=config, train_batch_size=16)
        model.compile()
        last_loop = _LastLoopLosses()
        model.fit((images, labels), epochs=1, shuffle=False, verbose=0, callbacks=[last_loop])
        losses.append(last_loop.losses)
    np.testing.assert_allclose(losses[1], losses[0], atol=1e-4)


@pytest.mark.parametrize(
    "features, dims, message",
    [
        ({"image": np.zeros((8, 4, 4, 1))}, [[1, 2, 1, 1], None], r"keys \['image'\]"),
        (np.zeros((8, 4, 4, 1)), [{"image": [1, 2, 1, 1]}, None], "is a dict"),
        (np.zeros((8, 4, 4)), [[1, 2, 1, 1], None], "has 4 dims, but the input tensor has rank 3"),
        (np.zeros((8, 3, 4, 1)), [[1, 2, 1, 1], None], r"splits dimension 1 \(size 3\) in 2"),
    ],
)
def test_input_partition_dims_must_match_the_input(features, dims, message):
    config = _spatial_config(dims, 2)
    distribution = distribute.distribution_for(config)
    with pytest.raises(ValueError, match=message):
        placement.input_shardings(
            (features, np.zeros(8)), distribution, stacked=False,
            partition_dims=config.tpu_config.input_partition_dims,
        )


def test_input_partition_dims_need_per_host_v2_and_the_core_count():
    with pytest.raises(ValueError, match="PER_HOST_V2"):
        kte.TPUConfig(num_cores_per_replica=2, input_partition_dims=[[1, 2, 1, 1], None])
    with pytest.raises(ValueError, match="num_cores_per_replica=4"):
        kte.TPUConfig(
            num_cores_per_replica=4,
            per_host_input_for_training=IPC.PER_HOST_V2,
            input_partition_dims=[[1, 2, 1, 1], None],
        )


# ----------------------------------------------------------------------
# per_host_input_for_training / eval_training_input_configuration


@pytest.mark.parametrize(
    "per_host, eval_config, mode, hosts, calls, batch_size, group",
    [
        # One process, 8 replicas, global batch 64.
        (True, IPC.PER_HOST_V1, TRAIN, 1, 1, 64, 1),
        (IPC.PER_HOST_V1, IPC.PER_HOST_V1, TRAIN, 1, 1, 64, 1),
        (IPC.PER_HOST_V2, IPC.PER_HOST_V1, TRAIN, 1, 1, 8, 8),
        (False, IPC.PER_HOST_V1, TRAIN, 1, 8, 8, 1),
        (IPC.BROADCAST, IPC.PER_HOST_V1, TRAIN, 1, 1, 64, 1),
        (False, IPC.PER_HOST_V1, EVAL, 1, 1, 64, 1),  # PER_SHARD_V1 only trains.
        (IPC.PER_HOST_V2, IPC.SLICED, EVAL, 1, 1, 64, 1),
        (IPC.PER_HOST_V2, IPC.PER_HOST_V1, PREDICT, 1, 1, 8, 8),
        # Two processes (hosts), 4 replicas each.
        (True, IPC.PER_HOST_V1, TRAIN, 2, 1, 32, 1),
        (IPC.PER_HOST_V2, IPC.PER_HOST_V1, TRAIN, 2, 1, 8, 4),
        (False, IPC.PER_HOST_V1, TRAIN, 2, 4, 8, 1),
    ],
)
def test_input_deployment_table(per_host, eval_config, mode, hosts, calls, batch_size, group):
    config = kte.TPUConfig(
        per_host_input_for_training=per_host, eval_training_input_configuration=eval_config
    )
    plan = context_lib.plan_input(
        config, mode, 64, num_replicas=8, process_index=hosts - 1, process_count=hosts
    )
    assert len(plan.contexts) == calls
    assert {c.batch_size for c in plan.contexts} == {batch_size}
    assert plan.group == group
    assert [c.invocation_index for c in plan.contexts] == [
        (hosts - 1) * calls + i for i in range(calls)
    ]
    assert all(c.num_hosts == hosts and c.current_host == hosts - 1 for c in plan.contexts)


@pytest.mark.parametrize("deployment", [IPC.BROADCAST, IPC.SLICED])
def test_process_zero_only_deployments_refuse_several_processes(deployment):
    config = kte.TPUConfig(
        per_host_input_for_training=IPC.BROADCAST if deployment == IPC.BROADCAST else True,
        eval_training_input_configuration=deployment if deployment == IPC.SLICED else 2,
    )
    mode = TRAIN if deployment == IPC.BROADCAST else EVAL
    with pytest.raises(ValueError, match="process 0 only"):
        context_lib.plan_input(config, mode, 64, num_replicas=8, process_index=0, process_count=2)


def test_use_tpu_false_passes_the_batch_size_unmodified():
    config = kte.TPUConfig(per_host_input_for_training=IPC.PER_HOST_V2)
    plan = context_lib.plan_input(config, TRAIN, 64, num_replicas=1, use_tpu=False)
    assert [c.batch_size for c in plan.contexts] == [64]


def _recording_input_fn(calls):
    def input_fn(params):
        context = params["context"]
        calls.append((params["batch_size"], context.invocation_index, context.input_deployment))
        index = np.arange(context.invocation_index, 256, context.total_invocations)
        batch = params["batch_size"]

        class Batches:
            def __iter__(self):
                for start in range(0, len(index) - batch + 1, batch):
                    rows = index[start:start + batch]
                    yield X[rows], Y[rows]

        return Batches()

    return input_fn


@pytest.mark.parametrize(
    "per_host, calls, batch_size",
    [(True, 1, 64), (IPC.PER_HOST_V2, 1, 8), (False, 8, 8), (IPC.BROADCAST, 1, 64)],
)
def test_fit_calls_input_fn_as_deployed_and_model_fn_sees_the_global_batch(
    per_host, calls, batch_size
):
    seen = []
    recorded = []

    def model_fn(features, labels, mode, params):
        seen.append(params["batch_size"])
        return mlp_fn(features, labels, mode, params)

    config = _config(per_host_input_for_training=per_host)
    model = kte.EstimatorModel(model_fn, config=config, train_batch_size=64)
    model.compile()
    model.fit(_recording_input_fn(recorded), epochs=1, verbose=0)
    assert len(recorded) == calls
    assert {b for b, _, _ in recorded} == {batch_size}
    assert sorted(i for _, i, _ in recorded) == list(range(calls))
    assert set(seen) == {64}
    assert model.global_step == 256 // 64


def test_context_describes_the_deployment():
    recorded = []
    model = kte.EstimatorModel(
        mlp_fn, config=_config(per_host_input_for_training=IPC.PER_HOST_V2), train_batch_size=64
    )
    model.build_for(TRAIN, _recording_input_fn(recorded))
    assert recorded == [(8, 0, IPC.PER_HOST_V2)]


def test_input_fn_params_carry_the_context():
    contexts = []

    def input_fn(params):
        contexts.append(params["context"])
        return X, Y

    model = kte.EstimatorModel(mlp_fn, config=_config(), train_batch_size=32)
    model.compile()
    model.fit(input_fn, epochs=1, verbose=0)
    (context,) = contexts
    assert (context.num_replicas, context.num_hosts, context.current_host) == (8, 1, 0)
    assert context.input_deployment == IPC.PER_HOST_V1
    assert context.current_input_fn_deployment() == ("/device:CPU:0", 0, 1, 8)
