"""The TF1 feature column objects: what each column reads and what it makes.

A column is a plain, immutable Python description. Two kinds of work hang
off it, in two places:

- on the host, in the input pipeline (`_host`): turning strings or raw
  values into integer ids with TensorFlow's own ops (vocabulary lookups,
  `tf.strings.to_hash_bucket_fast`, `tf.sparse.cross_hashed`). A column that
  needs this has `host = True` and implements `host_ids(features)` in TF ops;
  the ids reach `model_fn` as an extra int feature named `column.ids_key`.
- on the devices, in `model_fn` (`_dense`): numbers, bucketizing, identity
  ids, and the dense math of embeddings, indicators and linear weights, in
  `keras.ops`.

Ids travel as dense `[batch, width]` int tensors in which `-1` marks an
absent value (TF1's ignore values: `''` for strings, `-1` for ints), with
weights `[batch, width]` (1 for present values) for weighted columns.
"""

import dataclasses
import hashlib
import weakref

import keras
import numpy as np

# Every host column alive: what the input pipeline computes ids for (`_host`).
HOST_COLUMNS = weakref.WeakSet()
# Every column alive: whose raw features the input pipeline checks (`_host`).
ALL_COLUMNS = weakref.WeakSet()


def _check(condition, message):
    if not condition:
        raise ValueError(message)


def rows(x):
    """`x` as `[batch, -1]`: TF1 flattens every non-batch dimension."""
    x = keras.ops.convert_to_tensor(x)
    if len(x.shape) == 1:
        return keras.ops.expand_dims(x, 1)
    if len(x.shape) == 2:
        return x
    return keras.ops.reshape(x, (-1, int(np.prod(x.shape[1:]))))


def feature(features, key, column):
    """`features[key]`, or an error naming the column and the keys there are."""
    if not isinstance(features, dict) or key not in features:
        keys = sorted(features) if isinstance(features, dict) else type(features).__name__
        raise ValueError(
            f"Feature column {column.name!r} reads features[{key!r}], which the input "
            f"does not have. Features: {keys}."
        )
    return features[key]


class FeatureColumn:
    """Base of every column: a name and the raw feature keys it reads."""

    host = False

    @property
    def name(self):
        raise NotImplementedError

    @property
    def keys(self):
        """The raw feature keys the column reads."""
        raise NotImplementedError

    @property
    def parse_example_spec(self):
        """`{key: tf.io.FixedLenFeature | VarLenFeature}` (TensorFlow objects)."""
        raise NotImplementedError

    def __post_init__(self):
        ALL_COLUMNS.add(self)
        if self.host:
            HOST_COLUMNS.add(self)

    @property
    def ids_key(self):
        """The feature key the host's ids arrive under (host columns)."""
        digest = hashlib.sha1(repr(self).encode("utf-8")).hexdigest()[:8]
        return f"{self.name}/ids_{digest}"


class CategoricalColumn(FeatureColumn):
    """A column of integer ids in `[0, num_buckets)`."""

    weighted = False

    @property
    def num_buckets(self):
        raise NotImplementedError

    def ids(self, features):
        """`(ids, weights)` in `model_fn`: `[batch, width]`, ids -1 where absent."""
        if not self.host:
            raise NotImplementedError
        if self.ids_key in features:
            return keras.ops.cast(rows(features[self.ids_key]), "int32"), None
        if not isinstance(features, dict):
            feature(features, self.keys[0], self)
        raise ValueError(
            f"Feature column {self.name!r} needs its ids from the input pipeline: "
            f"{_HOST_WORK} The input of this model_fn call was read before the column "
            "was created: create feature columns before train/evaluate/predict (in "
            "main, at module level, or in params), and give a tf.data.Dataset, or "
            f"arrays, from input_fn. Features: {sorted(features)}."
        )


class _OneFeature:
    """A column of one raw feature, named after it (put before the column's base)."""

    @property
    def name(self):
        return self.key

    @property
    def keys(self):
        return (self.key,)


_HOST_WORK = (
    "vocabulary lookups, hashing and crosses of raw values (strings) run on the "
    "host, in tf.data, for every column created before the input is read."
)


@dataclasses.dataclass(frozen=True, eq=False)
class NumericColumn(_OneFeature, FeatureColumn):
    """`tf.feature_column.numeric_column`: a float feature of a fixed shape."""

    key: str
    shape: tuple = (1,)
    default_value: object = None
    dtype: str = "float32"
    normalizer_fn: object = None

    @property
    def dimension(self):
        return int(np.prod(self.shape))

    @property
    def parse_example_spec(self):
        import tensorflow as tf

        return {self.key: tf.io.FixedLenFeature(self.shape, self.dtype, self.default_value)}

    def values(self, features):
        """The values `[batch, *shape]`, normalized (as fed), then float32 (as TF1)."""
        x = feature(features, self.key, self)
        if self.normalizer_fn is not None:
            x = self.normalizer_fn(x)
        return keras.ops.cast(x, "float32")

    def dense(self, features, state):
        return rows(self.values(features))

    var_scope_name = _OneFeature.name


@dataclasses.dataclass(frozen=True, eq=False)
class BucketizedColumn(CategoricalColumn):
    """`tf.feature_column.bucketized_column`: a numeric column cut at boundaries."""

    source_column: NumericColumn
    boundaries: tuple

    @property
    def name(self):
        return f"{self.source_column.name}_bucketized"

    var_scope_name = name

    @property
    def keys(self):
        return self.source_column.keys

    @property
    def parse_example_spec(self):
        return self.source_column.parse_example_spec

    @property
    def num_buckets(self):
        return (len(self.boundaries) + 1) * self.source_column.dimension

    @property
    def dimension(self):
        return self.num_buckets

    def buckets(self, features):
        """Each value's bucket `[batch, dimension]`: boundaries at or below it."""
        x = rows(self.source_column.values(features))
        edges = keras.ops.convert_to_tensor(np.asarray(self.boundaries, "float32"))
        return keras.ops.sum(
            keras.ops.cast(x[..., None] >= edges, "int32"), axis=-1
        )

    def ids(self, features):
        buckets = self.buckets(features)
        offsets = np.arange(self.source_column.dimension, dtype="int32") * (
            len(self.boundaries) + 1
        )
        return buckets + offsets, None

    def dense(self, features, state):
        """One one-hot of `len(boundaries) + 1` per value, concatenated."""
        onehot = keras.ops.one_hot(self.buckets(features), len(self.boundaries) + 1)
        return rows(onehot)


@dataclasses.dataclass(frozen=True, eq=False)
class IdentityCategoricalColumn(_OneFeature, CategoricalColumn):
    """`categorical_column_with_identity`: int features that are ids already."""

    key: str
    number_buckets: int
    default_value: object = None

    @property
    def num_buckets(self):
        return self.number_buckets

    @property
    def parse_example_spec(self):
        import tensorflow as tf

        return {self.key: tf.io.VarLenFeature(tf.int64)}

    def ids(self, features):
        x = feature(features, self.key, self)
        if len(x.shape) > 2:
            raise ValueError(
                f"Feature column {self.name!r}: a categorical feature must be [batch] or "
                f"[batch, values]. Received shape {tuple(x.shape)} (TF1 combined only its "
                "last axis): reshape it in input_fn.")
        x = keras.ops.cast(rows(x), "int32")
        absent = x == -1
        valid = (x >= 0) & (x < self.number_buckets)
        # TF1 fails on an out-of-range id without a default; a compiled step
        # cannot fail, so such an id counts as absent.
        fallback = -1 if self.default_value is None else int(self.default_value)
        return keras.ops.where(absent, -1, keras.ops.where(valid, x, fallback)), None


@dataclasses.dataclass(frozen=True, eq=False)
class VocabularyListCategoricalColumn(_OneFeature, CategoricalColumn):
    """`categorical_column_with_vocabulary_list` (looked up on the host)."""

    key: str
    vocabulary_list: tuple
    dtype: str
    default_value: int = -1
    num_oov_buckets: int = 0
    host = True

    @property
    def num_buckets(self):
        return len(self.vocabulary_list) + self.num_oov_buckets

    @property
    def parse_example_spec(self):
        import tensorflow as tf

        return {self.key: tf.io.VarLenFeature(self.dtype)}

    def vocabulary(self):
        return list(self.vocabulary_list)


@dataclasses.dataclass(frozen=True, eq=False)
class VocabularyFileCategoricalColumn(VocabularyListCategoricalColumn):
    """`categorical_column_with_vocabulary_file` (looked up on the host)."""

    vocabulary_file: str = None
    vocabulary_size: int = None

    def vocabulary(self):
        import tensorflow as tf

        with tf.io.gfile.GFile(self.vocabulary_file) as f:
            lines = f.read().splitlines()
        lines = lines[: self.vocabulary_size]
        return [int(v) for v in lines] if self.dtype != "string" else lines


@dataclasses.dataclass(frozen=True, eq=False)
class HashedCategoricalColumn(_OneFeature, CategoricalColumn):
    """`categorical_column_with_hash_bucket` (hashed on the host)."""

    key: str
    hash_bucket_size: int
    dtype: str = "string"
    host = True

    @property
    def num_buckets(self):
        return self.hash_bucket_size

    @property
    def parse_example_spec(self):
        import tensorflow as tf

        return {self.key: tf.io.VarLenFeature(self.dtype)}


@dataclasses.dataclass(frozen=True, eq=False)
class CrossedColumn(CategoricalColumn):
    """`tf.feature_column.crossed_column` (crossed and hashed on the host)."""

    columns: tuple  # Raw keys (str) and categorical columns.
    hash_bucket_size: int
    hash_key: object = None
    host = True

    @property
    def name(self):
        return "_X_".join(sorted(_cross_name(c) for c in self.columns))

    @property
    def keys(self):
        keys = []
        for c in self.columns:
            for k in ((c,) if isinstance(c, str) else c.keys):
                if k not in keys:
                    keys.append(k)
        return tuple(keys)

    @property
    def num_buckets(self):
        return self.hash_bucket_size

    @property
    def parse_example_spec(self):
        import tensorflow as tf

        spec = {}
        for c in self.columns:
            spec.update({c: tf.io.VarLenFeature(tf.string)} if isinstance(c, str)
                        else c.parse_example_spec)
        return spec


def _cross_name(c):
    return c if isinstance(c, str) else c.name


@dataclasses.dataclass(frozen=True, eq=False)
class WeightedCategoricalColumn(CategoricalColumn):
    """`weighted_categorical_column`: ids with a float weight feature."""

    categorical_column: CategoricalColumn
    weight_feature_key: str
    dtype: str = "float32"
    weighted = True

    @property
    def name(self):
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def keys(self):
        return self.categorical_column.keys + (self.weight_feature_key,)

    @property
    def num_buckets(self):
        return self.categorical_column.num_buckets

    @property
    def parse_example_spec(self):
        import tensorflow as tf

        spec = dict(self.categorical_column.parse_example_spec)
        spec[self.weight_feature_key] = tf.io.VarLenFeature(self.dtype)
        return spec

    def ids(self, features):
        ids, _ = self.categorical_column.ids(features)
        weights = keras.ops.cast(
            rows(feature(features, self.weight_feature_key, self)), "float32"
        )
        # TF1 drops weights of 0 (the float ignore value) with their ids.
        present = (ids >= 0) & (weights != 0)
        return keras.ops.where(present, ids, -1), keras.ops.where(present, weights, 0.0)


def check_categorical(column, argument):
    _check(
        isinstance(column, CategoricalColumn),
        f"Argument `{argument}` must be a categorical column (categorical_column_with_*, "
        f"bucketized_column, crossed_column, weighted_categorical_column). Received: "
        f"{column!r}",
    )
