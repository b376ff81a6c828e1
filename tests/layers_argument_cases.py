"""The `tf.layers` argument table of tests/test_layers_argument_tables.py, written once.

Each case is `(input shape, program, exact_init)`: `program(tf, slim, x)`
calls TF1 layers on `x` (`tf` is `tf.compat.v1` or the library's `tf1`,
`slim` is tf_slim or `tf1.contrib.slim`, used for its regularizers) and
returns an output or a list of them. `exact_init` says every variable the
program creates has a deterministic initializer, so the initial values must
agree too. tests/references/layers_argument_tables_tf215.py runs the table
on TF 2.15's `tf.compat.v1.layers` and writes what the test compares.
"""


def _l2(tf, scale):
    return lambda w: scale * tf.reduce_sum(tf.square(w))


def _l1(tf, scale):
    return lambda w: scale * tf.reduce_sum(tf.abs(w))


def _clip(tf):
    return lambda w: tf.clip_by_value(w, -0.1, 0.1)


def dense_regularized(tf, slim, x):
    return tf.layers.dense(x, 3, kernel_regularizer=slim.l2_regularizer(0.1),
                           bias_regularizer=_l1(tf, 0.5), activity_regularizer=_l2(tf, 0.01),
                           bias_initializer=tf.constant_initializer(0.25))


def dense_reused_by_name(tf, slim, x):
    first = tf.layers.dense(x, 3, name="fc", kernel_regularizer=_l2(tf, 0.1),
                            activity_regularizer=_l1(tf, 0.01))
    again = tf.layers.dense(x * 2.0, 3, name="fc", reuse=True, kernel_regularizer=_l2(tf, 0.1),
                            activity_regularizer=_l1(tf, 0.01))
    return [first, again]


def dense_auto_reuse_in_scope(tf, slim, x):
    with tf.variable_scope("tower", reuse=tf.AUTO_REUSE):
        first = tf.layers.dense(x, 2, name="fc")
        again = tf.layers.dense(x + 1.0, 2, name="fc")
    return [first, again]


def dense_class_called_twice(tf, slim, x):
    layer = tf.layers.Dense(3, activity_regularizer=_l1(tf, 0.1), kernel_regularizer=_l2(tf, 1.0))
    return [layer(x), layer(x * 3.0)]


def dense_numbering(tf, slim, x):
    a = tf.layers.Dense(3)(x)
    b = tf.layers.dense(x, 2)
    c = tf.layers.Dense(2, name="head")(x)
    d = tf.layers.Dense(2, name="head")(x)
    with tf.variable_scope("outer"):
        e = tf.layers.dense(x, 2)
        f = tf.layers.dense(x, 2, use_bias=False)
    return [a, b, c, d, e, f]


def dense_not_trainable(tf, slim, x):
    frozen = tf.layers.dense(x, 3, trainable=False, name="frozen")
    return tf.layers.dense(frozen, 2, name="trained")


def conv2d_regularized(tf, slim, x):
    return tf.layers.conv2d(x, 3, 3, padding="same", kernel_regularizer=slim.l2_regularizer(0.1),
                            bias_regularizer=_l2(tf, 1.0), activity_regularizer=_l1(tf, 0.01),
                            bias_initializer=tf.constant_initializer(0.5))


def conv2d_named_reuse(tf, slim, x):
    first = tf.layers.conv2d(x, 2, 3, name="shared", kernel_regularizer=_l2(tf, 0.1))
    again = tf.layers.conv2d(x * 2.0, 2, 3, name="shared", reuse=True,
                             kernel_regularizer=_l2(tf, 0.1))
    return [first, again]


def conv2d_class_numbering(tf, slim, x):
    a = tf.layers.Conv2D(2, 3)(x)
    b = tf.layers.conv2d(x, 2, 1)
    with tf.variable_scope("block"):
        c = tf.layers.Conv2D(2, 1, use_bias=False)(x)
    return [a, b, c]


def separable_regularized(tf, slim, x):
    return tf.layers.separable_conv2d(
        x, 4, 3, padding="same", depthwise_regularizer=_l2(tf, 0.1),
        pointwise_regularizer=slim.l2_regularizer(0.2), bias_regularizer=_l1(tf, 1.0),
        activity_regularizer=_l1(tf, 0.01), depthwise_initializer=tf.constant_initializer(0.1),
        pointwise_initializer=tf.ones_initializer(), bias_initializer=tf.constant_initializer(-0.1))


def transpose_regularized(tf, slim, x):
    return tf.layers.conv2d_transpose(
        x, 2, 3, strides=2, padding="same", kernel_regularizer=_l2(tf, 0.1),
        bias_regularizer=_l1(tf, 1.0), activity_regularizer=_l2(tf, 0.01),
        bias_initializer=tf.ones_initializer())


def _consts(tf):
    return dict(kernel_initializer=tf.constant_initializer(0.1),
                bias_initializer=tf.constant_initializer(0.2))


IMAGE, SEQUENCE, VOLUME, MATRIX = (2, 6, 6, 3), (2, 7, 3), (1, 4, 5, 5, 2), (2, 4)
IMAGE_NCHW, SEQUENCE_NCW, VOLUME_NCDHW = (2, 3, 6, 6), (2, 3, 7), (1, 2, 4, 5, 5)

CASES = {
    # -- dense ---------------------------------------------------------------------------
    "dense_defaults": (MATRIX, lambda tf, s, x: tf.layers.dense(x, 3), False),
    "dense_relu_no_bias": (MATRIX, lambda tf, s, x: tf.layers.dense(
        x, 3, activation=tf.nn.relu, use_bias=False), False),
    "dense_string_activation": (MATRIX, lambda tf, s, x: tf.layers.dense(
        x, 3, activation="tanh"), False),
    "dense_rank3_inputs": ((2, 3, 4), lambda tf, s, x: tf.layers.dense(x, 5), False),
    "dense_rank4_inputs": ((2, 2, 3, 4), lambda tf, s, x: tf.layers.dense(x, 2), False),
    "dense_constant_initializers": (MATRIX, lambda tf, s, x: tf.layers.dense(
        x, 3, kernel_initializer=tf.constant_initializer(0.3),
        bias_initializer=tf.ones_initializer()), True),
    "dense_string_initializers": (MATRIX, lambda tf, s, x: tf.layers.dense(
        x, 3, kernel_initializer="ones", bias_initializer="zeros"), True),
    "dense_initializer_class": (MATRIX, lambda tf, s, x: tf.layers.dense(
        x, 3, kernel_initializer=tf.zeros_initializer, bias_initializer=tf.ones_initializer),
        True),
    "dense_regularizers": (MATRIX, dense_regularized, False),
    "dense_constraints": (MATRIX, lambda tf, s, x: tf.layers.dense(
        x, 3, kernel_constraint=_clip(tf), bias_constraint=_clip(tf)), False),
    "dense_named_reuse": (MATRIX, dense_reused_by_name, False),
    "dense_auto_reuse": (MATRIX, dense_auto_reuse_in_scope, False),
    "dense_class_called_twice": (MATRIX, dense_class_called_twice, False),
    "dense_numbering": (MATRIX, dense_numbering, False),
    "dense_not_trainable": (MATRIX, dense_not_trainable, False),
    # -- conv1d --------------------------------------------------------------------------
    "conv1d_defaults": (SEQUENCE, lambda tf, s, x: tf.layers.conv1d(x, 4, 3), False),
    "conv1d_same_stride2": (SEQUENCE, lambda tf, s, x: tf.layers.conv1d(
        x, 4, 3, strides=2, padding="same"), False),
    "conv1d_upper_same_dilated": (SEQUENCE, lambda tf, s, x: tf.layers.conv1d(
        x, 2, 2, padding="SAME", dilation_rate=2, activation=tf.nn.relu), False),
    "conv1d_list_sizes": (SEQUENCE, lambda tf, s, x: tf.layers.conv1d(
        x, 2, [3], strides=[2]), False),
    "conv1d_channels_first": (SEQUENCE_NCW, lambda tf, s, x: tf.layers.conv1d(
        x, 4, 3, padding="same", data_format="channels_first"), False),
    "conv1d_constants_no_bias": (SEQUENCE, lambda tf, s, x: tf.layers.conv1d(
        x, 2, 3, use_bias=False, kernel_initializer=tf.constant_initializer(0.2),
        name="c1"), True),
    # -- conv2d --------------------------------------------------------------------------
    "conv2d_defaults": (IMAGE, lambda tf, s, x: tf.layers.conv2d(x, 4, 3), False),
    "conv2d_same_stride2_rectangular": (IMAGE, lambda tf, s, x: tf.layers.conv2d(
        x, 4, (3, 2), strides=(2, 1), padding="same"), False),
    "conv2d_valid_list_sizes": (IMAGE, lambda tf, s, x: tf.layers.conv2d(
        x, 2, [3, 3], strides=[2, 2]), False),
    "conv2d_upper_valid": (IMAGE, lambda tf, s, x: tf.layers.conv2d(
        x, 2, 2, strides=2, padding="VALID"), False),
    "conv2d_dilated_same": (IMAGE, lambda tf, s, x: tf.layers.conv2d(
        x, 3, 3, padding="same", dilation_rate=2), False),
    "conv2d_dilated_tuple_valid": (IMAGE, lambda tf, s, x: tf.layers.conv2d(
        x, 3, 2, dilation_rate=(2, 1), activation=tf.nn.relu6), False),
    "conv2d_channels_first": (IMAGE_NCHW, lambda tf, s, x: tf.layers.conv2d(
        x, 4, 3, strides=2, padding="same", data_format="channels_first"), False),
    "conv2d_channels_first_dilated": (IMAGE_NCHW, lambda tf, s, x: tf.layers.conv2d(
        x, 2, 2, dilation_rate=2, data_format="channels_first", use_bias=False), False),
    "conv2d_constants_relu": (IMAGE, lambda tf, s, x: tf.layers.conv2d(
        x, 2, 3, activation=tf.nn.relu, **_consts(tf)), True),
    "conv2d_regularizers": (IMAGE, conv2d_regularized, False),
    "conv2d_constraints": (IMAGE, lambda tf, s, x: tf.layers.conv2d(
        x, 2, 3, kernel_constraint=_clip(tf), bias_constraint=_clip(tf)), False),
    "conv2d_not_trainable": (IMAGE, lambda tf, s, x: tf.layers.conv2d(
        x, 2, 3, trainable=False), False),
    "conv2d_named_reuse": (IMAGE, conv2d_named_reuse, False),
    "conv2d_class_numbering": (IMAGE, conv2d_class_numbering, False),
    # -- conv3d --------------------------------------------------------------------------
    "conv3d_defaults": (VOLUME, lambda tf, s, x: tf.layers.conv3d(x, 2, 2), False),
    "conv3d_same_strided": (VOLUME, lambda tf, s, x: tf.layers.conv3d(
        x, 3, (2, 3, 3), strides=(1, 2, 2), padding="same", activation=tf.nn.relu), False),
    "conv3d_channels_first": (VOLUME_NCDHW, lambda tf, s, x: tf.layers.conv3d(
        x, 2, 2, padding="same", data_format="channels_first"), False),
    "conv3d_regularized_no_bias": (VOLUME, lambda tf, s, x: tf.layers.conv3d(
        x, 2, 2, use_bias=False, kernel_regularizer=_l2(tf, 0.1),
        activity_regularizer=_l1(tf, 0.01)), False),
    "conv3d_transpose_channels_first": (VOLUME_NCDHW, lambda tf, s, x: tf.layers.conv3d_transpose(
        x, 2, 2, strides=2, padding="same", data_format="channels_first"), False),
    # -- conv2d_transpose ----------------------------------------------------------------
    "conv2d_transpose_defaults": (IMAGE, lambda tf, s, x: tf.layers.conv2d_transpose(
        x, 2, 3), False),
    "conv2d_transpose_same_stride2": (IMAGE, lambda tf, s, x: tf.layers.conv2d_transpose(
        x, 4, 3, strides=2, padding="same"), False),
    "conv2d_transpose_valid_stride2": (IMAGE, lambda tf, s, x: tf.layers.conv2d_transpose(
        x, 2, [3, 2], strides=(2, 2), padding="VALID"), False),
    "conv2d_transpose_kernel_below_stride": (IMAGE, lambda tf, s, x: tf.layers.conv2d_transpose(
        x, 2, 2, strides=3), False),
    "conv2d_transpose_channels_first": (IMAGE_NCHW, lambda tf, s, x: tf.layers.conv2d_transpose(
        x, 3, 3, strides=2, padding="same", data_format="channels_first"), False),
    "conv2d_transpose_constants_no_bias": (IMAGE, lambda tf, s, x: tf.layers.conv2d_transpose(
        x, 2, 3, use_bias=False, activation=tf.nn.relu,
        kernel_initializer=tf.constant_initializer(0.1)), True),
    "conv2d_transpose_regularizers": (IMAGE, transpose_regularized, False),
    # -- separable_conv1d / separable_conv2d ---------------------------------------------
    "separable_conv1d_defaults": (SEQUENCE, lambda tf, s, x: tf.layers.separable_conv1d(
        x, 4, 3), False),
    "separable_conv1d_multiplier_stride": (SEQUENCE, lambda tf, s, x: tf.layers.separable_conv1d(
        x, 4, 3, strides=2, padding="same", depth_multiplier=2), False),
    "separable_conv1d_dilated": (SEQUENCE, lambda tf, s, x: tf.layers.separable_conv1d(
        x, 2, 2, dilation_rate=2, use_bias=False), False),
    "separable_conv1d_channels_first": (SEQUENCE_NCW, lambda tf, s, x: tf.layers.separable_conv1d(
        x, 2, 3, padding="same", data_format="channels_first"), False),
    "separable_conv2d_defaults": (IMAGE, lambda tf, s, x: tf.layers.separable_conv2d(
        x, 4, 3), False),
    "separable_conv2d_multiplier_stride": (IMAGE, lambda tf, s, x: tf.layers.separable_conv2d(
        x, 5, (3, 2), strides=(2, 2), padding="same", depth_multiplier=2,
        activation=tf.nn.relu), False),
    "separable_conv2d_dilated_valid": (IMAGE, lambda tf, s, x: tf.layers.separable_conv2d(
        x, 2, 2, dilation_rate=2, name="sep"), False),
    "separable_conv2d_channels_first": (IMAGE_NCHW, lambda tf, s, x: tf.layers.separable_conv2d(
        x, 4, 3, strides=2, padding="same", depth_multiplier=2,
        data_format="channels_first"), False),
    "separable_conv2d_regularizers": (IMAGE, separable_regularized, True),
    "separable_conv2d_constraints": (IMAGE, lambda tf, s, x: tf.layers.separable_conv2d(
        x, 2, 3, depthwise_constraint=_clip(tf), pointwise_constraint=_clip(tf),
        bias_constraint=_clip(tf), trainable=False), False),
    # -- pooling -------------------------------------------------------------------------
    "max_pooling1d_valid": (SEQUENCE, lambda tf, s, x: tf.layers.max_pooling1d(x, 2, 2), True),
    "max_pooling1d_same": (SEQUENCE, lambda tf, s, x: tf.layers.max_pooling1d(
        x, 3, 2, padding="same"), True),
    "max_pooling1d_channels_first": (SEQUENCE_NCW, lambda tf, s, x: tf.layers.max_pooling1d(
        x, 2, 1, data_format="channels_first"), True),
    "average_pooling1d_same": (SEQUENCE, lambda tf, s, x: tf.layers.average_pooling1d(
        x, 3, 2, padding="SAME"), True),
    "average_pooling1d_channels_first": (SEQUENCE_NCW, lambda tf, s, x: (
        tf.layers.average_pooling1d(x, [3], [2], padding="same",
                                    data_format="channels_first")), True),
    "max_pooling2d_valid": (IMAGE, lambda tf, s, x: tf.layers.max_pooling2d(x, 2, 2), True),
    "max_pooling2d_same_rectangular": (IMAGE, lambda tf, s, x: tf.layers.max_pooling2d(
        x, (3, 2), (2, 1), padding="same"), True),
    "max_pooling2d_channels_first": (IMAGE_NCHW, lambda tf, s, x: tf.layers.max_pooling2d(
        x, [3, 3], 2, padding="SAME", data_format="channels_first"), True),
    "average_pooling2d_valid": (IMAGE, lambda tf, s, x: tf.layers.average_pooling2d(
        x, [2, 3], [2, 3]), True),
    "average_pooling2d_same": (IMAGE, lambda tf, s, x: tf.layers.average_pooling2d(
        x, 3, 2, padding="same"), True),
    "average_pooling2d_channels_first": (IMAGE_NCHW, lambda tf, s, x: (
        tf.layers.average_pooling2d(x, 3, 2, padding="same", data_format="channels_first")),
        True),
    "max_pooling3d_valid": (VOLUME, lambda tf, s, x: tf.layers.max_pooling3d(x, 2, 2), True),
    "max_pooling3d_same": (VOLUME, lambda tf, s, x: tf.layers.max_pooling3d(
        x, (2, 3, 3), (1, 2, 2), padding="same"), True),
    "max_pooling3d_channels_first": (VOLUME_NCDHW, lambda tf, s, x: tf.layers.max_pooling3d(
        x, 2, 2, padding="same", data_format="channels_first"), True),
    "average_pooling3d_same": (VOLUME, lambda tf, s, x: tf.layers.average_pooling3d(
        x, 3, 2, padding="same"), True),
    "average_pooling3d_channels_first": (VOLUME_NCDHW, lambda tf, s, x: (
        tf.layers.average_pooling3d(x, [2, 2, 2], 1, data_format="channels_first")), True),
    "pooling_classes": (IMAGE, lambda tf, s, x: [
        tf.layers.MaxPooling2D(2, 2)(x), tf.layers.AveragePooling2D(3, 1, padding="same")(x),
        tf.layers.MaxPooling1D(2, 2)(x[:, 0]), tf.layers.AveragePooling1D(2, 1)(x[:, 0]),
        tf.layers.MaxPooling3D(2, 1)(x[None]), tf.layers.AveragePooling3D(2, 2)(x[None])],
        True),
    # -- dropout, flatten ----------------------------------------------------------------
    "dropout_not_training": (MATRIX, lambda tf, s, x: tf.layers.dropout(
        x, rate=0.5, training=False), True),
    "dropout_default_training": (MATRIX, lambda tf, s, x: tf.layers.dropout(x, 0.3), True),
    "dropout_rate_zero_training": (MATRIX, lambda tf, s, x: tf.layers.dropout(
        x, rate=0.0, training=True), True),
    "dropout_class_not_training": (IMAGE, lambda tf, s, x: tf.layers.Dropout(
        0.5, noise_shape=[2, 1, 1, 3])(x, training=False), True),
    "flatten_rank2": (MATRIX, lambda tf, s, x: tf.layers.flatten(x), True),
    "flatten_rank3": (SEQUENCE, lambda tf, s, x: tf.layers.flatten(x), True),
    "flatten_rank5": (VOLUME, lambda tf, s, x: tf.layers.flatten(x), True),
    "flatten_rank1": ((3,), lambda tf, s, x: tf.layers.flatten(x), True),
    "flatten_channels_first": (IMAGE_NCHW, lambda tf, s, x: tf.layers.flatten(
        x, data_format="channels_first"), True),
    "flatten_class_channels_first": (SEQUENCE_NCW, lambda tf, s, x: tf.layers.Flatten(
        data_format="channels_first")(x), True),
}
