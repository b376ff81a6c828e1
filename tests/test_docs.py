"""The documentation runs and is complete.

Every ```python block of `docs/*.md` and `README.md` is executed: the blocks of
one page run in order in one namespace, in a temporary working directory, on
CPU with 8 devices. The pages run in one worker interpreter started as a
reader's would be (no `KERAS_BACKEND` set, a fresh `KERAS_HOME`), each page in
a fresh namespace, with Keras's global state reset after it; one interpreter
for all pages saves importing TensorFlow, JAX and Keras once per page. (That
importing `keras_tpu_estimator` after TensorFlow works is tests/test_import.py's
subject.) A block preceded by the line `<!-- docs-test: skip ... -->` is not
run; keep that for code that cannot run here (a TPU pod, a server, several
hosts).

Run pages by hand with `python tests/test_docs.py docs/estimator.md ...`.
"""

import contextlib
import json
import os
import pathlib
import re
import select
import subprocess
import sys
import traceback

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
SKIP_MARKER = "<!-- docs-test: skip"

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)```+\s*(?P<lang>[\w+-]*)")


def python_blocks(text):
    """Returns `(line, code, skipped)` for each ```python block of a page.

    `line` is the 1-based line of the block's first code line; `skipped` is
    whether the last non-blank line before the fence is the skip marker.
    """
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        match = _FENCE_OPEN.match(lines[i])
        if not match:
            i += 1
            continue
        indent, lang = match["indent"], match["lang"]
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if lang in ("python", "py"):
            previous = next((line.strip() for line in reversed(lines[:i]) if line.strip()), "")
            skipped = previous.startswith(SKIP_MARKER)
            body = [line[len(indent):] if line.startswith(indent) else line.lstrip()
                    for line in lines[i + 1:end]]
            blocks.append((i + 2, "\n".join(body) + "\n", skipped))
        i = end + 1
    return blocks


def run_page(path):
    """Executes the runnable blocks of one page in one namespace, in order."""
    path = pathlib.Path(path).resolve()
    namespace = {"__name__": "__main__"}
    for line, code, skipped in python_blocks(path.read_text()):
        if skipped:
            continue
        # Padding keeps tracebacks pointing at the page's own line numbers.
        exec(compile("\n" * (line - 1) + code, str(path), "exec"), namespace)


def _reset_global_state():
    if "keras" in sys.modules:
        import keras

        keras.distribution.set_distribution(None)
        keras.config.set_dtype_policy("float32")
        keras.backend.clear_session()


def serve():
    """Runs the pages named on stdin, as `page<TAB>workdir` lines.

    Answers one JSON line per page, `{"error": traceback or null}`, on the
    original stdout; what a page prints goes to `workdir/output.txt`, and
    what libraries write to the file descriptors 1 and 2 to `os.devnull`.
    """
    answers = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    for request in sys.stdin:
        page, workdir = request.rstrip("\n").split("\t")
        os.chdir(workdir)
        error = None
        with open("output.txt", "w") as output, contextlib.redirect_stdout(output), \
                contextlib.redirect_stderr(output):
            try:
                run_page(page)
            except BaseException:  # noqa: B036  (SystemExit too: report, keep serving)
                error = traceback.format_exc()
            finally:
                _reset_global_state()
        answers.write(json.dumps({"error": error}) + "\n")
        answers.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        for page in sys.argv[1:]:
            run_page(page)
    sys.exit(0)


import pytest  # noqa: E402  (not needed when a page is run as a script)


def _page_id(path):
    return str(path.relative_to(ROOT))


PAGE_TIMEOUT_S = 600


class _Worker:
    """The interpreter that runs the pages (restarted if a page kills it)."""

    def __init__(self, home):
        self._home = home
        self._process = None

    def run(self, page, workdir):
        if self._process is None or self._process.poll() is not None:
            env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
            env.update(KERAS_HOME=str(self._home / "keras_home"), JAX_PLATFORMS="cpu",
                       TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=str(ROOT))
            self._process = subprocess.Popen(
                [sys.executable, __file__, "--serve"], cwd=self._home, env=env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._process.stdin.write(f"{page}\t{workdir}\n")
        self._process.stdin.flush()
        ready, _, _ = select.select([self._process.stdout], [], [], PAGE_TIMEOUT_S)
        answer = self._process.stdout.readline() if ready else ""
        if not answer:
            self.close()
            return f"the worker died or ran past {PAGE_TIMEOUT_S} s"
        return json.loads(answer)["error"]

    def close(self):
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    worker = _Worker(tmp_path_factory.mktemp("docs_worker"))
    yield worker
    worker.close()


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_python_block_of_the_page_runs(page, worker, tmp_path):
    if not any(not skipped for _, _, skipped in python_blocks(page.read_text())):
        pytest.skip("no runnable python block")
    error = worker.run(page, tmp_path)
    output = tmp_path / "output.txt"
    printed = output.read_text()[-2000:] if output.exists() else ""
    assert error is None, f"{error}\n--- the page printed (end) ---\n{printed}"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("```python\na = 1\n```\n", [(2, "a = 1\n", False)]),
        ("<!-- docs-test: skip (needs a TPU pod) -->\n\n```python\nb\n```\n", [(4, "b\n", True)]),
        ("<!-- docs-test: skip -->\n```sh\nmake\n```\n```python\nc\n```\n", [(6, "c\n", False)]),
        ("```text\nf(x)\n```\n", []),
        ("1. a step:\n\n    ```python\n    if x:\n        y\n    ```\n", [(4, "if x:\n    y\n", False)]),
    ],
)
def test_python_blocks_finds_blocks_and_skip_markers(text, expected):
    assert python_blocks(text) == expected


# The API reference: the site is built once (mkdocs, a few seconds) and read.
# Submodules whose `__all__` the reference documents name by name.
DOCUMENTED_MODULES = ["checkpoint", "config", "export", "hooks", "metrics", "spec",
                      "strategy", "summary", "convert"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    site_dir = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir",
         str(site_dir)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    return site_dir


def _anchors(html_file):
    return set(re.findall(r'id="(keras_tpu_estimator[\w.]*)"', html_file.read_text()))


def test_the_top_level_all_names_exactly_the_public_names():
    import types

    import keras_tpu_estimator as kte

    public = {name for name, value in vars(kte).items()
              if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    listed = {name for name in kte.__all__
              if not isinstance(getattr(kte, name, None), types.ModuleType)}
    assert listed == public


def test_every_top_level_name_is_in_the_api_reference(site):
    import types

    import keras_tpu_estimator as kte

    anchors = _anchors(site / "api" / "kte.html")
    names = [n for n in kte.__all__ if not isinstance(getattr(kte, n), types.ModuleType)]
    assert [n for n in names if f"keras_tpu_estimator.{n}" not in anchors] == []


def test_every_public_submodule_has_an_api_page(site):
    import types

    import keras_tpu_estimator as kte

    modules = [n for n in kte.__all__ if isinstance(getattr(kte, n), types.ModuleType)]
    missing = []
    for name in modules + ["convert"]:
        page = site / "api" / f"{name}.html"
        ids = _anchors(page) if page.exists() else set()
        if not any(i == f"keras_tpu_estimator.{name}" or i.startswith(f"keras_tpu_estimator.{name}.")
                   for i in ids):
            missing.append(name)
    assert missing == []


@pytest.mark.parametrize("module", DOCUMENTED_MODULES)
def test_every_name_of_a_documented_submodule_is_in_the_api_reference(module, site):
    import importlib

    names = importlib.import_module(f"keras_tpu_estimator.{module}").__all__
    anchors = _anchors(site / "api" / f"{module}.html")
    assert [n for n in names if f"keras_tpu_estimator.{module}.{n}" not in anchors] == []


def test_the_site_loads_nothing_from_the_network(site):
    # Scripts, stylesheets, fonts and images must come with the site; plain
    # links (<a href>) to other sites are fine.
    external = re.compile(
        r'<(?:script|img|iframe)[^>]*\ssrc="https?://[^"]*"'
        r'|<link[^>]*\shref="https?://[^"]*"'
        r'|url\(\s*["\']?https?://|@import\s+["\']?https?://')
    found = []
    for path in site.rglob("*"):
        if path.suffix in (".html", ".css", ".js") and path.is_file():
            found += [f"{path.relative_to(site)}: {m}" for m in external.findall(path.read_text())]
    assert found == []


def test_code_is_highlighted_when_the_site_is_built(site):
    html = (site / "getting-started.html").read_text()
    assert 'class="language-python highlight"' in html
    assert '<span class="kn">import</span>' in html
