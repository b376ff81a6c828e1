"""Batches of several `input_fn` calls, or several batches of one, as one.

`per_host_input_for_training` may call an `input_fn` more than once per
process, or ask several of its batches for one step (`deployment.plan_input`):
`GroupedSource` concatenates them into the step's batch.
"""

import jax
import numpy as np

from keras_tpu_estimator.inputs import sources as sources_lib


class GroupedSource(sources_lib.BatchSource):
    """Batches of several `input_fn` calls, or several batches of one, as one.

    `PER_HOST_V2` makes a process's rows of a step from `group` consecutive
    batches of its one call; `PER_SHARD_V1` from one batch of each of its
    calls (in call order). Either way the step's batch is the
    concatenation. The input ends when any call's input ends; a final
    incomplete group is a short batch.

    Args:
        sources: the `Source`s of this process's `input_fn` calls.
        group: consecutive batches of each source per step.
        batch_size: the batch size each call was given (to batch arrays).
    """

    def __init__(self, sources, group, batch_size):
        self.sources = list(sources)
        self.group = group
        self.call_batch_size = batch_size
        super().__init__(self)

    def __iter__(self):
        iterators = [self._batches_of(source) for source in self.sources]
        while True:
            parts = []
            for iterator in iterators * self.group:
                batch = next(iterator, None)
                if batch is None:
                    break
                parts.append(batch)
            complete = len(parts) == self.group * len(iterators)
            if parts:
                yield jax.tree.map(lambda *xs: np.concatenate(xs), *parts)
            if not complete:
                return

    def _batches_of(self, source):
        if isinstance(source, sources_lib.ArraySource):
            for chunk in source.chunks(self.call_batch_size, 1, remainder=sources_lib.EXACT):
                yield jax.tree.map(lambda a: a[0], chunk.data) if chunk.stacked else chunk.data
            return
        yield from sources_lib.checked_batches(source._new_iterator())

    def is_infinite(self):
        return all(
            isinstance(s, sources_lib.BatchSource) and s.is_infinite() for s in self.sources
        )

    def num_steps(self, batch_size, remainder):
        """The steps of one pass: complete groups, and in evaluation and
        prediction a final incomplete one. None when a call's count is unknown."""
        del batch_size  # Each call batches with the size it was given.
        counts = [s.num_steps(self.call_batch_size, remainder) for s in self.sources]
        if None in counts:
            return None
        complete = min(counts) // self.group
        # An incomplete group starts when the first call has another batch.
        return complete + int(remainder != sources_lib.DROP and counts[0] > complete * self.group)

