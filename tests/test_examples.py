"""The shipped examples run end to end and reach their targets."""

import runpy
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_digits_example_reaches_95_percent(capsys):
    runpy.run_path(str(EXAMPLES / "digits.py"), run_name="__main__")
    out = capsys.readouterr().out
    accuracy = float(out.split("test accuracy from predict: ")[1].split()[0])
    assert accuracy >= 0.95
    assert "test examples: 450, predictions: 450" in out
