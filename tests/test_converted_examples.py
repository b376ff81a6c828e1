"""The converted examples: the converter's unedited output, and they train.

Each `examples/X.py` is what `keras-tpu-estimator convert` makes of
`examples/tf1/X.py`; the TF1 originals are only ever read as converter input.
"""

import ast
import importlib.util
from pathlib import Path

import pytest

from keras_tpu_estimator import convert

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
NAMES = ["mnist_cnn", "bert_classifier", "resnet"]


def load_example(name):
    spec = importlib.util.spec_from_file_location(f"converted_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", NAMES)
def test_example_is_the_unedited_converter_output(name):
    original = EXAMPLES / "tf1" / f"{name}.py"
    result = convert.convert_source(original.read_text(), filename=str(original))
    assert result.source == (EXAMPLES / f"{name}.py").read_text()
    assert result.errors == []


@pytest.mark.parametrize("name", NAMES)
def test_converted_example_converts_to_itself(name):
    converted = (EXAMPLES / f"{name}.py").read_text()
    assert convert.convert_source(converted).source == converted


def tensorflow_names(source):
    """Every dotted name the code reaches through `tf.`."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            parts = []
            while isinstance(node, ast.Attribute):
                parts.append(node.attr)
                node = node.value
            if isinstance(node, ast.Name) and node.id == "tf":
                names.add(".".join(["tf", *reversed(parts)]))
    return {n for n in names if not any(m.startswith(n + ".") for m in names)}


@pytest.mark.parametrize("name", NAMES)
def test_only_the_input_pipeline_and_logging_stay_on_tensorflow(name):
    names = tensorflow_names((EXAMPLES / f"{name}.py").read_text())
    assert "tf.data.Dataset.from_tensor_slices" in names
    kept = ("tf.data.", "tf.compat.v1.logging.", "tf.compat.v1.placeholder", "tf.constant",
            "tf.int32", "tf.float32")
    assert [n for n in names if not n.startswith(kept)] == []


def test_mnist_cnn_trains_evaluates_and_exports(tmp_path):
    mnist = load_example("mnist_cnn")
    results, export_path = mnist.main(model_dir=str(tmp_path), train_steps=200)
    assert results["accuracy"] >= 0.9
    assert results["global_step"] == 200
    assert Path(export_path.decode() if isinstance(export_path, bytes) else export_path).is_dir()


def test_resnet_trains_with_batch_norm_statistics(tmp_path):
    resnet = load_example("resnet")
    results = resnet.main(model_dir=str(tmp_path), train_steps=200)
    assert results["top_1_accuracy"] >= 0.85


def test_bert_classifier_fine_tunes_from_its_first_checkpoint(tmp_path):
    bert = load_example("bert_classifier")
    results = bert.main(work_dir=str(tmp_path), pretrain_steps=100, train_steps=100)
    assert results["eval_accuracy"] >= 0.9
    assert (tmp_path / "classifier").is_dir()
