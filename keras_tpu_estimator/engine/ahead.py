"""Placing the next loops' input while the devices run the current one.

Two ways, and `engine.feed` says which input uses which:

- `look_ahead`: no thread. Each item is placed (`jax.device_put`, which
  returns at once and transfers asynchronously) one item before it is
  needed, as Keras's JAX trainer does (`_one_batch_ahead_iterator`). For
  input whose host work is done elsewhere: tf.data reads and stacks on its
  own threads; indices into resident arrays cost nothing to make.
- `prefetch`: a thread prepares and places items two ahead. For chunks
  made in Python (arrays gathered on the host, iterables other than
  datasets): without a thread that work would wait for the loop before it,
  since the loop's outputs are read before the next chunk is asked for.

Example:

```python
with look_ahead(chunks, place) as placed:
    for chunk in placed:
        run(chunk)
```
"""

import collections
import queue
import threading


class look_ahead:
    """Iterates `place(item)` for `items`, placing `depth` items ahead.

    `close()` closes `items` (a generator stops reading its input).

    Args:
        items: an iterable.
        place: called on each item, in order, on the calling thread.
        depth: items placed ahead of the one returned.
    """

    def __init__(self, items, place, depth=1):
        self._items = iter(items)
        self._place = place
        self._depth = depth
        self._ahead = collections.deque()
        self._done = False

    def __iter__(self):
        return self

    def __next__(self):
        while not self._done and len(self._ahead) <= self._depth:
            item = next(self._items, _END)
            if item is _END:
                self._done = True
            else:
                self._ahead.append(self._place(item))
        if not self._ahead:
            raise StopIteration
        return self._ahead.popleft()

    def close(self):
        self._done = True
        self._ahead.clear()
        if hasattr(self._items, "close"):
            self._items.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_END = object()


class prefetch:
    """Iterates `place(item)` for `items`, prepared `depth` ahead on a thread.

    While the devices run the current loop, the next chunks are gathered on
    the host and transferred (double buffering). Errors of the producer are
    raised by the consumer; `close()` stops the producer early.

    Args:
        items: an iterable, read on the thread.
        place: called on each item, in order, on the thread.
        depth: items prepared ahead.
    """

    _DONE = object()

    def __init__(self, items, place, depth=2):
        self._queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._produce, args=(items, place), daemon=True
        )
        self._thread.start()

    def _produce(self, items, place):
        try:
            for item in items:
                if self._stop.is_set():
                    return
                self._put((place(item), None))
        except BaseException as error:  # Handed to the consumer.
            self._put((None, error))
            return
        self._put((self._DONE, None))

    def _put(self, entry):
        while not self._stop.is_set():
            try:
                self._queue.put(entry, timeout=0.1)
                return
            except queue.Full:
                continue

    def __iter__(self):
        return self

    def __next__(self):
        item, error = self._queue.get()
        if error is not None:
            raise error
        if item is self._DONE:
            raise StopIteration
        return item

    def close(self):
        self._stop.set()
        self._thread.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
