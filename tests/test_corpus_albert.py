"""Conformance: google-research/albert `run_classifier.py`, converted and run unedited.

Fine-tunes from a TF1 init checkpoint (made by the original `modeling.py`,
so it needs a TensorFlow 2.15 Python: `$KTE_REFERENCE_PYTHON`), then the
program's own best-checkpoint loop over `model_dir/model.ckpt-N.index`
files (evaluate each, rename the best to `model.ckpt-best.*`), predicts and
exports from that path.
"""

import pytest

import corpus_support as corpus

pytestmark = [
    corpus.requires_program("albert"),
    corpus.requires_imports("sentencepiece", "tensorflow_hub"),
    pytest.mark.skipif(
        corpus.REFERENCE_PYTHON is None,
        reason="albert's init checkpoint is made by the original modeling.py: set "
               "$KTE_REFERENCE_PYTHON to a Python with TensorFlow 2.15 (corpus README)",
    ),
]

FLAGS = [
    "--task_name=sst-2", "--do_train=true", "--do_eval=true", "--do_predict=true",
    "--do_lower_case=true", "--max_seq_length=32", "--train_batch_size=32",
    "--eval_batch_size=32", "--predict_batch_size=32", "--learning_rate=1e-3",
    "--train_step=200", "--warmup_step=20", "--save_checkpoints_steps=100",
    "--iterations_per_loop=50",
]


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    import subprocess

    work = tmp_path_factory.mktemp("albert")
    (work / "program").mkdir()
    converted = corpus.convert_tree(corpus.CORPUS / "sources" / "albert",
                                    work / "program" / "albert")
    data = corpus.make_data("albert", work / "data")
    harness = corpus.CORPUS / "harness" / "albert"
    env = {"TF_CPP_MIN_LOG_LEVEL": "2", "PATH": "/usr/bin:/bin"}
    for script, args in [
        ("port_original_tf215.py", [corpus.CORPUS / "sources", work / "tf215"]),
        ("make_init_checkpoint.py", [work / "tf215", data / "albert_config.json",
                                     data / "init_ckpt" / "model.ckpt"]),
    ]:
        subprocess.run([corpus.REFERENCE_PYTHON, harness / script, *map(str, args)],
                       check=True, capture_output=True, env=env, timeout=300)
    return work, converted, work / "program", data


def test_albert_converts_with_no_error_left_on_the_run_path(program):
    _, converted, _, _ = program
    # The STS-B metrics (tf.contrib.metrics) are the only names left, never run for SST-2.
    errors = [line for line in corpus.error_lines(converted.stdout)
              if "contrib.metrics" not in line and "contrib import metrics" not in line
              and "tokenization.py" not in line]
    assert errors == []


def test_albert_fine_tunes_keeps_the_best_checkpoint_predicts_and_exports(program):
    work, _, program_dir, data = program
    result = corpus.run_driver(
        "albert", program_dir,
        [*FLAGS, "--data_dir=%s" % (data / "glue"), "--vocab_file=%s" % (data / "vocab.txt"),
         "--albert_config_file=%s" % (data / "albert_config.json"),
         "--init_checkpoint=%s" % (data / "init_ckpt" / "model.ckpt"),
         "--output_dir=%s" % (work / "out"), "--export_dir=%s" % (work / "out" / "export")],
        work, DRIVER_SUMMARY_STEPS=20, DRIVER_TIMEOUT=300, DRIVER_SEED=1,
        DRIVER_TEST_LABELS=data / "test_labels.txt",
    )
    assert result["status"] == "ok"
    reference = corpus.reference("albert")["summary"]
    assert max(e["eval_accuracy"] for e in result["eval_results"]) >= min(reference["eval"]["eval_accuracy"]) - 0.02
    assert result["predict"]["test_accuracy_vs_gold"] >= min(reference["predict_test_accuracy"]) - 0.02
    assert result["export"]["accuracy_vs_gold"] >= min(reference["export_test_accuracy"]) - 0.02
