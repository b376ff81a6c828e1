"""Training throughput of EstimatorModel.fit against plain Keras and plain JAX.

One run times, on the same synthetic data and MLP (784-256-256-10, SGD):

  (a) `EstimatorModel.fit`, iterations_per_loop=100;
  (e) the same with `max_resident_bytes=0`: the data larger than what is
      kept on the devices, so each loop's shuffled batches are gathered on
      the host and transferred, as for any data too large to keep resident;
  (b) `keras.Sequential.fit`, steps_per_execution=100;
  (c) a hand-written `jax.jit` + `lax.scan` loop (one shuffle gather per
      100-step chunk, transferred once);
  (d) the same hand-written loop with the arrays resident on the device and
      only indices transferred, which is what (a) does for arrays that fit
      `max_resident_bytes` (on CPU devices, when read at least twice): the
      reference for the input strategy (a) uses;
  (f) `EstimatorModel.fit` on a `tf.data.Dataset` of the same data, batched
      by tf.data (`drop_remainder=True`), shuffled by tf.data each epoch;
  (g) `keras.Sequential.fit` on the same dataset;

and prints examples/s for each, the ratios a/b, a/c, a/d, e/b, e/c and f/g
(every fit shuffles), each runner's noise (slowest over fastest trial) and
the same ratios by CPU seconds (the process's, all threads: the work done,
which a shared machine's load moves less than the wall time), then the
compile time of a 100-step loop against a 1-step loop.

It does so for each data set size (setup): by default 201 MB (500 steps of
128 per epoch, 3 epochs per timed run) and 482 MB (1200 steps, 1 epoch), the
second near the default `max_resident_bytes` (512 MiB), where a user's
arrays weigh 2.4 times more against the steps (read once, on CPU devices
they are gathered on the host, as in (e)).

    python benchmarks/bench_fit.py [--batch 128] [--data-mb 201 482 | --steps 500 1200]
                                   [--epochs N] [--trials 3]
"""

import argparse
import inspect
import os
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("KTE_COMPILATION_CACHE", "0")  # Compiles are timed cold.

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_tpu_estimator as kte  # noqa: E402

LOOP = 100
SIZES = (784, 256, 256, 10)
EXAMPLE_BYTES = SIZES[0] * 4 + 4  # float32 features, an int32 label
# Steps per epoch of the default setups: 201 MB, within the default
# `max_resident_bytes` (512 MiB) with room to spare, and 482 MB, near it.
SETUPS = (500, 1200)
RUN_STEPS = 1500  # About how many steps one timed run trains, by default.


def synthetic(num_examples, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(num_examples, SIZES[0])).astype("float32")
    y = rng.integers(0, SIZES[-1], size=num_examples).astype("int32")
    return x, y


def model_fn(features, labels, mode):
    x = features
    for i, units in enumerate(SIZES[1:-1]):
        x = kte.get_or_create_layer(
            f"dense_{i}", lambda units=units: keras.layers.Dense(units, activation="relu")
        )(x)
    logits = kte.get_or_create_layer("logits", lambda: keras.layers.Dense(SIZES[-1]))(x)
    loss = keras.ops.mean(
        keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    )
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.01))


def estimator_model(batch, loop=LOOP, **kwargs):
    config = kte.RunConfig(tpu_config=kte.TPUConfig(iterations_per_loop=loop))
    model = kte.EstimatorModel(model_fn, config=config, train_batch_size=batch, **kwargs)
    model.compile()
    return model


def keras_model():
    model = keras.Sequential(
        [keras.Input((SIZES[0],))]
        + [keras.layers.Dense(u, activation="relu") for u in SIZES[1:-1]]
        + [keras.layers.Dense(SIZES[-1])]
    )
    model.compile(
        optimizer=keras.optimizers.SGD(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        steps_per_execution=LOOP,
    )
    return model


class JaxLoop:
    """The same MLP and SGD written directly in JAX: the reference speed."""

    def __init__(self, batch, seed=0, resident=False):
        rng = np.random.default_rng(seed)
        self.params = [
            (
                jnp.asarray(rng.normal(size=(a, b)).astype("float32") * np.sqrt(2 / a)),
                jnp.zeros((b,), "float32"),
            )
            for a, b in zip(SIZES[:-1], SIZES[1:])
        ]
        self.batch = batch
        self.resident = resident

        def loss_fn(params, x, y):
            for w, b in params[:-1]:
                x = jax.nn.relu(x @ w + b)
            w, b = params[-1]
            logits = x @ w + b
            return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], 1))

        def step(params, batch):
            loss, grads = jax.value_and_grad(loss_fn)(params, *batch)
            params = jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)
            return params, loss

        def indexed_loop(params, data, index):
            return jax.lax.scan(
                lambda params, rows: step(params, (data[0][rows], data[1][rows])), params, index
            )

        self.loop = jax.jit(lambda params, chunk: jax.lax.scan(step, params, chunk), donate_argnums=0)
        self.indexed_loop = jax.jit(indexed_loop, donate_argnums=0)

    def fit(self, x, y, epochs, rng):
        steps = len(x) // self.batch
        data = jax.device_put((x, y)) if self.resident else None
        for _ in range(epochs):
            order = rng.permutation(len(x))
            for start in range(0, steps, LOOP):
                count = min(LOOP, steps - start)
                index = order[start * self.batch : (start + count) * self.batch].reshape(count, -1)
                if self.resident:
                    self.params, losses = self.indexed_loop(self.params, data, jax.device_put(index))
                else:
                    chunk = jax.device_put((np.take(x, index, 0), np.take(y, index, 0)))
                    self.params, losses = self.loop(self.params, chunk)
                np.asarray(losses)


def tf_dataset(x, y, batch):
    """The arrays as a `tf.data` input: shuffled each epoch, batched, prefetched."""
    import tensorflow as tf

    dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(8 * batch, seed=0)
    return dataset.batch(batch, drop_remainder=True).prefetch(tf.data.AUTOTUNE)


def timed(fn):
    """Wall seconds and this process's CPU seconds (all threads) of `fn()`."""
    cpu, start = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu


def compile_seconds(batch, x, y, steps):
    """XLA compile time of the programs one `fit` of a fresh model compiles,
    with loops of `steps` steps (JAX's own compile-duration events)."""
    durations = []

    def listener(event, seconds, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            durations.append(seconds)

    model = estimator_model(batch, loop=steps)
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        model.fit((x, y), epochs=1, steps_per_epoch=steps, verbose=0)
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    return sum(durations)


def steps_for(data_mb, batch):
    """Steps per epoch of a data set of about `data_mb` MB (float32 features
    and int32 labels): the data set holds `batch * steps` examples."""
    return max(1, round(data_mb * 1e6 / (batch * EXAMPLE_BYTES)))


def measure(batch, steps, epochs, trials):
    """Examples/s of runners (a)-(g) on `batch * steps` examples, each timed
    run `epochs` epochs, best of `trials` interleaved runs."""
    x, y = synthetic(batch * steps)
    rng = np.random.default_rng(0)
    ours, plain = estimator_model(batch), keras_model()
    streamed = estimator_model(batch, max_resident_bytes=0)
    reference, resident = JaxLoop(batch), JaxLoop(batch, resident=True)
    dataset = tf_dataset(x, y, batch)
    from_dataset, plain_from_dataset = estimator_model(batch), keras_model()
    runners = {
        "a": lambda epochs: ours.fit((x, y), epochs=epochs, verbose=0),
        "b": lambda epochs: plain.fit(x, y, batch_size=batch, epochs=epochs, verbose=0),
        "c": lambda epochs: reference.fit(x, y, epochs, rng),
        "d": lambda epochs: resident.fit(x, y, epochs, rng),
        "e": lambda epochs: streamed.fit((x, y), epochs=epochs, verbose=0),
        "f": lambda epochs: from_dataset.fit(dataset, epochs=epochs, verbose=0),
        "g": lambda epochs: plain_from_dataset.fit(dataset, epochs=epochs, verbose=0),
    }
    for run in runners.values():  # Compile and warm up.
        run(1)
    times = {name: [] for name in runners}
    for _ in range(trials):  # Interleaved, so drifts hit all alike.
        for name, run in runners.items():
            times[name].append(timed(lambda: run(epochs)))
    examples = epochs * steps * batch
    rate = {name: examples / min(wall for wall, _ in runs) for name, runs in times.items()}
    work = {name: min(cpu for _, cpu in runs) for name, runs in times.items()}
    return rate, work, {name: [wall for wall, _ in runs] for name, runs in times.items()}


def report(rate, work, times, batch, steps, epochs, trials, resident_bytes):
    data_mb = batch * steps * EXAMPLE_BYTES / 1e6
    if data_mb * 1e6 > resident_bytes:
        where = "NOT resident: gathered on the host"
    elif epochs < 2 and jax.default_backend() == "cpu":
        where = "read once on CPU devices, so gathered on the host"
    else:
        where = "resident"
    print(f"== {data_mb:.0f} MB of data ({batch * steps} examples; {where} by default, "
          f"max_resident_bytes={resident_bytes}): batch {batch}, {steps} steps/epoch x "
          f"{epochs} epochs, best of {trials}")
    print(f"(a) EstimatorModel.fit, iterations_per_loop={LOOP}: {rate['a']:12.0f} examples/s")
    print(f"(b) keras Sequential.fit, steps_per_execution={LOOP}: {rate['b']:9.0f} examples/s")
    print(f"(c) hand-written jax.jit + lax.scan loop:          {rate['c']:12.0f} examples/s")
    print(f"(d) hand-written loop, arrays resident on device:  {rate['d']:12.0f} examples/s")
    print(f"a/b = {rate['a'] / rate['b']:.3f}   (target >= 1.03)")
    print(f"a/c = {rate['a'] / rate['c']:.3f}   (target >= 1.0)")
    print(f"(e) EstimatorModel.fit, data not resident:       {rate['e']:12.0f} examples/s")
    print(f"a/d = {rate['a'] / rate['d']:.3f}   (same input strategy as a)")
    print(f"e/b = {rate['e'] / rate['b']:.3f}   (target >= 1.03)")
    print(f"e/c = {rate['e'] / rate['c']:.3f}   (target >= 1.0; same input strategy as e)")
    print(f"(f) EstimatorModel.fit, tf.data input:           {rate['f']:12.0f} examples/s")
    print(f"(g) keras Sequential.fit, tf.data input:         {rate['g']:12.0f} examples/s")
    print(f"f/g = {rate['f'] / rate['g']:.3f}   (target >= 1.03)")
    spread = {name: max(t) / min(t) for name, t in times.items()}
    print("noise (slowest / fastest trial): "
          + ", ".join(f"{name} {value:.2f}" for name, value in spread.items()))
    # On a shared machine the wall time follows the share of the cores each
    # run got; the CPU seconds (all threads, best trial) are the work done.
    print("CPU seconds per run: " + ", ".join(f"{name} {value:.2f}" for name, value in work.items()))
    print(f"by CPU seconds: a/b = {work['b'] / work['a']:.3f}, a/c = {work['c'] / work['a']:.3f}, "
          f"e/b = {work['b'] / work['e']:.3f}, e/c = {work['c'] / work['e']:.3f}, "
          f"f/g = {work['g'] / work['f']:.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--data-mb", type=float, nargs="+", default=None,
                        help="data set sizes in MB, one setup each (default: 201 and 482, "
                             "500 and 1200 steps of 128)")
    parser.add_argument("--steps", type=int, nargs="+", default=None,
                        help="steps per epoch, one setup each (instead of --data-mb)")
    parser.add_argument("--epochs", type=int, default=None,
                        help="epochs per timed run (default: about 1500 steps per run)")
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args()
    if args.steps and args.data_mb:
        parser.error("give --steps or --data-mb, not both")
    all_steps = args.steps or (
        [steps_for(mb, args.batch) for mb in args.data_mb] if args.data_mb else list(SETUPS)
    )
    print(f"devices: {jax.device_count()} x {jax.devices()[0].platform}")
    resident_bytes = inspect.signature(kte.EstimatorModel).parameters[
        "max_resident_bytes"].default
    first = None
    for steps in all_steps:
        epochs = args.epochs or max(1, round(RUN_STEPS / steps))
        rate, work, times = measure(args.batch, steps, epochs, args.trials)
        report(rate, work, times, args.batch, steps, epochs, args.trials, resident_bytes)
        first = first or steps
    x, y = synthetic(args.batch * first)
    long_loop = compile_seconds(args.batch, x, y, LOOP)
    short_loop = compile_seconds(args.batch, x, y, 1)
    print(f"compile: {LOOP}-step loop {long_loop:.2f}s, 1-step loop {short_loop:.2f}s, "
          f"ratio {long_loop / short_loop:.2f}")


if __name__ == "__main__":
    main()
