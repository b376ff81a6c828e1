"""`CompileCounter`: the XLA compilations of a block, for tests that bound them."""

import threading

import jax

from keras_tpu_estimator._backend import warm_up

BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"


class CompileCounter:
    """Counts XLA compilations (JAX's compile-duration events) inside a block.

    ```python
    with CompileCounter() as compiles:
        model.fit(...)
    assert compiles.count <= 2
    ```
    """

    def __enter__(self):
        self.count = 0
        self._listener = lambda event, seconds, **kwargs: self._record(event)
        jax.monitoring.register_event_duration_secs_listener(self._listener)
        return self

    def _record(self, event):
        # The model's programs: not the one-time warm-up of XLA:CPU's runtime.
        if event == BACKEND_COMPILE and threading.current_thread().name != warm_up.THREAD_NAME:
            self.count += 1

    def __exit__(self, *exc):
        jax.monitoring.unregister_event_duration_listener(self._listener)
