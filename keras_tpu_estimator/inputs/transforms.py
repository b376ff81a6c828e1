"""Transforms of an input that run on the host before its first batch is read.

Some model-side APIs need host work on the raw input: TF1 feature columns
look up vocabularies and hash strings, which only TensorFlow on the host can
do (`compat.v1.feature_column`). Such an API registers a transform here; the
input side (`sources.as_source`) applies every registered transform to what
an `input_fn` (or `fit`/`evaluate`/`predict`) gives, before reading it: a
transform maps a `tf.data.Dataset` (`dataset.map`), or arrays, and returns
anything else unchanged.

```python
input_transforms.register(my_transform)   # at import of the API
x = input_transforms.apply(x)             # inputs.as_source
```
"""

_TRANSFORMS = []


def register(transform):
    """Adds `transform(x) -> x` (once) to what `apply` runs."""
    if transform not in _TRANSFORMS:
        _TRANSFORMS.append(transform)


def apply(x):
    """`x` after every registered transform, in registration order."""
    for transform in _TRANSFORMS:
        x = transform(x)
    return x
