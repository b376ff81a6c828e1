"""The corpus tests skip, naming why, where the programs' fetched files are absent."""

import pytest

import corpus_support as corpus

SOURCES_MD = """## tensorflow/tpu

| corpus file | repository path | git blob |
|---|---|---|
| `tpu/LICENSE` | `LICENSE` | `15ae42140452d32ccf929f59f7eca01a3c7b555f` |
| `tpu/models/official/mnist/mnist_tpu.py` | `models/official/mnist/mnist_tpu.py` | `00c00d69c24434be55c77756e49c0fbf29edd964` |
"""


@pytest.fixture
def harness_only(tmp_path):
    (tmp_path / "harness" / "mnist").mkdir(parents=True)
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "SOURCES.md").write_text(SOURCES_MD)
    return tmp_path


def test_a_program_without_its_files_names_populate(harness_only):
    reason = corpus.missing_reason("mnist", harness_only)
    assert "2 of 2 listed files missing" in reason
    assert "sources/populate.py" in reason


def test_a_program_with_some_files_counts_the_missing_ones(harness_only):
    (harness_only / "sources" / "tpu").mkdir()
    (harness_only / "sources" / "tpu" / "LICENSE").write_text("Apache")
    assert "1 of 2 listed files missing" in corpus.missing_reason("mnist", harness_only)


def test_a_program_with_all_its_files_runs(harness_only):
    program = harness_only / "sources" / "tpu" / "models" / "official" / "mnist"
    program.mkdir(parents=True)
    (program / "mnist_tpu.py").write_text("")
    (harness_only / "sources" / "tpu" / "LICENSE").write_text("Apache")
    assert corpus.missing_reason("mnist", harness_only) is None


def test_a_program_without_a_harness_is_named(harness_only):
    assert "no harness for 'albert'" in corpus.missing_reason("albert", harness_only)
