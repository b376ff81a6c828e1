"""Tables of cases run the two ways the differential tests compare.

A case is a function of a TF1 namespace `ns`. `in_tensorflow(cases)` builds
every case with `ns = tf.compat.v1` in one TensorFlow graph and runs them in
one `Session` (the reference); `compiled(cases)` builds every case with
`ns = tf1` in one `jax.jit` program, as a `model_fn`'s ops run in the step.
Both return `(values, errors)`: `{name: value}`, and `{name: exception}` for
the cases that raised while being built (each case's test reports its own).
"""

import functools

import jax
import tensorflow as tf

import keras_tpu_estimator.compat.v1 as tf1


def _run_all(cases, run, build):
    errors = {}

    def outputs():
        built = {}
        for name, case in cases.items():
            try:
                built[name] = build(case)
            except Exception as error:  # Reported by the case's test.
                errors[name] = error
        return built

    return run(outputs), errors


def in_tensorflow(cases):
    """Every case in one TensorFlow graph, run by one Session."""
    def run(outputs):
        with tf.Graph().as_default():
            fetches = outputs()
            with tf.compat.v1.Session() as session:
                return session.run(fetches)

    return _run_all(cases, run, lambda case: case(tf.compat.v1))


def compiled(cases):
    """Every case in one `jax.jit` program."""
    return _run_all(cases, lambda outputs: jax.jit(outputs)(), lambda case: case(tf1))


class Table:
    """A table of cases, run both ways once, when a test first asks.

    ```python
    TABLE = tf_reference.Table(CASES)

    def test_op_matches_tensorflow(name):
        _check(*TABLE.pair(name))
    ```
    """

    def __init__(self, cases):
        self.cases = cases

    @functools.cached_property
    def reference(self):
        """`in_tensorflow(cases)`."""
        return in_tensorflow(self.cases)

    @functools.cached_property
    def library(self):
        """`compiled(cases)`."""
        return compiled(self.cases)

    def pair(self, name):
        """`(TensorFlow's value, the library's)` of case `name`; raises what building it raised."""
        (expected, tf_errors), (actual, errors) = self.reference, self.library
        assert name not in tf_errors, tf_errors.get(name)
        if name in errors:
            raise errors[name]
        return expected[name], actual[name]
