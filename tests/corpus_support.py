"""The conformance corpus: real TPUEstimator programs, converted and run unedited.

The corpus (`../shared/corpus` beside the checkout, or `$KTE_CORPUS`) holds
the programs as their authors published them, harnesses that run each
program's own `main()` on tiny data, and the original TPUEstimator's figures
(TensorFlow 2.15). These helpers convert a program's whole source tree with
the command line, exactly as a user would, and run the corpus's own driver
and parity scripts on the converted tree. Nothing converted is edited.
"""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent


def corpus_dir():
    """The corpus directory, or None when this checkout has none."""
    candidates = [os.environ.get("KTE_CORPUS"), REPO.parent / "shared" / "corpus"]
    for candidate in candidates:
        if candidate and (pathlib.Path(candidate) / "harness").is_dir():
            return pathlib.Path(candidate)
    return None


CORPUS = corpus_dir()

# Each program's folder under `sources/`: the repository it comes from.
PROGRAM_SOURCES = {
    "bert": "bert", "albert": "albert", "mnist": "tpu", "resnet": "tpu", "iris": "tpu",
    "cifar_keras": "tpu", "dcgan": "tpu-d2694ea",
}


def listed_sources(folder, corpus=None):
    """The corpus paths `sources/SOURCES.md` lists under `folder` (`bert`, `tpu`, ...)."""
    listing = (corpus or CORPUS) / "sources" / "SOURCES.md"
    if not listing.exists():
        return []
    paths = re.findall(r"^\| `([^`]+)` \|", listing.read_text(encoding="utf-8"), re.MULTILINE)
    return [path for path in paths if path.split("/")[0] == folder]


def missing_reason(program, corpus=None):
    """Why `program` cannot run here, or None when its harness and files are all present.

    The programs' own files are not stored in the corpus: `sources/populate.py`
    writes them from fetched repositories, so a checkout (a CI run) may have the
    harness without them.
    """
    corpus = corpus or CORPUS
    if corpus is None:
        return "the conformance corpus is not here: set KTE_CORPUS or check out ../shared/corpus"
    if not (corpus / "harness" / program).is_dir():
        return f"the corpus has no harness for {program!r} ({corpus / 'harness'})"
    listed = listed_sources(PROGRAM_SOURCES[program], corpus)
    missing = [path for path in listed if not (corpus / "sources" / path).exists()]
    if not listed or missing:
        return (
            f"the original files of {program!r} are not in {corpus / 'sources'} "
            f"({len(missing) if listed else 'none'} of {len(listed)} listed files missing): "
            "fetch the repositories sources/SOURCES.md names and run "
            "sources/populate.py GIT_DIR..."
        )
    return None


def requires_program(program):
    """Skips a test module, naming the reason, when `program`'s files are not here."""
    reason = missing_reason(program)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


# The programs' own imports besides TensorFlow (corpus README, "Environments"):
# kept out of the library's environment, in a folder put on PYTHONPATH.
DEPS = os.environ.get("KTE_CORPUS_DEPS")
# A Python with the reference stack (TensorFlow 2.15): what makes albert's init
# checkpoint with the original modeling.py.
REFERENCE_PYTHON = os.environ.get("KTE_REFERENCE_PYTHON")


def requires_imports(*modules):
    """Skips, naming them, when the programs' own extra imports are not at hand."""
    import importlib.util

    def found(module):
        if DEPS and (pathlib.Path(DEPS) / module).exists():
            return True
        return importlib.util.find_spec(module) is not None

    missing = [m for m in modules if not found(m)]
    return pytest.mark.skipif(
        bool(missing),
        reason=f"the program imports {missing}: install them into a folder named by "
               "$KTE_CORPUS_DEPS (corpus README, 'Environments')",
    )


def environment(**extra):
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)  # the programs run on the one CPU device, as a user's would
    env.update({"KERAS_BACKEND": "jax", "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONHASHSEED": "0"})
    if DEPS:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [DEPS, env.get("PYTHONPATH")]))
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(args, cwd, timeout=600, **env):
    """Runs a command with Python of this checkout; the completed process."""
    done = subprocess.run(
        [sys.executable, *map(str, args)], cwd=cwd, env=environment(**env),
        capture_output=True, text=True, timeout=timeout, check=False,
    )
    return done


def convert_tree(source, output):
    """`keras-tpu-estimator convert SOURCE -o OUTPUT`; the completed process."""
    return run(
        ["-c", "from keras_tpu_estimator.convert import cli; raise SystemExit(cli())",
         "convert", source, "-o", output, "--report", str(output) + ".report.txt"],
        cwd=REPO, timeout=300,
    )


def error_lines(report):
    return [line for line in report.splitlines() if ": ERROR: " in line]


def run_driver(program, program_dir, flags, work, timeout=600, **env):
    """Runs `harness/<program>/driver.py` and returns its JSON report.

    Raises AssertionError with the tail of the output if the program fails.
    """
    report = pathlib.Path(work) / f"{program}-{len(list(pathlib.Path(work).glob('*.json')))}.json"
    done = run(
        [CORPUS / "harness" / program / "driver.py", program_dir, *flags],
        cwd=work, timeout=timeout, DRIVER_JSON=report, **env,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0 and report.exists(), output[-6000:]
    with open(report) as f:
        result = json.load(f)
    result["output"] = output
    return result


def make_data(program, directory):
    done = run([CORPUS / "harness" / program / "make_data.py", directory], cwd=REPO, timeout=300)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return pathlib.Path(directory)


def parity(program, program_dir, init_checkpoint, out, work, **env):
    """Runs the program's 30-step trajectory under the library (`env` added); its JSON."""
    trajectories = CORPUS / "reference" / "trajectories"
    done = run(
        [trajectories / f"parity_{program}.py", "run", "--program_dir", program_dir,
         "--init_checkpoint", init_checkpoint, "--out", out, "--work_dir", work],
        cwd=trajectories, timeout=600, **env,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    with open(out) as f:
        return json.load(f)


def reference(name, variant=None):
    """A reference JSON of the corpus (`reference/<name>.json`, or a trajectory)."""
    path = CORPUS / "reference"
    if variant == "trajectory":
        path = path / "trajectories" / f"{name}.json"
    elif variant:
        path = path / "trajectories" / variant / f"{name}.json"
    else:
        path = path / f"{name}.json"
    with open(path) as f:
        return json.load(f)


def relative_loss_differences(ours, theirs):
    """Per-step |a - b| / |b| of two trajectories' losses."""
    return [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(ours["loss"], theirs["loss"])]


def variable_differences(ours, theirs):
    """The largest max|a - b| / max|b| over the variables both trajectories record."""
    worst = 0.0
    for name, values in theirs.get("variables", {}).items():
        if "/attention/self/key/bias" in name:
            continue  # zero gradient: rounding noise amplified by Adam (corpus README)
        a, b = ours["variables"][name]["values"], values["values"]
        scale = max(abs(x) for x in b) or 1.0
        worst = max(worst, max(abs(x - y) for x, y in zip(a, b)) / scale)
    return worst


def trajectory_differences(name, program_dir, work, variant="tf215_onednn_off", **env):
    """Runs `name`'s 30-step trajectory on the converted `program_dir`.

    Args:
        variant: the TensorFlow 2.15 trajectory compared with: by default the
            one with oneDNN kernels off; `"trajectory"`, TensorFlow's
            default (oneDNN on). A tuple of variants compares with the
            closest of them (by loss).
        **env: environment variables of the library's run.

    Returns:
        `(loss, variables)`: the largest relative difference per step of the
        loss, and over the named variables, from that trajectory.
    """
    init = CORPUS / "reference" / "trajectories" / "init" / name
    init = init / ("bert_model.ckpt" if name == "bert" else "model.ckpt")
    ours = parity(name, program_dir, init, pathlib.Path(work) / "trajectory.json",
                  pathlib.Path(work) / "parity", **env)
    differences = []
    for one in (variant,) if isinstance(variant, str) else variant:
        reference_ = reference(name, one)
        assert len(ours["loss"]) == len(reference_["loss"]) == 30
        differences.append((max(relative_loss_differences(ours, reference_)),
                            variable_differences(ours, reference_)))
    return min(differences)
