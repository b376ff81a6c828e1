"""One-time start-up costs of the CPU runtimes are paid beside the tracing."""

import threading
import types

import jax
import pytest

from keras_tpu_estimator._backend import warm_up


@pytest.fixture
def fresh_process(monkeypatch):
    """As if XLA:CPU's runtime had not been warmed up in this process."""
    monkeypatch.setattr(warm_up, "_started", threading.Event())


def test_beside_runs_on_a_named_daemon_thread():
    ran_on = []
    warm_up.beside(lambda value: ran_on.append((value, threading.current_thread())), 7).wait()
    (value, thread), = ran_on
    assert value == 7 and thread.daemon and thread.name == warm_up.THREAD_NAME
    assert thread is not threading.current_thread()


def test_beside_runs_what_it_is_given_in_order_one_at_a_time():
    order, running = [], []

    def work(i):
        running.append(i)
        assert len(running) == 1
        order.append(i)
        running.remove(i)

    done = [warm_up.beside(work, i) for i in range(5)]
    for event in done:
        event.wait()
    assert order == [0, 1, 2, 3, 4]


def test_beside_drops_what_the_function_raises_and_goes_on():
    def fails():
        raise RuntimeError("reported by the real call")

    ran, errors = [], []
    previous, threading.excepthook = threading.excepthook, errors.append
    try:
        warm_up.beside(fails)
        warm_up.beside(ran.append, 1).wait()
    finally:
        threading.excepthook = previous
    assert ran == [1] and errors == []


def test_the_xla_cpu_runtime_is_warmed_up_beside_the_block_and_done_when_it_ends(
        fresh_process, monkeypatch):
    ran_on = []
    monkeypatch.setattr(warm_up, "_first_dot",
                        lambda a, b: ran_on.append(threading.current_thread()) or a @ b)
    with warm_up.xla_cpu_runtime(jax.devices("cpu")):
        pass
    assert len(ran_on) == 1 and ran_on[0].name == warm_up.THREAD_NAME


def test_the_xla_cpu_runtime_is_warmed_up_once_per_process(fresh_process, monkeypatch):
    ran = []
    monkeypatch.setattr(warm_up, "_first_dot", lambda a, b: ran.append(1) or a @ b)
    for _ in range(3):
        with warm_up.xla_cpu_runtime(jax.devices("cpu")):
            pass
    assert ran == [1]


def test_devices_other_than_cpu_warm_nothing_up(fresh_process, monkeypatch):
    ran = []
    monkeypatch.setattr(warm_up, "_first_dot", lambda a, b: ran.append(1))
    with warm_up.xla_cpu_runtime([types.SimpleNamespace(platform="gpu")]):
        pass
    assert ran == [] and not warm_up._started.is_set()


@pytest.mark.filterwarnings("ignore:os.fork")  # The child runs no JAX.
def test_a_forked_child_warms_up_on_its_own_thread():
    import multiprocessing

    def child(queue):
        ran_on = []
        warm_up.beside(lambda: ran_on.append(threading.current_thread().name)).wait(timeout=30)
        queue.put(ran_on)

    with warm_up._lock:  # Held at the fork: the child's own lock is free.
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        process = context.Process(target=child, args=(queue,))
        process.start()
    assert queue.get(timeout=60) == [warm_up.THREAD_NAME]
    process.join(timeout=60)
