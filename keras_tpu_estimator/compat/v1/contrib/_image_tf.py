"""`tf1.contrib.image` on TensorFlow tensors: for input pipelines (`Dataset.map`).

AutoAugment's `rotate`/`translate`/`shear` run in the `tf.data` pipeline,
where the values are TensorFlow tensors, not JAX arrays. There the functions
call TensorFlow's own kernel (`ImageProjectiveTransformV3`, which
`tf.contrib.image` called, zeros outside), with the same arguments.
TensorFlow is imported only when such a tensor arrives.
"""


def is_tensorflow(*values):
    """Whether any of `values` (or an element of a list or tuple of them) is a TF tensor."""
    for value in values:
        if isinstance(value, (list, tuple)):
            if is_tensorflow(*value):
                return True
        elif type(value).__module__.startswith("tensorflow"):
            return True
    return False


def _batched(images):
    rank = images.shape.rank
    if rank == 2:
        return images[None, :, :, None], rank
    return (images[None], rank) if rank == 3 else (images, rank)


def _unbatched(images, rank):
    return images[0, :, :, 0] if rank == 2 else images[0] if rank == 3 else images


def transform(images, transforms, interpolation, output_shape):
    import tensorflow as tf

    images = tf.convert_to_tensor(images)
    batched, rank = _batched(images)
    transforms = tf.cast(tf.convert_to_tensor(transforms), tf.float32)
    if transforms.shape.rank == 1:
        transforms = transforms[None]
    if output_shape is None:
        output_shape = tf.shape(batched)[1:3]
    out = tf.raw_ops.ImageProjectiveTransformV3(
        images=batched, transforms=transforms,
        output_shape=tf.cast(tf.convert_to_tensor(output_shape), tf.int32),
        fill_value=tf.constant(0.0), interpolation=interpolation, fill_mode="CONSTANT")
    return _unbatched(out, rank)


def translations_to_transforms(translations):
    import tensorflow as tf

    translations = tf.reshape(tf.cast(tf.convert_to_tensor(translations), tf.float32), [-1, 2])
    ones = tf.ones_like(translations[:, :1])
    zeros = tf.zeros_like(ones)
    return tf.concat([ones, zeros, -translations[:, :1], zeros, ones, -translations[:, 1:],
                      zeros, zeros], axis=1)


def rotations_to_transforms(images, angles):
    import tensorflow as tf

    images = tf.convert_to_tensor(images)
    shape = tf.shape(images)
    height = tf.cast(shape[0] if images.shape.rank == 2 else shape[-3], tf.float32) - 1
    width = tf.cast(shape[1] if images.shape.rank == 2 else shape[-2], tf.float32) - 1
    angles = tf.reshape(tf.cast(tf.convert_to_tensor(angles), tf.float32), [-1])
    cos, sin = tf.cos(angles), tf.sin(angles)
    x_offset = (width - (cos * width - sin * height)) / 2.0
    y_offset = (height - (sin * width + cos * height)) / 2.0
    zeros = tf.zeros_like(angles)
    return tf.stack([cos, -sin, x_offset, sin, cos, y_offset, zeros, zeros], axis=1)
