"""The command line, as tf_upgrade_v2 users expect it: trees, --inplace, exit status, --report."""

import subprocess
import sys

import pytest

MODEL = "import tensorflow as tf\n\ndef model_fn(features):\n    return tf.nn.relu(features)\n"
BROKEN = "import tensorflow as tf\n\ndef model_fn(features):\n    return tf.Session()\n"


def cli_process(*args, cwd):
    """The command as a process: its exit status and output."""
    script = "from keras_tpu_estimator.convert import cli; raise SystemExit(cli())"
    return subprocess.run([sys.executable, "-c", script, "convert", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def cli(monkeypatch, capsys):
    """The command run in this process (as `cli_process`, without a Python start-up)."""
    from keras_tpu_estimator.convert import cli as command

    def run(*args, cwd):
        monkeypatch.chdir(cwd)
        try:
            status = command(["convert", *map(str, args)])
        except SystemExit as exit:  # argparse's usage errors.
            status = exit.code
        output = capsys.readouterr()
        return subprocess.CompletedProcess(args, status, output.out, output.err)

    return run


@pytest.fixture
def tree(tmp_path):
    source = tmp_path / "src"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "model.py").write_text(MODEL)
    (source / "pkg" / "__init__.py").write_text("")
    (source / "README.md").write_text("# a program\n")
    (source / "configs").mkdir()
    (source / "configs" / "base.yaml").write_text("lr: 0.1\n")
    return source


def test_a_tree_is_converted_and_its_other_files_copied(tree, tmp_path):
    done = cli_process(tree, "-o", tmp_path / "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "tf1.nn.relu(features)" in (tmp_path / "out" / "pkg" / "model.py").read_text()
    assert (tmp_path / "out" / "README.md").read_text() == "# a program\n"
    assert (tmp_path / "out" / "configs" / "base.yaml").read_text() == "lr: 0.1\n"
    assert (tree / "pkg" / "model.py").read_text() == MODEL  # the source is untouched


def test_an_existing_output_tree_is_refused(cli, tree, tmp_path):
    (tmp_path / "out").mkdir()
    done = cli(tree, "-o", tmp_path / "out", cwd=tmp_path)
    assert done.returncode == 2
    assert "exists" in done.stderr and "--inplace" in done.stderr
    assert list((tmp_path / "out").iterdir()) == []


def test_inplace_converts_the_tree_where_it_is(cli, tree, tmp_path):
    done = cli(tree, "--inplace", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "tf1.nn.relu(features)" in (tree / "pkg" / "model.py").read_text()


def test_inplace_converts_one_file(cli, tree, tmp_path):
    done = cli(tree / "pkg" / "model.py", "--inplace", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "tf1.nn.relu(features)" in (tree / "pkg" / "model.py").read_text()


@pytest.mark.parametrize("args", [[], ["-o", "x", "--inplace"]])
def test_output_or_inplace_is_required(cli, tree, tmp_path, args):
    done = cli(tree, *args, cwd=tmp_path)
    assert done.returncode == 2
    assert "--output" in done.stderr and "--inplace" in done.stderr


def test_remaining_errors_give_a_nonzero_exit_with_their_count(cli, tree, tmp_path):
    (tree / "pkg" / "session.py").write_text(BROKEN)
    done = cli(tree, "-o", tmp_path / "out", "--report", tmp_path / "report.txt", cwd=tmp_path)
    assert done.returncode == 1
    assert "1 errors remain" in done.stderr
    report = (tmp_path / "report.txt").read_text()
    assert report == done.stdout
    assert "session.py:4:12: ERROR: 'tf.Session' cannot be converted" in report
    assert "Converted 3 files: 1 errors left to convert by hand" in report


def test_a_syntax_error_writes_nothing(cli, tree, tmp_path):
    (tree / "pkg" / "bad.py").write_text("def model_fn(:\n")
    done = cli(tree, "-o", tmp_path / "out", cwd=tmp_path)
    assert done.returncode == 2
    assert not (tmp_path / "out").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


# -- Paths that cannot work: one line naming the argument, exit 2, nothing written. --


def run_in_process(capsys, *args):
    from keras_tpu_estimator.convert import cli as command

    status = command(["convert", *map(str, args)])
    return status, capsys.readouterr()


def listing(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("args, message", [
    (["missing.py", "-o", "out.py"], "`input_path` must be an existing Python file. "
                                     "Received: 'missing.py'"),
    (["src", "-o", "existing.py"],
     "-o 'existing.py' is an existing file: a directory `input_path`"),
    (["src", "-o", "empty"], "-o 'empty' already exists"),
    (["src", "-o", "src/converted"], "-o 'src/converted' is inside `input_path` 'src'"),
    (["src", "-o", "."], "-o '.' already exists"),
    (["src/pkg/model.py", "-o", "missing/"],
     "-o 'missing/' names a directory that does not exist"),
    (["src/pkg/model.py", "-o", "missing/out.py"], "its directory 'missing' does not exist"),
    (["src/pkg/model.py", "-o", "src/pkg"], "-o 'src/pkg' would overwrite `input_path`"),
    (["src/pkg/model.py", "-o", "out.py", "--report", "empty"], "--report 'empty' is a directory"),
    (["src", "--inplace", "--report", "missing/r.txt"], "--report 'missing/r.txt': its directory"),
])
def test_unusable_paths_give_one_clear_line_and_write_nothing(tree, tmp_path, monkeypatch,
                                                              capsys, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "existing.py").write_text("x = 1\n")
    (tmp_path / "empty").mkdir()
    before = listing(tmp_path)
    status, output = run_in_process(capsys, *args)
    assert status == 2
    assert output.err.startswith("error: ") and output.err.count("\n") == 1
    assert message in output.err
    assert ".convert-" not in output.err  # No temporary file names.
    assert listing(tmp_path) == before


def test_a_file_is_converted_into_an_existing_directory_under_its_name(tree, tmp_path,
                                                                       monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    status, output = run_in_process(capsys, "src/pkg/model.py", "-o", "out")
    assert status == 0, output.err
    assert "tf1.nn.relu(features)" in (tmp_path / "out" / "model.py").read_text()
    assert "to 'out/model.py'" in output.out


def test_a_write_error_names_the_output_not_a_temporary_file(tmp_path):
    from keras_tpu_estimator.convert import files

    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "model.py").mkdir()  # The output name is a directory.
    with pytest.raises(OSError, match=r"Cannot write '.*taken/model.py'") as error:
        files.convert_file(tmp_path / "model.py", tmp_path / "taken")
    assert ".convert-" not in str(error.value)
    assert listing(tmp_path / "taken") == ["model.py"]
