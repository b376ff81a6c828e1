"""The CPU backend's settings are on unless their environment variable turns them off."""

import pytest

from keras_tpu_estimator._backend import switches

NAME = "KTE_TEST_SWITCH"


def test_unset_means_on(monkeypatch):
    monkeypatch.delenv(NAME, raising=False)
    assert not switches.is_off(NAME)


@pytest.mark.parametrize("value", ["0", "false", "off", "no", " OFF ", "False"])
def test_these_values_turn_it_off(monkeypatch, value):
    monkeypatch.setenv(NAME, value)
    assert switches.is_off(NAME)


@pytest.mark.parametrize("value", ["1", "true", "on", "yes", ""])
def test_other_values_leave_it_on(monkeypatch, value):
    monkeypatch.setenv(NAME, value)
    assert not switches.is_off(NAME)
