"""The process's TensorFlow eager context, as the C pointer its C API takes.

TensorFlow has no public way to hand its eager context to C code: its
Python `Context` keeps the `TFE_Context*` in `_handle`, a capsule.
`_backend.tf_ffi` gives it to its custom call, so TensorFlow's ops run there
with the kernel cache and threads of the Python side.
`tests/test_keras_internals.py` pins it.

```python
library.KteSetContext(tf_eager_context.pointer())
```
"""

import ctypes


def pointer():
    """The address of the process's `TFE_Context`, initialized if it was not.

    Returns:
        A nonzero int, the same for the life of the process.
    """
    from tensorflow.python.eager import context  # noqa: PLC0415

    eager = context.context()
    eager.ensure_initialized()
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get_pointer(eager._handle, None)
