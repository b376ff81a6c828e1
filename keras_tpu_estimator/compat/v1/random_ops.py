"""TF1 random tensors: `tf.random_uniform`, `tf.random_normal`, `tf.truncated_normal`, ...

They draw from the model's seed generator (`keras.utils.set_random_seed`
makes runs repeat, every step draws new numbers), as `tf1.layers.dropout`
does; TF1's op-level `seed` is accepted and ignored.

```python
noise = tf1.random_uniform([batch_size, 1, 1, 1], dtype=inputs.dtype)
```
"""

import keras
from keras import ops

from keras_tpu_estimator.compat.v1 import dtypes
from keras_tpu_estimator.model_fn import store as store_lib
# A private alias: `random_ops` is star-imported into `compat.v1`.
from keras_tpu_estimator.compat.v1._op_helpers import shape_tuple as _shape
from keras_tpu_estimator.compat.v1._symbolic import symbolic_call as _symbolic_call


def _dtype(dtype):
    return str(dtypes.as_dtype("float32" if dtype is None else dtype))


def random_uniform(shape, minval=0, maxval=None, dtype="float32", seed=None, name=None):
    """Uniform samples in `[minval, maxval)` (`maxval` 1 for floats; required for ints).

    Raises:
        ValueError: for an integer dtype without `maxval`.
    """
    dtype = _dtype(dtype)
    generator = store_lib.get_seed_generator()
    if dtypes.as_dtype(dtype).is_integer:
        if maxval is None:
            raise ValueError(f"random_uniform(dtype={dtype}) needs `maxval`.")
        return keras.random.randint(_shape(shape), minval, maxval, dtype=dtype, seed=generator)
    maxval = 1 if maxval is None else maxval
    return keras.random.uniform(_shape(shape), minval, maxval, dtype=dtype, seed=generator)


def random_normal(shape, mean=0.0, stddev=1.0, dtype="float32", seed=None, name=None):
    """Normal samples with `mean` and `stddev`."""
    return keras.random.normal(_shape(shape), mean, stddev, dtype=_dtype(dtype),
                               seed=store_lib.get_seed_generator())


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype="float32", seed=None, name=None):
    """Normal samples redrawn beyond two standard deviations."""
    return keras.random.truncated_normal(_shape(shape), mean, stddev, dtype=_dtype(dtype),
                                         seed=store_lib.get_seed_generator())


def random_shuffle(value, seed=None, name=None):
    """`value` with its first axis shuffled."""
    generator = store_lib.get_seed_generator()  # Created before any symbolic trace.

    def shuffle(v):
        # Sorting random keys, not `keras.random.shuffle`: an export's batch
        # size is symbolic, and JAX permutes only arrays of known size.
        keys = keras.random.uniform((v.shape[0],), seed=generator)
        return ops.take(v, ops.argsort(keys), axis=0)

    return _symbolic_call(shuffle, value)


def multinomial(logits, num_samples, seed=None, name=None, output_dtype="int64"):
    """`num_samples` class ids per row of `logits` (int64 computed in 32 bits without x64)."""
    dtype = "int32" if output_dtype in (None, "int64") else str(dtypes.as_dtype(output_dtype))
    generator = store_lib.get_seed_generator()
    return _symbolic_call(
        lambda x: keras.random.categorical(x, int(num_samples), dtype=dtype, seed=generator),
        logits,
    )


__all__ = ["multinomial", "random_normal", "random_shuffle", "random_uniform", "truncated_normal"]
