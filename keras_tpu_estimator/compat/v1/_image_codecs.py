"""`tf.image`'s encoded-image ops: decode, encode and read JPEG, PNG, GIF and BMP bytes.

They read or write bytes strings, which only TensorFlow holds (JAX has no
strings), so they belong to the input pipeline. They exist in `tf1.image` so
that a preprocessing module shared by `input_fn` and `model_fn` converts
and runs: given TensorFlow tensors, or called in a `Dataset.map` function
or serving receiver, each runs TensorFlow's function of the same name (see
`_sides`); outside `model_fn` and any `tf.function`, on Python bytes,
TensorFlow's runs eagerly. In `model_fn` each raises a `TypeError` saying
to decode in `input_fn`.

```python
def preprocess(image_bytes):                 # shared by input_fn and model_fn
    image = tf1.image.decode_jpeg(image_bytes, channels=3)   # TensorFlow's, in input_fn
    return tf1.image.resize_images(image, [224, 224])

dataset = dataset.map(preprocess)            # runs
logits = net(preprocess(features))           # TypeError: decode in input_fn
```
"""

import functools
import inspect

import jax
import keras

from keras_tpu_estimator.model_fn import store


def _library_argument(arguments):
    """The name and value of the first argument holding a value of the library's, or None."""
    for name, value in arguments.items():
        leaves = jax.tree.leaves(value, is_leaf=lambda x: isinstance(x, keras.KerasTensor))
        for leaf in leaves:
            if isinstance(leaf, (jax.Array, keras.KerasTensor, keras.Variable)):
                return name, leaf
    return None


def _input_only(what, instead):
    """Makes a signature of TF1's into its input-side function (see the module docstring).

    Args:
        what: what the op does with bytes, for the error (`"reads encoded image bytes"`).
        instead: what to do in model_fn instead, for the error.
    """

    def decorate(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def op(*args, **kwargs):
            found = _library_argument(signature.bind(*args, **kwargs).arguments)
            if found or store.in_model_fn_call():
                received = (f"`{found[0]}` of type {type(found[1]).__name__}" if found
                            else "a call inside model_fn")
                raise TypeError(
                    f"tf1.image.{fn.__name__} {what} (a string tensor), which only "
                    "TensorFlow holds: it cannot run in model_fn, whose values are JAX "
                    "arrays. Call it in input_fn or a serving receiver, where it runs "
                    f"TensorFlow's tf.image.{fn.__name__}; {instead}. Received: {received}"
                )
            import tensorflow as tf  # Bytes on the host: TensorFlow's op, eagerly.

            return getattr(tf.compat.v1.image, fn.__name__)(*args, **kwargs)

        op.input_only = what  # read by the converter
        return op

    return decorate


_reads_bytes = _input_only("reads encoded image bytes",
                           "give model_fn the decoded images")
_writes_bytes = _input_only("writes encoded image bytes",
                            "in model_fn, tf1.summary.image records images as they are")


@_reads_bytes
def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True,
                try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """TF's `decode_jpeg`: JPEG bytes to a uint8 image `[height, width, channels]`."""


@_reads_bytes
def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="",
                         name=None):
    """TF's `decode_and_crop_jpeg`: the `crop_window` `[y, x, height, width]` of a JPEG."""


@_reads_bytes
def extract_jpeg_shape(contents, output_type="int32", name=None):
    """TF's `extract_jpeg_shape`: `[height, width, channels]` of a JPEG, without decoding it."""


@_reads_bytes
def is_jpeg(contents, name=None):
    """TF's `is_jpeg`: whether bytes hold a JPEG."""


@_reads_bytes
def decode_png(contents, channels=0, dtype="uint8", name=None):
    """TF's `decode_png`: PNG bytes to a uint8 or uint16 image."""


@_reads_bytes
def decode_gif(contents, name=None):
    """TF's `decode_gif`: GIF bytes to uint8 frames `[frames, height, width, 3]`."""


@_reads_bytes
def decode_bmp(contents, channels=0, name=None):
    """TF's `decode_bmp`: BMP bytes to a uint8 image."""


@_reads_bytes
def decode_image(contents, channels=None, dtype="uint8", name=None, expand_animations=True):
    """TF's `decode_image`: BMP, GIF, JPEG or PNG bytes to an image."""


@_writes_bytes
def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300,
                xmp_metadata="", name=None):
    """TF's `encode_jpeg`: a uint8 image to JPEG bytes."""


@_writes_bytes
def encode_png(image, compression=-1, name=None):
    """TF's `encode_png`: a uint8 or uint16 image to PNG bytes."""


__all__ = sorted([
    "decode_and_crop_jpeg", "decode_bmp", "decode_gif", "decode_image", "decode_jpeg",
    "decode_png", "encode_jpeg", "encode_png", "extract_jpeg_shape", "is_jpeg",
])
