"""The converted examples: the converter's unedited output, and they train.

Each `examples/X.py` is what `keras-tpu-estimator convert` makes of
`examples/tf1/X.py`; the TF1 originals are only ever read as converter input.
"""

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import keras_tpu_estimator as kte
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


@pytest.mark.parametrize("name", NAMES)
def test_migration_guide_shows_the_current_report(name):
    original = f"examples/tf1/{name}.py"
    result = convert.convert_source((EXAMPLES / "tf1" / f"{name}.py").read_text(), original)
    report = convert.format_report(result, original, f"examples/{name}.py")
    guide = (EXAMPLES.parent / "docs" / "migration.md").read_text()
    assert f"```text\n{report}```" in guide


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
    results, export_path = mnist.main(model_dir=str(tmp_path), train_steps=100)
    assert results["global_step"] == 100
    assert results["accuracy"] >= 0.9
    assert (Path(export_path.decode()) / "saved_model.pb").is_file()


def test_resnet_trains_with_batch_norm_statistics(tmp_path):
    resnet = load_example("resnet")
    results = resnet.main(model_dir=str(tmp_path), train_steps=100)
    assert results["top_1_accuracy"] >= 0.85
    moving_mean = kte.checkpoint.load_variable(
        kte.checkpoint.latest_checkpoint(str(tmp_path)), "batch_normalization/moving_mean"
    )
    assert np.abs(moving_mean).max() > 0  # the moving statistics were updated


def test_bert_classifier_fine_tunes_from_its_first_checkpoint(tmp_path):
    bert = load_example("bert_classifier")
    # A short run of the example's 300 + 300 steps, at its own rate (3e-3
    # learned or not depending on the order of the shuffled batches).
    results = bert.main(
        work_dir=str(tmp_path), pretrain_steps=20, train_steps=50, learning_rate=1e-3
    )
    assert results["eval_accuracy"] >= 0.9

    # init_from_checkpoint loaded the encoder, by its TF1 names, before step 0.
    name = "bert/encoder/layer_0/attention/self/query/kernel"
    pretrained = kte.checkpoint.latest_checkpoint(str(tmp_path / "pretrain"))
    np.testing.assert_array_equal(
        kte.checkpoint.load_variable(str(tmp_path / "classifier" / "model.ckpt-0"), name),
        kte.checkpoint.load_variable(pretrained, name),
    )
    # The host_call wrote its summaries, the learning rate warming up.
    scalars = kte.summary.read_scalars(str(tmp_path / "classifier"))
    learning_rates = [value for _, value in scalars["learning_rate"]]
    # 50 from the host call, and the estimator's loss summary of the first
    # loop, which TF's summary hook writes at the first run too.
    assert len(scalars["loss"]) == 51
    assert learning_rates[0] < learning_rates[4]
