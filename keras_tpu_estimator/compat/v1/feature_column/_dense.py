"""Dense columns over categorical ids: embeddings, shared embeddings, indicators.

Their math runs in `model_fn` (compiled) on the ids a categorical column
gives (`_columns`): `[batch, width]` ids with `-1` where a value is absent.
Embedding weights are TF1 variables (`tf1.get_variable` in the variable
scope the layer opens for the column), so `input_layer/<col>_embedding/
embedding_weights` is the name a TF1 checkpoint holds.
"""

import dataclasses
import math

import keras

from keras_tpu_estimator.compat.v1 import graph
from keras_tpu_estimator.compat.v1 import initializers
from keras_tpu_estimator.compat.v1 import variables
from keras_tpu_estimator.compat.v1._checkpoint_utils import init_from_checkpoint
from keras_tpu_estimator.compat.v1.feature_column._columns import CategoricalColumn
from keras_tpu_estimator.compat.v1.feature_column._columns import FeatureColumn

COMBINERS = ("mean", "sum", "sqrtn")


def combine(table, ids, weights, combiner, max_norm=None):
    """TF1's `safe_embedding_lookup_sparse` on dense ids: `[batch, dim]`.

    Absent ids (-1) are left out, and for `mean` and `sqrtn` ids of
    non-positive weight; a row with none left gives zeros. `mean` divides
    by the sum of the weights, `sqrtn` by the square root of the sum of
    their squares.
    """
    present = ids >= 0
    if weights is None:
        weights = keras.ops.cast(present, table.dtype)
    else:
        if combiner != "sum":  # TF1 keeps negative weights in sums only.
            present = present & (weights > 0)
        weights = keras.ops.where(present, keras.ops.cast(weights, table.dtype), 0.0)
    vectors = keras.ops.take(table, keras.ops.where(present, ids, 0), axis=0)
    if max_norm is not None:
        norms = keras.ops.sqrt(keras.ops.sum(vectors * vectors, axis=-1, keepdims=True))
        vectors = vectors * keras.ops.minimum(1.0, max_norm / keras.ops.maximum(norms, 1e-30))
    total = keras.ops.sum(vectors * weights[..., None], axis=1)
    if combiner == "sum":
        return total
    if combiner == "mean":
        scale = keras.ops.sum(weights, axis=1, keepdims=True)
    else:
        scale = keras.ops.sqrt(keras.ops.sum(weights * weights, axis=1, keepdims=True))
    return keras.ops.where(scale > 0, total / keras.ops.where(scale > 0, scale, 1.0), 0.0)


def check_combiner(combiner):
    if combiner is None:
        return "mean"  # TensorFlow 2's embedding_lookup_sparse: None is mean.
    if combiner not in COMBINERS:
        raise ValueError(
            f"Argument `combiner` must be one of {list(COMBINERS)}. Received: "
            f"combiner={combiner!r}"
        )
    return combiner


def check_dimension(dimension):
    if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension < 1:
        raise ValueError(
            f"Argument `dimension` must be a positive int. Received: dimension={dimension!r}"
        )


def default_initializer(dimension):
    return initializers.truncated_normal_initializer(mean=0.0, stddev=1 / math.sqrt(dimension))


@dataclasses.dataclass(frozen=True, eq=False)
class EmbeddingColumn(FeatureColumn):
    """`tf.feature_column.embedding_column`: the combined embedding of a row's ids."""

    categorical_column: CategoricalColumn
    dimension: int
    combiner: str = "mean"
    initializer: object = None
    ckpt_to_load_from: str = None
    tensor_name_in_ckpt: str = None
    max_norm: float = None
    trainable: bool = True

    @property
    def name(self):
        return f"{self.categorical_column.name}_embedding"

    var_scope_name = name

    @property
    def keys(self):
        return self.categorical_column.keys

    @property
    def parse_example_spec(self):
        return self.categorical_column.parse_example_spec

    def table(self, trainable):
        table = variables.get_variable(
            "embedding_weights", [self.categorical_column.num_buckets, self.dimension],
            dtype="float32",
            initializer=self.initializer or default_initializer(self.dimension),
            trainable=self.trainable and trainable,
        )
        if self.ckpt_to_load_from is not None:
            init_from_checkpoint(self.ckpt_to_load_from, {self.tensor_name_in_ckpt: table})
        return table

    def dense(self, features, state):
        ids, weights = self.categorical_column.ids(features)
        return combine(self.table(state.trainable), ids, weights, self.combiner, self.max_norm)


@dataclasses.dataclass(frozen=True, eq=False)
class SharedEmbeddingColumn(EmbeddingColumn):
    """One of `shared_embedding_columns`: its table is the group's.

    The first column of the group computed in a `model_fn` call creates the
    table, the others find it in the collection of that name, as TF1 did.
    `input_layer` names it `<scope>/<shared_embedding_collection_name>/
    embedding_weights` (TF1); `DenseFeatures` names it
    `<shared_embedding_collection_name>`, at the root (TF 2's shared
    columns, which Keras's `DenseFeatures` computes).
    """

    shared_embedding_collection_name: str = None

    @property
    def name(self):
        return f"{self.categorical_column.name}_shared_embedding"

    @property
    def var_scope_name(self):
        return self.shared_embedding_collection_name

    def table(self, trainable, at_root=False):
        found = graph.get_collection(self.shared_embedding_collection_name)
        if found:
            return found[0]
        if at_root:  # TF 2's shared columns (DenseFeatures): one root variable.
            with variables.absolute_scope(""):
                table = variables.get_variable(
                    self.shared_embedding_collection_name,
                    [self.categorical_column.num_buckets, self.dimension], dtype="float32",
                    initializer=self.initializer, trainable=self.trainable and trainable)
        else:
            table = super().table(trainable)
        graph.add_to_collection(self.shared_embedding_collection_name, table)
        return table

    def dense(self, features, state):
        ids, weights = self.categorical_column.ids(features)
        table = self.table(state.trainable, state.shared_at_root)
        return combine(table, ids, weights, self.combiner, self.max_norm)


@dataclasses.dataclass(frozen=True, eq=False)
class IndicatorColumn(FeatureColumn):
    """`tf.feature_column.indicator_column`: counts (or weights) per id."""

    categorical_column: CategoricalColumn

    @property
    def name(self):
        return f"{self.categorical_column.name}_indicator"

    var_scope_name = name

    @property
    def keys(self):
        return self.categorical_column.keys

    @property
    def parse_example_spec(self):
        return self.categorical_column.parse_example_spec

    @property
    def dimension(self):
        return self.categorical_column.num_buckets

    def dense(self, features, state):
        ids, weights = self.categorical_column.ids(features)
        onehot = keras.ops.one_hot(keras.ops.where(ids >= 0, ids, -1),
                                   self.categorical_column.num_buckets)
        if weights is not None:
            onehot = onehot * weights[..., None]
        return keras.ops.sum(onehot * keras.ops.cast(ids >= 0, onehot.dtype)[..., None], axis=1)


def check_dense(column, where):
    if not hasattr(column, "dense"):
        raise ValueError(
            f"Items of `feature_columns` of {where} must be dense columns (numeric_column, "
            "bucketized_column, embedding_column, indicator_column, shared embedding "
            f"columns); wrap a categorical column in embedding_column or indicator_column. "
            f"Received: {column!r}"
        )
