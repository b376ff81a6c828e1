"""The estimator's log lines follow TensorFlow's and absl's verbosity, as TF1 users expect."""

import logging
import os
import re
import subprocess
import sys
import textwrap

import pytest

from keras_tpu_estimator.log_lines import VerbosityLogger

# -- VerbosityLogger, on loggers of its own. ----------------------------------


@pytest.fixture
def loggers(request):
    """`(own, followed, log)`: fresh loggers named after the test, restored afterwards."""
    base = "test_log_lines." + re.sub(r"\W", "_", request.node.name)
    own, followed = logging.getLogger(base + ".own"), logging.getLogger(base + ".followed")
    yield own, followed, VerbosityLogger(own, followed=(followed.name,))
    for logger in (own, followed):
        logger.setLevel(logging.NOTSET)
        logger.handlers.clear()
        logger.propagate = True


class Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


def test_info_is_not_shown_when_nothing_asks_for_it(loggers):
    own, followed, log = loggers
    assert not log.isEnabledFor(logging.INFO)


def test_a_followed_loggers_level_shows_the_line_through_its_handler_once(loggers):
    own, followed, log = loggers
    followed.setLevel(logging.INFO)
    handler, above = Records(), Records()
    followed.addHandler(handler)
    followed.parent.addHandler(above)  # Propagation would show the line twice.
    try:
        log.info("loss = %s, step = %d", 0.5, 10)
    finally:
        followed.parent.removeHandler(above)
    [record] = handler.records
    assert (record.name, record.getMessage()) == (own.name, "loss = 0.5, step = 10")
    assert above.records == []


def test_a_followed_logger_without_handlers_shows_through_its_parents(loggers):
    own, followed, log = loggers
    followed.setLevel(logging.INFO)
    handler = Records()
    followed.parent.addHandler(handler)
    try:
        log.info("global_step/sec: %g", 12.5)
    finally:
        followed.parent.removeHandler(handler)
    assert [r.getMessage() for r in handler.records] == ["global_step/sec: 12.5"]


def test_a_level_set_on_the_own_logger_decides_alone(loggers):
    own, followed, log = loggers
    followed.setLevel(logging.INFO)
    own.setLevel(logging.ERROR)
    assert not log.isEnabledFor(logging.INFO)


def test_a_python_configured_own_logger_propagates_as_usual(loggers):
    own, followed, log = loggers
    own.setLevel(logging.INFO)
    handler, above = Records(), Records()
    own.addHandler(handler)
    own.parent.addHandler(above)
    try:
        log.info("Saving checkpoints for %d into %s.", 4, "dir/4")
    finally:
        own.parent.removeHandler(above)
    assert len(handler.records) == len(above.records) == 1


def test_the_record_names_the_callers_line(loggers):
    own, followed, log = loggers
    own.setLevel(logging.INFO)
    handler = Records()
    own.addHandler(handler)
    log.info("here")
    [record] = handler.records
    assert (record.filename, record.funcName) == (os.path.basename(__file__),
                                                  "test_the_record_names_the_callers_line")


def test_with_no_handler_anywhere_an_asked_for_line_still_prints(loggers, capsys):
    own, followed, log = loggers
    followed.setLevel(logging.INFO)
    followed.propagate = False  # No handler up the hierarchy either.
    log.info("Loss for final step: %s.", 0.25)
    assert capsys.readouterr().err == "Loss for final step: 0.25.\n"


# -- The switches TF1 programs use, in a program of their own. ----------------

PROGRAM = textwrap.dedent('''
    import sys

    switch = sys.argv[1]
    if switch == "tensorflow":  # First, as TF1 programs do.
        import tensorflow as tf
        tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    elif switch == "absl":
        from absl import logging as absl_logging
        absl_logging.set_verbosity(absl_logging.INFO)

    import keras_tpu_estimator as kte
    import keras
    import numpy as np


    def model_fn(features, labels, mode):
        w = kte.get_variable("w", shape=(), initializer="ones")
        loss = keras.ops.mean(features) * w
        if mode == kte.ModeKeys.EVAL:
            return kte.TPUEstimatorSpec(mode, loss=loss)
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1))


    def input_fn(params):
        return np.ones((params["batch_size"] * 4, 1), "float32")


    def main(argv):
        config = kte.RunConfig(model_dir="model", log_step_count_steps=2,
                               save_checkpoints_steps=4,
                               tpu_config=kte.TPUConfig(iterations_per_loop=2))
        estimator = kte.TPUEstimator(model_fn=model_fn, config=config, train_batch_size=8,
                                     eval_batch_size=8)
        estimator.train(input_fn, max_steps=4)
        estimator.evaluate(input_fn, steps=2)


    if switch == "absl.app":
        from absl import app
        app.run(main, argv=sys.argv[:1] + sys.argv[2:])
    else:
        main(sys.argv)
''')

# What each line looks like, in any of the formats (Python's, absl's).
EXPECTED = [
    r"Saving checkpoints for 0 into \S+0\.",
    r"loss = 0\.9\d*, step = 1",  # The step the loop's last step read, as TF logged it.
    r"Saving checkpoints for 4 into \S+4\.",
    r"global_step/sec: [\d.e+]+",
    r"loss = 0\.\d+, step = 3 \(\d+\.\d{3} sec\)",
    r"Loss for final step: 0\.\d+\.",
    r"Starting evaluation at \S+",
    r"Inference Time : \d+\.\d{5}s",
    r"Finished evaluation at \S+",
    r"Saving dict for global step 4: global_step = 4, loss = 0\.\d+",
]


def run_program(tmp_path, *args):
    (tmp_path / "program.py").write_text(PROGRAM)
    env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, "program.py", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr


@pytest.mark.parametrize("args", [
    ["tensorflow"],          # tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    ["absl"],                # absl.logging.set_verbosity(absl.logging.INFO)
    ["absl.app", "--verbosity=0"],  # absl.app.run, its --verbosity flag
])
def test_each_switch_shows_every_estimator_line_once_in_order(tmp_path, args):
    stderr = run_program(tmp_path, *args)
    lines = [line for line in stderr.splitlines()
             if any(re.search(pattern + "$", line) for pattern in EXPECTED)]
    assert len(lines) == len(EXPECTED), stderr[-3000:]
    for line, pattern in zip(lines, EXPECTED):
        assert re.search(pattern + "$", line), (line, pattern)


def test_by_default_no_estimator_line_is_shown(tmp_path):
    stderr = run_program(tmp_path, "none")
    assert not [line for line in stderr.splitlines() if "keras_tpu_estimator" in line
                or any(re.search(pattern, line) for pattern in EXPECTED)], stderr[-3000:]
