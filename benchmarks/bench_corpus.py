"""The corpus programs themselves, timed beside the original TPUEstimator.

Every program of the conformance corpus (`../shared/corpus`, or
`$KTE_CORPUS`: bert, mnist, resnet, albert, dcgan, cifar_keras, iris) is
converted with `keras-tpu-estimator convert` and run unedited by the
corpus's own driver, with the flags and environment of its reference run
(`reference/run_reference.py`). With `--original PY` (a Python with
TensorFlow 2.15 and tensorflow-estimator 2.15, as the corpus README sets
up) the original program runs in the same benchmark, interleaved with the
library's runs, so the ratios compare runs on one machine at one time;
without it, the ratios use the reference figures of `reference/<program>.json`
(taken on another machine of the same kind).

For each program it prints:

- `cold`: the wall time of the program's `main()` (compilation included) on
  an empty persistent compilation cache, over the original's (target <= 1.3);
- `warm`: the same with the cache the cold run filled (a program's second
  run on a machine; `keras_tpu_estimator.compilation_cache`), over the
  original's (target <= 1.0);
- `steps/s`: the median `global_step/sec` of training, ours over the
  original's (target >= 1.0; `n/a` where the run trains in one loop, whose
  rate TensorFlow's StepCounterHook would not write either);
- `programs`: the XLA programs the run compiled or loaded (JAX's backend
  compile events, counted in the program's process), and of those, the
  ones the persistent compilation cache served (`hits`);
- `xla s`: the seconds XLA spent compiling them, or loading them from the
  cache, and `trace s` the seconds JAX spent tracing and lowering them,
  summed over the process (the driver's evaluation after `main()` and the
  warm-up thread's program included).

    python benchmarks/bench_corpus.py [--programs mnist,resnet] [--seeds 1,2]
        [--original /path/to/tf215/python] [--work DIR]

`--work DIR` keeps the converted programs, their data, logs and reports in
`DIR` (each program's cold run still starts from an empty cache), to run a
program again by hand from its log's commands.

`$KTE_CORPUS_DEPS` names a folder of the programs' own imports
(sentencepiece, tensorflow_hub, pandas, Pillow), put on their `PYTHONPATH`.
"""

import argparse
import contextlib
import importlib.util
import json
import os
import pathlib
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
PROGRAMS = ("bert", "mnist", "resnet", "albert", "dcgan", "cifar_keras", "iris")
COUNTER = pathlib.Path(__file__).resolve().parent / "_compile_counter"

# Per program: what `convert` reads under `sources/`, the program folder the
# reference's run command names under $WORK, and where in that folder the
# converted files go (albert's files are the package `albert`).
SOURCES = {
    "bert": ("bert", "bert/program", ""),
    "mnist": ("tpu/models/official/mnist", "mnist/program", ""),
    "resnet": ("tpu/models", "resnet/models", ""),
    "albert": ("albert", "albert/program", "albert"),
    "dcgan": ("tpu-d2694ea/models/experimental/dcgan", "dcgan/program", ""),
    "cifar_keras": ("tpu/models/experimental/cifar_keras", "cifar_keras/program", ""),
    "iris": ("tpu/models/samples/core/get_started", "iris/program", ""),
}


def corpus_dir():
    for candidate in (os.environ.get("KTE_CORPUS"), REPO.parent / "shared" / "corpus"):
        if candidate and (pathlib.Path(candidate) / "harness").is_dir():
            return pathlib.Path(candidate)
    raise SystemExit("No corpus: set KTE_CORPUS or check out ../shared/corpus.")


def load_reference_runner(corpus):
    """The corpus's `reference/run_reference.py`, as a module."""
    spec = importlib.util.spec_from_file_location(
        "run_reference", corpus / "reference" / "run_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def environment(cache=None, counts=None):
    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="2", PYTHONHASHSEED="0")
    env.pop("XLA_FLAGS", None)  # One device, as a user's program has.
    paths = [os.environ.get("KTE_CORPUS_DEPS"), env.get("PYTHONPATH")]
    if counts is not None:
        paths.insert(0, str(COUNTER))
        env["KTE_BENCH_COMPILE_COUNTS"] = str(counts)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    if cache is not None:
        env.update(KTE_COMPILATION_CACHE="1", KTE_COMPILATION_CACHE_DIR=str(cache))
    return env


def shell(command, corpus, log, env):
    with open(log, "a") as f:
        f.write(f"\n$ {command}\n")
        f.flush()
        done = subprocess.run(["sh", "-c", command], cwd=corpus, env=env, stdout=f,
                              stderr=subprocess.STDOUT, check=False)
    if done.returncode:
        raise SystemExit(f"failed (see {log}): {command}")


class Program:
    """One corpus program in a scratch folder laid out as `run_reference.py` lays it out."""

    def __init__(self, name, corpus, runner, work, original):
        self.name, self.corpus, self.runner, self.work = name, corpus, runner, work
        self.recipe = runner.PROGRAMS[name]
        self.original = original
        self.log = work / f"{name}.log"
        (work / name).mkdir(parents=True, exist_ok=True)

    def prepare(self):
        """Ports the original (with `--original`), makes the data, converts ours."""
        python = self.original or sys.executable
        for command in self.recipe["setup"]:
            if not self.original and "port_original_tf215" in command:
                continue
            if not self.original and "make_init_checkpoint" in command:
                self._copy_shipped_init()
                continue
            if not self.original and command.startswith("cp -r sources/"):
                continue
            shell(self.runner.expand(command, python, str(self.work)), self.corpus,
                  self.log, environment())
        source, folder, inside = SOURCES[self.name]
        # Errors left only in paths the runs do not take (the corpus tests say).
        shell(f"{shlex.quote(sys.executable)} -c 'from keras_tpu_estimator.convert import cli; "
              f"raise SystemExit(cli())' convert {self.corpus / 'sources' / source} "
              f"-o {self.ours(folder) / inside} > /dev/null || true", REPO, self.log,
              environment())

    def _copy_shipped_init(self):
        shipped = self.corpus / "reference" / "trajectories" / "init" / self.name
        if not shipped.is_dir():
            raise SystemExit(f"{self.name}'s init checkpoint is made by the original "
                             "program: pass --original PY (TensorFlow 2.15)")
        target = self.work / self.name / "data" / "init_ckpt"
        shell(f"mkdir -p {target} && cp {shipped}/* {target}/", self.corpus, self.log,
              environment())

    def ours(self, path):
        return self.work / "ours" / path

    def run_original(self, seed):
        # A model_dir left by an earlier run would resume from its last step.
        shutil.rmtree(self.work / self.name / f"out_seed{seed}", ignore_errors=True)
        command = self.recipe["run"].format(seed=seed)
        shell(self.runner.expand(command, self.original, str(self.work)), self.corpus,
              self.log, environment())
        return self._figures(self.work / self.name / f"seed{seed}.json")

    def run_ours(self, seed, state, cache):
        """Runs the converted program; its figures and compile count."""
        name, label = self.name, f"ours-{state}-seed{seed}"
        command = self.recipe["run"].format(seed=seed)
        _, folder, _ = SOURCES[name]
        command = command.replace(f"$WORK/{folder} ", f"{self.ours(folder)} ")
        command = command.replace(f"seed{seed}.json", f"{label}.json")
        command = command.replace(f"out_seed{seed}", f"out_{label}")
        shutil.rmtree(self.work / name / f"out_{label}", ignore_errors=True)  # As the original's.
        counts = self.work / name / f"{label}.compiles"
        shell(self.runner.expand(command, shlex.quote(sys.executable), str(self.work)),
              self.corpus, self.log, environment(cache, counts))
        figures = self._figures(self.work / name / f"{label}.json")
        programs, hits, xla, trace = (
            counts.read_text().split() if counts.exists() else (None,) * 4)
        figures.update(programs=programs and int(programs), hits=hits and int(hits),
                       xla_s=xla, trace_s=trace)
        return figures

    def _figures(self, report):
        with open(report) as f:
            return self.runner.figures(self.name, json.load(f))


def ratio(ours, theirs):
    return "n/a" if ours is None or not theirs else f"{ours / theirs:.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--seeds", default="1", help="comma-separated DRIVER_SEED values")
    parser.add_argument("--original", help="a Python with TensorFlow 2.15 + tensorflow-estimator 2.15")
    parser.add_argument("--work", help="a folder to keep the converted programs, data and logs in "
                                       "(default: a temporary one, removed at the end)")
    args = parser.parse_args()
    corpus = corpus_dir()
    runner = load_reference_runner(corpus)
    seeds = [int(s) for s in args.seeds.split(",")]
    source = "measured in this run" if args.original else "reference/<program>.json"
    print(f"original: {source}; ratios are ours / original")
    print(f"{'program':12} {'seed':>4} {'state':>5} {'wall s':>7} {'orig s':>7} {'wall x':>6}  "
          f"{'steps/s':>8} {'orig':>7} {'rate x':>6}  {'programs':>8} {'hits':>5} "
          f"{'xla s':>6} {'trace s':>7}")
    with contextlib.ExitStack() as stack:
        work = pathlib.Path(args.work or stack.enter_context(tempfile.TemporaryDirectory()))
        for name in args.programs.split(","):
            program = Program(name, corpus, runner, work, args.original)
            program.prepare()
            reference = json.loads((corpus / "reference" / f"{name}.json").read_text())["runs"]
            cache = work / name / "compilation_cache"
            shutil.rmtree(cache, ignore_errors=True)  # A kept --work folder's cache is not cold.
            for seed, state in [(seeds[0], "cold")] + [(s, "warm") for s in seeds]:
                if args.original:
                    theirs = program.run_original(seed)
                else:
                    theirs = next((r for r in reference if r["seed"] == seed), reference[0])
                ours = program.run_ours(seed, state, cache)
                rate, their_rate = (f["steps_per_s"]["median"] for f in (ours, theirs))
                print(f"{name:12} {seed:>4} {state:>5} {ours['wall_s']:>7.1f} "
                      f"{theirs['wall_s']:>7.1f} {ratio(ours['wall_s'], theirs['wall_s']):>6}  "
                      f"{rate if rate is not None else 'n/a':>8} "
                      f"{their_rate if their_rate is not None else 'n/a':>7} "
                      f"{ratio(rate, their_rate):>6}  {ours['programs']!s:>8} {ours['hits']!s:>5} "
                      f"{ours['xla_s']!s:>6} {ours['trace_s']!s:>7}",
                      flush=True)


if __name__ == "__main__":
    main()
