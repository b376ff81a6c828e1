"""The host half of the feature columns: raw values to ids, in the input pipeline.

Strings cannot enter a compiled step, and TF1's lookups and hashes are
TensorFlow kernels: so every column that looks up a vocabulary, hashes or
crosses (`host = True`) computes its ids here, with TensorFlow's own ops
(`tf.lookup` tables, `tf.strings.to_hash_bucket_fast`,
`tf.sparse.cross_hashed`), exactly as TF1 did. The library calls
`transform_input` on every input it reads (`keras_tpu_estimator.
input_transforms`), before the first batch: a `tf.data.Dataset` is mapped,
arrays are transformed once. For each host column created so far whose raw
features the input holds (with the dtype the column reads), the ids are
added as an int32 feature `column.ids_key` (`[batch, width]`, -1 where a
value is absent); string features a column consumed are then dropped,
since nothing in `model_fn` can read them. A sparse or ragged feature
(`VarLenFeature`) that a column reads is made dense, absent values as TF1's
ignore values (-1, '', 0.0): each batch is as wide as its widest row, and
the batches must all be as wide (a single value per example, or a padded
list), since the compiled steps need one shape.

The rule for programs: create the feature columns before `train`,
`evaluate` or `predict` reads the input (in `main`, at module level, or in
`params`, as TF1 programs do).
"""

import numpy as np

from keras_tpu_estimator.compat.v1.feature_column import _columns


def _tf():
    import tensorflow as tf

    return tf


def _dense(tf, x, ignore):
    """A `[batch, width]` dense tensor of `x` (a Tensor or SparseTensor)."""
    if isinstance(x, tf.SparseTensor):
        x = tf.sparse.to_dense(x, default_value=ignore)
    if x.shape.rank == 1:
        x = x[:, None]
    elif x.shape.rank != 2:
        raise ValueError(
            f"A categorical feature must be [batch] or [batch, values]: one of shape "
            f"{x.shape} reached a feature column (TF1 combined only its last axis). "
            "Reshape it in input_fn.")
    return x


def _ignore(dtype):
    tf = _tf()
    return "" if dtype == tf.string else tf.cast(-1, dtype)


def _raw(tf, features, key):
    x = features[key]
    return _dense(tf, x, _ignore(x.dtype))


def _lookup_ids(tf, column, x):
    vocabulary = column.vocabulary()
    key_dtype = tf.string if column.dtype == "string" else tf.int64
    if key_dtype == tf.int64:
        x = tf.cast(x, tf.int64)
    initializer = tf.lookup.KeyValueTensorInitializer(
        tf.constant(vocabulary, key_dtype), tf.range(len(vocabulary), dtype=tf.int64))
    if column.num_oov_buckets:
        table = tf.lookup.StaticVocabularyTable(initializer, column.num_oov_buckets)
    else:
        table = tf.lookup.StaticHashTable(initializer, tf.cast(column.default_value, tf.int64))
    return table.lookup(x)


def _ids_and_present(tf, column, features):
    """`(ids, present)` of a categorical column on the host, TF ops."""
    if isinstance(column, _columns.VocabularyListCategoricalColumn):
        x = _raw(tf, features, column.key)
        return _lookup_ids(tf, column, x), tf.not_equal(x, _ignore(x.dtype))
    if isinstance(column, _columns.HashedCategoricalColumn):
        x = _raw(tf, features, column.key)
        text = x if x.dtype == tf.string else tf.strings.as_string(x)
        return (tf.strings.to_hash_bucket_fast(text, column.hash_bucket_size),
                tf.not_equal(x, _ignore(x.dtype)))
    if isinstance(column, _columns.CrossedColumn):
        return _cross(tf, column, features)
    if isinstance(column, _columns.IdentityCategoricalColumn):
        x = tf.cast(_raw(tf, features, column.key), tf.int64)
        return x, tf.not_equal(x, -1)
    if isinstance(column, _columns.BucketizedColumn):
        values = tf.cast(_raw(tf, features, column.source_column.key), tf.float32)
        buckets = tf.raw_ops.Bucketize(input=values, boundaries=list(map(float, column.boundaries)))
        offsets = tf.range(column.source_column.dimension) * (len(column.boundaries) + 1)
        return tf.cast(buckets + offsets, tf.int64), tf.ones_like(buckets, tf.bool)
    raise ValueError(f"{column.name!r} cannot be an input of a crossed_column: {column!r}")


def _sparse(tf, ids, present):
    indices = tf.where(present)
    return tf.SparseTensor(indices, tf.gather_nd(ids, indices), tf.shape(ids, tf.int64))


def _leaves(column):
    """The inputs of a cross, nested crosses expanded (TF1's leaf-level keys)."""
    for part in column.columns:
        if isinstance(part, _columns.CrossedColumn):
            yield from _leaves(part)
        else:
            yield part


def _cross(tf, column, features):
    """TF1's cross: raw features as they are (dense or sparse), columns' ids sparse."""
    inputs, width = [], 1
    for part in _leaves(column):
        if isinstance(part, str):
            x = features[part]
            x = x if isinstance(x, tf.SparseTensor) else _dense(tf, x, None)
            inputs.append(x)
            columns = x.shape[1] if not isinstance(x, tf.SparseTensor) else None
        else:
            ids, present = _ids_and_present(tf, part, features)
            inputs.append(_sparse(tf, ids, present))
            columns = ids.shape[1]
        width = None if width is None or columns is None else width * columns
    crossed = tf.sparse.cross_hashed(
        inputs, column.hash_bucket_size,
        **({} if column.hash_key is None else {"hash_key": column.hash_key}))
    shape = tf.shape(crossed, tf.int64)
    ids = tf.sparse.to_dense(crossed, default_value=-1)
    if width is not None:  # Static when the inputs are dense: the batches stack.
        ids = tf.pad(ids, [[0, 0], [0, width - shape[1]]], constant_values=-1)
        ids = tf.ensure_shape(ids, [None, width])
    return ids, tf.not_equal(ids, -1)


def host_ids(column, features):
    """The int32 ids `[batch, width]` of a host column (TF ops), -1 where absent.

    int32: what the devices hold without 64-bit mode, and half the bytes.
    """
    tf = _tf()
    ids, present = _ids_and_present(tf, column, features)
    return tf.where(present, tf.cast(ids, tf.int32), tf.constant(-1, tf.int32))


def _reads(column, specs):
    """Whether the input has the raw features of `column`, with its dtypes."""
    tf = _tf()
    for key in column.keys:
        if key not in specs:
            return False
    wanted = getattr(column, "dtype", None)
    if isinstance(column, (_columns.VocabularyListCategoricalColumn,
                           _columns.HashedCategoricalColumn)):
        is_string = specs[column.key].dtype == tf.string
        return is_string == (wanted == "string")
    return True


def _features_spec(spec):
    if isinstance(spec, tuple) and len(spec) == 2:
        spec = spec[0]
    return spec if isinstance(spec, dict) else None


def _columns_for(specs):
    """The host columns alive whose features `specs` has, one per `ids_key`."""
    found = {c.ids_key: c for c in list(_columns.HOST_COLUMNS) if _reads(c, specs)}
    return [found[k] for k in sorted(found)]


def _sparse_keys(tf, specs):
    """The sparse or ragged features that a column alive reads."""
    read = {k for c in list(_columns.ALL_COLUMNS) for k in c.keys}
    return sorted(k for k in read & set(specs) if not isinstance(specs[k], tf.TensorSpec))


def _to_dense(tf, x):
    """A sparse or ragged batch made dense, absent values as TF1's ignore values."""
    if x.dtype == tf.string:
        default = ""
    else:
        default = tf.cast(-1 if x.dtype.is_integer else 0, x.dtype)
    if isinstance(x, tf.RaggedTensor):
        return x.to_tensor(default)
    return tf.sparse.to_dense(x, default_value=default)


def _mapper(columns, string_keys, sparse_keys=()):
    """The transform of a batch of features: ids added, strings dropped, sparse densified.

    The ids come from the features as fed (TF1 crossed a sparse raw feature's
    values only); what stays of the sparse features is made dense.
    """
    tf = _tf()

    def transform(features):
        out = dict(features)
        for column in columns:
            out[column.ids_key] = host_ids(column, features)
        for key in string_keys:
            out.pop(key, None)
        for key in sparse_keys:
            if key in out:
                out[key] = _to_dense(tf, out[key])
        return out

    return transform


def transform_input(x):
    """`x` with the ids of the host columns added (see the module docstring).

    Args:
        x: what an `input_fn` gave: a `tf.data.Dataset` of `features` or
            `(features, labels)`, `(features, labels)` arrays, or anything
            else (returned as it is).

    Returns:
        The dataset mapped, the arrays transformed, or `x`.
    """
    if not _columns.ALL_COLUMNS:
        return x
    tf = _tf()
    if isinstance(x, tf.data.Dataset):
        specs = _features_spec(x.element_spec)
        columns = _columns_for(specs) if specs else []
        sparse = _sparse_keys(tf, specs) if specs else []
        if not columns and not sparse:
            return x
        consumed = {k for c in columns for k in c.keys if specs[k].dtype == tf.string}
        transform = _mapper(columns, consumed, sparse)

        def mapped(*element):
            if len(element) == 2 and isinstance(element[0], dict):
                return transform(element[0]), element[1]
            return transform(element[0])

        return x.map(mapped, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    pair = isinstance(x, tuple) and len(x) == 2
    features = x[0] if pair else x
    if not isinstance(features, dict) or any(
            isinstance(v, (dict, list, tuple)) for v in features.values()):
        return x
    specs = {}
    for key, value in features.items():
        try:
            specs[key] = tf.TensorSpec(np.shape(value), _tf_dtype(tf, value))
        except TypeError:
            continue  # No column reads what TensorFlow has no dtype for.
    columns = _columns_for(specs)
    if not columns:
        return x
    consumed = {k for c in columns for k in c.keys if specs[k].dtype == tf.string}
    eager = {k: tf.constant(features[k]) for c in columns for k in c.keys}
    out = {k: v for k, v in features.items() if k not in consumed}
    out.update({c.ids_key: host_ids(c, eager).numpy() for c in columns})
    return (out, x[1]) if pair else out


def _tf_dtype(tf, value):
    """The TensorFlow dtype of an array or tensor, strings as `tf.string`."""
    if isinstance(value, tf.Tensor):
        return value.dtype
    dtype = np.dtype(value.dtype) if hasattr(value, "dtype") else np.asarray(value).dtype
    return tf.string if dtype.kind in "OSU" else tf.as_dtype(dtype)
