"""CPU time per training step: a corpus program converted, against the original.

`bench_corpus.py` says how fast a program trains; this says where the
difference goes. Each program runs twice per side, with the flags of its
reference run and with `--extra` more `--train_steps`, in one process each
(the library's from a warm compilation cache, as `bench_corpus.py`'s warm
run). The difference between the two runs is what the extra steps cost,
start-up and compilation excluded:

- `wall ms/step`: wall-clock time per step;
- `CPU ms/step`: user + system CPU time per step, over all threads;
- `cores`: their ratio, the cores the step keeps busy on average.

The rows alternate between the original and the library (`--trials` times),
and the medians are printed with the ratios ours / original. A step that
costs more CPU time does more work (copies, calls, slower kernels); one that
keeps fewer cores busy leaves cores idle (work that could overlap runs one
piece after the other).

    python benchmarks/bench_step_cpu.py --original /path/to/tf215/python
        [--programs cifar_keras,mnist] [--extra 500] [--trials 3] [--work DIR]

Programs that evaluate while training (resnet, dcgan) evaluate more in their
longer run, the original as much as the library. Needs the corpus and its
sources (`bench_corpus.py` says how) and `$KTE_CORPUS_DEPS` as it does.
"""

import argparse
import contextlib
import pathlib
import re
import resource
import shlex
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_corpus  # noqa: E402


def _cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _command(program, ours, steps, label):
    """The program's reference command with `steps` training steps, writing under `label`."""
    command = program.recipe["run"].format(seed=1)
    command = re.sub(r"--train_steps=\d+", f"--train_steps={steps}", command)
    command = command.replace("seed1.json", f"{label}.json").replace("out_seed1", f"out_{label}")
    if not ours:
        return program.runner.expand(command, program.original, str(program.work))
    _, folder, _ = bench_corpus.SOURCES[program.name]
    command = command.replace(f"$WORK/{folder} ", f"{program.ours(folder)} ")
    return program.runner.expand(command, shlex.quote(sys.executable), str(program.work))


def _run(program, ours, steps, cache):
    """`(wall s, CPU s)` of one run of `steps` steps, from an empty model_dir."""
    label = f"{'ours' if ours else 'original'}-{steps}"
    for stale in program.work.glob(f"{program.name}/out_{label}"):
        shutil.rmtree(stale)
    env = bench_corpus.environment(cache if ours else None)
    cpu, wall = _cpu_seconds(), time.perf_counter()
    bench_corpus.shell(_command(program, ours, steps, label), program.corpus, program.log, env)
    return time.perf_counter() - wall, _cpu_seconds() - cpu


def per_step(program, ours, steps, extra, cache):
    """`(wall ms, CPU ms)` per step: the longer run less the shorter, over `extra`."""
    short_wall, short_cpu = _run(program, ours, steps, cache)
    long_wall, long_cpu = _run(program, ours, steps + extra, cache)
    return 1e3 * (long_wall - short_wall) / extra, 1e3 * (long_cpu - short_cpu) / extra


def _row(name, who, wall, cpu, cores):
    print(f"{name:12} {who:15} {wall:>12} {cpu:>12} {cores:>6}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--original", required=True,
                        help="a Python with TensorFlow 2.15 + tensorflow-estimator 2.15")
    parser.add_argument("--programs", default="cifar_keras,mnist")
    parser.add_argument("--extra", type=int, default=500, help="steps the longer run adds")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--work", help="a folder to keep the programs, data and logs in")
    args = parser.parse_args()
    if args.extra < 1 or args.trials < 1:
        raise SystemExit(f"--extra and --trials must be >= 1, received {args.extra} and "
                         f"{args.trials}")
    corpus = bench_corpus.corpus_dir()
    runner = bench_corpus.load_reference_runner(corpus)
    _row("program", "", "wall ms/step", "CPU ms/step", "cores")
    with contextlib.ExitStack() as stack:
        work = pathlib.Path(args.work or stack.enter_context(tempfile.TemporaryDirectory()))
        for name in args.programs.split(","):
            program = bench_corpus.Program(name, corpus, runner, work, args.original)
            program.prepare()
            steps = int(re.search(r"--train_steps=(\d+)", program.recipe["run"]).group(1))
            cache = work / name / "compilation_cache"
            _run(program, True, steps, cache)  # Fills the cache: the timed runs are warm.
            figures = {True: [], False: []}
            for _ in range(args.trials):
                for ours in (False, True):
                    figures[ours].append(per_step(program, ours, steps, args.extra, cache))
            medians = {}
            for ours, who in ((False, "original"), (True, "ours")):
                wall = statistics.median(w for w, _ in figures[ours])
                cpu = statistics.median(c for _, c in figures[ours])
                medians[ours] = (wall, cpu, cpu / wall)
                _row(name, who, f"{wall:.2f}", f"{cpu:.2f}", f"{cpu / wall:.2f}")
            _row(name, "ours/original", *(f"{a / b:.2f}" for a, b in zip(medians[True],
                                                                          medians[False])))


if __name__ == "__main__":
    main()
