"""TensorFlow's checkpoint files, written and read with TensorFlow's own ops.

A checkpoint is a *prefix* `model_dir/model.ckpt-<step>` and the files
beside it, exactly as `tf.compat.v1.train.Saver` wrote them:

```
model_dir/
    checkpoint                           # the state file (CheckpointState, text)
    model.ckpt-100.index                 # the names, shapes, dtypes and checksums
    model.ckpt-100.data-00000-of-00001   # the values
    model.ckpt-100.meta                  # a MetaGraphDef (empty graph: there is none)
```

Values are written by `tf.raw_ops.SaveV2`: a process holding part of a
sharded array writes its slices (`shape_and_slices`), and the parts are
joined by `tf.raw_ops.MergeV2Checkpoints`, as TensorFlow's sharded saves did.
Files are handled through `tf.io.gfile`, so `gs://` paths work as in
TensorFlow.
"""

import uuid

import numpy as np

from keras_tpu_estimator.checkpoint.common import join

DATA_GLOB = ".data-?????-of-?????"
EXTENSIONS = (".index", ".meta")  # Besides the data files.
STATE_FILE = "checkpoint"


def tf():
    """TensorFlow, imported when checkpoint files are first touched."""
    import tensorflow

    return tensorflow


def slices_of(value):
    """The `(shape_and_slice, numpy array)` pieces of `value` this process writes.

    A numpy array or a fully addressable JAX array is written whole, by
    process 0 only (every process has the same). A sharded array spanning
    processes is written as the slices this process holds, each once (the
    shards of replica 0): together the processes write every element once.

    Args:
        value: a JAX array or a numpy array.

    Returns:
        A list of pairs; `shape_and_slice` is `""` for a whole array, else
        TensorFlow's slice spec (`"8 2 0,4:-"`: shape, then `start,length` or
        `-` per dimension).
    """
    import jax

    if not isinstance(value, jax.Array) or value.is_fully_addressable:
        return [("", np.asarray(value))] if jax.process_index() == 0 else []
    pieces = []
    shape = tuple(value.shape)
    for shard in value.addressable_shards:
        if shard.replica_id != 0:
            continue
        extents = []
        for index, size in zip(shard.index, shape):
            start, stop, _ = index.indices(size)
            extents.append("-" if (start, stop) == (0, size) else f"{start},{stop - start}")
        if all(e == "-" for e in extents):
            pieces.append(("", np.asarray(shard.data)))
        else:
            spec = " ".join(str(d) for d in shape) + " " + ":".join(extents)
            pieces.append((spec, np.asarray(shard.data)))
    return pieces


def save_pieces(prefix, pieces):
    """Writes `pieces` (`(name, shape_and_slice, array)`) as the bundle `prefix`, with SaveV2.

    Returns:
        True if anything was written (SaveV2 needs at least one tensor).
    """
    if not pieces:
        return False
    names, specs, arrays = zip(*pieces)
    tf().raw_ops.SaveV2(prefix=prefix, tensor_names=list(names),
                        shape_and_slices=list(specs), tensors=list(arrays))
    return True


def merge(parts, destination):
    """Joins the bundles `parts` into the bundle `destination` (MergeV2Checkpoints)."""
    tf().raw_ops.MergeV2Checkpoints(checkpoint_prefixes=list(parts),
                                    destination_prefix=destination, delete_old_dirs=True)


def files_of(prefix):
    """The files of the checkpoint `prefix` that exist: data files, then `.meta`, `.index`."""
    gfile = tf().io.gfile
    files = sorted(gfile.glob(glob_escape(prefix) + DATA_GLOB))
    return files + [prefix + ext for ext in (".meta", ".index") if gfile.exists(prefix + ext)]


def glob_escape(path):
    """`path` with the characters `gfile.glob` treats specially escaped."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in path)


def rename(source, destination):
    """Renames the checkpoint files of `source` to `destination`, the `.index` last.

    A checkpoint is visible (to `*.index` globs, to `tf.train.load_checkpoint`)
    only once its index is there, and its data files are then complete.
    """
    gfile = tf().io.gfile
    for path in files_of(source):
        gfile.rename(path, destination + path[len(source):], overwrite=True)


def remove(prefix):
    """Deletes the files of the checkpoint `prefix`, the `.index` first; missing ones are fine."""
    gfile = tf().io.gfile
    for path in reversed(files_of(prefix)):
        try:
            gfile.remove(path)
        except tf().errors.NotFoundError:
            pass  # Deleted by someone else meanwhile (a program, another trainer).


def write_meta(prefix):
    """Writes `prefix.meta`: a MetaGraphDef with no graph, as TF1 programs expect the file.

    This library has no TensorFlow graph; programs that copy or delete a
    checkpoint's `.meta` beside its other files (ALBERT) find it.
    """
    meta = tf().compat.v1.MetaGraphDef()
    meta.meta_info_def.tensorflow_version = tf().__version__
    meta.meta_info_def.any_info.type_url = "keras_tpu_estimator: no graph"
    with tf().io.gfile.GFile(prefix + ".meta", "wb") as f:
        f.write(meta.SerializeToString())


def read_state(directory):
    """The checkpoint prefixes the state file `directory/checkpoint` lists, oldest first.

    Returns:
        A list of absolute prefixes (the latest last), empty without a state
        file. Prefixes whose files are gone are included: see `exists`.
    """
    state = tf().train.get_checkpoint_state(directory)
    if state is None:
        return []
    paths = list(state.all_model_checkpoint_paths)
    latest = state.model_checkpoint_path
    if latest and latest in paths:
        paths.remove(latest)
    return paths + ([latest] if latest else [])


def write_state(directory, prefixes):
    """Writes the state file of `directory`: `prefixes` (oldest first), the last the latest.

    Names in `directory` are written relative, as TensorFlow's estimators did,
    so a moved `model_dir` still reads; the file is replaced atomically.
    """
    names = [_relative(directory, p) for p in prefixes]
    state = tf().compat.v1.train.generate_checkpoint_state_proto(
        directory, names[-1], all_model_checkpoint_paths=names)
    from google.protobuf import text_format

    gfile = tf().io.gfile
    temporary = join(directory, f".{STATE_FILE}.tmp-{uuid.uuid4().hex}")
    with gfile.GFile(temporary, "w") as f:
        f.write(text_format.MessageToString(state))
    gfile.rename(temporary, join(directory, STATE_FILE), overwrite=True)


def exists(prefix):
    """Whether the checkpoint `prefix` is complete: its `.index` is there."""
    return tf().io.gfile.exists(prefix + ".index")


def _relative(directory, prefix):
    parent = directory.rstrip("/") + "/"
    return prefix[len(parent):] if prefix.startswith(parent) else prefix
