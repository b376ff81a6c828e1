"""The column constructors of `tf.feature_column`, with TF1's arguments and checks."""

from keras_tpu_estimator.compat.v1 import dtypes
from keras_tpu_estimator.compat.v1.feature_column import _columns
from keras_tpu_estimator.compat.v1.feature_column import _dense


def _key(key, argument="key"):
    if not isinstance(key, str) or not key:
        raise ValueError(f"Argument `{argument}` must be a non-empty string. Received: {key!r}")
    return key


def _positive(value, argument):
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"Argument `{argument}` must be a positive int. Received: "
                         f"{argument}={value!r}")
    return value


def _dtype_name(dtype, allowed, argument="dtype"):
    name = dtypes.as_dtype(dtype).name if not isinstance(dtype, str) else dtype
    name = {"int": "int64", "str": "string", "float": "float32"}.get(name, name)
    if name not in allowed:
        raise ValueError(f"Argument `{argument}` must be one of {list(allowed)}. "
                         f"Received: {argument}={dtype!r}")
    return name


_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16")
_NUMBERS = ("float16", "bfloat16", "float32", "float64") + _INTS


def numeric_column(key, shape=(1,), default_value=None, dtype="float32", normalizer_fn=None):
    """`tf.feature_column.numeric_column`: a number (or fixed-shape array) per example.

    Args:
        key: the feature's key.
        shape: the shape of one example's value (an int or a tuple).
        default_value: the parse default (`make_parse_example_spec`).
        dtype: the feature's dtype (a float or int type); `input_layer`
            gives float32.
        normalizer_fn: applied to the float32 values in `model_fn`.

    Raises:
        ValueError: for a bad key, shape, dtype or a non-callable
            `normalizer_fn`.

    Example:

    ```python
    age = tf1.feature_column.numeric_column("age")
    pixels = tf1.feature_column.numeric_column("pixels", shape=(28, 28))
    ```
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not shape or any(not isinstance(d, int) or d < 1 for d in shape):
        raise ValueError(f"Argument `shape` of numeric_column({key!r}) must be positive ints. "
                         f"Received: shape={shape!r}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise ValueError(f"Argument `normalizer_fn` of numeric_column({key!r}) must be "
                         f"callable. Received: {normalizer_fn!r}")
    return _columns.NumericColumn(_key(key), shape, default_value,
                                  _dtype_name(dtype, _NUMBERS), normalizer_fn)


def bucketized_column(source_column, boundaries):
    """`tf.feature_column.bucketized_column`: bucket ids of a numeric column.

    Bucket `i` holds values in `[boundaries[i-1], boundaries[i])`. As a
    dense column it is one one-hot per value; as a categorical column (in
    `linear_model`, `crossed_column`, embeddings) value `j`'s bucket id is
    offset by `j * (len(boundaries) + 1)`.

    Raises:
        ValueError: for a non-numeric source or unsorted boundaries.

    Example:

    ```python
    age_buckets = tf1.feature_column.bucketized_column(age, [18, 25, 40, 65])
    ```
    """
    if not isinstance(source_column, _columns.NumericColumn):
        raise ValueError("Argument `source_column` of bucketized_column must be a "
                         f"numeric_column. Received: {source_column!r}")
    boundaries = tuple(float(b) for b in boundaries)
    if not boundaries or list(boundaries) != sorted(set(boundaries)):
        raise ValueError("Argument `boundaries` of bucketized_column must be a sorted list "
                         f"of distinct numbers. Received: {boundaries!r}")
    return _columns.BucketizedColumn(source_column, boundaries)


def categorical_column_with_identity(key, num_buckets, default_value=None):
    """`categorical_column_with_identity`: integer features that are ids.

    Ids in `[0, num_buckets)` are kept, -1 is absent; another value becomes
    `default_value` (TF1 fails at run time without one; a compiled step
    cannot fail, so it is treated as absent).

    Example:

    ```python
    user = tf1.feature_column.categorical_column_with_identity("user_id", 10000)
    ```
    """
    _positive(num_buckets, "num_buckets")
    if default_value is not None and not 0 <= default_value < num_buckets:
        raise ValueError(f"Argument `default_value` must be in [0, {num_buckets}). "
                         f"Received: default_value={default_value!r}")
    return _columns.IdentityCategoricalColumn(_key(key), num_buckets, default_value)


def _oov(num_oov_buckets, default_value):
    if not isinstance(num_oov_buckets, int) or num_oov_buckets < 0:
        raise ValueError("Argument `num_oov_buckets` must be a non-negative int. Received: "
                         f"num_oov_buckets={num_oov_buckets!r}")
    if num_oov_buckets and default_value not in (None, -1):
        raise ValueError("Give `default_value` or `num_oov_buckets`, not both. Received: "
                         f"default_value={default_value!r}, num_oov_buckets={num_oov_buckets}")
    return -1 if default_value is None else int(default_value)


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None,
                                            default_value=-1, num_oov_buckets=0):
    """`categorical_column_with_vocabulary_list`: ids by position in a list.

    The lookup runs on the host, in the input pipeline (TensorFlow's own
    tables): a value's id is its index; an unknown value gets
    `default_value` (-1: absent) or, with `num_oov_buckets`, a bucket
    `len(vocabulary_list) + hash(value) % num_oov_buckets`.

    Raises:
        ValueError: for an empty or duplicated vocabulary, a dtype that
            does not match it, or both `default_value` and `num_oov_buckets`.

    Example:

    ```python
    color = tf1.feature_column.categorical_column_with_vocabulary_list(
        "color", ["red", "green", "blue"], num_oov_buckets=2)
    ```
    """
    vocabulary = tuple(vocabulary_list or ())
    if not vocabulary or len(set(vocabulary)) != len(vocabulary):
        raise ValueError("Argument `vocabulary_list` must be non-empty, without duplicates. "
                         f"Received: {vocabulary_list!r}")
    strings = all(isinstance(v, (str, bytes)) for v in vocabulary)
    if dtype is None:
        dtype = "string" if strings else "int64"
    dtype = _dtype_name(dtype, ("string",) + _INTS)
    if strings != (dtype == "string"):
        raise ValueError(f"Argument `dtype` ({dtype}) does not match the vocabulary "
                         f"{vocabulary[:5]!r} of categorical column {key!r}.")
    vocabulary = tuple(v.decode() if isinstance(v, bytes) else v for v in vocabulary)
    return _columns.VocabularyListCategoricalColumn(
        _key(key), vocabulary, dtype, _oov(num_oov_buckets, default_value), num_oov_buckets)


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                            num_oov_buckets=0, default_value=None,
                                            dtype="string"):
    """`categorical_column_with_vocabulary_file`: ids by line number in a file.

    As `categorical_column_with_vocabulary_list`, with the vocabulary read
    (on the host) from the first `vocabulary_size` lines of the file.

    Example:

    ```python
    words = tf1.feature_column.categorical_column_with_vocabulary_file(
        "word", "vocab.txt", vocabulary_size=30000, num_oov_buckets=1)
    ```
    """
    if not isinstance(vocabulary_file, str) or not vocabulary_file:
        raise ValueError("Argument `vocabulary_file` must be a file path. Received: "
                         f"{vocabulary_file!r}")
    if vocabulary_size is not None:
        _positive(vocabulary_size, "vocabulary_size")
    return _columns.VocabularyFileCategoricalColumn(
        _key(key), (), _dtype_name(dtype, ("string",) + _INTS),
        _oov(num_oov_buckets, default_value), num_oov_buckets, vocabulary_file,
        vocabulary_size)


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype="string"):
    """`categorical_column_with_hash_bucket`: `to_hash_bucket_fast(value) % size`.

    Hashed on the host, with TensorFlow's `tf.strings.to_hash_bucket_fast`
    (an int feature is hashed as its decimal string, as in TF1).

    Example:

    ```python
    city = tf1.feature_column.categorical_column_with_hash_bucket("city", 1000)
    ```
    """
    _positive(hash_bucket_size, "hash_bucket_size")
    return _columns.HashedCategoricalColumn(
        _key(key), hash_bucket_size, _dtype_name(dtype, ("string",) + _INTS))


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """`tf.feature_column.crossed_column`: hashed crosses of features' values.

    `keys` holds feature keys (strings) and categorical columns (hashed,
    vocabulary, identity, bucketized or crossed, not weighted); crossed on
    the host with TensorFlow's `tf.sparse.cross_hashed`.

    Example:

    ```python
    cross = tf1.feature_column.crossed_column(["country", age_buckets], 5000)
    ```
    """
    keys = tuple(keys)
    if len(keys) < 2:
        raise ValueError(f"Argument `keys` of crossed_column must hold at least 2 items. "
                         f"Received: {keys!r}")
    for key in keys:
        if isinstance(key, _columns.WeightedCategoricalColumn) or not isinstance(
                key, (str, _columns.CategoricalColumn)):
            raise ValueError("Items of `keys` of crossed_column must be feature keys or "
                             f"unweighted categorical columns. Received: {key!r}")
    _positive(hash_bucket_size, "hash_bucket_size")
    return _columns.CrossedColumn(keys, hash_bucket_size, hash_key)


def weighted_categorical_column(categorical_column, weight_feature_key, dtype="float32"):
    """`weighted_categorical_column`: a categorical column's ids with weights.

    Example:

    ```python
    terms = tf1.feature_column.weighted_categorical_column(term_ids, "term_frequency")
    ```
    """
    _columns.check_categorical(categorical_column, "categorical_column")
    return _columns.WeightedCategoricalColumn(
        categorical_column, _key(weight_feature_key, "weight_feature_key"),
        _dtype_name(dtype, ("float16", "float32", "float64")))


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True, use_safe_embedding_lookup=True):
    """`tf.feature_column.embedding_column`: a table of `dimension` per id.

    The table `<scope>/<name>_embedding/embedding_weights` is created by
    the layer that computes the column; its default initializer is TF1's
    truncated normal of stddev `1/sqrt(dimension)`. With
    `ckpt_to_load_from`, its initial value is `tensor_name_in_ckpt` there.

    Raises:
        ValueError: for a non-categorical column, a bad dimension or
            combiner, or only one of the two checkpoint arguments.

    Example:

    ```python
    user_vectors = tf1.feature_column.embedding_column(user, 16, combiner="sqrtn")
    ```
    """
    del use_safe_embedding_lookup
    _columns.check_categorical(categorical_column, "categorical_column")
    _dense.check_dimension(dimension)
    if initializer is not None and not callable(initializer):
        raise ValueError(f"Argument `initializer` must be callable. Received: {initializer!r}")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Give both `ckpt_to_load_from` and `tensor_name_in_ckpt`, or neither.")
    return _dense.EmbeddingColumn(
        categorical_column, dimension, _dense.check_combiner(combiner), initializer,
        ckpt_to_load_from, tensor_name_in_ckpt, max_norm, trainable)


def shared_embedding_columns(categorical_columns, dimension, combiner="mean",
                             initializer=None, shared_embedding_collection_name=None,
                             ckpt_to_load_from=None, tensor_name_in_ckpt=None,
                             max_norm=None, trainable=True, use_safe_embedding_lookup=True):
    """`shared_embedding_columns`: embedding columns over one shared table.

    The table is named after `shared_embedding_collection_name` (default:
    the sorted column names joined by `_`, then `_shared_embedding`).

    Returns:
        A list of columns, in the order of `categorical_columns`.

    Raises:
        ValueError: for columns of different types or numbers of buckets.

    Example:

    ```python
    query, doc = tf1.feature_column.shared_embedding_columns([query_ids, doc_ids], 32)
    ```
    """
    del use_safe_embedding_lookup
    columns = list(categorical_columns)
    if not columns:
        raise ValueError("Argument `categorical_columns` must not be empty.")
    for column in columns:
        _columns.check_categorical(column, "categorical_columns")
    _dense.check_dimension(dimension)
    kinds = {type(c) for c in columns}
    buckets = {c.num_buckets for c in columns}
    if len(kinds) > 1 or len(buckets) > 1:
        raise ValueError(
            "The columns of shared_embedding_columns must be of one type and number of "
            f"buckets. Received: {[(type(c).__name__, c.num_buckets) for c in columns]}")
    name = shared_embedding_collection_name or (
        "_".join(sorted(c.name for c in columns)) + "_shared_embedding")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Give both `ckpt_to_load_from` and `tensor_name_in_ckpt`, or neither.")
    return [
        _dense.SharedEmbeddingColumn(
            c, dimension, _dense.check_combiner(combiner),
            initializer or _dense.default_initializer(dimension), ckpt_to_load_from,
            tensor_name_in_ckpt, max_norm, trainable, name)
        for c in columns
    ]


def shared_embeddings(categorical_columns, dimension, combiner="mean", initializer=None,
                      shared_embedding_collection_name=None, ckpt_to_load_from=None,
                      tensor_name_in_ckpt=None, max_norm=None, trainable=True,
                      use_safe_embedding_lookup=True):
    """`tf.feature_column.shared_embeddings` (TF 2's name): `shared_embedding_columns`."""
    return shared_embedding_columns(
        categorical_columns, dimension, combiner, initializer,
        shared_embedding_collection_name, ckpt_to_load_from, tensor_name_in_ckpt,
        max_norm, trainable, use_safe_embedding_lookup)


def indicator_column(categorical_column):
    """`tf.feature_column.indicator_column`: `[batch, num_buckets]` counts of ids.

    A weighted column gives the sum of the weights per id.

    Example:

    ```python
    color_onehot = tf1.feature_column.indicator_column(color)
    ```
    """
    _columns.check_categorical(categorical_column, "categorical_column")
    return _dense.IndicatorColumn(categorical_column)

