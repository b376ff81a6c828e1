"""Two processes on 127.0.0.1 train one model (JAX distributed on CPU, gloo).

Each process runs `tests/multiprocess_worker.py` with 2 local devices: a
mesh of 4 devices, 2 hosts. The processes are bounded by timeouts.
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
            stdout=log, stderr=subprocess.STDOUT, env=env,
        ))
    return processes


def _stop(processes):
    for p in processes:
        if p.poll() is None:
            p.kill()
            p.wait()


def _run(tmp_path, scenario):
    """Both processes' reports of `scenario`, run to the end."""
    processes = _start(tmp_path, scenario)
    try:
        codes = [p.wait(timeout=180) for p in processes]
    finally:
        _stop(processes)
    logs = [(tmp_path / f"worker_{i}.log").read_text()[-3000:] for i in range(2)]
    assert codes == [0, 0], logs
    return [json.loads((tmp_path / f"out_{i}.json").read_text()) for i in range(2)]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Both processes' reports after fit (2 epochs) and evaluate."""
    return _run(tmp_path_factory.mktemp("multiprocess"), "train")


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


def test_a_killed_process_ends_the_other_with_a_clear_error(tmp_path):
    processes = _start(tmp_path, "endless")
    try:
        started = tmp_path / "out_1.json.started"
        deadline = time.monotonic() + 120
        while not started.exists():
            assert time.monotonic() < deadline, "training did not start"
            assert all(p.poll() is None for p in processes)
            time.sleep(0.2)
        processes[1].send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        code = processes[0].wait(timeout=60)
        elapsed = time.monotonic() - killed_at
    finally:
        _stop(processes)
    log = (tmp_path / "worker_0.log").read_text()
    assert code != 0
    assert elapsed < 60
    assert "stopped sending heartbeats" in log or "another task died" in log, log[-3000:]


def test_tpu_estimator_trains_checkpoints_and_evaluates_across_processes(tmp_path):
    reports = _run(tmp_path, "estimator")
    assert reports[0]["kernel"] == reports[1]["kernel"]
    assert [r["checkpoint"] for r in reports] == ["8", "8"]
    for report in reports:
        assert report["results"]["count"] == NUM_EXAMPLES
        assert report["results"]["global_step"] == 8
    # Only process 0 writes event files, as only TensorFlow's chief did.
    events = [f for f in os.listdir(tmp_path / "model_dir") if f.startswith("events")]
    assert len(events) == 1
    assert len(os.listdir(tmp_path / "model_dir" / "eval")) == 1
