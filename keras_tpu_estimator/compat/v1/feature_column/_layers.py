"""What `model_fn` calls on feature columns: `input_layer`, `linear_model`, `DenseFeatures`.

Each opens TF1's variable scopes (`input_layer`, `linear_model`,
`dense_features`, numbered `_1`, `_2`, ... on later calls within one
`model_fn` call), then one scope per column, named after it, so variables
carry the names a TF1 checkpoint has: `input_layer/<col>_embedding/
embedding_weights`, `linear_model/<col>/weights`, `linear_model/bias_weights`.
Columns are computed in the order of their names, as TF1 did.
"""

import collections

import keras

from keras_tpu_estimator.compat.v1 import graph
from keras_tpu_estimator.compat.v1 import initializers
from keras_tpu_estimator.compat.v1 import variables
from keras_tpu_estimator.compat.v1.feature_column import _columns
from keras_tpu_estimator.compat.v1.feature_column import _dense

_ZEROS = initializers.zeros_initializer()  # TF1's start of linear weights.
_State = collections.namedtuple("_State", ["trainable", "shared_at_root"])


def _column_list(feature_columns, where):
    if isinstance(feature_columns, _columns.FeatureColumn):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, dict):
        feature_columns = list(feature_columns.values())
    feature_columns = list(feature_columns or [])
    if not feature_columns:
        raise ValueError(f"Argument `feature_columns` of {where} must not be empty.")
    for column in feature_columns:
        if not isinstance(column, _columns.FeatureColumn):
            raise ValueError(
                f"Items of `feature_columns` of {where} must be feature columns of "
                f"tf1.feature_column. Received: {column!r}"
            )
    names = [c.name for c in feature_columns]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(
            f"Duplicate feature column names in {where}: {duplicated}. Each column "
            "of one call must have a distinct name."
        )
    return sorted(feature_columns, key=lambda c: c.name)


def _check_features(features, where):
    if not isinstance(features, dict):
        raise ValueError(
            f"Argument `features` of {where} must be a dict of feature name to tensor. "
            f"Received: {type(features).__name__}"
        )


def _dense_outputs(features, feature_columns, trainable, where, cols_to_output_tensors=None):
    state = _State(trainable, where == "DenseFeatures")
    columns = _column_list(feature_columns, where)
    for column in columns:
        _dense.check_dense(column, where)
    _check_features(features, where)
    outputs = []
    for column in columns:
        with variables.variable_scope(None, default_name=column.var_scope_name):
            with graph.name_scope(column.name):
                output = _columns.rows(column.dense(features, state))
        outputs.append(output)
        if cols_to_output_tensors is not None:
            cols_to_output_tensors[column] = output
    return keras.ops.concatenate(outputs, axis=1) if len(outputs) > 1 else outputs[0]


def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None, cols_to_output_tensors=None):
    """`tf.compat.v1.feature_column.input_layer`: the columns' dense values side by side.

    Args:
        features: the dict `model_fn` received (`features`).
        feature_columns: dense columns (`numeric_column`,
            `bucketized_column`, `embedding_column`, `indicator_column`,
            shared embedding columns), in any order: they are computed and
            concatenated in the order of their names, as in TF1.
        weight_collections: ignored (TF1 graph collections of weights).
        trainable: whether embedding weights are trained.
        cols_to_vars: a dict filled with `{column: [variables]}`.
        cols_to_output_tensors: a dict filled with `{column: output}`.

    Returns:
        A float32 tensor `[batch, sum of the columns' dimensions]`.

    Raises:
        ValueError: for an empty or non-column `feature_columns`, a
            categorical column not wrapped in a dense column, or a feature
            the input lacks.

    Example:

    ```python
    columns = [tf1.feature_column.numeric_column(k) for k in ("a", "b")]
    net = tf1.feature_column.input_layer(features, columns)  # [batch, 2]
    ```
    """
    del weight_collections
    for column in _column_list(feature_columns, "input_layer"):
        _dense.check_dense(column, "input_layer")
    _check_features(features, "input_layer")
    with variables.variable_scope(None, default_name="input_layer"):
        before = len(variables.global_variables())
        output = _dense_outputs(features, feature_columns, trainable, "input_layer",
                                cols_to_output_tensors)
        _fill_vars(cols_to_vars, feature_columns, before)
    return output


def _fill_vars(cols_to_vars, feature_columns, before):
    if cols_to_vars is None:
        return
    created = variables.global_variables()[before:]
    for column in _column_list(feature_columns, "input_layer"):
        prefix = "/" + getattr(column, "var_scope_name", column.name) + "/"
        cols_to_vars[column] = [v for v in created if prefix in "/" + v.name]


class DenseFeatures:
    """`tf.keras.layers.DenseFeatures` (TF 2 Keras 2): `input_layer` as a layer.

    Its variables are `dense_features/<col>_embedding/embedding_weights`
    (`dense_features_1`, ... for the next instance called in the same
    `model_fn` call); calling one instance again reuses its variables. A
    shared embedding group's table is `<collection name>` at the root, as
    Keras 2 named TF 2's shared columns.

    Args:
        feature_columns: dense columns, as for `input_layer`.
        trainable: whether its embedding weights are trained.
        name: the variable scope name (default `dense_features`).

    Example:

    ```python
    embedded = tf1.feature_column.DenseFeatures(embedding_column)(features)
    ```
    """

    def __init__(self, feature_columns, trainable=True, name=None, **kwargs):
        self._columns = _column_list(feature_columns, "DenseFeatures")
        for column in self._columns:
            _dense.check_dense(column, "DenseFeatures")
        self.trainable = trainable
        self._name = name
        self._scopes = {}  # id(graph of a model_fn call) -> its scope

    def __call__(self, features, cols_to_output_tensors=None, training=None):
        call = id(graph.current_graph())
        if call not in self._scopes:
            self._scopes.clear()
            with variables.variable_scope(self._name, default_name="dense_features") as scope:
                self._scopes[call] = scope
                return _dense_outputs(features, self._columns, self.trainable,
                                      "DenseFeatures", cols_to_output_tensors)
        with variables.variable_scope(self._scopes[call], reuse=True):
            return _dense_outputs(features, self._columns, self.trainable,
                                  "DenseFeatures", cols_to_output_tensors)


def linear_model(features, feature_columns, units=1, sparse_combiner="sum",
                 weight_collections=None, trainable=True, cols_to_vars=None):
    """`tf.compat.v1.feature_column.linear_model`: a weighted sum of every column.

    Numeric columns are multiplied by `linear_model/<col>/weights`
    (`[dimension, units]`); categorical and bucketized columns add the rows
    of their ids' weights (`[num_buckets, units]`) combined by
    `sparse_combiner`; `linear_model/bias_weights` (`[units]`) is added.

    Args:
        features: the dict `model_fn` received.
        feature_columns: numeric, bucketized and categorical columns.
        units: the output width.
        sparse_combiner: `"sum"` (default), `"mean"` or `"sqrtn"`.
        weight_collections: ignored.
        trainable: whether the weights are trained.
        cols_to_vars: a dict filled with `{column: [variables]}` (and
            `'bias'`).

    Returns:
        A float32 tensor `[batch, units]`.

    Example:

    ```python
    logits = tf1.feature_column.linear_model(features, [age, country_ids])
    ```
    """
    del weight_collections
    sparse_combiner = _dense.check_combiner(sparse_combiner)
    columns = _column_list(feature_columns, "linear_model")
    for column in columns:
        if not isinstance(column, (_columns.CategoricalColumn, _columns.NumericColumn)):
            raise ValueError(
                "Items of `feature_columns` of linear_model must be numeric, bucketized or "
                f"categorical columns (not embedding or indicator columns). Received: {column!r}"
            )
    _check_features(features, "linear_model")
    total = None
    with variables.variable_scope(None, default_name="linear_model"):
        for column in columns:
            with variables.variable_scope(None, default_name=column.name):
                part, weights = _weighted_sum(column, features, units, sparse_combiner,
                                              trainable)
            if cols_to_vars is not None:
                cols_to_vars[column] = [weights]
            total = part if total is None else total + part
        bias = variables.get_variable("bias_weights", [units], initializer=_ZEROS,
                                      trainable=trainable)
        if cols_to_vars is not None:
            cols_to_vars["bias"] = [bias]
    return total + bias


def _weighted_sum(column, features, units, sparse_combiner, trainable):
    if isinstance(column, _columns.CategoricalColumn):
        weights = variables.get_variable("weights", [column.num_buckets, units],
                                         initializer=_ZEROS, trainable=trainable)
        ids, id_weights = column.ids(features)
        return _dense.combine(weights, ids, id_weights, sparse_combiner), weights
    if isinstance(column, _columns.NumericColumn):
        weights = variables.get_variable("weights", [column.dimension, units],
                                         initializer=_ZEROS, trainable=trainable)
        return keras.ops.matmul(column.dense(features, None), weights), weights
    raise ValueError(
        "Items of `feature_columns` of linear_model must be numeric, bucketized or "
        f"categorical columns (not embedding or indicator columns). Received: {column!r}"
    )


def make_parse_example_spec(feature_columns):
    """`tf.feature_column.make_parse_example_spec`: the `tf.io.parse_example` spec.

    Runs on the host (in `input_fn` or a serving input function) and gives
    TensorFlow's own `tf.io.FixedLenFeature` / `tf.io.VarLenFeature`s.

    Args:
        feature_columns: any columns of this module.

    Returns:
        `{key: tf.io.FixedLenFeature | tf.io.VarLenFeature}`.

    Raises:
        ValueError: for a non-column, or two columns parsing one key differently.

    Example:

    ```python
    spec = tf1.feature_column.make_parse_example_spec([age, country])
    features = tf.io.parse_example(serialized, spec)
    ```
    """
    spec = {}
    for column in feature_columns:
        if not isinstance(column, _columns.FeatureColumn):
            raise ValueError(
                "Items of `feature_columns` of make_parse_example_spec must be feature "
                f"columns of tf1.feature_column. Received: {column!r}"
            )
        for key, value in column.parse_example_spec.items():
            if key in spec and spec[key] != value:
                raise ValueError(
                    f"make_parse_example_spec: feature {key!r} is parsed as {spec[key]} "
                    f"by one column and as {value} by another ({column.name!r})."
                )
            spec[key] = value
    return spec
