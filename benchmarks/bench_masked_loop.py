"""What skipping steps costs a loop: `masked_scan` against a plain `lax.scan`.

A scan program of the library takes the number of steps to run, so that a
short last loop (or one cut at a checkpoint step) runs padded through the
program already compiled (`keras_tpu_estimator.engine.loop`): a loop with a
dynamic trip count. This times, in one run and on the default device, a
training step of two MLPs (small and large) in a 100-step loop both ways,
and prints ms/step and the ratio masked/plain (1.00 means free). Best of
`--trials`, interleaved.

    python benchmarks/bench_masked_loop.py [--trials 3]
"""

import argparse
import os
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("KTE_COMPILATION_CACHE", "0")  # Compiles are timed cold.

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from keras_tpu_estimator.engine.loop import masked_scan  # noqa: E402

LOOP = 100
SHAPES = ((256, 3, 128), (1024, 8, 256))  # (width, depth, batch)


def mlp_step(width, depth):
    keys = jax.random.split(jax.random.PRNGKey(0), depth)
    params = [jax.random.normal(k, (width, width)) * width**-0.5 for k in keys]

    def loss(params, x):
        for w in params:
            x = jnp.tanh(x @ w)
        return jnp.mean(x**2)

    def step(params, x):
        value, grads = jax.value_and_grad(loss)(params, x)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), value

    return params, step


def seconds_per_step(program, params, xs, extra, trials):
    params = jax.tree.map(jnp.copy, params)
    params, out = program(params, xs, *extra)  # Compiles.
    jax.block_until_ready(out)
    best = float("inf")
    for _ in range(trials):
        start = time.perf_counter()
        params, out = program(params, xs, *extra)
        jax.block_until_ready(out)
        best = min(best, (time.perf_counter() - start) / LOOP)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args()
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), {LOOP}-step loops")
    for width, depth, batch in SHAPES:
        params, step = mlp_step(width, depth)
        xs = jnp.asarray(np.random.default_rng(0).random((LOOP, batch, width), "float32"))
        plain = jax.jit(lambda p, xs: jax.lax.scan(step, p, xs), donate_argnums=0)
        masked = jax.jit(lambda p, xs, n: masked_scan(step, p, xs, n), donate_argnums=0)
        times = {"plain": [], "masked": []}
        for _ in range(args.trials):
            times["plain"].append(seconds_per_step(plain, params, xs, (), 1))
            times["masked"].append(seconds_per_step(masked, params, xs, (np.int32(LOOP),), 1))
        a, b = min(times["plain"]), min(times["masked"])
        print(f"MLP {width}x{depth}, batch {batch}: plain {a * 1e3:.3f} ms/step, "
              f"masked {b * 1e3:.3f} ms/step, masked/plain {b / a:.3f}")


if __name__ == "__main__":
    main()
