"""Functions shared by `input_fn` and `model_fn`: each call runs where it is called.

The converter rewrites TF1 names to `tf1.*` in every function a `model_fn`
reaches (`convert.sides`), and some of them are also called by the input
pipeline: an augmentation helper called from a `Dataset.map` function and
from `model_fn`, a preprocessing function shared by `input_fn` and a serving
receiver. There the values are TensorFlow's tensors (graph tensors of the map
function's `FuncGraph`, or eager ones), which only TensorFlow computes on.

`run_where_called` wraps the public functions of a `compat.v1` namespace so
that every call decides, from its arguments first and then from where it
runs, whose function runs:

1. a TensorFlow value among the arguments (at any depth of lists, tuples and
   dicts): `tf.Tensor`, `tf.Variable`, `tf.SparseTensor`, `tf.RaggedTensor`
   -> TensorFlow's function of the same public path (`tf1.image.flip_up_down`
   runs `tf.compat.v1.image.flip_up_down`), with TensorFlow's seed rules;
2. a value of the library: a JAX array or tracer, a `keras.KerasTensor`, a
   Keras variable -> the library's function;
3. neither (Python values, numpy arrays): during a `model_fn` call, the
   library's; inside a `tf.function` (a map function, a serving receiver),
   TensorFlow's; elsewhere the library's, or TensorFlow's (eager) when the
   library's needs the model's seed generator, which only `model_fn` has
   (variables and layers outside `model_fn` stay an error).

```python
def augment(image):                         # converted code, shared by both sides
    return tf1.image.random_flip_left_right(image) + tf1.random_uniform([], 0, 0.1)

dataset = dataset.map(lambda x: augment(x))  # TensorFlow's ops, in the input pipeline
logits = net(augment(features))              # the library's, in model_fn
```

A name TensorFlow lacks always runs the library's function. TensorFlow is
never imported here to decide: its values exist only once it is.
"""

import functools
import importlib
import inspect
import sys

import jax
import keras

from keras_tpu_estimator.model_fn import store as store_lib

_PACKAGE = "keras_tpu_estimator.compat.v1"
_MISSING = object()
# One shared function per library function: `tf1.floor is tf1.math.floor`.
_SHARED = {}
# What model_fn state a function outside model_fn may do without, by running
# TensorFlow's eagerly: the seed generator of random values. Not variables,
# layers or collections: TensorFlow would keep them apart from the model.
_TENSORFLOW_OUTSIDE_MODEL_FN = ("get_seed_generator",)


def _tensorflow_types():
    tf = sys.modules.get("tensorflow")
    if tf is None or not hasattr(tf, "RaggedTensor"):  # absent, or still importing
        return None
    return (tf.Tensor, tf.Variable, tf.SparseTensor, tf.RaggedTensor)


def _leaves(value):
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    else:
        yield value


TENSORFLOW, LIBRARY, EITHER = "tensorflow", "library", "either"


def side_of_call(args, kwargs):
    """Whose function a call with `args` and `kwargs` runs (see the module docstring).

    Returns:
        `TENSORFLOW`, `LIBRARY`, or `EITHER` for a call outside `model_fn`
        and any `tf.function` on Python or numpy values only (the library's
        function runs, or TensorFlow's if the library's needs the seed generator).
    """
    tensorflow_types = _tensorflow_types()
    leaves = list(_leaves((args, kwargs)))
    if tensorflow_types and any(isinstance(leaf, tensorflow_types) for leaf in leaves):
        return TENSORFLOW
    if any(isinstance(leaf, (jax.Array, keras.KerasTensor, keras.Variable)) for leaf in leaves):
        return LIBRARY
    if store_lib.in_model_fn_call():
        return LIBRARY
    if tensorflow_types and sys.modules["tensorflow"].inside_function():
        return TENSORFLOW
    return EITHER


def _tensorflow_function(paths):
    """TensorFlow's `tf.compat.v1.<path>` of the first of `paths` it has, or None."""
    for path in paths:
        value = importlib.import_module("tensorflow").compat.v1
        for part in path.split("."):
            value = getattr(value, part, _MISSING)
            if value is _MISSING:
                break
        if value is not _MISSING and callable(value):
            return value
    return None


def tensorflow_path(namespace_name, name):
    """The path under `tf.compat.v1` of `name` in module `namespace_name`.

    `("keras_tpu_estimator.compat.v1.image", "flip_up_down")` gives
    `"image.flip_up_down"`; the `compat.v1` top level gives `"flip_up_down"`.
    """
    module = namespace_name[len(_PACKAGE):].lstrip(".")
    return f"{module}.{name}" if module else name


def shared_function(fn, path):
    """`fn`, running TensorFlow's `tf.compat.v1.<path>` where the call is TensorFlow's.

    Args:
        fn: the library's function.
        path: its public path under `tf.compat.v1` (`"random.uniform"`).

    Returns:
        A function of `fn`'s signature and docstring that decides on every
        call (see the module docstring). A function exported under several
        paths (`tf1.random_uniform`, `tf1.random.uniform`) gets one shared
        function, which runs TensorFlow's function of the first path
        TensorFlow has (they are one function in TensorFlow too).
    """
    fn = getattr(fn, "library_function", fn)
    if fn in _SHARED:
        function = _SHARED[fn]
        if path not in function.tensorflow_paths:
            function.tensorflow_paths.append(path)
        return function
    paths = [path]

    @functools.wraps(fn)
    def function(*args, **kwargs):
        side = side_of_call(args, kwargs)
        tensorflow_fn = _tensorflow_function(paths) if side == TENSORFLOW else None
        if tensorflow_fn is not None:
            return tensorflow_fn(*args, **kwargs)
        if side != EITHER:
            return fn(*args, **kwargs)
        try:
            return fn(*args, **kwargs)
        except store_lib.OutsideModelFnError as error:
            # Outside model_fn and any tf.function: TensorFlow's random op, eagerly.
            tensorflow_fn = _tensorflow_function(paths)
            if tensorflow_fn is None or error.function_name not in _TENSORFLOW_OUTSIDE_MODEL_FN:
                raise
            return tensorflow_fn(*args, **kwargs)

    function.library_function = fn
    function.tensorflow_paths = paths
    _SHARED[fn] = function
    return function


def run_where_called(namespace):
    """Makes, in place, every public function of a `compat.v1` namespace a shared one.

    Call it at the end of the module that assembles the namespace, as
    `run_where_called(globals())`. Classes, modules and values are left as
    they are, and so is what `__all__` does not name when there is one.

    Args:
        namespace: the module's `globals()`.
    """
    module = namespace["__name__"]
    names = namespace.get("__all__") or [n for n in list(namespace) if not n.startswith("_")]
    for name in names:
        fn = namespace.get(name)
        if inspect.isfunction(fn) and fn.__module__.startswith(_PACKAGE):
            namespace[name] = shared_function(fn, tensorflow_path(module, name))
