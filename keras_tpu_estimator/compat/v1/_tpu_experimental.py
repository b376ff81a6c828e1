"""`tf.compat.v1.tpu.experimental`: the TPU embedding columns.

TF1 accelerated these lookups with the TPU's embedding cores; under
`TPUEstimator(use_tpu=False)` they were ordinary embedding columns, and that
is what they are here (on every device): the same math and variable names
as `tf1.feature_column.embedding_column` (`<scope>/<col>_embedding/
embedding_weights`) and `shared_embedding_columns`. The lookups compile
into the step like any other gather; `learning_rate_fn`,
`embedding_lookup_device` and `tensor_core_shape` (embedding-core settings)
change nothing.

```python
user = tf1.feature_column.categorical_column_with_identity("user", 1000)
column = tf1.tpu.experimental.embedding_column(user, 16, combiner="sum")
net = tf1.feature_column.DenseFeatures(column)(features)
```
"""

from keras_tpu_estimator.compat.v1.feature_column import _api


def _no_sequences(max_sequence_length, name):
    if max_sequence_length:
        raise ValueError(
            f"{name}(max_sequence_length={max_sequence_length!r}) is not supported: sequence "
            "embeddings need sequence feature columns. Pad the ids in input_fn to "
            "[batch, length] and use an embedding column with a combiner."
        )


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     max_sequence_length=0, learning_rate_fn=None,
                     embedding_lookup_device=None, tensor_core_shape=None,
                     use_safe_embedding_lookup=True):
    """`tf.tpu.experimental.embedding_column`: `feature_column.embedding_column`.

    Raises:
        ValueError: as `embedding_column`, and for `max_sequence_length`.
    """
    del learning_rate_fn, embedding_lookup_device, tensor_core_shape
    _no_sequences(max_sequence_length, "embedding_column")
    return _api.embedding_column(categorical_column, dimension, combiner, initializer,
                                 use_safe_embedding_lookup=use_safe_embedding_lookup)


def shared_embedding_columns(categorical_columns, dimension, combiner="mean",
                             initializer=None, shared_embedding_collection_name=None,
                             max_sequence_lengths=None, learning_rate_fn=None,
                             embedding_lookup_device=None, tensor_core_shape=None,
                             use_safe_embedding_lookup=True):
    """`tf.tpu.experimental.shared_embedding_columns`: `shared_embedding_columns`.

    Raises:
        ValueError: as `shared_embedding_columns`, and for
            `max_sequence_lengths` other than zeros.
    """
    del learning_rate_fn, embedding_lookup_device, tensor_core_shape
    for length in max_sequence_lengths or ():
        _no_sequences(length, "shared_embedding_columns")
    return _api.shared_embedding_columns(
        categorical_columns, dimension, combiner, initializer,
        shared_embedding_collection_name, use_safe_embedding_lookup=use_safe_embedding_lookup)
