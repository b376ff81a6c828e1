"""Reading event files back, for the summary tests."""

import glob
import os


def read_values(logdir):
    """`[(step, Summary.Value)]` of every event file in `logdir`, in writing order."""
    import tensorflow as tf

    found = []
    for path in sorted(glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            found += [(int(event.step), value) for value in event.summary.value]
    return found


def tags_at(logdir):
    """`{tag: [step, ...]}` of the summaries in `logdir`."""
    steps = {}
    for step, value in read_values(logdir):
        steps.setdefault(value.tag, []).append(step)
    return steps
