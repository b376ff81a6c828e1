"""`tf.contrib.slim.tfexample_decoder`: decoding `tf.train.Example`s in an input pipeline.

Host-side code: the decoder runs TensorFlow ops inside `input_fn` (a
`tf.data` map function), as it did in TF1, and returns TensorFlow tensors.
It is exposed as `tf1.contrib.slim.tfexample_decoder`. (tf_slim's own copy
calls `control_flow_ops.case`/`cond`, which TensorFlow 2.15+ no longer has,
so its `Image` handler fails there.)

```python
decoder = tf1.contrib.slim.tfexample_decoder
keys_to_features = {
    "image/encoded": tf.io.FixedLenFeature((), tf.string, default_value=""),
    "image/format": tf.io.FixedLenFeature((), tf.string, default_value="jpeg"),
    "image/class/label": tf.io.FixedLenFeature([], tf.int64, default_value=-1),
}
items_to_handlers = {
    "image": decoder.Image("image/encoded", "image/format", channels=3),
    "label": decoder.Tensor("image/class/label"),
}
example_decoder = decoder.TFExampleDecoder(keys_to_features, items_to_handlers)
dataset = dataset.map(lambda record: dict(zip(
    ["image", "label"], example_decoder.decode(record, ["image", "label"]))))
```
"""


def _tf():
    import tensorflow as tf  # Host side: the input pipeline is TensorFlow's.

    return tf


def _as_tf_dtype(dtype):
    tf = _tf()
    name = getattr(dtype, "name", dtype)
    return tf.dtypes.as_dtype(name if isinstance(name, str) else dtype)


def _is_sparse(tensor):
    return isinstance(tensor, _tf().sparse.SparseTensor)


class ItemHandler:
    """Turns parsed features (`keys`) into one decoded item.

    Subclasses implement `tensors_to_item(keys_to_tensors)`.

    Args:
        keys: the feature key, or a list of them, that the item needs.
    """

    def __init__(self, keys):
        self._keys = list(keys) if isinstance(keys, (list, tuple)) else [keys]

    @property
    def keys(self):
        """The feature keys the item is decoded from."""
        return self._keys

    def tensors_to_item(self, keys_to_tensors):
        """Returns the item from `{key: parsed tensor}` of `keys`."""
        raise NotImplementedError(f"{type(self).__name__} must implement tensors_to_item.")


class ItemHandlerCallback(ItemHandler):
    """An item computed by `func({key: parsed tensor})`.

    Args:
        keys: the feature keys handed to `func`.
        func: a function of the dict of parsed tensors.
    """

    def __init__(self, keys, func):
        super().__init__(keys)
        self._func = func

    def tensors_to_item(self, keys_to_tensors):
        return self._func(keys_to_tensors)


class Tensor(ItemHandler):
    """A parsed feature as it is, made dense and optionally reshaped.

    A `VarLenFeature` (sparse) becomes dense, missing values filled with
    `default_value`.

    Args:
        tensor_key: the feature key.
        shape_keys: a key or list of keys of integer features holding the
            shape (one key per dimension, or one key holding all).
        shape: a fixed shape to reshape to.
        default_value: the fill of a sparse feature (0; `""` for strings).

    Raises:
        ValueError: if both `shape_keys` and `shape` are given.
    """

    def __init__(self, tensor_key, shape_keys=None, shape=None, default_value=0):
        if shape_keys and shape is not None:
            raise ValueError(
                "Tensor(shape_keys=..., shape=...): give one of them, not both. "
                f"Received: shape_keys={shape_keys!r}, shape={shape!r}"
            )
        if shape_keys and not isinstance(shape_keys, list):
            shape_keys = [shape_keys]
        self._tensor_key = tensor_key
        self._shape_keys = shape_keys
        self._shape = shape
        self._default_value = default_value
        super().__init__([tensor_key] + list(shape_keys or []))

    def tensors_to_item(self, keys_to_tensors):
        tf = _tf()
        tensor = keys_to_tensors[self._tensor_key]
        shape = self._shape
        if self._shape_keys:
            dims = [keys_to_tensors[key] for key in self._shape_keys]
            dims = [tf.sparse.to_dense(d) if _is_sparse(d) else d for d in dims]
            shape = tf.reshape(tf.stack(dims), [-1])
        if _is_sparse(tensor):
            if shape is not None:
                tensor = tf.sparse.reshape(tensor, shape)
            default = self._default_value
            if tensor.dtype == tf.string and not isinstance(default, (str, bytes)):
                default = ""  # TF1 raised here; a string feature fills with "".
            return tf.sparse.to_dense(tensor, default_value=default)
        return tensor if shape is None else tf.reshape(tensor, shape)


class BoundingBox(ItemHandler):
    """Boxes `[num_boxes, 4]` from four features (`ymin`, `xmin`, `ymax`, `xmax`).

    Args:
        keys: the four coordinate names, in the column order wanted
            (default `['ymin', 'xmin', 'ymax', 'xmax']`).
        prefix: prepended to each key (`'image/object/bbox/'`).

    Raises:
        ValueError: if `keys` does not hold four names.
    """

    def __init__(self, keys=None, prefix=""):
        keys = ["ymin", "xmin", "ymax", "xmax"] if keys is None else list(keys)
        if len(keys) != 4:
            raise ValueError(f"BoundingBox expects 4 keys (ymin, xmin, ymax, xmax order of "
                             f"your choice). Received: keys={keys!r}")
        self._prefix = prefix
        self._full_keys = [prefix + key for key in keys]
        super().__init__(self._full_keys)

    def tensors_to_item(self, keys_to_tensors):
        tf = _tf()
        sides = []
        for key in self._full_keys:
            side = keys_to_tensors[key]
            sides.append(side.values if _is_sparse(side) else side)
        return tf.stack(sides, axis=1)


class Image(ItemHandler):
    """An image decoded from its encoded bytes: JPEG, PNG, GIF, BMP or raw.

    The format feature decides raw bytes (`'raw'`/`'RAW'`: `decode_raw`);
    otherwise the bytes' header does (JPEG with `dct_method`, else
    `decode_image`). The result is cast to `dtype`.

    Args:
        image_key: the bytes feature (default `'image/encoded'`).
        format_key: the format feature (default `'image/format'`).
        shape: reshape the image to this shape (needed for raw images).
        channels: the channels decoded (3; 1 for a label map).
        dtype: the decoded dtype (default `tf.uint8`).
        repeated: decode a list of images (a `[n]` bytes feature).
        dct_method: JPEG's decoding method (`''`, `'INTEGER_FAST'`,
            `'INTEGER_ACCURATE'`).
    """

    def __init__(self, image_key=None, format_key=None, shape=None, channels=3, dtype=None,
                 repeated=False, dct_method=""):
        self._image_key = image_key or "image/encoded"
        self._format_key = format_key or "image/format"
        super().__init__([self._image_key, self._format_key])
        self._shape = shape
        self._channels = channels
        self._dtype = "uint8" if dtype is None else dtype
        self._repeated = repeated
        self._dct_method = dct_method

    def tensors_to_item(self, keys_to_tensors):
        tf = _tf()
        buffer = keys_to_tensors[self._image_key]
        image_format = keys_to_tensors[self._format_key]
        if self._repeated:
            return tf.map_fn(lambda one: self._decode(one, image_format), buffer,
                             fn_output_signature=_as_tf_dtype(self._dtype))
        return self._decode(buffer, image_format)

    def _decode(self, buffer, image_format):
        tf = _tf()
        dtype = _as_tf_dtype(self._dtype)

        def raw():
            return tf.io.decode_raw(buffer, out_type=dtype)

        def jpeg():
            return tf.cast(tf.io.decode_jpeg(buffer, channels=self._channels,
                                             dct_method=self._dct_method), dtype)

        def by_header():
            return tf.cast(tf.io.decode_image(buffer, channels=self._channels,
                                              expand_animations=False), dtype)

        def encoded():
            return tf.cond(tf.io.is_jpeg(buffer), jpeg, by_header)

        is_raw = tf.logical_or(tf.equal(image_format, "raw"), tf.equal(image_format, "RAW"))
        image = tf.cond(is_raw, raw, encoded)
        if image.shape.rank is None or image.shape.rank == 3:
            image.set_shape([None, None, self._channels])
        if self._shape is not None:
            image = tf.reshape(image, self._shape)
        return image


class TFExampleDecoder:
    """Decodes a serialized `tf.train.Example` into items, as slim's decoder.

    Stage one parses the features (`tf.io.parse_single_example`, fixed-length
    ones reshaped to their declared shape); stage two hands each item's
    handler the features it names.

    Args:
        keys_to_features: `{key: tf.io.FixedLenFeature or tf.io.VarLenFeature}`.
        items_to_handlers: `{item name: ItemHandler}`.

    Example:

    ```python
    decoder = TFExampleDecoder(
        {"image/class/label": tf.io.FixedLenFeature([], tf.int64)},
        {"label": Tensor("image/class/label")})
    (label,) = decoder.decode(serialized, ["label"])
    ```
    """

    def __init__(self, keys_to_features, items_to_handlers):
        self._keys_to_features = keys_to_features
        self._items_to_handlers = items_to_handlers

    def list_items(self):
        """The item names, in `items_to_handlers` order."""
        return list(self._items_to_handlers)

    def decode(self, serialized_example, items=None):
        """Decodes `items` (default: all) of one serialized example.

        Args:
            serialized_example: a scalar string tensor.
            items: item names, or None for every item.

        Returns:
            A list of tensors, one per item, in `items` order.

        Raises:
            ValueError: for an item that has no handler.
        """
        tf = _tf()
        items = list(items) if items else self.list_items()
        unknown = [item for item in items if item not in self._items_to_handlers]
        if unknown:
            raise ValueError(f"TFExampleDecoder.decode: no handler for items {unknown}; "
                             f"the decoder has {self.list_items()}.")
        example = tf.io.parse_single_example(serialized_example, self._keys_to_features)
        for key, feature in self._keys_to_features.items():
            if isinstance(feature, tf.io.FixedLenFeature):
                example[key] = tf.reshape(example[key], feature.shape)
        outputs = []
        for item in items:
            handler = self._items_to_handlers[item]
            outputs.append(handler.tensors_to_item({key: example[key] for key in handler.keys}))
        return outputs
