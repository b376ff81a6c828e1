"""`TPUConfig`, `RunConfig` and `InputPipelineConfig`: TF's rules and wording."""

import copy
import os
import pathlib
import pickle
import re
import warnings

import numpy as np
import pytest

from keras_tpu_estimator.config import InputPipelineConfig
from keras_tpu_estimator.config import IterationsPerLoop
from keras_tpu_estimator.config import RunConfig
from keras_tpu_estimator.config import TPUConfig
from keras_tpu_estimator.config import parse_iterations_per_loop

V2 = InputPipelineConfig.PER_HOST_V2


# ---------------------------------------------------------------------------
# InputPipelineConfig


def test_input_pipeline_constants_match_tensorflow():
    assert InputPipelineConfig.PER_SHARD_V1 == 1
    assert InputPipelineConfig.PER_HOST_V1 == 2
    assert InputPipelineConfig.PER_HOST_V2 == 3
    assert InputPipelineConfig.BROADCAST == 4
    assert InputPipelineConfig.SLICED == 5


# ---------------------------------------------------------------------------
# iterations_per_loop


@pytest.mark.parametrize(
    "value, expected",
    [
        (1, IterationsPerLoop(1, "count")),
        (100, IterationsPerLoop(100, "count")),
        (np.int64(7), IterationsPerLoop(7, "count")),
        ("25", IterationsPerLoop(25, "count")),
        ("30s", IterationsPerLoop(30, "seconds")),
        ("60m", IterationsPerLoop(3600, "seconds")),
        ("1h", IterationsPerLoop(3600, "seconds")),
        ("3600s", IterationsPerLoop(3600, "seconds")),
    ],
)
def test_parse_iterations_per_loop_accepts_counts_and_durations(value, expected):
    assert parse_iterations_per_loop(value) == expected
    assert TPUConfig(iterations_per_loop=value).iterations_per_loop_parsed == expected


@pytest.mark.parametrize(
    "value", [0, -1, "30x", 2.5, 2.0, "30S", "1H", None, True, False, "0s", "", "s",
              "-5s", "05", "1.5h", " 3s", [2]]
)
def test_invalid_iterations_per_loop_is_rejected_with_tf_message(value):
    message = (
        "Invalid TPUConfig `iterations_per_loop` value. Value must be positive "
        "integer value or time-based value `<N><s|m|h>`"
    )
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        TPUConfig(iterations_per_loop=value)
    assert f"iterations_per_loop={value!r}" in str(info.value)
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_iterations_per_loop(value)


def test_iterations_per_loop_keeps_time_string_and_stores_counts_as_int():
    assert TPUConfig(iterations_per_loop="10m").iterations_per_loop == "10m"
    count = TPUConfig(iterations_per_loop=np.int32(8)).iterations_per_loop
    assert count == 8 and type(count) is int
    assert TPUConfig(iterations_per_loop="8").iterations_per_loop == 8


def test_iterations_per_loop_defaults_to_two_steps():
    assert TPUConfig().iterations_per_loop_parsed == IterationsPerLoop(2, "count")


# ---------------------------------------------------------------------------
# TPUConfig: defaults and the namedtuple contract


def test_tpu_config_defaults_match_tensorflow():
    config = TPUConfig()
    assert config._fields == (
        "iterations_per_loop",
        "num_shards",
        "num_cores_per_replica",
        "per_host_input_for_training",
        "tpu_job_name",
        "initial_infeed_sleep_secs",
        "input_partition_dims",
        "eval_training_input_configuration",
        "experimental_host_call_every_n_steps",
    )
    assert config == (2, None, None, InputPipelineConfig.PER_HOST_V1, None, None, None,
                      InputPipelineConfig.PER_HOST_V1, 1)


def test_tpu_config_is_a_hashable_comparable_namedtuple():
    a = TPUConfig(iterations_per_loop=10, num_cores_per_replica=2)
    b = TPUConfig(10, None, 2)
    assert a == b and hash(a) == hash(b)
    assert a != TPUConfig(iterations_per_loop=11, num_cores_per_replica=2)
    assert len({a, b}) == 1


def test_tpu_config_fields_are_read_only():
    with pytest.raises(AttributeError):
        TPUConfig().iterations_per_loop = 5


def test_replace_returns_a_validated_copy():
    config = TPUConfig(iterations_per_loop=10)
    replaced = config._replace(iterations_per_loop="5m", num_cores_per_replica=4)
    assert isinstance(replaced, TPUConfig)
    assert replaced.iterations_per_loop == "5m" and replaced.num_cores_per_replica == 4
    assert config.iterations_per_loop == 10
    with pytest.raises(ValueError, match="iterations_per_loop=0"):
        config._replace(iterations_per_loop=0)


def test_replace_rejects_unknown_fields_by_name():
    with pytest.raises(ValueError, match="unexpected field names: \\['iterations'\\]"):
        TPUConfig()._replace(iterations=3)


def test_make_validates():
    with pytest.raises(ValueError, match="num_cores_per_replica must be"):
        TPUConfig._make([2, None, 3, True, None, None, None, 2, 1])


def test_tpu_config_survives_copy_and_pickle():
    config = TPUConfig(
        num_cores_per_replica=2,
        per_host_input_for_training=V2,
        input_partition_dims=[{"x": [1, 2]}, None],
    )
    assert copy.deepcopy(config) == config
    assert pickle.loads(pickle.dumps(config)) == config


# ---------------------------------------------------------------------------
# num_cores_per_replica


@pytest.mark.parametrize("cores", [None, 1, 2, 4, 8, 16, 32, 64, 128, np.int64(8)])
def test_valid_num_cores_per_replica(cores):
    assert TPUConfig(num_cores_per_replica=cores).num_cores_per_replica == cores


@pytest.mark.parametrize("cores", [0, 3, 6, 256, -2, 2.0, "2", True])
def test_invalid_num_cores_per_replica_uses_tf_message(cores):
    message = f"num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; got {cores!r}"
    with pytest.raises(ValueError, match=re.escape(message)):
        TPUConfig(num_cores_per_replica=cores)


def test_num_cores_per_replica_three_reads_exactly_as_tf():
    with pytest.raises(ValueError) as info:
        TPUConfig(num_cores_per_replica=3)
    assert str(info.value) == "num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; got 3"


# ---------------------------------------------------------------------------
# num_shards


def test_num_shards_is_accepted_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="num_shards.*deprecated and ignored"):
        config = TPUConfig(num_shards=8)
    assert config.num_shards == 8


def test_num_shards_none_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TPUConfig()


@pytest.mark.parametrize("shards", [0, -1, 2.5, "8", True])
def test_invalid_num_shards_is_rejected(shards):
    with pytest.raises(ValueError, match=re.escape(f"num_shards={shards!r}")):
        TPUConfig(num_shards=shards)


# ---------------------------------------------------------------------------
# per_host_input_for_training


@pytest.mark.parametrize(
    "value, deployment",
    [
        (True, InputPipelineConfig.PER_HOST_V1),
        (False, InputPipelineConfig.PER_SHARD_V1),
        (InputPipelineConfig.PER_SHARD_V1, InputPipelineConfig.PER_SHARD_V1),
        (InputPipelineConfig.PER_HOST_V1, InputPipelineConfig.PER_HOST_V1),
        (InputPipelineConfig.PER_HOST_V2, InputPipelineConfig.PER_HOST_V2),
        (InputPipelineConfig.BROADCAST, InputPipelineConfig.BROADCAST),
    ],
)
def test_per_host_input_for_training_is_normalized_as_in_tf(value, deployment):
    config = TPUConfig(per_host_input_for_training=value)
    assert config.input_deployment == deployment
    assert config.per_host_input_for_training == deployment


@pytest.mark.parametrize("value", [0, InputPipelineConfig.SLICED, 6, None, "PER_HOST_V2", 2.0])
def test_invalid_per_host_input_for_training_lists_allowed_values(value):
    with pytest.raises(ValueError) as info:
        TPUConfig(per_host_input_for_training=value)
    message = str(info.value)
    assert message.startswith("per_host_input_for_training must be True, False,")
    for name in ("PER_SHARD_V1", "PER_HOST_V1", "PER_HOST_V2", "BROADCAST"):
        assert name in message
    assert message.endswith(f"got {value!r}")


# ---------------------------------------------------------------------------
# eval_training_input_configuration


@pytest.mark.parametrize("value", [InputPipelineConfig.PER_HOST_V1, InputPipelineConfig.SLICED])
def test_valid_eval_training_input_configuration(value):
    config = TPUConfig(eval_training_input_configuration=value)
    assert config.eval_training_input_configuration == value


@pytest.mark.parametrize("value", [InputPipelineConfig.PER_HOST_V2, 1, True, None])
def test_invalid_eval_training_input_configuration(value):
    with pytest.raises(
        ValueError, match="eval_training_input_configuration must be PER_HOST_V1"
    ) as info:
        TPUConfig(eval_training_input_configuration=value)
    assert str(info.value).endswith(f"got {value!r}")


# ---------------------------------------------------------------------------
# input_partition_dims


@pytest.mark.parametrize(
    "dims, stored",
    [
        ([[1, 2, 2, 1], None], ((1, 2, 2, 1), None)),
        ([[1, 4]], ((1, 4),)),
        (([1, 1, 1], [4]), ((1, 1, 1), (4,))),
        ([{"image": [1, 2, 2, 1], "mask": None}, [4, 1]],
         ({"image": (1, 2, 2, 1), "mask": None}, (4, 1))),
        ([{"a": {"b": [2, 2]}}, None], ({"a": {"b": (2, 2)}}, None)),
    ],
)
def test_valid_input_partition_dims_are_stored_as_tuples(dims, stored):
    config = TPUConfig(
        num_cores_per_replica=4, per_host_input_for_training=V2, input_partition_dims=dims
    )
    assert config.input_partition_dims == stored
    assert isinstance(config.input_partition_dims, tuple)
    hash(config)


def test_input_partition_dims_are_copied_and_read_only():
    features = {"x": [1, 2]}
    config = TPUConfig(
        num_cores_per_replica=2, per_host_input_for_training=V2,
        input_partition_dims=[features, None],
    )
    features["x"] = [2, 1]
    assert config.input_partition_dims[0]["x"] == (1, 2)
    with pytest.raises(TypeError):
        config.input_partition_dims[0]["x"] = (2, 1)


@pytest.mark.parametrize(
    "dims", [[], [None, None, None], "1,2", [[1, 2], None, None], 4]
)
def test_input_partition_dims_must_have_one_or_two_entries(dims):
    message = "input_partition_dims must be a list/tuple with one or two"
    with pytest.raises(ValueError, match=message):
        TPUConfig(num_cores_per_replica=2, per_host_input_for_training=V2,
                  input_partition_dims=dims)


@pytest.mark.parametrize("per_host", [True, False, InputPipelineConfig.BROADCAST])
def test_input_partition_dims_require_per_host_v2(per_host):
    with pytest.raises(
        ValueError, match="input_partition_dims requires per_host_input_for_training=PER_HOST_V2"
    ):
        TPUConfig(num_cores_per_replica=2, per_host_input_for_training=per_host,
                  input_partition_dims=[[1, 2], None])


def test_input_partition_dims_require_num_cores_per_replica():
    with pytest.raises(
        ValueError, match="input_partition_dims requires setting num_cores_per_replica"
    ):
        TPUConfig(per_host_input_for_training=V2, input_partition_dims=[[1, 2], None])


def test_input_partition_dims_product_must_equal_num_cores_per_replica():
    with pytest.raises(ValueError) as info:
        TPUConfig(num_cores_per_replica=2, per_host_input_for_training=V2,
                  input_partition_dims=[{"x": [1, 2, 2, 1]}, None])
    message = str(info.value)
    assert "product of each input partition dim should equal to num_cores_per_replica" in message
    assert "input_partition_dims[0]['x']=[1, 2, 2, 1]" in message
    assert "product is 4" in message and "num_cores_per_replica=2" in message


def test_input_partition_dims_of_product_one_replicate():
    config = TPUConfig(num_cores_per_replica=4, per_host_input_for_training=V2,
                       input_partition_dims=[[1, 1], [1]])
    assert config.input_partition_dims == ((1, 1), (1,))


@pytest.mark.parametrize(
    "entry, shown",
    [
        ([1, 0, 2], "must be >= 1. Received: input_partition_dims[1]=[1, 0, 2]"),
        ([], "input_partition_dims[1]=[]"),
        ([1.0, 2], "input_partition_dims[1]=[1.0, 2]"),
        ("12", "input_partition_dims[1]='12'"),
        (2, "input_partition_dims[1]=2"),
    ],
)
def test_bad_input_partition_dims_entries_are_named(entry, shown):
    with pytest.raises(ValueError, match=re.escape(shown)):
        TPUConfig(num_cores_per_replica=2, per_host_input_for_training=V2,
                  input_partition_dims=[None, entry])


# ---------------------------------------------------------------------------
# Other TPUConfig fields


@pytest.mark.parametrize("n", [0, -3, 1.5, None, True])
def test_experimental_host_call_every_n_steps_must_be_positive_int(n):
    with pytest.raises(
        ValueError, match=re.escape(f"experimental_host_call_every_n_steps={n!r}")
    ):
        TPUConfig(experimental_host_call_every_n_steps=n)


@pytest.mark.parametrize("secs", [None, 0, 5, 2.5])
def test_valid_initial_infeed_sleep_secs(secs):
    assert TPUConfig(initial_infeed_sleep_secs=secs).initial_infeed_sleep_secs == secs


@pytest.mark.parametrize("secs", [-1, "5", True])
def test_invalid_initial_infeed_sleep_secs(secs):
    with pytest.raises(ValueError, match=re.escape(f"initial_infeed_sleep_secs={secs!r}")):
        TPUConfig(initial_infeed_sleep_secs=secs)


def test_tpu_job_name_must_be_a_string():
    assert TPUConfig(tpu_job_name="tpu_worker").tpu_job_name == "tpu_worker"
    with pytest.raises(ValueError, match="tpu_job_name=3"):
        TPUConfig(tpu_job_name=3)


# ---------------------------------------------------------------------------
# RunConfig: defaults


def test_run_config_defaults_match_tf_estimator():
    config = RunConfig()
    assert config.model_dir is None
    assert config.tf_random_seed is None
    assert config.save_summary_steps == 100
    assert config.save_checkpoints_steps is None
    assert config.save_checkpoints_secs == 600
    assert config.session_config is None
    assert config.keep_checkpoint_max == 5
    assert config.keep_checkpoint_every_n_hours == 10000
    assert config.log_step_count_steps == 100
    assert config.session_creation_timeout_secs == 7200
    assert config.checkpoint_save_graph_def is True
    assert config.tpu_config == TPUConfig()
    assert config.master == "" and config.evaluation_master == ""
    assert config.cluster is None


def test_runtime_free_arguments_are_kept():
    device_fn = lambda op: ""  # noqa: E731
    strategy, session_config = object(), object()
    config = RunConfig(
        session_config=session_config, device_fn=device_fn, protocol="grpc",
        train_distribute=strategy, eval_distribute=strategy, experimental_distribute=strategy,
        experimental_max_worker_delay_secs=10, checkpoint_save_graph_def=False,
        master="grpc://10.0.0.1:8470",
    )
    assert config.session_config is session_config
    assert config.device_fn is device_fn
    assert config.protocol == "grpc"
    assert config.train_distribute is strategy
    assert config.eval_distribute is strategy
    assert config.experimental_distribute is strategy
    assert config.experimental_max_worker_delay_secs == 10
    assert config.checkpoint_save_graph_def is False
    assert config.master == "grpc://10.0.0.1:8470"
    assert config.evaluation_master == "grpc://10.0.0.1:8470"


def test_evaluation_master_can_differ_from_master():
    config = RunConfig(master="a", evaluation_master="b")
    assert (config.master, config.evaluation_master) == ("a", "b")


def test_master_and_cluster_are_exclusive():
    with pytest.raises(ValueError, match="Both master and cluster are set"):
        RunConfig(master="a", cluster=object())


# ---------------------------------------------------------------------------
# RunConfig: checkpoint frequency


@pytest.mark.parametrize(
    "kwargs, steps, secs",
    [
        ({}, None, 600),
        ({"save_checkpoints_steps": 100}, 100, None),
        ({"save_checkpoints_secs": 60}, None, 60),
        ({"save_checkpoints_steps": None}, None, None),
        ({"save_checkpoints_steps": None, "save_checkpoints_secs": None}, None, None),
        ({"save_checkpoints_steps": 0}, 0, None),
    ],
)
def test_checkpoint_frequency_defaults_like_tf(kwargs, steps, secs):
    config = RunConfig(**kwargs)
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (steps, secs)


def test_checkpoint_steps_and_secs_cannot_both_be_set():
    with pytest.raises(
        ValueError,
        match=re.escape("`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set"),
    ) as info:
        RunConfig(save_checkpoints_steps=100, save_checkpoints_secs=60)
    assert "save_checkpoints_steps=100" in str(info.value)
    assert "save_checkpoints_secs=60" in str(info.value)


# ---------------------------------------------------------------------------
# RunConfig: validation


@pytest.mark.parametrize(
    "name, value",
    [
        ("tf_random_seed", 1.5),
        ("tf_random_seed", "1"),
        ("save_summary_steps", -1),
        ("save_summary_steps", 1.5),
        ("save_checkpoints_steps", -1),
        ("save_checkpoints_secs", -1),
        ("save_checkpoints_secs", "60"),
        ("keep_checkpoint_max", -1),
        ("keep_checkpoint_max", 2.0),
        ("keep_checkpoint_every_n_hours", 0),
        ("keep_checkpoint_every_n_hours", -1),
        ("log_step_count_steps", 0),
        ("experimental_max_worker_delay_secs", 1.5),
        ("session_creation_timeout_secs", 0),
        ("protocol", "http"),
        ("device_fn", "cpu:0"),
    ],
)
def test_invalid_run_config_values_name_the_argument_and_value(name, value):
    with pytest.raises(ValueError, match=re.escape(f"`{name}`")) as info:
        RunConfig(**{name: value})
    assert f"{name}={value!r}" in str(info.value)


@pytest.mark.parametrize(
    "name, value",
    [
        ("tf_random_seed", 0),
        ("tf_random_seed", np.int64(42)),
        ("save_summary_steps", 0),
        ("save_summary_steps", None),
        ("keep_checkpoint_max", None),
        ("keep_checkpoint_max", 0),
        ("keep_checkpoint_every_n_hours", 0.5),
        ("log_step_count_steps", None),
        ("save_checkpoints_secs", 0.5),
    ],
)
def test_valid_run_config_values(name, value):
    assert getattr(RunConfig(**{name: value}), name) == value


def test_bool_is_not_an_int():
    with pytest.raises(ValueError, match="keep_checkpoint_max=True"):
        RunConfig(keep_checkpoint_max=True)


# ---------------------------------------------------------------------------
# RunConfig: model_dir and tpu_config


def test_model_dir_accepts_paths_and_expands_user():
    assert RunConfig(model_dir=pathlib.Path("/tmp/m")).model_dir == "/tmp/m"
    assert RunConfig(model_dir="~/m").model_dir == os.path.join(os.path.expanduser("~"), "m")


@pytest.mark.parametrize("model_dir", ["", b"/tmp/m", 3])
def test_model_dir_must_be_a_non_empty_string_or_path(model_dir):
    with pytest.raises(ValueError, match=re.escape(f"model_dir={model_dir!r}")):
        RunConfig(model_dir=model_dir)


def test_tpu_config_is_kept():
    tpu_config = TPUConfig(iterations_per_loop=50)
    assert RunConfig(tpu_config=tpu_config).tpu_config is tpu_config


@pytest.mark.parametrize("tpu_config", [{"iterations_per_loop": 50}, (2,), 50])
def test_tpu_config_must_be_a_tpu_config(tpu_config):
    with pytest.raises(ValueError, match="`tpu_config` must be a TPUConfig"):
        RunConfig(tpu_config=tpu_config)


# ---------------------------------------------------------------------------
# RunConfig: immutability, replace, repr


def test_run_config_is_read_only():
    config = RunConfig()
    with pytest.raises(AttributeError):
        config.model_dir = "/tmp/other"
    with pytest.raises(AttributeError):
        config._model_dir = "/tmp/other"


def test_replace_returns_a_new_config_and_keeps_the_rest():
    config = RunConfig(model_dir="/tmp/a", tf_random_seed=3,
                       tpu_config=TPUConfig(iterations_per_loop=7))
    other = config.replace(model_dir="/tmp/b", tpu_config=TPUConfig(iterations_per_loop=9))
    assert other is not config and isinstance(other, RunConfig)
    assert (other.model_dir, other.tf_random_seed) == ("/tmp/b", 3)
    assert other.tpu_config.iterations_per_loop == 9
    assert (config.model_dir, config.tpu_config.iterations_per_loop) == ("/tmp/a", 7)


def test_replace_validates():
    with pytest.raises(ValueError, match="keep_checkpoint_max=-2"):
        RunConfig().replace(keep_checkpoint_max=-2)


def test_replace_rejects_unknown_names():
    with pytest.raises(ValueError, match=re.escape("Replacing ['model_path'] is not supported")):
        RunConfig().replace(model_path="/tmp")


@pytest.mark.parametrize(
    "start, change, steps, secs",
    [
        ({}, {"save_checkpoints_steps": 100}, 100, None),
        ({"save_checkpoints_steps": 100}, {"save_checkpoints_secs": 60}, None, 60),
        ({"save_checkpoints_steps": 100}, {"keep_checkpoint_max": 1}, 100, None),
        ({}, {"save_checkpoints_steps": None, "save_checkpoints_secs": None}, None, None),
    ],
)
def test_replacing_one_checkpoint_frequency_clears_the_other(start, change, steps, secs):
    config = RunConfig(**start).replace(**change)
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (steps, secs)


def test_replace_with_both_checkpoint_frequencies_fails():
    with pytest.raises(ValueError, match="cannot be both set"):
        RunConfig().replace(save_checkpoints_steps=1, save_checkpoints_secs=1)


def test_run_config_survives_copy_and_pickle():
    config = RunConfig(model_dir="/tmp/m", save_checkpoints_steps=10,
                       tpu_config=TPUConfig(iterations_per_loop="1h"))
    for clone in (copy.deepcopy(config), pickle.loads(pickle.dumps(config))):
        assert clone.model_dir == "/tmp/m"
        assert clone.save_checkpoints_steps == 10 and clone.save_checkpoints_secs is None
        assert clone.tpu_config == config.tpu_config


def test_repr_shows_the_arguments():
    text = repr(RunConfig(model_dir="/tmp/m", tpu_config=TPUConfig(iterations_per_loop=4)))
    assert text.startswith("RunConfig(model_dir='/tmp/m', ")
    assert "save_checkpoints_secs=600" in text
    assert "tpu_config=TPUConfig(iterations_per_loop=4, " in text
