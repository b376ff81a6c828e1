"""engine.ahead: placing the next items while the current one runs."""

import pytest

from keras_tpu_estimator.engine import ahead


def test_prefetch_yields_in_order_and_raises_producer_errors():
    def items():
        yield 1
        yield 2
        raise RuntimeError("input broke")

    fetched = ahead.prefetch(items(), lambda i: i * 10)
    assert next(fetched) == 10 and next(fetched) == 20
    with pytest.raises(RuntimeError, match="input broke"):
        next(fetched)
    fetched.close()


def test_prefetch_close_stops_an_endless_producer():
    def endless():
        while True:
            yield 0

    with ahead.prefetch(endless(), lambda i: i) as fetched:
        assert next(fetched) == 0


def test_look_ahead_places_one_item_ahead_in_order():
    placed = []

    def place(item):
        placed.append(item)
        return item * 10

    placing = ahead.look_ahead(iter(range(3)), place)
    assert next(placing) == 0 and placed == [0, 1]
    assert list(placing) == [10, 20]


def test_look_ahead_close_closes_the_input():
    def endless():
        while True:
            yield 0

    items = endless()
    with ahead.look_ahead(items, lambda i: i) as placing:
        assert next(placing) == 0
    assert next(items, "closed") == "closed"
