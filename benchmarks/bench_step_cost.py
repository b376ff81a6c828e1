"""What one compiled training step costs: the library against a hand-written JAX step.

Reads, from the compiled programs (`jit(step).lower(...).compile()`), the
number of `convolution` instructions in the optimized HLO (`as_text()`) and
XLA's FLOP estimate (`cost_analysis()["flops"]`) of one training step of a
corpus model: (a) the library's TRAIN step (`engine.steps.Steps.train`, the
converted `model_fn` as `bench_models.py` builds it, whatever loop wraps it)
and (b) `bench_models.py`'s hand-written JAX step of the same math. For
resnet (TF1 MomentumOptimizer with batch-norm UPDATE_OPS, trained by
assignment) the two should match: see `train_ops`.

    python benchmarks/bench_step_cost.py [--models resnet,mnist] [--batch 32]
        [--image_size 16]

Needs the conformance corpus as `bench_models.py` does (`$KTE_CORPUS`).
The library's im2col lowering of small CPU convolutions is off
(`KTE_CPU_CONV=0`, as the hand-written step convolves with XLA's
convolution) unless the environment sets `KTE_CPU_CONV`.
"""

import argparse
import os
import pathlib
import re
import sys
import tempfile

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("KTE_COMPILATION_CACHE", "0")
# The hand-written step convolves with `lax.conv_general_dilated`: the library's
# CPU lowerings of convolutions (`_backend.routing`) are off unless asked for.
os.environ.setdefault("KTE_CPU_CONV", "0")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))


def cost(compiled):
    """`(convolutions, GFLOP)` of a compiled program."""
    analysis = compiled.cost_analysis()
    analysis = analysis[0] if isinstance(analysis, (list, tuple)) else analysis
    return len(re.findall(r" convolution\(", compiled.as_text())), analysis["flops"] / 1e9


def library_step_cost(spec, batch, loop):
    """The cost of the library's TRAIN step, built by one loop of `fit`."""
    import jax

    import _runners
    import keras_tpu_estimator as kte
    from keras_tpu_estimator.engine import state as state_lib
    from keras_tpu_estimator.engine import steps as steps_lib

    runner = _runners.LibraryRunner(spec["model_fn"], spec["params"], spec["data"], batch, loop)
    runner.run(loop, lambda losses: None)
    model = runner.model
    parts = model._parts  # private: the library gives no handle on its step
    state = state_lib.read(parts.variables(kte.ModeKeys.TRAIN))
    x, y = spec["data"] if isinstance(spec["data"], tuple) else (spec["data"], None)
    first = jax.tree.map(lambda a: a[:batch], (x, y))
    step = jax.jit(steps_lib.Steps(model._program, parts).train)
    return cost(step.lower(state, first).compile())


def hand_step_cost(spec, batch):
    """The cost of the hand-written JAX step (`_models_jax.HandLoop`, one step)."""
    from _models_jax import HandLoop

    hand = HandLoop(spec["hand"], spec["data"], batch, 1, device_loop="host")
    hand.run(1, lambda losses: None)
    return cost(hand.program.lower(*hand.specs).compile())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="resnet")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--image_size", type=int, default=16)
    args = parser.parse_args()
    import bench_models
    import keras

    with tempfile.TemporaryDirectory(prefix="bench_step_cost_") as work:
        work = pathlib.Path(work)
        for model in args.models.split(","):
            source = bench_models.SOURCES[model]
            if not (work / source).is_dir():
                bench_models.convert(bench_models.corpus_dir() / "sources" / source, work / source)
            keras.utils.set_random_seed(0)
            settings = argparse.Namespace(batch=args.batch, loop=1, steps=1,
                                          image_size=args.image_size, seq=32,
                                          bert_base_layers=12)
            spec = bench_models.load(model, work, settings, work / f"{model}_model")
            a = library_step_cost(spec, args.batch, 1)
            b = hand_step_cost(spec, args.batch)
            print(f"{model}: library {a[0]} convolutions, {a[1]:.3f} GFLOP/step; "
                  f"hand-written {b[0]} convolutions, {b[1]:.3f} GFLOP/step; "
                  f"FLOP ratio {a[1] / b[1]:.3f}")


if __name__ == "__main__":
    main()
