"""slim's host-side data decoding (tf.contrib.slim.tfexample_decoder, slim.dataset): the same
items as tf_slim's decoder from the same serialized tf.train.Examples, in a tf.data map.

tf_slim 1.1's `Image` and `Tensor(shape_keys=...)` call `control_flow_ops.case`/`.cond` and
`array_ops.stack`, which TensorFlow 2.15+ moved; the reference run points those names at
TensorFlow's own functions.
"""

import numpy as np
import pytest

from keras_tpu_estimator.compat.v1.contrib import _slim_dataset as ours_dataset
from keras_tpu_estimator.compat.v1.contrib import _tfexample_decoder as ours

PIXELS = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
LABEL_MAP = (np.arange(4 * 5, dtype=np.uint8) % 7).reshape(4, 5, 1)
ITEMS = ["image", "jpeg", "raw", "label_map", "label", "text", "area", "boxes", "shaped",
         "fixed_shape", "thumbs", "callback"]


def serialized_examples():
    """Two examples: PNG/JPEG/raw images, labels, variable-length boxes."""
    import tensorflow as tf

    def feature(values):
        values = list(np.atleast_1d(values))
        if isinstance(values[0], bytes):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
        if np.issubdtype(np.asarray(values).dtype, np.integer):
            return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))

    png = tf.io.encode_png(PIXELS).numpy()
    examples = []
    all_boxes = [[[0.1, 0.2, 0.5, 0.6]], [[0.0, 0.1, 0.3, 0.4], [0.2, 0.3, 0.9, 1.0]]]
    for index, boxes in enumerate(all_boxes):
        boxes = np.array(boxes, "float32")
        example = {
            "image/encoded": feature(png), "image/format": feature(b"png"),
            "image/jpeg": feature(tf.io.encode_jpeg(PIXELS + index).numpy()),
            "image/jpeg_format": feature(b"jpeg"),
            "image/raw": feature(PIXELS.tobytes()), "image/raw_format": feature(b"RAW"),
            "label_map/encoded": feature(tf.io.encode_png(LABEL_MAP).numpy()),
            "label_map/format": feature(b"png"),
            "image/class/label": feature(np.int64(7 + index)),
            "image/class/text": feature(b"cat"),
            "image/object/area": feature(np.arange(len(boxes), dtype="float32") + 0.5),
            "shape/h": feature(np.int64(2)), "shape/w": feature(np.int64(3)),
            "values": feature(np.arange(6, dtype="float32")),
            "thumbs": feature([png, tf.io.encode_png(PIXELS[::-1].copy()).numpy()]),
        }
        for column, name in enumerate(["ymin", "xmin", "ymax", "xmax"]):
            example[f"image/object/bbox/{name}"] = feature(boxes[:, column])
        examples.append(tf.train.Example(
            features=tf.train.Features(feature=example)).SerializeToString())
    return examples


def decoder_on(module):
    """The decoder of ITEMS, built with `module` (tf_slim's or ours)."""
    import tensorflow as tf

    fixed = lambda shape, dtype, default: tf.io.FixedLenFeature(shape, dtype, default)  # noqa: E731
    keys_to_features = {
        "image/encoded": fixed((), tf.string, ""), "image/format": fixed((), tf.string, "jpeg"),
        "image/jpeg": fixed((), tf.string, ""), "image/jpeg_format": fixed((), tf.string, ""),
        "image/raw": fixed((), tf.string, ""), "image/raw_format": fixed((), tf.string, ""),
        "label_map/encoded": fixed((), tf.string, ""), "label_map/format": fixed((), tf.string, ""),
        "image/class/label": fixed([1], tf.int64, -1),
        "image/class/text": fixed([], tf.string, ""),
        "image/object/area": tf.io.VarLenFeature(tf.float32),
        "shape/h": fixed([], tf.int64, 0), "shape/w": fixed([], tf.int64, 0),
        "values": tf.io.VarLenFeature(tf.float32),
        "thumbs": tf.io.FixedLenFeature([2], tf.string),
    }
    for name in ["ymin", "xmin", "ymax", "xmax"]:
        keys_to_features[f"image/object/bbox/{name}"] = tf.io.VarLenFeature(tf.float32)
    handlers = {
        "image": module.Image("image/encoded", "image/format"),
        "jpeg": module.Image("image/jpeg", "image/jpeg_format", dct_method="INTEGER_ACCURATE"),
        "raw": module.Image("image/raw", "image/raw_format", shape=PIXELS.shape),
        "label_map": module.Image("label_map/encoded", "label_map/format", channels=1,
                                  dtype=tf.float32),
        "label": module.Tensor("image/class/label"),
        "text": module.Tensor("image/class/text"),
        "area": module.Tensor("image/object/area"),
        "boxes": module.BoundingBox(["ymin", "xmin", "ymax", "xmax"], "image/object/bbox/"),
        "shaped": module.Tensor("values", shape_keys=["shape/h", "shape/w"]),
        "fixed_shape": module.Tensor("values", shape=[3, 2]),
        "thumbs": module.Image("thumbs", "image/format", repeated=True),
        "callback": module.ItemHandlerCallback(
            ["shape/h", "shape/w"], lambda t: t["shape/h"] * 10 + t["shape/w"]),
    }
    return module.TFExampleDecoder(keys_to_features, handlers)


def decode_all(module):
    """Each example's items, decoded by `module`'s decoder in a tf.data map."""
    import tensorflow as tf

    decoder = decoder_on(module)
    dataset = tf.data.Dataset.from_tensor_slices(serialized_examples()).map(
        lambda record: tuple(decoder.decode(record, ITEMS)))
    return [[np.asarray(item) for item in items] for items in dataset]


@pytest.fixture(scope="module")
def tf_slim_items():
    import tensorflow as tf
    from tensorflow.python.ops import array_ops
    from tensorflow.python.ops import control_flow_case
    from tensorflow.python.ops import control_flow_ops
    from tf_slim.data import tfexample_decoder

    # Where TensorFlow 2.15+ moved what tf_slim 1.1 calls.
    moved = [(control_flow_ops, "case", control_flow_case.case),
             (control_flow_ops, "cond", tf.compat.v1.cond), (array_ops, "stack", tf.stack)]
    added = [(module, name) for module, name, _ in moved if not hasattr(module, name)]
    for module, name in added:
        setattr(module, name, dict((n, f) for m, n, f in moved if m is module)[name])
    try:
        return decode_all(tfexample_decoder)
    finally:
        for module, name in added:
            delattr(module, name)


@pytest.fixture(scope="module")
def our_items():
    return decode_all(ours)


@pytest.mark.parametrize("example", [0, 1])
@pytest.mark.parametrize("item", ITEMS)
def test_decoded_item_equals_tf_slims(tf_slim_items, our_items, example, item):
    index = ITEMS.index(item)
    theirs, mine = tf_slim_items[example][index], our_items[example][index]
    assert mine.dtype == theirs.dtype
    np.testing.assert_array_equal(mine, theirs)


def test_decoded_png_and_raw_images_are_the_pixels(our_items):
    np.testing.assert_array_equal(our_items[0][ITEMS.index("image")], PIXELS)
    np.testing.assert_array_equal(our_items[0][ITEMS.index("raw")], PIXELS)
    np.testing.assert_array_equal(our_items[0][ITEMS.index("label_map")], LABEL_MAP)
    np.testing.assert_array_equal(our_items[1][ITEMS.index("boxes")],
                                  np.float32([[0.0, 0.1, 0.3, 0.4], [0.2, 0.3, 0.9, 1.0]]))


def test_decode_without_items_decodes_every_item_in_order():
    import tensorflow as tf

    decoder = ours.TFExampleDecoder(
        {"a": tf.io.FixedLenFeature([], tf.int64), "b": tf.io.FixedLenFeature([2], tf.float32)},
        {"b": ours.Tensor("b"), "a": ours.Tensor("a")})
    example = tf.train.Example(features=tf.train.Features(feature={
        "a": tf.train.Feature(int64_list=tf.train.Int64List(value=[3])),
        "b": tf.train.Feature(float_list=tf.train.FloatList(value=[1.5, 2.5]))}))
    b, a = decoder.decode(tf.constant(example.SerializeToString()))
    assert decoder.list_items() == ["b", "a"]
    assert int(a) == 3 and b.numpy().tolist() == [1.5, 2.5]


@pytest.mark.parametrize("call, message", [
    (lambda: ours.Tensor("x", shape_keys=["h"], shape=[2]), "not both"),
    (lambda: ours.BoundingBox(["ymin", "xmin"]), "4 keys"),
    (lambda: ours.TFExampleDecoder({}, {}).decode("", ["image"]), "no handler"),
], ids=["tensor-shape", "bbox-keys", "unknown-item"])
def test_bad_arguments_raise(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_slim_dataset_keeps_its_arguments_as_attributes_as_tf_slim():
    from tf_slim.data import dataset as tf_slim_dataset

    kwargs = dict(data_sources="train-*", reader=None, decoder="decoder", num_samples=10,
                  items_to_descriptions={"image": "An image."}, num_classes=1000)
    assert vars(ours_dataset.Dataset(**kwargs)) == vars(tf_slim_dataset.Dataset(**kwargs))
