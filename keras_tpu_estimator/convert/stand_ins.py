"""TF1 objects that become the library's local stand-ins, and what model_fn may keep.

- `CLUSTER_RESOLVERS`: the calls that construct a TPU cluster resolver;
  they construct `RESOLVER`, `tf1.distribute.cluster_resolver.
  TPUClusterResolver`, which answers as a local run does (`get_master()` is
  `""`, `cluster_spec()` is empty): JAX finds the devices.
- `EVERY_SIDE`: TF1 functions with a stand-in of the same behaviour in
  `compat.v1`, rewritten on every side (slim's `get_data_files`, a file
  glob used in `input_fn`).
- `MODEL_SAFE`: host-side TensorFlow names (`names.HOST_SAFE`) that also
  work inside a traced `model_fn`: they touch no tensor (logging, files,
  flags, protocol buffers), or are Keras 3's (`tf.keras`); any other TensorFlow name left in code
  `model_fn` reaches is reported.
- `TF2_SUMMARIES`: TensorFlow 2's summary API, which `model_fn` cannot
  run: converted where `compat.v1` has a stand-in (`tf1.compat.v2.summary`),
  reported as an error otherwise.

Pure tables: this module imports nothing.
"""

RESOLVER = "tf1.distribute.cluster_resolver.TPUClusterResolver"
CLUSTER_RESOLVERS = (
    "tf.distribute.cluster_resolver.TPUClusterResolver",
    "tf.contrib.cluster_resolver.TPUClusterResolver",
)

EVERY_SIDE = {
    "tf.contrib.slim.parallel_reader.get_data_files": (
        "tf1.contrib.slim.parallel_reader.get_data_files"),
}

# `tf.keras` is Keras 3 itself from TensorFlow 2.16 on: its layers run in model_fn.
MODEL_SAFE = tuple(
    "tf." + name
    for name in """
        keras compat.v2.keras gfile io.gfile logging flags app errors version sysconfig
        VERSION GIT_VERSION
        compat.as_bytes compat.as_text compat.as_str compat.as_str_any compat.path_to_str
        compat.v1.logging compat.v1.flags compat.v1.app compat.v1.gfile
        compat.v2.io.gfile compat.v2.errors
        train.Example train.Features train.Feature train.FeatureList
        train.FeatureLists train.SequenceExample train.BytesList
        train.FloatList train.Int64List train.ClusterSpec
        train.load_checkpoint train.NewCheckpointReader train.checkpoint_exists
        train.get_checkpoint_state train.CheckpointState
        ConfigProto GraphOptions RunOptions RunMetadata OptimizerOptions GPUOptions
        """.split()
)

# TensorFlow 2's summary API, in the spellings a TF1 program reaches it by.
TF2_SUMMARIES = (
    "tf.compat.v2.summary", "tf.summary.all_v2_summary_ops", "tf.summary.record_if",
    "tf.summary.experimental", "tf.summary.should_record_summaries",
    "tf.summary.SummaryWriter", "tf.summary.trace_on", "tf.summary.trace_export",
)
TF2_SUMMARY_ERROR = (
    "TensorFlow 2's summaries (create_file_writer, as_default, record_if, "
    "scalar(step=...)) write from TensorFlow, and model_fn is traced by JAX: write "
    "TF1 summaries in model_fn (tf1.summary.scalar(name, x), written every "
    "save_summary_steps) or return the values through host_call, whose function "
    "runs on the host where tf.summary works"
)
