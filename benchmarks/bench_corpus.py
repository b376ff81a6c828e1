"""The corpus programs themselves, timed beside the original TPUEstimator's figures.

Converts each program of the conformance corpus (`../shared/corpus`, or
`$KTE_CORPUS`) with `keras-tpu-estimator convert`, runs it unedited through
the corpus's own driver with the flags of its reference run
(`reference/<program>.json`, TensorFlow 2.15 + tensorflow-estimator on a
2-core CPU), and prints, per program and seed, the wall time of the
program's `main()` (compilation included) and the median `global_step/sec`
of training, beside the reference's, with the ratios:

    steps/s ratio = ours / original   (target >= 1.0)
    wall ratio    = ours / original   (target <= 1.2)

Each program runs first with an empty persistent compilation cache
("cold": every program compiled) and then once per seed with the cache the
first run filled ("warm": a program's second run on a machine, which the
library's cache makes the common case; `keras_tpu_estimator.compilation_cache`).

The reference figures were taken on another machine of the same kind; run
this on an otherwise idle machine and read the ratios with that in mind.

    python benchmarks/bench_corpus.py [--programs mnist,resnet,bert] [--seeds 1]
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
PROGRAMS = ("mnist", "resnet", "bert")


def corpus_dir():
    for candidate in (os.environ.get("KTE_CORPUS"), REPO.parent / "shared" / "corpus"):
        if candidate and (pathlib.Path(candidate) / "harness").is_dir():
            return pathlib.Path(candidate)
    raise SystemExit("No corpus: set KTE_CORPUS or check out ../shared/corpus.")


def run(args, cwd, check=True, **env):
    environment = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="2",
                       PYTHONHASHSEED="0", **{k: str(v) for k, v in env.items()})
    environment.pop("XLA_FLAGS", None)  # One device, as a user's program has.
    done = subprocess.run([sys.executable, *map(str, args)], cwd=cwd, env=environment,
                          capture_output=True, text=True, check=False)
    if check and done.returncode:
        raise SystemExit(f"{args[0]} failed:\n{(done.stdout + done.stderr)[-4000:]}")
    return done


def prepare(program, corpus, work):
    """Converts `program` and writes its data; returns `(program_dir, substitutions)`."""
    tree = "bert" if program == "bert" else "tpu"
    converted = work / tree
    if not converted.exists():
        run(["-c", "from keras_tpu_estimator.convert import cli; raise SystemExit(cli())",
             "convert", corpus / "sources" / tree, "-o", converted], cwd=REPO,
            check=False)  # Errors left only in paths the runs do not take (the tests say).
    data = work / program / "data"
    run([corpus / "harness" / program / "make_data.py", data], cwd=REPO)
    program_dir = {
        "mnist": converted / "models" / "official" / "mnist",
        "resnet": converted / "models",
        "bert": converted,
    }[program]
    init = corpus / "reference" / "trajectories" / "init" / "bert"
    substitutions = {f"$WORK/{program}/data": str(data)}
    if program == "bert":
        substitutions["$WORK/bert/data/init_ckpt"] = str(init)
    return program_dir, substitutions


def flags_of(reference, substitutions, out):
    flags = []
    for flag in reference["flags"].split():
        for placeholder in sorted(substitutions, key=len, reverse=True):
            flag = flag.replace(placeholder, substitutions[placeholder])
        flags.append(flag)
    out_flag = "--output_dir" if reference["program"] == "bert" else "--model_dir"
    return flags + [f"{out_flag}={out}"]


def run_program(program, program_dir, flags, work, seed, cache):
    report = work / f"{program}-seed{seed}.json"
    run([CORPUS / "harness" / program / "driver.py", program_dir, *flags], cwd=work,
        DRIVER_SEED=seed, DRIVER_SUMMARY_STEPS=20, DRIVER_JSON=report,
        KTE_COMPILATION_CACHE=1, KTE_COMPILATION_CACHE_DIR=cache)
    with open(report) as f:
        return json.load(f)


def median_steps_per_s(result):
    if "steps_per_s" in result:
        return result["steps_per_s"]["median"]
    rates = [v for _, v in result.get("summaries_train", {}).get("global_step/sec", [])]
    # None: the run had a single training loop (bert's iterations_per_loop is
    # 1000), whose rate TensorFlow's StepCounterHook would not write either.
    return statistics.median(rates) if rates else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--seeds", default="1", help="comma-separated DRIVER_SEED values")
    parser.add_argument("--flags", default="", help="flags added to every program's")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"{'program':8} {'seed':>4} {'cache':>5} {'wall s':>8} {'orig wall':>10} {'ratio':>6}   "
          f"{'steps/s':>8} {'orig':>6} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for program in args.programs.split(","):
            with open(CORPUS / "reference" / f"{program}.json") as f:
                reference = json.load(f)
            program_dir, substitutions = prepare(program, CORPUS, work)
            original_wall = statistics.median(r["wall_s"] for r in reference["runs"])
            original_rate = statistics.median(
                r["steps_per_s"]["median"] for r in reference["runs"])
            cache = work / program / "compilation_cache"
            for seed, state in [(seeds[0], "cold")] + [(seed, "warm") for seed in seeds]:
                out = work / program / f"out-seed{seed}-{state}"
                flags = flags_of(reference, substitutions, out) + args.flags.split()
                result = run_program(program, program_dir, flags, work, seed, cache)
                wall, rate = result["wall_s"], median_steps_per_s(result)
                rates = ("n/a", "", "") if rate is None else (
                    f"{rate:.1f}", f"{original_rate:.1f}", f"{rate / original_rate:.2f}")
                print(f"{program:8} {seed:>4} {state:>5} {wall:>8.1f} {original_wall:>10.1f} "
                      f"{wall / original_wall:>6.2f}   {rates[0]:>8} {rates[1]:>6} {rates[2]:>6}",
                      flush=True)


CORPUS = corpus_dir()

if __name__ == "__main__":
    main()
