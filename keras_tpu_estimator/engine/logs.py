"""What fit, evaluate and predict tell callbacks: the keys of `logs`.

Callbacks learn only from `logs` and their arguments. `fit` calls
`on_train_batch_end(batch, logs)` once per on-device loop, with:

- `"loss"`: the mean training loss of the epoch so far (Keras's meaning);
- `LOOP_FIRST_STEP` (`"loop_first_step"`): the global step before the loop;
- `LOOP_LOSSES` (`"loop_losses"`): the loss of each step of the loop, a
  numpy array; the global step after the loop is
  `logs[LOOP_FIRST_STEP] + len(logs[LOOP_LOSSES])`.

`on_train_end(logs)` receives the last loop's logs. Epoch logs (and so
`History`) hold only the scalars. `predict` passes `{"outputs": ...}` to
`on_predict_batch_end`, as Keras does.
"""

import keras
import numpy as np

LOOP_FIRST_STEP = "loop_first_step"
LOOP_LOSSES = "loop_losses"


def without_loop_keys(logs):
    """`logs` without the loop's entries: what epoch logs and the progress bar show."""
    return {k: v for k, v in logs.items() if k not in (LOOP_FIRST_STEP, LOOP_LOSSES)}


class LoopProgbarLogger(keras.callbacks.ProgbarLogger):
    """Keras's progress bar, showing the epoch's loss but not the loop's arrays."""

    def on_train_batch_end(self, batch, logs=None):
        super().on_train_batch_end(batch, without_loop_keys(logs or {}))


def callback_list(callbacks, model, verbose, steps, **kwargs):
    """A `keras.callbacks.CallbackList` of `callbacks`, with a progress bar
    unless `verbose` is 0 (`"auto"` is 1).

    Args:
        callbacks: the user's callbacks, or None.
        model: the model they are set to.
        verbose: 0, 1, 2 or "auto".
        steps: the steps of an epoch, when known (the progress bar's target).
        **kwargs: passed to `CallbackList` (`add_history`, `epochs`).
    """
    verbose = 1 if verbose == "auto" else verbose
    callbacks = list(callbacks or [])
    if verbose != 0:
        callbacks.append(LoopProgbarLogger())
    return keras.callbacks.CallbackList(callbacks, verbose=verbose, steps=steps, model=model,
                                        **kwargs)


def loop_of(logs):
    """The training loop `logs` reports, as `(first_step, losses)`; None if it reports none.

    `EstimatorModel.fit` gives `on_train_batch_end` (and `on_train_end`)
    logs with the global step before the loop (`LOOP_FIRST_STEP`) and the
    loss of each of its steps (`LOOP_LOSSES`).

    Args:
        logs: the `logs` dict of a Keras callback method, or None.

    Returns:
        `(first_step, losses)`: an int and a 1-D numpy array; or None when
        `logs` has no loop keys. (Keras turns every log value it can into a
        float: the step arrives as one, and a one-step loop's losses too.)
    """
    if not logs or LOOP_LOSSES not in logs or LOOP_FIRST_STEP not in logs:
        return None
    return int(logs[LOOP_FIRST_STEP]), np.array(logs[LOOP_LOSSES]).reshape(-1)


def missing_loop_error(owner):
    """The ValueError for a callback that needs a loop's losses and got logs without them."""
    return ValueError(
        f"{owner} reads the training loop from the callback `logs`: the "
        f"{LOOP_FIRST_STEP!r} and {LOOP_LOSSES!r} keys that EstimatorModel.fit "
        "gives on_train_batch_end after each loop. These logs have none."
    )
