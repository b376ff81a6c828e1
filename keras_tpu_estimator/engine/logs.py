"""What fit, evaluate and predict tell callbacks: the keys of `logs`.

Callbacks learn only from `logs` and their arguments. `fit` calls
`on_train_batch_end(batch, logs)` once per on-device loop, with:

- `"loss"`: the mean training loss of the epoch so far (Keras's meaning);
- `LOOP_FIRST_STEP` (`"loop_first_step"`): the global step before the loop;
- `LOOP_LOSSES` (`"loop_losses"`): the loss of each step of the loop, a
  numpy array; the global step after the loop is
  `logs[LOOP_FIRST_STEP] + len(logs[LOOP_LOSSES])`.

`on_train_end(logs)` receives the last loop's logs. When the spec's hooks
hold tensors of `model_fn`, the batch-end logs of every mode also carry
`LOOP_HOOK_VALUES` (`"loop_hook_values"`): a `hooks.fetches.HookValues` of
their values at every step of the loop. `LOOP_RUNS` (`"loop_runs"`) says how
many TensorFlow `session.run`s the loop stands for: one per step with
`use_tpu=False` (TensorFlow ran hooks and summaries around every step), one
for the whole loop on a TPU (absent: one). A hook that requests a stop at a
run of a loop of many records it as `LOOP_STOP_RUN` (`"loop_stop_run"`), so
that the callbacks after it see the runs up to that one only. The loop keys go only to
callbacks that ask for them with the class attribute `reads_loop_logs = True`
(the estimator's hooks, checkpoint saver and summaries): Keras's callbacks get
scalar logs. A stop requested at a run before a training loop's last
rewinds the model to the end of that run (`LoopCallbackList.rewind`, set by
the loop's owner) before the callbacks after the hook run, as TensorFlow
stopped there. Epoch logs (and so `History`) hold only the scalars. `predict` passes `{"outputs": ...}` to
`on_predict_batch_end`, as Keras does.
"""

import contextlib

import keras
import numpy as np

LOOP_FIRST_STEP = "loop_first_step"
LOOP_LOSSES = "loop_losses"
LOOP_HOOK_VALUES = "loop_hook_values"
LOOP_RUNS = "loop_runs"
LOOP_STOP_RUN = "loop_stop_run"
_LOOP_KEYS = (LOOP_FIRST_STEP, LOOP_LOSSES, LOOP_HOOK_VALUES, LOOP_RUNS, LOOP_STOP_RUN)


def without_loop_keys(logs):
    """`logs` without the loop's entries: what epoch logs and the progress bar show."""
    return {k: v for k, v in logs.items() if k not in _LOOP_KEYS}


def reads_loop_logs(callback):
    """Whether `callback` asked for the loop keys (`reads_loop_logs = True`)."""
    return bool(getattr(callback, "reads_loop_logs", False))


class LoopCallbackList(keras.callbacks.CallbackList):
    """A `CallbackList` giving the loop keys only to the callbacks that read them.

    Keras's callbacks (TensorBoard, CSVLogger, the progress bar, ...) expect
    scalar logs: they get `without_loop_keys(logs)`. A callback with the class
    attribute `reads_loop_logs = True` gets the whole logs, first.

    Attributes:
        rewind: None, or `rewind(steps)` from the training loop's owner: it
            winds the model back to the end of the first `steps` steps of
            the loop just run. Called once, right after the reader whose
            hook requested a stop at a run before the loop's last
            (`LOOP_STOP_RUN`), so that the callbacks after it see the model
            as TensorFlow left it; the logs then report the loop's first
            `steps` steps (`LOOP_LOSSES`, `LOOP_RUNS`).
    """

    rewind = None

    def may_stop_mid_loop(self):
        """Whether a callback may request a stop within a training loop
        (one with `stops_mid_loop` true): the loop's owner then keeps the
        loop's starting state, to `rewind` to."""
        return self.rewind is not None and any(
            getattr(c, "stops_mid_loop", False) for c in self.callbacks)

    def on_train_batch_end(self, batch, logs=None):
        with self._readers_first("on_train_batch_end", batch, logs=logs) as plain:
            super().on_train_batch_end(batch, plain)

    def on_train_end(self, logs=None):
        with self._readers_first("on_train_end", logs=logs) as plain:
            super().on_train_end(plain)

    def on_test_batch_end(self, batch, logs=None):
        with self._readers_first("on_test_batch_end", batch, logs=logs) as plain:
            super().on_test_batch_end(batch, plain)

    def on_predict_batch_end(self, batch, logs=None):
        with self._readers_first("on_predict_batch_end", batch, logs=logs) as plain:
            super().on_predict_batch_end(batch, plain)

    @contextlib.contextmanager
    def _readers_first(self, method, *args, logs):
        """Calls the readers with `logs`; the block calls the others (Keras's
        own dispatch) with the scalar logs it is given."""
        logs = logs or {}
        everyone = self.callbacks
        readers = [c for c in everyone if reads_loop_logs(c)]
        rewound = method != "on_train_batch_end" or self.rewind is None
        for callback in readers:
            getattr(callback, method)(*args, logs=logs)
            if not rewound and logs.get(LOOP_STOP_RUN) is not None:
                rewound = True
                losses = np.asarray(logs[LOOP_LOSSES]).reshape(-1)
                run = int(logs[LOOP_STOP_RUN])
                stop = run_steps(run, int(logs[LOOP_RUNS]), len(losses))[1]
                if stop < len(losses):
                    self.rewind(stop)
                    # The logs now report the loop as rewound: `stop` steps.
                    logs[LOOP_LOSSES], logs[LOOP_RUNS] = losses[:stop], run + 1
        # With readers, Keras dispatches synchronously (they override the
        # batch hook), so the narrowed list is the one the block uses.
        self.callbacks = [c for c in everyone if not reads_loop_logs(c)]
        try:
            yield without_loop_keys(logs)
        finally:
            self.callbacks = everyone


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
    return LoopCallbackList(callbacks, add_progbar=verbose != 0, verbose=verbose, steps=steps,
                            model=model, **kwargs)


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


def hook_values_of(logs):
    """The `HookValues` a loop's `logs` carry (`LOOP_HOOK_VALUES`), or None."""
    return (logs or {}).get(LOOP_HOOK_VALUES)


def runs_of(logs):
    """How many runs of a loop's `logs` callbacks go through.

    Args:
        logs: the `logs` of `on_*_batch_end`, or None.

    Returns:
        The number of runs the callbacks go through: `LOOP_RUNS` (1 if
        absent), cut after `LOOP_STOP_RUN` when a hook requested a stop.
    """
    logs = logs or {}
    runs = int(logs.get(LOOP_RUNS, 1))
    stop = logs.get(LOOP_STOP_RUN)
    return runs if stop is None else min(runs, int(stop) + 1)


def record_stop_run(logs, run):
    """Records in a loop's `logs` that a hook requested a stop at `run` (the earliest wins)."""
    if logs is not None and int(logs.get(LOOP_RUNS, 1)) > 1:
        logs[LOOP_STOP_RUN] = min(run, logs.get(LOOP_STOP_RUN, run))


def run_steps(run, runs, steps):
    """The steps `[start, stop)` of a loop of `steps` steps that run `run` of `runs` covers."""
    per_run = steps // runs if runs else steps
    return run * per_run, steps if run == runs - 1 else (run + 1) * per_run


def missing_loop_error(owner):
    """The ValueError for a callback that needs a loop's losses and got logs without them."""
    return ValueError(
        f"{owner} reads the training loop from the callback `logs`: the "
        f"{LOOP_FIRST_STEP!r} and {LOOP_LOSSES!r} keys that EstimatorModel.fit "
        "gives on_train_batch_end after each loop. These logs have none."
    )
