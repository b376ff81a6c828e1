"""`tf.py_func`, `tf.numpy_function`, `tf.py_function`: Python on the host, from `model_fn`.

TF1 programs call Python from the graph for numpy post-processing
(RetinaNet's `_generate_detections`, which runs NMS in numpy), for images
drawn by matplotlib in summaries, and for side effects (COCO evaluation's
`update_op`, `tf.py_func(fn, inputs, [])`). Here `model_fn` is traced by JAX,
so the call becomes a host callback inside the compiled step:
`jax.pure_callback` when it has results, `jax.experimental.io_callback`
(never removed, even unused) when `Tout` is empty.

JAX must know the shapes of a callback's results when it compiles, and TF1
did not ask for them. They are found the way TF1 code's own shapes were:
`func` is called once on zeros of the inputs' shapes and dtypes (the first
time it is seen with those shapes; inputs that are constants of the trace,
such as anchor boxes or a class count, keep their values), and its results' shapes are then those
of every call. A `func` whose result shape depends on the input *values*
(not only shapes) must pad to a fixed size, as TPU code already did; a
`func` that cannot run on zeros, or has side effects a probe must not
trigger, gives its shapes with `output_shapes=` (not in TensorFlow).

Outside a trace (arrays in, as in a `host_call` or eager code) `func` is
simply called. As in TensorFlow, each result must have its `Tout` dtype
(numpy's `float64` is not `float32`), and no gradient flows through the
call: its inputs are treated as constants.

```python
detections = tf1.py_func(generate_detections, [boxes, scores], tf1.float32)
# numpy code on the host; detections has the shape generate_detections gave on zeros
```
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from keras_tpu_estimator.compat.v1 import _symbolic
from keras_tpu_estimator.compat.v1 import dtypes as dtypes_lib

# (func, input shapes and dtypes) -> result shapes, from probing `func` once.
_PROBED = {}


def _dtype_list(Tout, name):
    single = not isinstance(Tout, (list, tuple))
    try:
        dtypes = [dtypes_lib.as_dtype(t) for t in ([Tout] if single else Tout)]
    except TypeError as error:
        raise TypeError(f"{name}: `Tout` must be a dtype or a list of dtypes. "
                        f"Received: Tout={Tout!r} ({error})") from None
    return dtypes, single


def _numpy_dtype(dtype):
    return np.dtype(dtype.as_numpy_dtype)


def _check_results(name, func, results, dtypes, eager=False):
    """`func`'s results as numpy arrays, checked against `Tout` as TensorFlow checks them.

    `py_function` (`eager`) converts Python numbers and lists to the `Tout`
    dtype, as TensorFlow's `convert_to_tensor` did; the others take numpy's
    own dtype of what `func` returned.
    """
    if not dtypes:
        return []
    if not isinstance(results, (list, tuple)):
        results = [results]
    if len(results) != len(dtypes):
        raise ValueError(
            f"{name}: {func!r} returned {len(results)} values, but Tout lists "
            f"{len(dtypes)} ({[str(d) for d in dtypes]})"
        )
    arrays = []
    for i, (value, dtype) in enumerate(zip(results, dtypes)):
        if eager and not hasattr(value, "dtype"):
            value = np.asarray(value, dtype=_numpy_dtype(dtype))
        array = np.asarray(value)
        if array.dtype != _numpy_dtype(dtype):
            raise ValueError(
                f"{name}: the {i}-th value returned by {func!r} is {array.dtype}, but Tout "
                f"expects {dtype}. Cast it in the function (TensorFlow refused it too)."
            )
        arrays.append(array)
    return arrays


def _host_call(name, func, eager, arrays):
    """Calls `func` on numpy arrays (on TensorFlow tensors for `py_function`)."""
    if eager:
        import tensorflow as tf  # `py_function`'s func receives eager tensors.

        arrays = [tf.constant(a) for a in arrays]
    return func(*arrays)


def _to_jax_results(arrays):
    return [np.asarray(a, dtype=jax.dtypes.canonicalize_dtype(a.dtype)) for a in arrays]


def _constant(value):
    """A constant input as numpy, in the dtype the step computes it in (3 -> int32)."""
    array = np.asarray(value)
    return array.astype(jax.dtypes.canonicalize_dtype(array.dtype), copy=False)


def _result_shapes(name, func, eager, inputs, dtypes, output_shapes):
    if output_shapes is not None:
        shapes = output_shapes if isinstance(output_shapes, (list, tuple)) and (
            not output_shapes or isinstance(output_shapes[0], (list, tuple))) else [output_shapes]
        if len(shapes) != len(dtypes):
            raise ValueError(f"{name}: `output_shapes` gives {len(shapes)} shapes for "
                             f"{len(dtypes)} results. Received: output_shapes={output_shapes!r}")
        return [tuple(int(d) for d in s) for s in shapes]
    signature = tuple((tuple(x.shape), str(x.dtype)) for x in inputs)
    try:
        key = (func, signature)
        hash(key)
    except TypeError:
        key = None
    if key is not None and key in _PROBED:
        return _PROBED[key]
    # Traced inputs become zeros; constants (anchors, a class count) keep their values.
    probe = [np.zeros(x.shape, x.dtype) if isinstance(x, jax.core.Tracer) else x
             for x in inputs]
    try:
        results = _check_results(name, func, _host_call(name, func, eager, probe), dtypes,
                                  eager)
    except Exception as error:
        raise ValueError(
            f"{name}: the shapes of {func!r}'s results are needed to compile model_fn, and "
            f"calling it once on zeros of its input shapes {[s for s, _ in signature]} "
            f"failed: {type(error).__name__}: {error}. Give them with "
            f"{name}(..., output_shapes=[shape, ...])."
        ) from error
    shapes = [tuple(r.shape) for r in results]
    if key is not None:
        _PROBED[key] = shapes
    return shapes


def _call(name, func, inp, Tout, eager, output_shapes):
    if not callable(func):
        raise TypeError(f"{name}: `func` must be callable. Received: func={func!r}")
    if not isinstance(inp, (list, tuple)):
        inp = [inp]
    dtypes, single = _dtype_list(Tout, name)

    def body(*inputs):
        if not any(isinstance(x, jax.core.Tracer) for x in inputs):
            results = _check_results(
                name, func, _host_call(name, func, eager, [np.asarray(x) for x in inputs]), dtypes,
                eager)
            return [jnp.asarray(r) for r in _to_jax_results(results)]
        # Traced inputs stay tracers; constants become numpy arrays (values known).
        inputs = [x if isinstance(x, jax.core.Tracer) else _constant(x) for x in inputs]
        shapes = []

        def on_host(*arrays):
            results = _check_results(
                name, func, _host_call(name, func, eager, [np.asarray(a) for a in arrays]),
                dtypes, eager)
            for i, (result, shape) in enumerate(zip(results, shapes)):
                if result.shape != shape:
                    raise ValueError(
                        f"{name}: the {i}-th value returned by {func!r} has shape "
                        f"{result.shape}, but {shape} when first called (model_fn is "
                        f"compiled for one shape). Pad it to a fixed size, or give "
                        f"output_shapes."
                    )
            return _to_jax_results(results) if dtypes else None

        probed = inputs
        inputs = [jax.lax.stop_gradient(x) for x in inputs]  # No gradient, as in TensorFlow.
        if not dtypes:
            io_callback(on_host, None, *inputs)
            return []
        shapes[:] = _result_shapes(name, func, eager, probed, dtypes, output_shapes)
        structs = [jax.ShapeDtypeStruct(s, jax.dtypes.canonicalize_dtype(_numpy_dtype(d)))
                   for s, d in zip(shapes, dtypes)]
        return list(jax.pure_callback(on_host, structs, *inputs))

    results = _symbolic.symbolic_call(body, *inp)
    return results[0] if single else list(results)


def py_func(func, inp, Tout, stateful=True, name=None, output_shapes=None):
    """Calls Python `func` on numpy arrays, on the host, as `tf.compat.v1.py_func`.

    Args:
        func: a function of numpy arrays returning a numpy array (or a list
            of them, one per `Tout` entry).
        inp: the input tensors (a list).
        Tout: a dtype (one result) or a list of dtypes (a list of results;
            `[]`: none, for a side effect).
        stateful: accepted for TensorFlow's signature; a call with no
            results is always kept, one with results runs when they are used.
        name: unused (TensorFlow's op name).
        output_shapes: not in TensorFlow: the result shapes, when calling
            `func` on zeros cannot find them (see the module docstring).

    Returns:
        A tensor for a single dtype `Tout`, else a list of tensors.

    Raises:
        TypeError: for a `func` that is not callable or a bad `Tout`.
        ValueError: when the result shapes cannot be found, or a result has
            another dtype than `Tout` says or another shape than found.

    Example:

    ```python
    def nms(boxes, scores):            # numpy
        ...
        return np.zeros((100, 5), np.float32)

    detections = tf1.py_func(nms, [boxes, scores], tf1.float32)   # shape (100, 5)
    ```
    """
    del stateful, name
    return _call("tf.py_func", func, inp, Tout, False, output_shapes)


def numpy_function(func, inp, Tout, stateful=True, name=None, output_shapes=None):
    """`py_func` under its TensorFlow 2 name, `tf.numpy_function`. See `py_func`."""
    del stateful, name
    return _call("tf.numpy_function", func, inp, Tout, False, output_shapes)


def py_function(func, inp, Tout, name=None, output_shapes=None):
    """`tf.py_function`: as `py_func`, but `func` receives eager TensorFlow tensors.

    `func` may use TensorFlow ops and `.numpy()` on its arguments; what it
    returns (tensors or arrays) is converted to numpy. See `py_func`.
    """
    del name
    return _call("tf.py_function", func, inp, Tout, True, output_shapes)
