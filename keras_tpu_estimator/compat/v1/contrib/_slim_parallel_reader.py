"""`tf.contrib.slim.parallel_reader.get_data_files`: the files a data source names.

Host-side code, exposed as `tf1.contrib.slim.parallel_reader`. slim's
queue-based readers (`ParallelReader`, `parallel_read`) have no equivalent:
read the files with `tf.data` in `input_fn`:

```python
files = tf1.contrib.slim.parallel_reader.get_data_files(["train-*", "extra.tfrecord"])
records = tf.data.TFRecordDataset(files)
```
"""

_GLOB_CHARACTERS = ("*", "?", "[")


def get_data_files(data_sources):
    """The files `data_sources` names, as TF1's slim listed them.

    A pattern with a glob character (`*`, `?`, `[`) is expanded with
    `tf.io.gfile.glob` (so `gs://` patterns work); any other string is one
    file, taken as it is; a list or tuple is each of its sources in turn.

    Args:
        data_sources: a file name or pattern, or a list or tuple of them.

    Returns:
        The list of file names.

    Raises:
        ValueError: if no file is found.
    """
    if isinstance(data_sources, (list, tuple)):
        data_files = []
        for source in data_sources:
            data_files += get_data_files(source)
    elif any(character in data_sources for character in _GLOB_CHARACTERS):
        import tensorflow as tf  # Host side: files are listed by TensorFlow's file systems.

        data_files = list(tf.io.gfile.glob(data_sources))
    else:
        data_files = [data_sources]
    if not data_files:
        raise ValueError(f"No data files found in {data_sources!r}")
    return data_files
