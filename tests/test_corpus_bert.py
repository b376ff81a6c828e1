"""Conformance: google-research/bert `run_classifier.py`, converted and run with zero hand edits."""

import pytest

import corpus_support as corpus

pytestmark = corpus.requires_program("bert")

INIT = corpus.CORPUS / "reference" / "trajectories" / "init" / "bert" if corpus.CORPUS else None


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    work = tmp_path_factory.mktemp("bert")
    converted = corpus.convert_tree(corpus.CORPUS / "sources" / "bert", work / "bert")
    data = corpus.make_data("bert", work / "data")
    return work, converted, work / "bert", data


def test_bert_converts_with_no_error_left(program):
    _, converted, _, _ = program
    assert converted.returncode == 0, converted.stdout[-3000:]
    assert corpus.error_lines(converted.stdout) == []


def test_bert_fine_tunes_evaluates_and_predicts_unedited(program):
    work, _, program_dir, data = program
    result = corpus.run_driver(
        "bert", program_dir,
        ["--task_name=cola", "--do_train=true", "--do_eval=true", "--do_predict=true",
         "--data_dir=%s" % (data / "task"), "--vocab_file=%s" % (data / "vocab.txt"),
         "--bert_config_file=%s" % (data / "bert_config.json"), "--max_seq_length=32",
         "--train_batch_size=32", "--eval_batch_size=32", "--predict_batch_size=32",
         "--learning_rate=1e-3", "--num_train_epochs=3",
         "--init_checkpoint=%s" % (INIT / "bert_model.ckpt"), "--output_dir=%s" % (work / "out")],
        work, DRIVER_SUMMARY_STEPS=20, DRIVER_SEED=1,
    )
    reference = corpus.reference("bert")["summary"]
    assert result["status"] == "ok"
    assert result["summaries_eval"]["eval_accuracy"] == [[187, 1.0]]
    [[_, eval_loss]] = result["summaries_eval"]["eval_loss"]
    # The three reference seeds end between 2.0e-4 and 5.4e-4.
    assert eval_loss < 2 * max(reference["eval"]["eval_loss"])
    assert result["predict"] == {"rows": 300, "test_accuracy_vs_gold": 1.0}


def test_bert_trajectory_equals_tensorflow(program):
    work, _, program_dir, _ = program
    loss, variables = corpus.trajectory_differences("bert", program_dir, work)
    assert loss < 1e-5
    assert variables < 1e-5
