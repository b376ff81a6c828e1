"""The corpus programs, converted as they are, import on TensorFlow 2 + JAX.

Before this, 4 of 7 new public programs died at import on what the
conversion left behind: a `tf.contrib` import whose every use was rewritten
(`cluster_resolver`), `from tensorflow.python.estimator import estimator`,
an import of `tf.contrib.metrics` used in one branch only (ALBERT). Each
program's main module is imported in a fresh process from the converted tree,
and the report is checked to say what is left.
"""

import pytest

import corpus_support as corpus

PROGRAMS = {
    # program: (source tree under sources/, where it goes under the output,
    #           module to import, modules it needs besides TensorFlow)
    "albert": ("albert", "albert", "albert.run_classifier", ("sentencepiece",)),
    "cifar_keras": ("tpu/models/experimental/cifar_keras", ".", "cifar_keras", ()),
    "dcgan": ("tpu-d2694ea/models/experimental/dcgan", ".", "dcgan_main", ("PIL",)),
}


def _cases():
    for program, (source, place, module, needs) in PROGRAMS.items():
        marks = [pytest.mark.skipif(corpus.missing_reason(program) is not None,
                                    reason=corpus.missing_reason(program) or "")]
        if needs:
            marks.append(corpus.requires_imports(*needs))
        yield pytest.param(program, source, place, module, marks=marks, id=program)


@pytest.mark.parametrize("program, source, place, module", list(_cases()))
def test_converted_program_imports_and_reaches_main(tmp_path, program, source, place, module):
    root = tmp_path / "program"
    output = root / place if place != "." else root
    output.parent.mkdir(parents=True, exist_ok=True)  # the output itself must be new
    done = corpus.convert_tree(corpus.CORPUS / "sources" / source, output)
    report = (output.parent / (output.name + ".report.txt")).read_text()
    assert "Traceback" not in done.stderr, done.stderr
    check = (
        "import sys; sys.path.insert(0, '.'); "
        f"import {module} as program; assert callable(program.main); print('imported')"
    )
    imported = corpus.run(["-c", check], cwd=root, timeout=300)
    assert imported.returncode == 0 and "imported" in imported.stdout, imported.stderr[-3000:]
    assert corpus.error_lines(report) == []  # nothing left to convert by hand
