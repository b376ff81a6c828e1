"""Two processes on 127.0.0.1 train one model (JAX distributed on CPU, gloo).

Each process runs `tests/multiprocess_worker.py` with 2 local devices: a
mesh of 4 devices, 2 hosts, joined by `kte.distribute.initialize` with its
default timeouts. Three launches (about 10 s each, most of it starting the
processes): "sharded,train,estimator" (a sharded array saved and restored, an
EstimatorModel's fit, TPUEstimator's train, evaluate, predict and export, one
after the other in one cluster), "killed" (process 1 dies mid-save) and
"resume" (restart on the directory "killed" left). The processes are bounded
by timeouts; a hung worker's stacks go to its log.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

WORKER = os.path.join(os.path.dirname(__file__), "multiprocess_worker.py")
NUM_EXAMPLES = 256  # As in the worker.
NUM_UNEVEN = 250


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(tmp_path, scenario):
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["PYTHONUNBUFFERED"] = "1"
    processes = []
    for i in range(2):
        log = open(tmp_path / f"worker_{i}.log", "w")
        processes.append(subprocess.Popen(
            [sys.executable, WORKER, str(i), str(port), str(tmp_path / f"out_{i}.json"), scenario],
            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
        ))
    return processes


def _stop(processes):
    running = [p for p in processes if p.poll() is None]
    for p in running:
        p.send_signal(signal.SIGUSR1)  # The worker's stacks, into its log.
    time.sleep(1 if running else 0)
    for p in running:
        p.kill()
        p.wait()


def _run(tmp_path, scenario):
    """Both processes' reports (`{scenario: report}`) of `scenario`, run to the end."""
    processes = _start(tmp_path, scenario)
    try:
        codes = [p.wait(timeout=180) for p in processes]
    finally:
        _stop(processes)
    logs = [(tmp_path / f"worker_{i}.log").read_text()[-3000:] for i in range(2)]
    assert codes == [0, 0], logs
    return [json.loads((tmp_path / f"out_{i}.json").read_text()) for i in range(2)]


@pytest.fixture(scope="module")
def completed_run(tmp_path_factory):
    """Both processes' reports of the scenarios that run to the end, and their directory."""
    directory = tmp_path_factory.mktemp("multiprocess")
    return _run(directory, "sharded,train,estimator"), directory


@pytest.fixture(scope="module")
def trained(completed_run):
    """Both processes' reports after fit (2 epochs) and evaluate."""
    return [report["train"] for report in completed_run[0]]


def test_processes_form_one_cluster(trained):
    assert [r["process_count"] for r in trained] == [2, 2]
    assert [r["devices"] for r in trained] == [4, 4]


def test_both_processes_end_with_identical_weights(trained):
    assert trained[0]["weights"] == trained[1]["weights"]
    assert trained[0]["global_step"] == trained[1]["global_step"] == 2 * NUM_EXAMPLES // 32


def test_each_input_fn_reads_only_its_own_shard(trained):
    shards = [set(r["train"]) for r in trained]
    assert shards[0] == set(range(0, NUM_EXAMPLES, 2))
    assert shards[1] == set(range(1, NUM_EXAMPLES, 2))


def test_input_fn_gets_the_per_host_batch_and_context(trained):
    for host, report in enumerate(trained):
        for context in report["contexts"]:
            assert context["batch_size"] == 32 // 2
            assert context["num_hosts"] == 2
            assert context["current_host"] == host
            assert context["num_replicas"] == 4
            assert context["invocation_index"] == host


def test_evaluation_counts_every_example_once(trained):
    for report in trained:
        assert report["results"]["count"] == NUM_EXAMPLES
        assert report["results"]["id_sum"] == sum(range(NUM_EXAMPLES))
    assert trained[0]["results"] == trained[1]["results"]


@pytest.fixture(scope="module")
def estimator_run(completed_run):
    """Both processes' reports of the "estimator" scenario, and its directory."""
    reports, directory = completed_run
    return [report["estimator"] for report in reports], directory


def test_tpu_estimator_trains_checkpoints_and_evaluates_across_processes(estimator_run):
    reports, directory = estimator_run
    assert reports[0]["kernel"] == reports[1]["kernel"]
    assert [r["checkpoint"] for r in reports] == ["model.ckpt-8", "model.ckpt-8"]
    for report in reports:
        assert report["results"]["count"] == NUM_EXAMPLES
        assert report["results"]["global_step"] == 8
    # Only process 0 writes event files, as only TensorFlow's chief did.
    events = [f for f in os.listdir(directory / "model_dir") if f.startswith("events")]
    assert len(events) == 1
    assert len(os.listdir(directory / "model_dir" / "eval")) == 1


def test_each_process_predicts_its_own_examples_once_in_input_order(estimator_run):
    reports, _ = estimator_run
    for host, report in enumerate(reports):
        assert report["predicted_ids"] == list(range(host, NUM_UNEVEN, 2))


def test_an_export_from_every_process_writes_one_saved_model(estimator_run):
    reports, directory = estimator_run
    exports = os.listdir(directory / "model_dir" / "export")
    assert len(exports) == 1
    assert reports[0]["export"] == reports[1]["export"]
    assert os.path.exists(os.path.join(reports[0]["export"], "saved_model.pb"))


def test_an_evaluation_whose_last_batch_divides_over_no_replicas_counts_every_example(
    estimator_run,
):
    reports, _ = estimator_run
    for report in reports:
        assert report["uneven_results"]["count"] == NUM_UNEVEN
        assert report["uneven_results"]["id_sum"] == sum(range(NUM_UNEVEN))


def _wait_for_death(processes, timeout):
    """Waits until one of `processes` ends; returns its index and the time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for i, p in enumerate(processes):
            if p.poll() is not None:
                return i, time.monotonic()
        time.sleep(0.05)
    raise AssertionError(f"no process ended within {timeout} s")


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory):
    """Process 1 killed as it saves step 8; the survivor's exit code, delay and log."""
    directory = tmp_path_factory.mktemp("killed")
    processes = _start(directory, "killed")
    try:
        dead, died_at = _wait_for_death(processes, 180)
        code = processes[0].wait(timeout=60)
        elapsed = time.monotonic() - died_at
    finally:
        _stop(processes)
    assert (dead, processes[1].returncode) == (1, -signal.SIGKILL)
    return code, elapsed, (directory / "worker_0.log").read_text(), directory


def test_a_killed_process_ends_the_other_within_seconds_naming_it(killed_run):
    code, elapsed, log, _ = killed_run
    assert code != 0
    assert elapsed < 15, elapsed
    assert "stopped sending heartbeats" in log and "Task 1 heartbeat timeout" in log, log[-3000:]


def test_a_restart_after_a_kill_resumes_from_the_last_complete_checkpoint(killed_run):
    *_, directory = killed_run
    model_dir = directory / "model_dir"
    # A save killed half-way leaves its temporary directory (SIGKILL cannot be
    # caught): the restart must neither read nor trip over it.
    (model_dir / "model.ckpt-8_temp").mkdir()
    (model_dir / "model.ckpt-8_temp" / "part-00000-of-00002.index").write_bytes(b"")
    reports = [report["resume"] for report in _run(directory, "resume")]
    assert [r["start"] for r in reports] == ["model.ckpt-4", "model.ckpt-4"]
    assert [r["end"] for r in reports] == ["model.ckpt-12", "model.ckpt-12"]
    assert {f"model.ckpt-{step}.index" for step in (4, 8, 12)} <= set(reports[0]["model_dir"])
    assert "model.ckpt-8_temp" not in reports[0]["model_dir"]


@pytest.fixture(scope="module")
def sharded_run(completed_run):
    """Both processes' reports of saving and restoring an array split over them."""
    reports, directory = completed_run
    return [report["sharded"] for report in reports], directory / "sharded_dir"


def test_each_process_writes_its_slices_of_a_sharded_array_into_one_checkpoint(sharded_run):
    import numpy as np
    import tensorflow as tf

    reports, model_dir = sharded_run
    assert [r["latest"] for r in reports] == ["model.ckpt-3", "model.ckpt-3"]
    # One data file per process, merged under one index (TensorFlow's sharded save).
    assert sorted(n for n in os.listdir(model_dir) if ".data-" in n) == [
        "model.ckpt-3.data-00000-of-00002", "model.ckpt-3.data-00001-of-00002"]
    reader = tf.train.load_checkpoint(str(model_dir / "model.ckpt-3"))
    np.testing.assert_array_equal(reader.get_tensor("w"),
                                  np.arange(24, dtype="float32").reshape(8, 3))
    assert reader.get_tensor("global_step") == 3


def test_each_process_restores_its_own_slices_of_a_sharded_array(sharded_run):
    reports, _ = sharded_run
    for report in reports:
        assert report["same_sharding"]
        assert report["local"] == report["expected_local"]


@pytest.mark.parametrize("name", [
    "heartbeat_timeout_seconds", "initialization_timeout", "shutdown_timeout_seconds",
])
@pytest.mark.parametrize("value", [0, -5, 2.5, "10", True])
def test_initialize_refuses_a_timeout_that_is_not_a_positive_int(name, value):
    import keras_tpu_estimator as kte

    with pytest.raises(ValueError, match=f"`{name}` must be a positive int.*{name}={value!r}"):
        kte.distribute.initialize("127.0.0.1:1", num_processes=2, process_id=0, **{name: value})
