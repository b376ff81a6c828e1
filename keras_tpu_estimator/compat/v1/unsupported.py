"""TF1 features this library does not run, each failing with its alternative.

They have no compiled JAX equivalent. Calling one raises
`NotImplementedError` naming what to use instead, so a port fails at its
first trace, not later. (`tf.py_func` does run, as a host callback: see
`_script_ops`.)

```python
feature = Unsupported("some_op", "compute it in input_fn instead.")
feature(x)
# NotImplementedError: tf.some_op is not supported by ...: compute it in input_fn instead.
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


outside_compilation = Unsupported(
    "tpu.outside_compilation",
    "everything in model_fn is compiled. Return the tensors through the "
    "spec's host_call (it runs on the host), or use "
    "jax.experimental.io_callback.",
)
