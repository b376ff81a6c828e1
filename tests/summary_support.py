"""Reading event files back, for the summary tests."""

import glob
import os
import re


def read_values(logdir):
    """`[(step, Summary.Value)]` of every event file in `logdir`, in writing order."""
    import tensorflow as tf

    found = []
    paths = glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))
    # events.out.tfevents.<time>.<host>.<pid>.<n>.v2: numbers compared as numbers (.10 after .9).
    def order(path):
        return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", os.path.basename(path))]
    for path in sorted(paths, key=order):
        for event in tf.compat.v1.train.summary_iterator(path):
            found += [(int(event.step), value) for value in event.summary.value]
    return found


def tags_at(logdir):
    """`{tag: [step, ...]}` of the summaries in `logdir`."""
    steps = {}
    for step, value in read_values(logdir):
        steps.setdefault(value.tag, []).append(step)
    return steps
