"""Files the converter cannot read as a program give one clear error naming the file:
NUL bytes (not Python source), expressions nested too deeply (never a RecursionError)."""

import pytest

from keras_tpu_estimator import convert

GOOD = "import tensorflow as tf\n\ndef model_fn(features):\n    return tf.nn.relu(features)\n"

NUL = b"import tensorflow as tf\nx = 1\x00\n"

# Nested too deeply: for Python's parser (parentheses), for its AST builder (a long
# left-nested chain), for its parser's stack (unary minus), or for the converter's own
# walk of a tree Python parses (a 1,000-term chain).
DEEP = {
    "parentheses": "x = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n",
    "long_chain": "x = " + " + ".join(["a"] * 100_000) + "\n",
    "unary": "x = " + "-" * 100_000 + "1\n",
    "chain_python_parses": "import tensorflow as tf\nx = " + " + ".join(["tf.a"] * 1_000) + "\n",
}


def write(path, content):
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    return path


def test_a_file_with_nul_bytes_is_not_python_source(tmp_path):
    source = write(tmp_path / "data.py", NUL)
    with pytest.raises(ValueError, match=r"'.*data\.py' is not Python source.*NUL byte.*line 2"):
        convert.convert_file(str(source), str(tmp_path / "out.py"))
    assert not (tmp_path / "out.py").exists()


def test_source_text_with_nul_bytes_is_not_python_source():
    with pytest.raises(ValueError, match=r"train\.py.*is not Python source.*NUL byte"):
        convert.convert_source(NUL.decode(), filename="train.py")


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_a_deeply_nested_file_gives_an_error_naming_it(tmp_path, shape):
    source = write(tmp_path / "deep.py", DEEP[shape])
    with pytest.raises((SyntaxError, ValueError), match=r"deep\.py") as error:
        convert.convert_file(str(source), str(tmp_path / "out.py"))
    assert "nested" in str(error.value)
    assert not (tmp_path / "out.py").exists()


@pytest.mark.parametrize("content", [NUL, DEEP["long_chain"]], ids=["nul", "deep"])
def test_the_command_line_names_the_file_in_one_error_line(tmp_path, capsys, content):
    source = write(tmp_path / "bad.py", content)
    status = convert.main([str(source), "-o", str(tmp_path / "out.py")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("error: ") and "bad.py" in err and "Traceback" not in err
    assert not (tmp_path / "out.py").exists()


@pytest.mark.parametrize("content", [NUL, DEEP["long_chain"]], ids=["nul", "deep"])
def test_a_tree_names_its_bad_file(tmp_path, content):
    tree = tmp_path / "src"
    (tree / "pkg").mkdir(parents=True)
    write(tree / "pkg" / "model.py", GOOD)
    write(tree / "pkg" / "bad.py", content)
    with pytest.raises((SyntaxError, ValueError), match=r"pkg/bad\.py"):
        convert.convert_tree(str(tree), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content", [NUL, DEEP["long_chain"], DEEP["unary"]],
                         ids=["nul", "deep", "unary"])
def test_a_bad_neighbour_file_does_not_stop_the_conversion(tmp_path, content):
    write(tmp_path / "neighbour.py", content)
    source = write(tmp_path / "model.py", GOOD)
    result = convert.convert_file(str(source), str(tmp_path / "out.py"))
    assert "tf1.nn.relu(features)" in result.source
