"""`tf.contrib.slim.dataset`: a data set's description (files, reader, decoder, size).

Host-side code, exposed as `tf1.contrib.slim.dataset`. `Dataset` only holds
what it is given; read its files with `tf.data` in `input_fn` (slim's
queue-based `DatasetDataProvider` has no equivalent):

```python
spec = tf1.contrib.slim.dataset.Dataset(
    data_sources="train-*", reader=None, decoder=example_decoder, num_samples=1281167,
    items_to_descriptions={"image": "A color image.", "label": "0-999"}, num_classes=1000)
files = tf.data.Dataset.list_files(spec.data_sources)
records = tf.data.TFRecordDataset(files)
examples = records.map(lambda r: spec.decoder.decode(r, ["image", "label"]))
```
"""


class Dataset:
    """A data set's description, as `slim.dataset.Dataset`: its arguments as attributes.

    Args:
        data_sources: the file pattern(s) of the data.
        reader: the reader class TF1 used (kept, unused here).
        decoder: a decoder (`tfexample_decoder.TFExampleDecoder`).
        num_samples: the number of examples.
        items_to_descriptions: `{item: description}`.
        **kwargs: further attributes (`num_classes`, `labels_to_names`, ...).
    """

    def __init__(self, data_sources, reader, decoder, num_samples, items_to_descriptions,
                 **kwargs):
        self.__dict__.update(kwargs)
        self.data_sources = data_sources
        self.reader = reader
        self.decoder = decoder
        self.num_samples = num_samples
        self.items_to_descriptions = items_to_descriptions
