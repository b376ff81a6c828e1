"""Shaping `TPUEstimator.predict`'s output: `predict_keys` and single examples.

`model_fn`'s `predictions` come from `EstimatorModel.predict_batches` one
batch at a time, a dict of arrays or one array. `check_predict_keys` checks
the argument before any work; `select_keys` keeps the `predict_keys`;
`examples` cuts a batch into one prediction per example.

```python
batch = select_keys({"y": ys, "p": ps}, ["y"])   # {"y": ys}
for prediction in examples(batch):               # {"y": ys[0]}, {"y": ys[1]}, ...
    ...
```
"""

import numpy as np


def check_predict_keys(keys):
    """Returns `predict`'s `predict_keys` as None or a list of str.

    Args:
        keys: None (keep every prediction), a str, or a list or tuple of str.

    Returns:
        None, or a new list of the keys.

    Raises:
        TypeError: for anything else (a number, bytes, a dict, a list
            holding a non-str); the message names the value.

    Example:

    ```python
    check_predict_keys("probabilities")   # ["probabilities"]
    check_predict_keys(5)                 # TypeError
    ```
    """
    if keys is None:
        return None
    if isinstance(keys, str):
        return [keys]
    if isinstance(keys, (list, tuple)) and all(isinstance(k, str) for k in keys):
        return list(keys)
    raise TypeError(
        "`predict_keys` must be None, a str or a list of str (names of the "
        f"predictions to keep). Received: predict_keys={keys!r:.200}"
    )


def select_keys(predictions, keys):
    """The predictions of `keys` only.

    Args:
        predictions: a dict of batched arrays, or one batched array.
        keys: None (keep all), a key, or a list of keys.

    Returns:
        `predictions`, or a dict of the `keys` entries.

    Raises:
        TypeError: if `keys` is not as `check_predict_keys` asks.
        ValueError: if `keys` is given and `predictions` is not a dict, or a
            key is not among the predictions.

    Example:

    ```python
    select_keys({"y": ys, "p": ps}, "y")   # {"y": ys}
    ```
    """
    keys = check_predict_keys(keys)
    if keys is None:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError(
            "`predict_keys` needs predictions as a dict; model_fn returned a "
            "single tensor."
        )
    unknown = [k for k in keys if k not in predictions]
    if unknown:
        raise ValueError(
            f"Expected to run at least one output from {sorted(predictions)}, "
            f"provided {list(keys)} ({unknown} unknown)."
        )
    return {k: predictions[k] for k in keys}


def examples(predictions):
    """Yields a batch's predictions one example at a time.

    Args:
        predictions: a dict of batched arrays (all of one batch size), or
            one batched array.

    Yields:
        For a dict, a dict of each example's values; otherwise each row.

    Raises:
        ValueError: if the predictions differ in batch length (see
            `batch_length`), before any is yielded.

    Example:

    ```python
    list(examples({"y": np.array([1, 2])}))   # [{"y": 1}, {"y": 2}]
    ```
    """
    if not isinstance(predictions, dict):
        yield from (predictions[i] for i in range(len(predictions)))
        return
    rows = batch_length(predictions)
    for i in range(rows):
        yield {k: v[i] for k, v in predictions.items()}


def batch_length(predictions):
    """The batch length of a dict of batched predictions: every value's first dimension.

    Args:
        predictions: a dict of arrays, as `predict` receives a batch's.

    Returns:
        The number of examples (an int).

    Raises:
        ValueError: if a value's first dimension differs from the others'
            (TensorFlow's "Batch length of predictions should be same"),
            naming the key: every prediction needs the batch dimension when
            `predict` yields single examples. A value per batch (a scalar,
            such as a mean) comes out as one value per step.

    Example:

    ```python
    batch_length({"logits": np.zeros((16, 3)), "mean": np.zeros(4)})   # ValueError
    ```
    """
    lengths = {key: (np.shape(value) or (None,))[0] for key, value in predictions.items()}
    rows = max((n for n in lengths.values() if n is not None), default=None)
    for key, length in lengths.items():
        if length == rows:
            continue
        other = next(k for k, n in lengths.items() if n == rows)
        has = "no batch dimension" if length is None else f"{length} row{'s' * (length != 1)}"
        raise ValueError(
            f"Batch length of predictions should be same. predictions[{key!r}] has {has} "
            f"where predictions[{other!r}] has {rows}: every prediction needs the batch "
            "dimension first (shape [batch_size, ...]), since predict yields one "
            "prediction per example (yield_single_examples=True). A value per batch (a "
            "scalar, such as a mean over the batch) has none (it comes out as one value "
            "per step): compute it per example, or broadcast it to the batch "
            "(keras.ops.broadcast_to(value, [batch_size]))."
        )
    if rows is None:
        raise ValueError(
            "Every prediction needs the batch dimension first (shape [batch_size, ...]) "
            f"when predict yields single examples. Received shapes: "
            f"{ {key: np.shape(value) for key, value in predictions.items()} }"
        )
    return rows
