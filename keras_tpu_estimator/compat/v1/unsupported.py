"""TF1 features this library does not run, each failing with its alternative.

They are rare in TPU `model_fn`s (a survey of 13 real programs found
`py_func` metrics and `outside_compilation` in one or two)
and have no compiled JAX equivalent. Calling one raises `NotImplementedError`
naming what to use instead, so a port fails at its first trace, not later.

```python
tf1.py_func(fn, [x], tf1.float32)
# NotImplementedError: tf.py_func is not supported: ... jax.pure_callback ...
```
"""


class Unsupported:
    """A TF1 function or module that raises, naming the alternative, when used."""

    def __init__(self, name, alternative):
        self._name = name
        self._alternative = alternative

    def _fail(self):
        raise NotImplementedError(
            f"tf.{self._name} is not supported by keras_tpu_estimator.compat.v1: "
            f"{self._alternative}"
        )

    def __call__(self, *args, **kwargs):
        self._fail()

    def __getattr__(self, attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return Unsupported(f"{self._name}.{attribute}", self._alternative)

    def __repr__(self):
        return f"<unsupported tf.{self._name}>"


py_func = Unsupported(
    "py_func",
    "model_fn is compiled by JAX. Compute with tf1/keras.ops, or call Python "
    "through jax.pure_callback; for a metric, use kte.metrics.keras_metric "
    "with a Keras metric.",
)
numpy_function = py_func
outside_compilation = Unsupported(
    "tpu.outside_compilation",
    "everything in model_fn is compiled. Return the tensors through the "
    "spec's host_call (it runs on the host), or use "
    "jax.experimental.io_callback.",
)
