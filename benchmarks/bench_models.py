"""Training speed of the corpus models: the library against hand-written JAX and Keras.

One run times, side by side, on synthetic data of each program's shapes:

  (a) the corpus program's own `model_fn`, converted once with the library's
      converter (`keras-tpu-estimator convert`, into a temporary folder), its
      absl flags parsed with the reference run's values, trained by
      `kte.EstimatorModel(model_fn, config=RunConfig(tpu_config=TPUConfig(
      iterations_per_loop=L)), train_batch_size=B, params=...).fit(...)`;
  (b) the same math written by hand in JAX (`_models_jax.py`), jitted: one
      `lax.scan` per loop, or on CPU for a convolutional model a host loop
      of one jitted step, as the library chooses (jax-ml/jax#12868); the
      data resident on the device, each loop given the shuffled indices;
  (c) `keras.Model.fit` with `steps_per_execution=L`, where the model is
      simple in Keras (mnist, resnet: `_models_keras.py`).

Models: `mnist` (mnist_tpu.py's CNN, batch 64), `resnet` (resnet_main.py's
ResNet-18, 16 px, 10 classes, batch 32), `bert_tiny` (run_classifier.py with
the corpus's bert_config: 2 layers, hidden 64, 2 heads, intermediate 128,
vocab 101; seq 32, batch 32) and `bert_base` (12 layers, hidden 768, 12 heads,
intermediate 3072, vocab 30522; seq 32, batch 8, loops of 2 steps). float32.
Dropout stays on, as in the programs; resnet runs with --skip_host_call.
Given the same weights and batches with dropout off, (a) and (b) give the
same losses step by step (checked to 1e-7 over 5 steps for mnist, resnet and
bert_tiny).

For each: steady steps/s (the best of --trials fits; a fit runs one loop,
then --steps timed steps), the first loop's seconds (build, trace, compile,
run), the runner's construction seconds, XLA compile seconds and programs
compiled (JAX's backend_compile events: `first trial + later`, so anything
after the `+` is a recompile), the wall time of construction and all trials,
the memory of the compiled training program (`memory_analysis()`: arguments +
outputs + temporaries - aliased; a and b hold the data set on the device) and
the first step's loss (near ln 10 / ln 2 from a fresh start; for Keras the
mean of the first loop); then the ratios a/b and a/c. Each model runs in its
own process, one after another (the programs define the same absl flags).
The library's persistent compilation cache, which importing it turns on for
the whole process, is off unless --compilation_cache is given (it then
serves all three runners): compile figures are cold by default. JAX picks
the device; on a machine with several, (a) uses them all.

    python benchmarks/bench_models.py [--models mnist,resnet,bert_tiny,bert_base]
        [--steps N] [--loop L] [--trials T] [--batch B] [--bert_base_layers 12]
        [--seq 32] [--image_size 16] [--compilation_cache] [--json PATH]
"""

import argparse
import contextlib
import json
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile
import time
import traceback

REPO = pathlib.Path(__file__).resolve().parent.parent
# Per model: batch, steps per loop, timed steps per trial (CPU-sized).
DEFAULTS = {
    "mnist": dict(batch=64, loop=10, steps=40),
    "resnet": dict(batch=32, loop=10, steps=30),
    "bert_tiny": dict(batch=32, loop=10, steps=100),
    "bert_base": dict(batch=8, loop=2, steps=4),
}
SOURCES = {"mnist": "tpu", "resnet": "tpu", "bert_tiny": "bert", "bert_base": "bert"}
# harness/bert/make_data.py's bert_config.json, and BERT-base's.
BERT_TINY = {"vocab_size": 101, "hidden_size": 64, "num_hidden_layers": 2,
             "num_attention_heads": 2, "intermediate_size": 128, "hidden_act": "gelu",
             "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
             "max_position_embeddings": 64, "type_vocab_size": 2, "initializer_range": 0.02}
BERT_BASE = dict(BERT_TINY, vocab_size=30522, hidden_size=768, num_hidden_layers=12,
                 num_attention_heads=12, intermediate_size=3072, max_position_embeddings=512)
BERT_TRAIN_STEPS, BERT_WARMUP_STEPS = 1000, 100
RUNNERS = {"a": "library", "b": "jax", "c": "keras"}


def corpus_dir():
    for candidate in (os.environ.get("KTE_CORPUS"), REPO.parent / "shared" / "corpus"):
        if candidate and (pathlib.Path(candidate) / "harness").is_dir():
            return pathlib.Path(candidate)
    sys.exit("the conformance corpus is not here: set KTE_CORPUS or check out ../shared/corpus")


def environment(compilation_cache=False):
    """The models' processes' environment: without `compilation_cache`, the
    library's persistent compilation cache (on by default, for the whole
    process once `keras_tpu_estimator` is imported) is off, so every runner
    compiles cold."""
    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="2", PYTHONHASHSEED="0")
    if not compilation_cache:
        env["KTE_COMPILATION_CACHE"] = "0"
    paths = [str(REPO / "benchmarks"), env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    return env


def convert(source, output):
    """`keras-tpu-estimator convert SOURCE -o OUTPUT`, as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-c",
         "from keras_tpu_estimator.convert import cli; raise SystemExit(cli())",
         "convert", str(source), "-o", str(output), "--report", f"{output}.report.txt"],
        cwd=REPO, env=environment(), capture_output=True, text=True, check=False)
    if not output.is_dir():  # exit 1 says errors remain, in code paths not taken here
        sys.exit(f"converting {source} failed:\n{(done.stdout + done.stderr)[-3000:]}")
    summary = (done.stderr.strip().splitlines() or ["no errors"])[-1]
    print(f"converted {source.name} ({summary})", file=sys.stderr)


# ----------------------------------------------------------------------------
# In a model's process.


def reference_flags(program):
    with open(corpus_dir() / "reference" / f"{program}.json") as f:
        return shlex.split(json.load(f)["flags"])


def load(name, program_dir, args, work):
    """The program's model_fn and params, synthetic data, the hand-written and
    Keras models; the program's absl flags parsed as its reference run."""
    import numpy as np

    import _models_jax
    import _models_keras

    batch, rng = args.batch, np.random.default_rng(0)
    n = batch * (args.loop + args.steps)  # one epoch per trial
    out = {"keras": None}
    if name == "mnist":
        sys.path.insert(0, str(program_dir / "tpu" / "models" / "official" / "mnist"))
        import mnist_tpu

        mnist_tpu.FLAGS([sys.argv[0]] + reference_flags("mnist")
                        + [f"--batch_size={batch}", f"--iterations={args.loop}"])
        rate = mnist_tpu.FLAGS.learning_rate
        out.update(model_fn=mnist_tpu.model_fn, params={"data_dir": ""},
                   data=(rng.uniform(0, 255, (n, 28, 28, 1)).astype("float32"),
                         rng.integers(0, 10, n).astype("int32")),
                   hand=_models_jax.mnist(rate), keras=lambda: _models_keras.mnist(rate))
    elif name == "resnet":
        models = program_dir / "tpu" / "models"
        sys.path[:0] = [str(models), str(models / "official" / "resnet")]
        import resnet_main

        resnet_main.FLAGS([sys.argv[0]] + reference_flags("resnet") + [
            f"--train_batch_size={batch}", f"--iterations_per_loop={args.loop}",
            f"--image_size={args.image_size}", "--skip_host_call=true", f"--model_dir={work}"])
        params = resnet_main.params_dict.ParamsDict(
            resnet_main.resnet_config.RESNET_CFG, resnet_main.resnet_config.RESNET_RESTRICTIONS)
        params = resnet_main.flags_to_params.override_params_from_input_flags(
            params, resnet_main.FLAGS)
        params.validate()
        params.lock()
        params = params.as_dict()  # as resnet_main.main() builds them
        size = args.image_size
        out.update(model_fn=resnet_main.resnet_model_fn, params=params,
                   data=(rng.uniform(0, 255, (n, size, size, 3)).astype("float32"),
                         rng.integers(0, params["num_label_classes"], n).astype("int32")),
                   hand=_models_jax.resnet(params), keras=lambda: _models_keras.resnet(params))
    else:
        sys.path.insert(0, str(program_dir / "bert"))
        import modeling
        import run_classifier

        run_classifier.FLAGS([sys.argv[0]] + reference_flags("bert") + [
            f"--train_batch_size={batch}", f"--max_seq_length={args.seq}"])
        config = BERT_TINY if name == "bert_tiny" else dict(
            BERT_BASE, num_hidden_layers=args.bert_base_layers)
        rate = run_classifier.FLAGS.learning_rate
        model_fn = run_classifier.model_fn_builder(
            modeling.BertConfig.from_dict(config), num_labels=2, init_checkpoint=None,
            learning_rate=rate, num_train_steps=BERT_TRAIN_STEPS,
            num_warmup_steps=BERT_WARMUP_STEPS, use_tpu=False, use_one_hot_embeddings=False)
        seq = args.seq
        mask = np.arange(seq) < rng.integers(seq // 4, seq + 1, (n, 1))
        ids = np.where(mask, rng.integers(5, config["vocab_size"], (n, seq)), 0)
        ids[:, 0] = 2  # [CLS]
        features = {"input_ids": ids.astype("int32"), "input_mask": mask.astype("int32"),
                    "segment_ids": np.zeros((n, seq), "int32"),
                    "label_ids": rng.integers(0, 2, n).astype("int32"),
                    "is_real_example": np.ones(n, "int32")}
        out.update(model_fn=model_fn, params={}, data=features,
                   hand=_models_jax.bert(config, rate, BERT_TRAIN_STEPS, BERT_WARMUP_STEPS))
    return out


@contextlib.contextmanager
def failures(record, key="error"):
    """Records an exception of the block in `record[key]` (and prints it)."""
    try:
        yield
    except Exception as e:  # noqa: BLE001 - one runner failing leaves the others
        traceback.print_exc()
        record[key] = f"{type(e).__name__}: {e}"[:300]


def child(args):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    import jax
    import keras

    import _runners

    keras.utils.set_random_seed(0)
    compiles = _runners.CompileLog()
    with tempfile.TemporaryDirectory() as work:
        spec = load(args.child, pathlib.Path(args.program_dir), args, work)
        makers = {
            "a": lambda: _runners.LibraryRunner(spec["model_fn"], spec["params"], spec["data"],
                                                args.batch, args.loop),
            "b": lambda: _runners.HandRunner(spec["hand"], spec["data"], args.batch, args.loop),
        }
        if spec["keras"] is not None:
            makers["c"] = lambda: _runners.KerasRunner(spec["keras"](), spec["data"], args.batch,
                                                       args.loop)
        runners, results = {}, {}
        for name, make in makers.items():
            results[name] = {"trials": []}
            with compiles.into(name), failures(results[name]):
                started = time.perf_counter()
                runners[name] = make()
                results[name]["build_s"] = time.perf_counter() - started
        for t in range(args.trials):  # interleaved, so drifts hit all alike
            for name, runner in list(runners.items()):
                with compiles.into(name), failures(results[name]):
                    results[name]["trials"].append(_runners.trial(runner, args.loop, args.steps))
                    print(f"{args.child} {name} trial {t}: {results[name]['trials'][-1]}",
                          file=sys.stderr)
                if "error" in results[name]:
                    del runners[name]
        for name, runner in runners.items():
            r = results[name]
            r.update(compile_s=compiles.seconds(name), compiles=compiles.counts(name),
                     kind=runner.kind, **_runners.summary(r["trials"]))
            r["wall_s"] += r["build_s"]
            r["memory_bytes"] = None
            with failures(r, "memory_error"):
                stats = runner.memory()
                r["memory_bytes"] = _runners.memory_bytes(stats)
                r["memory_stats"] = {k: getattr(stats, k) for k in dir(stats)
                                     if k.endswith("_bytes")}
    device = jax.devices()[0]
    print("RESULT " + json.dumps({
        "model": args.child, "batch": args.batch, "loop": args.loop, "steps": args.steps,
        "trials": args.trials, "devices": f"{jax.device_count()} x {device.platform} "
                                          f"({device.device_kind})",
        "versions": f"jax {jax.__version__}, keras {keras.__version__}",
        "compilation_cache": jax.config.jax_compilation_cache_dir,
        "runners": results}))


# ----------------------------------------------------------------------------
# The report.


def fmt(value, spec):
    return format(value, spec) if value is not None else "-"


def ratio(a, b):
    return a / b if a is not None and b else None


def report(results):
    first = results[0]
    print(f"\ndevices: {first['devices']}; {first['versions']}; best of {first['trials']} trials; "
          f"steady = the loops after each fit's first; persistent compilation cache: "
          f"{first['compilation_cache'] or 'off'}")
    head = (f"{'model':10} {'run':10} {'loop':>5} {'batch':>5} {'steps/s':>8} {'1st loop s':>10} "
            f"{'build s':>7} {'compile s':>9} {'compiles':>9} {'wall s':>7} {'mem MiB':>7} "
            f"{'loss@1':>7}")
    print(head + "\n" + "-" * len(head))
    for res in results:
        runs = {k: r for k, r in res["runners"].items() if "error" not in r}
        label = res["model"]
        for key, r in res["runners"].items():
            row, label = f"{label:10} {key + ' ' + RUNNERS[key]:10}", ""
            if "error" in r:
                print(f"{row} failed: {r['error']}")
                continue
            n = r["compiles"]
            print(f"{row} "
                  f"{r['kind']:>5} {res['batch']:5d} {r['steps_per_s']:8.2f} "
                  f"{r['first_loop_s']:10.2f} {r['build_s']:7.2f} {r['compile_s']:9.2f} "
                  f"{f'{n[0]}+{sum(n[1:])}':>9} {r['wall_s']:7.1f} "
                  f"{fmt(r['memory_bytes'] and r['memory_bytes'] / 2**20, '7.1f'):>7} "
                  f"{r['first_loss']:7.4f}")
        a = runs.get("a")
        parts = []
        for key in ("b", "c"):
            if a and key in runs:
                o = runs[key]
                parts.append(
                    f"a/{key}: steps/s {fmt(ratio(a['steps_per_s'], o['steps_per_s']), '.2f')}, "
                    f"compile {fmt(ratio(a['compile_s'], o['compile_s']), '.2f')}, "
                    f"wall {fmt(ratio(a['wall_s'], o['wall_s']), '.2f')}, "
                    f"memory {fmt(ratio(a['memory_bytes'], o['memory_bytes']), '.2f')}")
        print(f"{'':10} {'   '.join(parts)}")
        for key, r in runs.items():
            if r.get("memory_error"):
                print(f"{'':10} ({key}: no memory analysis: {r['memory_error']})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(DEFAULTS))
    parser.add_argument("--steps", type=int, help="timed steps per trial (a multiple of --loop)")
    parser.add_argument("--loop", type=int, help="iterations_per_loop = steps_per_execution")
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--batch", type=int)
    parser.add_argument("--bert_base_layers", type=int, default=12)
    parser.add_argument("--seq", type=int, default=32, help="BERT sequence length")
    parser.add_argument("--image_size", type=int, default=16, help="ResNet input size")
    parser.add_argument("--compilation_cache", action="store_true",
                        help="keep the library's persistent compilation cache on (for all runners)")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--program_dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    models = args.models.split(",")
    unknown = sorted(set(models) - set(DEFAULTS))
    if unknown:
        parser.error(f"unknown models {unknown}; choose from {list(DEFAULTS)}")
    results = []
    with tempfile.TemporaryDirectory(prefix="bench_models_") as work:
        work = pathlib.Path(work)
        for source in sorted({SOURCES[m] for m in models}):
            convert(corpus_dir() / "sources" / source, work / source)
        for model in models:
            given = {k: getattr(args, k) for k in ("batch", "loop", "steps") if getattr(args, k)}
            settings = dict(DEFAULTS[model], **given)
            settings["steps"] = -(-settings["steps"] // settings["loop"]) * settings["loop"]
            command = [sys.executable, __file__, "--child", model, "--program_dir", str(work),
                       "--trials", str(args.trials),
                       "--bert_base_layers", str(args.bert_base_layers),
                       "--seq", str(args.seq), "--image_size", str(args.image_size)]
            command += [f"--{k}={v}" for k, v in settings.items()]
            print(f"running {model} ({settings})", file=sys.stderr)
            done = subprocess.run(command, env=environment(args.compilation_cache),
                                  stdout=subprocess.PIPE, text=True, check=False)
            lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
            if done.returncode or not lines:
                print(f"{model} failed (exit {done.returncode})", file=sys.stderr)
                continue
            results.append(json.loads(lines[-1][len("RESULT "):]))
    if results:
        report(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
