"""A patch of a class of Keras or JAX, in place while any block that needs it is open.

The reaches that patch a class for the length of a block (`tensor_views`,
`tracer_iteration`, `layer_updates`) may be entered by several threads and
nested: the first block to open installs the patch, the last to close
removes it.
"""

import contextlib
import threading


class SharedPatch:
    """`install(*args)` at the first open block, `uninstall()` when the last closes.

    Args:
        install: installs the patch; takes the arguments of the first
            `active(...)`.
        uninstall: removes it.

    Example:

    ```python
    patch = SharedPatch(lambda: setattr(Layer, "updates", []),
                        lambda: delattr(Layer, "updates"))
    with patch.active():
        ...
    ```
    """

    def __init__(self, install, uninstall):
        self._install = install
        self._uninstall = uninstall
        self._lock = threading.Lock()
        self._users = 0

    @contextlib.contextmanager
    def active(self, *args):
        """The patch is in place inside the block (installed with `args` if first)."""
        with self._lock:
            if self._users == 0:
                self._install(*args)
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    self._uninstall()
