"""Convolutions on XLA:CPU: `lax.conv` against im2col lowerings, per shape and per network.

For every convolution of the corpus's mnist CNN (batch 64, 28x28) and
ResNet-18 (batch 32, 16x16 images, the program's fixed padding for strided
convolutions), times forward + backward (gradients for input and kernel;
kernel only for a first layer) of

- `lax_nhwc`: `jax.lax.conv_general_dilated`, NHWC / HWIO (what Keras runs);
- `lax_nchw`: the same in NCHW / OIHW;
- `im2col`: `keras_tpu_estimator._backend.im2col.im2col_conv` (shifted windows
  concatenated, taps that only read padding dropped, one matrix product);
- `tf_kernels`: TensorFlow's oneDNN kernels called from the jitted function
  (`keras_tpu_estimator._backend.tf_kernels.conv`);
- `patches`: `jax.lax.conv_general_dilated_patches` + one matrix product;
- `tap_sum`: one matrix product per kernel tap, summed;

then the issue's table: three convolutions of real programs, forward and
both gradients, as GFLOP/s of XLA:CPU, of TensorFlow's own oneDNN kernels
(a `tf.function`, TensorFlow tensors) and of the library (what Keras's `conv`
runs once `keras_tpu_estimator` is imported), beside the machine's fp32 peak;

then one SGD training step of each whole network with `lax.conv` and
`lax.reduce_window` max pooling (what Keras runs: `lax`), with the library's
convolution routing (`conv_only`: im2col at small outputs, TensorFlow's kernels
elsewhere), with it and `_backend.tiled_pool`'s max pool (what the library
runs: `dispatch`), with a looser im2col rule (`rule16`) and with im2col
everywhere.
Times are the best of several interleaved trials; ratios are taken inside
one process. With `--flags`, the same runs again in child processes under
each XLA_FLAGS variant (flags are read once per process), and their times
are compared with the default process's (across processes: noisier).

    .venv/bin/python benchmarks/bench_conv.py            # shapes + networks
    .venv/bin/python benchmarks/bench_conv.py --flags    # + XLA:CPU flag variants
    .venv/bin/python benchmarks/bench_conv.py --skip-shapes --trials 9   # networks only
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

FLAG_VARIANTS = {  # all exist in jaxlib 0.10.2 (an unknown flag aborts the process)
    "onednn": "--xla_cpu_use_onednn=true",
    "onednn_custom_call": "--xla_cpu_experimental_onednn_custom_call=true",
    "no_xnnpack": "--xla_cpu_use_xnnpack=false",
    "xnn_fusion_dot": "--xla_cpu_experimental_xnn_fusion_type=dot",
    "no_multi_thread_eigen": "--xla_cpu_multi_thread_eigen=false",
    "ynn_dot_reduce": "--xla_cpu_experimental_ynn_fusion_type=dot,reduce",
}

# (program, name, batch, input size (after fixed padding), in, out, kernel, stride, padding, first)
SHAPES = [
    ("mnist", "conv1 5x5 1->32 @28", 64, 28, 1, 32, 5, 1, "SAME", True),
    ("mnist", "conv2 5x5 32->32 @14", 64, 14, 32, 32, 5, 1, "SAME", False),
    ("resnet", "stem 7x7/2 3->64 @16", 32, 22, 3, 64, 7, 2, "VALID", True),
    ("resnet", "3x3 64->64 @4", 32, 4, 64, 64, 3, 1, "SAME", False),
    ("resnet", "1x1/2 64->128 @4", 32, 4, 64, 128, 1, 2, "VALID", False),
    ("resnet", "3x3/2 64->128 @4", 32, 6, 64, 128, 3, 2, "VALID", False),
    ("resnet", "3x3 128->128 @2", 32, 2, 128, 128, 3, 1, "SAME", False),
    ("resnet", "1x1/2 128->256 @2", 32, 2, 128, 256, 1, 2, "VALID", False),
    ("resnet", "3x3/2 128->256 @2", 32, 4, 128, 256, 3, 2, "VALID", False),
    ("resnet", "3x3 256->256 @1", 32, 1, 256, 256, 3, 1, "SAME", False),
    ("resnet", "1x1/2 256->512 @1", 32, 1, 256, 512, 1, 2, "VALID", False),
    ("resnet", "3x3/2 256->512 @1", 32, 3, 256, 512, 3, 2, "VALID", False),
    ("resnet", "3x3 512->512 @1", 32, 1, 512, 512, 3, 1, "SAME", False),
    # Not in the programs: output sizes between 2x2 and 4x4, to place the crossover.
    ("probe", "3x3 128->128 @3", 32, 3, 128, 128, 3, 1, "SAME", False),
    ("probe", "3x3 256->256 @3", 32, 3, 256, 256, 3, 1, "SAME", False),
    ("probe", "3x3 256->256 @2", 32, 2, 256, 256, 3, 1, "SAME", False),
    ("probe", "1x1 256->256 @4", 32, 4, 256, 256, 1, 1, "SAME", False),
]


def _setup():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    import jax  # noqa: PLC0415

    jax.config.update("jax_platforms", "cpu")
    return jax


def _ready(out):
    """Waits for `out`: JAX values, or a list of TensorFlow tensors."""
    import jax  # noqa: PLC0415

    leaves = jax.tree.leaves(out)
    if leaves and not isinstance(leaves[0], jax.Array):
        return [o.numpy() for o in leaves]
    return jax.block_until_ready(out)


def _time(fns, args, trials, min_s=0.05):
    """Best seconds per call of each fn, trials interleaved across fns."""
    reps = {}
    for name, fn in fns.items():
        _ready(fn(*args[name]))  # compile
        start = time.perf_counter()
        _ready(fn(*args[name]))
        once = max(time.perf_counter() - start, 1e-6)
        reps[name] = max(1, int(min_s / once))
    best = {name: float("inf") for name in fns}
    for _ in range(trials):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(reps[name]):
                out = fn(*args[name])
            _ready(out)
            best[name] = min(best[name], (time.perf_counter() - start) / reps[name])
    return best


def _conv_methods():
    import jax  # noqa: PLC0415
    from jax import lax  # noqa: PLC0415
    from jax import numpy as jnp  # noqa: PLC0415

    from keras_tpu_estimator._backend import im2col as _im2col  # noqa: PLC0415
    from keras_tpu_estimator._backend import tf_kernels  # noqa: PLC0415

    def lax_nhwc(x, w, stride, padding):
        return lax.conv_general_dilated(x, w, (stride, stride), padding,
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def lax_nchw(x, w, stride, padding):  # x NCHW, w OIHW
        return lax.conv_general_dilated(x, w, (stride, stride), padding,
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))

    def im2col(x, w, stride, padding):
        return _im2col.im2col_conv(x, w, stride, padding.lower())

    def tf_kernel(x, w, stride, padding):
        return tf_kernels.conv(x, w, stride, padding.lower())

    def patches(x, w, stride, padding):
        kh, kw, cin, cout = w.shape
        p = lax.conv_general_dilated_patches(
            x, (kh, kw), (stride, stride), padding,
            dimension_numbers=("NHWC", "HWIO", "NHWC"))  # features ordered (c, kh, kw)
        w2 = jnp.transpose(w, (2, 0, 1, 3)).reshape(cin * kh * kw, cout)
        return (p.reshape(-1, cin * kh * kw) @ w2).reshape(*p.shape[:-1], cout)

    def tap_sum(x, w, stride, padding):
        kh, kw, cin, cout = w.shape
        pads = lax.padtype_to_pads(x.shape[1:3], (kh, kw), (stride, stride), padding)
        xp = jnp.pad(x, ((0, 0), *pads, (0, 0)))
        ho = (xp.shape[1] - kh) // stride + 1
        wo = (xp.shape[2] - kw) // stride + 1
        out = 0.0
        for i in range(kh):
            for j in range(kw):
                win = xp[:, i:i + (ho - 1) * stride + 1:stride, j:j + (wo - 1) * stride + 1:stride]
                out = out + jnp.einsum("nhwc,co->nhwo", win, w[i, j])
        return out

    return {"lax_nhwc": lax_nhwc, "lax_nchw": lax_nchw, "im2col": im2col,
            "tf_kernels": tf_kernel, "patches": patches, "tap_sum": tap_sum}, jax, jnp


def bench_shapes(trials, methods=None):
    methods_all, jax, jnp = _conv_methods()
    methods = methods or list(methods_all)
    rng = np.random.default_rng(0)
    rows = []
    for program, name, batch, size, cin, cout, k, stride, padding, first in SHAPES:
        x = jnp.asarray(rng.standard_normal((batch, size, size, cin)), jnp.float32)
        w = jnp.asarray(rng.standard_normal((k, k, cin, cout)) * 0.1, jnp.float32)
        out_shape = methods_all["lax_nhwc"](x, w, stride, padding).shape
        cot = jnp.asarray(rng.standard_normal(out_shape), jnp.float32)
        fns, args = {}, {}
        for m in methods:
            conv = methods_all[m]
            nchw = m == "lax_nchw"

            def loss(x_, w_, cot_, conv=conv, nchw=nchw):
                return jnp.sum(conv(x_, w_, stride, padding) * cot_)

            argnums = (1,) if first else (0, 1)
            fns[m] = jax.jit(jax.grad(loss, argnums=argnums))
            if nchw:
                args[m] = (jnp.transpose(x, (0, 3, 1, 2)), jnp.transpose(w, (3, 2, 0, 1)),
                           jnp.transpose(cot, (0, 3, 1, 2)))
            else:
                args[m] = (x, w, cot)
        best = _time(fns, args, trials)
        rows.append({"program": program, "shape": name, "out_hw": out_shape[1],
                     "ms": {m: best[m] * 1e3 for m in methods}})
    return rows


# --- the table: GFLOP/s of XLA:CPU, TensorFlow's oneDNN and the library ---

TABLE = [  # (name, batch, size, in, out, kernel): stride 1, SAME, as the programs run them
    ("5x5 32->32 @14x14, batch 64 (mnist)", 64, 14, 32, 32, 5),
    ("3x3 64->64 @32x32, batch 32 (Wide-ResNet)", 32, 32, 64, 64, 3),
    ("3x3 128->128 @16x16, batch 32 (ResNet)", 32, 16, 128, 128, 3),
]


def fp32_peak_gflops():
    """cores x fp32 FMA lanes x 2 FMA units x 2 (an FMA is two FLOPs) x clock.

    The clock is /proc/cpuinfo's current one (turbo may exceed it); two FMA
    units per core is what AVX-512 server cores have. None if unknown.
    """
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
    except OSError:
        return None, "no /proc/cpuinfo"
    flags = next((ln for ln in info.splitlines() if ln.startswith("flags")), "")
    lanes = 16 if " avx512f" in flags else 8 if " avx2" in flags else 4
    mhz = [float(ln.split(":")[1]) for ln in info.splitlines() if ln.startswith("cpu MHz")]
    if not mhz:
        return None, "no clock in /proc/cpuinfo"
    cores = os.cpu_count()
    ghz = max(mhz) / 1e3
    return (cores * lanes * 2 * 2 * ghz,
            f"{cores} cores x {lanes} lanes x 2 FMA units x 2 x {ghz:.2f} GHz")


def bench_table(trials):
    import jax  # noqa: PLC0415
    import keras  # noqa: PLC0415
    import tensorflow as tf  # noqa: PLC0415
    from jax import lax  # noqa: PLC0415
    from jax import numpy as jnp  # noqa: PLC0415

    import keras_tpu_estimator  # noqa: F401, PLC0415  (routes Keras's conv)
    from keras_tpu_estimator._backend import lowering  # noqa: PLC0415

    rng = np.random.default_rng(0)
    rows = []
    for name, batch, size, cin, cout, k in TABLE:
        x = rng.standard_normal((batch, size, size, cin)).astype(np.float32)
        w = (rng.standard_normal((k, k, cin, cout)) * 0.1).astype(np.float32)

        # The gradients of sum(y**2 / 2), whose cotangent is the forward's y: the
        # backward waits for the forward, as in a network (the cotangent of a
        # constant would let TensorFlow run the three ops at once, and let
        # compilers drop the forward).
        def xla_conv(a, b):
            return lax.conv_general_dilated(
                a, b, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

        def library_conv(a, b):
            return keras.ops.conv(a, b, padding="same")

        def forward_and_grads(conv):
            def run(a, b):
                y, vjp = jax.vjp(conv, a, b)
                return (y, *vjp(y))
            return jax.jit(run).lower(x, w).compile()

        with lowering.xla_only():
            xla = forward_and_grads(xla_conv)
        library = forward_and_grads(library_conv)
        tx, tw = tf.constant(x), tf.constant(w)

        @tf.function
        def onednn():
            with tf.GradientTape() as tape:
                tape.watch([tx, tw])
                y = tf.nn.conv2d(tx, tw, 1, "SAME")
            return [y, *tape.gradient(y, [tx, tw], output_gradients=y)]

        jx, jw = jnp.asarray(x), jnp.asarray(w)
        best = _time({"xla": xla, "tf_onednn": onednn, "library": library},
                     {"xla": (jx, jw), "tf_onednn": (), "library": (jx, jw)}, trials)
        flops = 3 * 2 * batch * size * size * cin * cout * k * k
        rows.append({"shape": name, "ms": {m: t * 1e3 for m, t in best.items()},
                     "gflops": {m: flops / t / 1e9 for m, t in best.items()}})
    return rows


def _print_table(rows):
    peak, how = fp32_peak_gflops()
    print("\n## one convolution, forward and both gradients: ms and GFLOP/s (best of trials)")
    print(f"## fp32 peak: {peak:.0f} GFLOP/s ({how})" if peak else f"## fp32 peak: unknown ({how})")
    print(f"{'shape':44s} {'XLA:CPU':>16s} {'TF oneDNN':>16s} {'library':>16s}   library/TF")
    for r in rows:
        ms, gf = r["ms"], r["gflops"]
        cells = " ".join(f"{ms[m]:6.1f} ms {gf[m]:4.0f} GF" for m in ("xla", "tf_onednn", "library"))
        print(f"{r['shape']:44s} {cells}   {gf['library'] / gf['tf_onednn']:.2f}x")


# --- whole networks (one SGD step; plain JAX so that only the convolution differs) ---


def _networks(conv_kind, tiled_pool):
    import jax  # noqa: PLC0415
    from jax import lax  # noqa: PLC0415
    from jax import numpy as jnp  # noqa: PLC0415

    from keras_tpu_estimator._backend import im2col as _im2col  # noqa: PLC0415
    from keras_tpu_estimator._backend import routing  # noqa: PLC0415
    from keras_tpu_estimator._backend import tiled_pool as _cpu_pool  # noqa: PLC0415

    def conv(x, w, stride, padding):
        if conv_kind == "lax":
            return lax.conv_general_dilated(x, w, (stride, stride), padding,
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))
        if conv_kind == "im2col":
            return _im2col.im2col_conv(x, w, stride, padding.lower())
        dispatch = routing.make_conv(
            lambda i, k, strides, padding, data_format, dilation_rate: lax.conv_general_dilated(
                i, k, (strides, strides), padding.upper(),
                dimension_numbers=("NHWC", "HWIO", "NHWC")))
        return dispatch(x, w, stride, padding.lower(), "channels_last", 1)

    def maxpool(x, k, s, padding):
        if tiled_pool and _cpu_pool.use_tiled(x, k, s, padding.lower()):
            return _cpu_pool.tiled_max_pool(x, k, padding.lower())
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, k, k, 1), (1, s, s, 1), padding)

    def xent(logits, labels):
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(labels, 10), -1))

    def mnist_init(rng):
        shapes = [(5, 5, 1, 32), (32,), (5, 5, 32, 32), (32,), (7 * 7 * 32, 1024), (1024,),
                  (1024, 10), (10,)]
        return [jnp.asarray(rng.standard_normal(s) * 0.05, jnp.float32) for s in shapes]

    def mnist_loss(p, x, y):
        h = jax.nn.relu(conv(x, p[0], 1, "SAME") + p[1])
        h = maxpool(h, 2, 2, "SAME")
        h = jax.nn.relu(conv(h, p[2], 1, "SAME") + p[3])
        h = maxpool(h, 2, 2, "SAME").reshape(x.shape[0], -1)
        h = jax.nn.relu(h @ p[4] + p[5])
        return xent(h @ p[6] + p[7], y)

    def fixed_conv(x, w, stride):
        k = w.shape[0]
        if stride > 1:
            lo = (k - 1) // 2
            x = jnp.pad(x, ((0, 0), (lo, k - 1 - lo), (lo, k - 1 - lo), (0, 0)))
            return conv(x, w, stride, "VALID")
        return conv(x, w, 1, "SAME")

    def bn(x, g, b):
        mean = jnp.mean(x, (0, 1, 2))
        var = jnp.var(x, (0, 1, 2))
        return (x - mean) * lax.rsqrt(var + 1e-5) * g + b

    def resnet_init(rng):
        def conv_p(k, i, o):
            return {"w": jnp.asarray(rng.standard_normal((k, k, i, o)) * np.sqrt(2 / (k * k * i)),
                                     jnp.float32),
                    "g": jnp.ones((o,)), "b": jnp.zeros((o,))}
        p = {"stem": conv_p(7, 3, 64), "blocks": []}
        cin = 64
        for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
            for i in range(2):
                s = stride if i == 0 else 1
                blk = {"a": conv_p(3, cin, cout), "b": conv_p(3, cout, cout)}
                if s != 1 or cin != cout:
                    blk["proj"] = conv_p(1, cin, cout)
                p["blocks"].append((blk, s))
                cin = cout
        p["fc"] = jnp.asarray(rng.standard_normal((512, 10)) * 0.01, jnp.float32)
        strides = [s for _, s in p["blocks"]]
        p["blocks"] = [b for b, _ in p["blocks"]]
        return p, strides

    def resnet_loss(p, x, y, strides):
        def cbr(h, q, s, relu=True):
            h = bn(fixed_conv(h, q["w"], s), q["g"], q["b"])
            return jax.nn.relu(h) if relu else h
        h = cbr(x, p["stem"], 2)
        h = maxpool(h, 3, 2, "SAME")
        for blk, s in zip(p["blocks"], strides):
            short = cbr(h, blk["proj"], s, relu=False) if "proj" in blk else h
            h = jax.nn.relu(cbr(cbr(h, blk["a"], s), blk["b"], 1, relu=False) + short)
        return xent(jnp.mean(h, (1, 2)) @ p["fc"], y)

    def sgd_step(loss):
        def step(p, *batch):
            value, grads = jax.value_and_grad(loss)(p, *batch)
            return jax.tree.map(lambda a, g: a - 0.01 * g, p, grads), value
        return step

    rng = np.random.default_rng(0)
    mnist_p = mnist_init(rng)
    mx = jnp.asarray(rng.random((64, 28, 28, 1)), jnp.float32)
    my = jnp.asarray(rng.integers(0, 10, 64))
    resnet_p, strides = resnet_init(rng)
    rx = jnp.asarray(rng.standard_normal((32, 16, 16, 3)), jnp.float32)
    ry = jnp.asarray(rng.integers(0, 10, 32))
    return {
        "mnist": (jax.jit(sgd_step(mnist_loss)), (mnist_p, mx, my)),
        "resnet18": (jax.jit(sgd_step(lambda p, x, y: resnet_loss(p, x, y, strides))),
                     (resnet_p, rx, ry)),
    }


NETWORK_KINDS = {  # kind: (convolution, im2col.MAX_OUTPUT_POSITIONS while tracing, tiled pool)
    "lax": ("lax", None, False),  # what Keras runs
    "conv_only": ("dispatch", None, False),  # the library's convolution rule, Keras's max pool
    "dispatch": ("dispatch", None, True),  # the library: its convolutions and max pool
    "rule16": ("dispatch", 16, True),
    "im2col": ("im2col", None, True),
}


def bench_networks(trials, kinds=tuple(NETWORK_KINDS)):
    import jax  # noqa: PLC0415

    from keras_tpu_estimator._backend import im2col as _cpu_conv  # noqa: PLC0415

    compiled = {}
    for kind in kinds:
        conv_kind, limit, pool = NETWORK_KINDS[kind]
        saved = _cpu_conv.MAX_OUTPUT_POSITIONS
        if limit is not None:
            _cpu_conv.MAX_OUTPUT_POSITIONS = limit
        try:
            for net, (step, args) in _networks(conv_kind, pool).items():
                compiled[kind, net] = (step.lower(*args).compile(), args)
        finally:
            _cpu_conv.MAX_OUTPUT_POSITIONS = saved
    rows = []
    for net in ("mnist", "resnet18"):
        fns = {kind: compiled[kind, net][0] for kind in kinds}
        args = {kind: compiled[kind, net][1] for kind in kinds}
        best = _time(fns, args, trials, min_s=0.2)
        rows.append({"network": net, "ms": {k: best[k] * 1e3 for k in kinds}})
    return rows


def _print_shapes(rows, label):
    methods = list(rows[0]["ms"])
    print(f"\n## per-shape forward+backward, ms (best of trials) [{label}]")
    print(f"{'shape':28s} {'out':>4s} " + " ".join(f"{m:>9s}" for m in methods)
          + "   lax/im2col")
    for r in rows:
        ms = r["ms"]
        ratio = ms["lax_nhwc"] / ms["im2col"] if "im2col" in ms else float("nan")
        print(f"{r['program'][:6]} {r['shape']:21s} {r['out_hw']:>4d} "
              + " ".join(f"{ms[m]:9.3f}" for m in methods) + f"   {ratio:6.2f}x")


def _print_networks(rows, label):
    print(f"\n## one SGD step, ms (best of trials) [{label}]")
    for r in rows:
        ms = r["ms"]
        print(f"{r['network']:9s} " + "  ".join(f"{k}={v:7.2f}" for k, v in ms.items())
              + f"   lax/dispatch={ms['lax'] / ms['dispatch']:.2f}x"
              + f"  steps/s lax={1e3 / ms['lax']:.1f} dispatch={1e3 / ms['dispatch']:.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--flags", action="store_true", help="also run XLA_FLAGS variants")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=2, help="rounds of flag children")
    parser.add_argument("--skip-shapes", action="store_true")
    parser.add_argument("--skip-networks", action="store_true")
    parser.add_argument("--table-only", action="store_true",
                        help="only the issue's table of three convolutions")
    args = parser.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    _setup()
    if args.child:
        nets = bench_networks(args.trials, ("lax", "dispatch"))
        print("RESULT " + json.dumps({"networks": nets}))
        return
    import jax  # noqa: PLC0415

    print(f"jax {jax.__version__}, {os.cpu_count()} CPUs, XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}")
    if args.table_only:
        _print_table(bench_table(args.trials))
        return
    if not args.skip_shapes:
        _print_table(bench_table(args.trials))
        _print_shapes(bench_shapes(args.trials), "default flags")
    if not args.skip_networks:
        _print_networks(bench_networks(args.trials), "default flags")
    if not args.flags:
        return
    print("\n## XLA_FLAGS variants: one SGD step, child processes alternating with default-flag")
    print("## children (best over rounds); speed-up over the default children, >1 = faster")
    for label, flag in FLAG_VARIANTS.items():
        best = {}
        for _ in range(args.rounds):
            for which, extra in (("default", ""), (label, flag)):
                env = dict(os.environ,
                           XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " " + extra).strip())
                proc = subprocess.run(
                    [sys.executable, __file__, "--child", "--trials", str(args.trials)],
                    env=env, capture_output=True, text=True, check=False)
                lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
                if proc.returncode or not lines:
                    print(f"{label}: {which} child failed (rc {proc.returncode})"
                          f" {proc.stderr[-300:]!r}")
                    continue
                for row in json.loads(lines[-1][len("RESULT "):])["networks"]:
                    for kind, ms in row["ms"].items():
                        key = (which, row["network"], kind)
                        best[key] = min(best.get(key, float("inf")), ms)
        cells = []
        for net in ("mnist", "resnet18"):
            for kind in ("lax", "dispatch"):
                if ("default", net, kind) in best and (label, net, kind) in best:
                    ratio = best["default", net, kind] / best[label, net, kind]
                    cells.append(f"{net} {kind} {best[label, net, kind]:.1f} ms ({ratio:.2f}x)")
        print(f"{label:22s} {flag:48s} " + "  ".join(cells))


if __name__ == "__main__":
    main()
