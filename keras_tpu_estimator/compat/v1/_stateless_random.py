"""Stateless random numbers (`tf.random.stateless_uniform`, ...) and `tf.random.set_seed`.

A stateless op returns the same numbers for the same `seed` (a pair of
integers, or a tensor of two), in every call, every step and every trace,
and other numbers for another seed: what programs rely on. The numbers
themselves are JAX's (threefry keyed by the seed), not the ones TensorFlow
drew: TensorFlow's stateless kernels used Philox on CPU and GPU but XLA's
generator (ThreeFry) when compiled for a TPU, so TF itself gave different
numbers on different devices for one seed.

```python
noise = tf1.random.stateless_uniform([batch, 8], seed=(2, 3))
order = tf1.contrib.stateless.stateless_random_normal([batch], seed=tf1.stack([0, step]))
```
"""

import keras
from keras import ops

from keras_tpu_estimator.compat.v1 import dtypes
from keras_tpu_estimator.compat.v1._op_helpers import shape_tuple
from keras_tpu_estimator.compat.v1._symbolic import symbolic_call


def _seed(seed, function):
    shape = tuple(getattr(seed, "shape", None) or (len(seed),)) if not isinstance(
        seed, int) else ()
    if shape != (2,):
        raise ValueError(
            f"Argument `seed` of {function} must hold two integers (shape [2]). Received: "
            f"seed={seed!r}"
        )


def _draw(function, seed, draw):
    """`draw(key)` with the seed as a JAX key (uint32 pair); works on symbolic seeds."""
    _seed(seed, function)
    return symbolic_call(lambda s: draw(ops.cast(ops.convert_to_tensor(s), "uint32")), seed)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype="float32", name=None):
    """Uniform samples in `[minval, maxval)` determined by `seed`, as `tf.random.stateless_uniform`.

    Args:
        shape: the output shape.
        seed: two integers (a tuple, list or int tensor of shape `[2]`).
        minval: the lower bound (included).
        maxval: the upper bound (excluded); default 1 for floats, required
            for integers.
        dtype: a float or integer dtype.
        name: ignored.

    Returns:
        A tensor of `shape`; the same one for the same `seed`.

    Raises:
        ValueError: for a `seed` that is not two integers, or an integer
            `dtype` without `maxval`.

    Example:

    ```python
    images = tf1.random.stateless_uniform((1, 224, 224, 3), seed=(2, 3))
    ```
    """
    dtype = str(dtypes.as_dtype(dtype))
    shape = shape_tuple(shape)
    if dtypes.as_dtype(dtype).is_integer:
        if maxval is None:
            raise ValueError(
                f"stateless_uniform(dtype={dtype}) needs `maxval`. Received: maxval=None")
        return _draw("stateless_uniform", seed, lambda key: keras.random.randint(
            shape, minval, maxval, dtype=dtype, seed=key))
    maxval = 1 if maxval is None else maxval
    return _draw("stateless_uniform", seed, lambda key: keras.random.uniform(
        shape, minval, maxval, dtype=dtype, seed=key))


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype="float32", name=None):
    """Normal samples determined by `seed`, as `tf.random.stateless_normal`.

    Args:
        shape: the output shape.
        seed: two integers (shape `[2]`).
        mean, stddev: of the distribution.
        dtype: a float dtype.
        name: ignored.

    Returns:
        A tensor of `shape`; the same one for the same `seed`.

    Raises:
        ValueError: for a `seed` that is not two integers.
    """
    dtype, shape = str(dtypes.as_dtype(dtype)), shape_tuple(shape)
    return _draw("stateless_normal", seed, lambda key: keras.random.normal(
        shape, mean, stddev, dtype=dtype, seed=key))


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype="float32", name=None):
    """Normal samples within two standard deviations, determined by `seed`.

    Raises:
        ValueError: for a `seed` that is not two integers.
    """
    dtype, shape = str(dtypes.as_dtype(dtype)), shape_tuple(shape)
    return _draw("stateless_truncated_normal", seed, lambda key: keras.random.truncated_normal(
        shape, mean, stddev, dtype=dtype, seed=key))


def set_seed(seed):
    """TF's graph-level seed: makes the program's random numbers repeat, as `tf.random.set_seed`.

    Calls `keras.utils.set_random_seed(seed)`: the initial values of the
    variables created after it and the model's seed generator (dropout,
    `tf1.random_uniform`, ...) then repeat from run to run, as TF1's ops did
    under a graph seed. The numbers are not TensorFlow's. Call it before
    building the model (at the start of the program, or of `model_fn`).

    Args:
        seed: an integer.

    Raises:
        ValueError: if `seed` is not an integer.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"Argument `seed` of set_seed must be an integer. Received: seed={seed!r}")
    keras.utils.set_random_seed(seed)
