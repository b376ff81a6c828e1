"""`tf.compat.v1.feature_column` (and `tf.feature_column`): TF1 feature columns.

Columns are plain Python descriptions of how raw features become the dense
input of a model; `input_layer`, `linear_model` and `DenseFeatures` compute
them inside `model_fn`, with TF1's variable names (`input_layer/
<col>_embedding/embedding_weights`, `linear_model/<col>/weights`,
`linear_model/bias_weights`), so TF1 checkpoints load.

The work is split where it can run:

- host (the input pipeline, TensorFlow ops): vocabulary lookups
  (`categorical_column_with_vocabulary_list/_file`), hashing
  (`categorical_column_with_hash_bucket`, TF's
  `tf.strings.to_hash_bucket_fast`) and crosses (`crossed_column`). The
  library maps the input (`tf.data.Dataset.map`, or arrays once) so these
  columns' ids arrive in `model_fn` as int features; string features they
  consume never reach the devices.
- devices (compiled `model_fn`): numbers (`numeric_column`), buckets
  (`bucketized_column`), identity ids, and every embedding, indicator and
  linear weight.

The rule: create the columns before `train`/`evaluate`/`predict` reads the
input (in `main`, at module level, or in `params`, as TF1 programs do). A
host column created later finds no ids and says so.

```python
columns = [tf1.feature_column.numeric_column("age"),
           tf1.feature_column.embedding_column(
               tf1.feature_column.categorical_column_with_vocabulary_list(
                   "color", ["red", "green", "blue"]), dimension=4)]

def model_fn(features, labels, mode, params):
    net = tf1.feature_column.input_layer(features, params["columns"])  # [batch, 5]
    ...
```

Not supported: the `sequence_*` columns (variable-length sequences need
static shapes here).
"""

from keras_tpu_estimator.compat.v1.feature_column import _host
from keras_tpu_estimator.inputs import transforms as _input_transforms
from keras_tpu_estimator.compat.v1.feature_column._api import bucketized_column  # noqa: F401
from keras_tpu_estimator.compat.v1.feature_column._api import categorical_column_with_hash_bucket  # noqa: F401,E501
from keras_tpu_estimator.compat.v1.feature_column._api import categorical_column_with_identity  # noqa: F401,E501
from keras_tpu_estimator.compat.v1.feature_column._api import categorical_column_with_vocabulary_file  # noqa: F401,E501
from keras_tpu_estimator.compat.v1.feature_column._api import categorical_column_with_vocabulary_list  # noqa: F401,E501
from keras_tpu_estimator.compat.v1.feature_column._api import crossed_column  # noqa: F401
from keras_tpu_estimator.compat.v1.feature_column._api import embedding_column  # noqa: F401
from keras_tpu_estimator.compat.v1.feature_column._api import indicator_column  # noqa: F401
from keras_tpu_estimator.compat.v1.feature_column._api import numeric_column  # noqa: F401
from keras_tpu_estimator.compat.v1.feature_column._api import shared_embedding_columns  # noqa: F401
from keras_tpu_estimator.compat.v1.feature_column._api import shared_embeddings  # noqa: F401
from keras_tpu_estimator.compat.v1.feature_column._api import weighted_categorical_column  # noqa: F401,E501
from keras_tpu_estimator.compat.v1.feature_column._layers import DenseFeatures  # noqa: F401
from keras_tpu_estimator.compat.v1.feature_column._layers import input_layer  # noqa: F401
from keras_tpu_estimator.compat.v1.feature_column._layers import linear_model  # noqa: F401
from keras_tpu_estimator.compat.v1.feature_column._layers import make_parse_example_spec  # noqa: F401,E501

_input_transforms.register(_host.transform_input)

from keras_tpu_estimator.compat.v1.unsupported import Unsupported as _Unsupported  # noqa: E402

_SEQUENCES = (
    "sequence feature columns are not supported: model_fn needs static shapes. Pad the "
    "sequences in input_fn (tf.data padded_batch) and use categorical_column_with_* "
    "with embedding_column on the [batch, length] ids."
)
sequence_categorical_column_with_hash_bucket = _Unsupported(
    "feature_column.sequence_categorical_column_with_hash_bucket", _SEQUENCES)
sequence_categorical_column_with_identity = _Unsupported(
    "feature_column.sequence_categorical_column_with_identity", _SEQUENCES)
sequence_categorical_column_with_vocabulary_file = _Unsupported(
    "feature_column.sequence_categorical_column_with_vocabulary_file", _SEQUENCES)
sequence_categorical_column_with_vocabulary_list = _Unsupported(
    "feature_column.sequence_categorical_column_with_vocabulary_list", _SEQUENCES)
sequence_numeric_column = _Unsupported("feature_column.sequence_numeric_column", _SEQUENCES)
