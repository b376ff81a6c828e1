"""The corpus models written by hand in JAX: the reference for `bench_models.py`.

Each model is the same math as the corpus program's `model_fn` and optimizer
(layer sizes, initializers, dropout, loss, learning-rate schedule, update
rule), written with `jax.numpy`/`jax.lax` only. A model is a `HandModel`:
`init(rng) -> state` (numpy arrays: parameters, optimizer slots, any
statistics) and `step(state, batch) -> (state, loss)`, whose state also
holds the global step and a PRNG key. `HandLoop` trains one with the input
strategy the library uses for arrays: the data resident on the device, each
loop given only the shuffled example indices; as one `lax.scan` per loop, or
on CPU for a convolutional model as a host loop of one jitted step (XLA:CPU
runs convolutions inside a loop body several times slower, jax-ml/jax#12868).
"""

import dataclasses
import math
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

# ----------------------------------------------------------------------------
# Layers.


def conv(x, w, stride=1, padding="SAME"):
    return lax.conv_general_dilated(x, w, (stride, stride), padding,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def max_pool(x, size, stride):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, size, size, 1),
                             (1, stride, stride, 1), "SAME")


def dense(x, p):
    return x @ p["kernel"] + p["bias"]


def dropout(x, rate, key):
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


def layer_norm(x, p, eps=1e-12):  # tf.contrib.layers.layer_norm
    mean = x.mean(-1, keepdims=True)
    var = jnp.square(x - mean).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + eps) * p["gamma"] + p["beta"]


def batch_norm(x, p, stats, momentum=0.9, eps=1e-5):
    """tf.layers.batch_normalization(fused=True) in training: normalizes by
    the batch statistics, moves the averages (variance unbiased)."""
    mean = x.mean((0, 1, 2))
    var = jnp.square(x - mean).mean((0, 1, 2))
    n = x.size // x.shape[-1]
    stats = {"mean": stats["mean"] * momentum + mean * (1 - momentum),
             "var": stats["var"] * momentum + var * (n / max(n - 1, 1)) * (1 - momentum)}
    return (x - mean) * lax.rsqrt(var + eps) * p["gamma"] + p["beta"], stats


def cross_entropy(logits, labels):
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None].astype(jnp.int32), 1))


# Initializers draw from a numpy Generator (no program to compile).


def glorot(rng, shape):  # tf.layers default (glorot_uniform)
    fan_in, fan_out = math.prod(shape[:-1]), shape[-1]
    if len(shape) == 4:
        fan_in, fan_out = math.prod(shape[:3]), math.prod(shape[:2]) * shape[3]
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, shape).astype(np.float32)


def truncated(rng, shape, stddev):  # TF's truncated_normal_initializer
    x = rng.standard_normal(shape)
    while (outside := np.abs(x) > 2).any():
        x[outside] = rng.standard_normal(outside.sum())
    return (x * stddev).astype(np.float32)


def zeros(*shape):
    return np.zeros(shape, np.float32)


def ones(*shape):
    return np.ones(shape, np.float32)


def keys(key):
    """An endless supply of fresh keys derived from `key`."""
    i = 0
    while True:
        i += 1
        yield jax.random.fold_in(key, i)


@dataclasses.dataclass
class HandModel:
    init: Callable  # numpy Generator -> state (numpy arrays)
    step: Callable  # (state, batch) -> (state, loss); state["key"] is a PRNG key
    convolutional: bool


# ----------------------------------------------------------------------------
# mnist_tpu.py: 2 x (conv 5x5 32 relu, max pool 2), dense 1024 relu, dropout
# 0.4, dense 10; GradientDescent, lr exponential_decay(0.05, step, 1e5, 0.96).


def mnist(learning_rate=0.05):
    def init(rng):
        params = {
            "conv1": {"kernel": glorot(rng, (5, 5, 1, 32)), "bias": zeros(32)},
            "conv2": {"kernel": glorot(rng, (5, 5, 32, 32)), "bias": zeros(32)},
            "dense1": {"kernel": glorot(rng, (7 * 7 * 32, 1024)), "bias": zeros(1024)},
            "logits": {"kernel": glorot(rng, (1024, 10)), "bias": zeros(10)},
        }
        return {"params": params}

    def loss_fn(params, images, labels, key):
        y = images / 255.0
        for name in ("conv1", "conv2"):
            y = jax.nn.relu(conv(y, params[name]["kernel"]) + params[name]["bias"])
            y = max_pool(y, 2, 2)
        y = jax.nn.relu(dense(y.reshape(y.shape[0], -1), params["dense1"]))
        y = dropout(y, 0.4, key)
        return cross_entropy(dense(y, params["logits"]), labels)

    def step(state, batch):
        key = jax.random.fold_in(state["key"], state["step"])
        loss, grads = jax.value_and_grad(loss_fn)(state["params"], *batch, key)
        lr = learning_rate * 0.96 ** (state["step"].astype(jnp.float32) / 100000)
        params = jax.tree.map(lambda p, g: p - lr * g, state["params"], grads)
        return dict(state, params=params, step=state["step"] + 1), loss

    return HandModel(init, step, convolutional=True)


# ----------------------------------------------------------------------------
# resnet_main.py's resnet_model_fn, ResNet v1 with basic blocks (18 or 34),
# channels_last, float32: cross-entropy + weight_decay * sum(l2_loss) of every
# non-batch-norm variable, Nesterov momentum, warmup + step LR from the epoch.

MEAN_RGB = np.array([0.485, 0.456, 0.406], np.float32) * 255
STDDEV_RGB = np.array([0.229, 0.224, 0.225], np.float32) * 255
RESNET_BLOCKS = {18: (2, 2, 2, 2), 34: (3, 4, 6, 3)}


def resnet_learning_rate(params):
    """resnet_main.learning_rate_schedule: `rate(epoch)`."""
    scaled_lr = params["base_learning_rate"] * params["train_batch_size"] / 256.0
    epochs = params["train_steps"] / np.floor(
        params["num_train_images"] / params["train_batch_size"])
    schedule = [(m, np.floor(e / 90 * epochs))
                for m, e in ((1.0, 5), (0.1, 30), (0.01, 60), (0.001, 80))]

    def rate(epoch):
        value = scaled_lr * schedule[0][0] * epoch / schedule[0][1]
        for mult, start in schedule:
            value = jnp.where(epoch < start, value, scaled_lr * mult)
        return value

    return rate


def resnet(params):
    """`params`: the program's params dict (resnet_main.main()'s)."""
    blocks = RESNET_BLOCKS[params["resnet_depth"]]
    classes = params["num_label_classes"]
    steps_per_epoch = params["num_train_images"] / params["train_batch_size"]
    learning_rate = resnet_learning_rate(params)

    def layout():
        """(name, kernel size, filters in, filters out, stride) of every conv,
        in order; a block's convs are 'a', 'b' and its projection 'proj'."""
        convs, width = [("stem", 7, 3, 64, 2)], 64
        for g, (filters, count) in enumerate(zip((64, 128, 256, 512), blocks)):
            for b in range(count):
                stride = 1 if g == 0 or b else 2
                if b == 0:
                    convs.append((f"g{g}b{b}proj", 1, width, filters, stride))
                convs += [(f"g{g}b{b}a", 3, width, filters, stride),
                          (f"g{g}b{b}b", 3, filters, filters, 1)]
                width = filters
        return convs

    def init(rng):
        params_, stats = {}, {}  # params_: the network's (params: the program's)
        for name, size, cin, cout, _ in layout():
            std = math.sqrt(1.0 / (size * size * cin)) / 0.87962566103423978
            gamma = zeros(cout) if name.endswith("b") and name != "stem" else ones(cout)
            params_[name] = {"kernel": truncated(rng, (size, size, cin, cout), std),
                             "bn": {"gamma": gamma, "beta": zeros(cout)}}
            stats[name] = {"mean": zeros(cout), "var": ones(cout)}
        kernel = (rng.standard_normal((512, classes)) * 0.01).astype(np.float32)
        params_["dense"] = {"kernel": kernel, "bias": zeros(classes)}
        momentum = jax.tree.map(np.zeros_like, params_)
        return {"params": params_, "stats": stats, "momentum": momentum}

    def conv_bn(x, p, stats, name, size, stride, relu):
        if stride > 1:  # conv2d_fixed_padding
            pad = ((size - 1) // 2, size - 1 - (size - 1) // 2)
            x = jnp.pad(x, ((0, 0), pad, pad, (0, 0)))
        x = conv(x, p[name]["kernel"], stride, "SAME" if stride == 1 else "VALID")
        x, stats[name] = batch_norm(x, p[name]["bn"], stats[name], params["bn_momentum"])
        return jax.nn.relu(x) if relu else x

    def loss_fn(p, stats, images, labels):
        stats = dict(stats)
        x = (images - MEAN_RGB) / STDDEV_RGB
        convs = {name: (size, stride) for name, size, _, _, stride in layout()}
        x = conv_bn(x, p, stats, "stem", 7, 2, True)
        x = max_pool(x, 3, 2)
        for g, count in enumerate(blocks):
            for b in range(count):
                name = f"g{g}b{b}"
                shortcut = x
                if b == 0:
                    shortcut = conv_bn(x, p, stats, name + "proj", *convs[name + "proj"], False)
                y = conv_bn(x, p, stats, name + "a", *convs[name + "a"], True)
                y = conv_bn(y, p, stats, name + "b", *convs[name + "b"], False)
                x = jax.nn.relu(y + shortcut)
        logits = dense(x.mean((1, 2)), p["dense"])
        decayed = [v["kernel"] for v in p.values()] + [p["dense"]["bias"]]
        l2 = sum(jnp.sum(jnp.square(v)) / 2 for v in decayed)
        return cross_entropy(logits, labels) + params["weight_decay"] * l2, stats

    def step(state, batch):
        (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(
            state["params"], state["stats"], *batch)
        lr = learning_rate(state["step"].astype(jnp.float32) / steps_per_epoch)
        m = params["momentum"]
        accum = jax.tree.map(lambda a, g: m * a + g, state["momentum"], grads)
        new = jax.tree.map(lambda p, g, a: p - lr * (g + m * a), state["params"], grads, accum)
        return dict(state, params=new, stats=stats, momentum=accum, step=state["step"] + 1), loss

    return HandModel(init, step, convolutional=True)


# ----------------------------------------------------------------------------
# run_classifier.py's model_fn: BertModel + pooler + classifier head (dropout
# keep 0.9), optimization.create_optimizer: linear warmup, linear decay,
# clip_by_global_norm(1.0) with the word-embedding gradient's norm taken over
# its un-summed rows (tf.gather's IndexedSlices), AdamWeightDecay.


def bert(config, learning_rate, num_train_steps, num_warmup_steps, num_labels=2):
    """`config`: a bert_config.json dict."""
    H, N = config["hidden_size"], config["num_attention_heads"]
    D = H // N
    hidden_drop, attn_drop = config["hidden_dropout_prob"], config["attention_probs_dropout_prob"]
    std = config["initializer_range"]

    def init(rng):
        def dense_p(n_in, n_out):
            return {"kernel": truncated(rng, (n_in, n_out), std), "bias": zeros(n_out)}

        def ln():
            return {"gamma": ones(H), "beta": zeros(H)}

        params = {
            "word": truncated(rng, (config["vocab_size"], H), std),
            "type": truncated(rng, (config["type_vocab_size"], H), std),
            "position": truncated(rng, (config["max_position_embeddings"], H), std),
            "embeddings_ln": ln(),
            "layers": [{"query": dense_p(H, H), "key": dense_p(H, H), "value": dense_p(H, H),
                        "attention_output": dense_p(H, H), "attention_ln": ln(),
                        "intermediate": dense_p(H, config["intermediate_size"]),
                        "output": dense_p(config["intermediate_size"], H), "output_ln": ln()}
                       for _ in range(config["num_hidden_layers"])],
            "pooler": dense_p(H, H),
            "output_weights": truncated(rng, (num_labels, H), std),
            "output_bias": zeros(num_labels),
        }
        slots = jax.tree.map(np.zeros_like, params)
        return {"params": params, "m": slots, "v": jax.tree.map(np.copy, slots)}

    def gelu(x):  # modeling.gelu (tanh approximation)
        return x * 0.5 * (1.0 + jnp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))

    def loss_fn(p, rows, features, key):
        """`rows`: zeros added to the gathered word embeddings; its gradient
        is the word-embedding gradient before the rows are summed."""
        k = keys(key)
        ids, mask = features["input_ids"], features["input_mask"]
        B, S = ids.shape
        x = p["word"][ids] + rows
        x += jax.nn.one_hot(features["segment_ids"], config["type_vocab_size"]) @ p["type"]
        x += p["position"][:S][None]
        x = dropout(layer_norm(x, p["embeddings_ln"]), hidden_drop, next(k)).reshape(B * S, H)
        adder = (1.0 - mask[:, None, None, :].astype(jnp.float32)) * -10000.0
        for lp in p["layers"]:
            q, kk, v = (dense(x, lp[n]).reshape(B, S, N, D).transpose(0, 2, 1, 3)
                        for n in ("query", "key", "value"))
            scores = q @ kk.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(D)) + adder
            probs = dropout(jax.nn.softmax(scores), attn_drop, next(k))
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(B * S, H)
            a = dropout(dense(context, lp["attention_output"]), hidden_drop, next(k))
            a = layer_norm(a + x, lp["attention_ln"])
            y = dense(gelu(dense(a, lp["intermediate"])), lp["output"])
            y = dropout(y, hidden_drop, next(k))
            x = layer_norm(y + a, lp["output_ln"])
        pooled = jnp.tanh(dense(x.reshape(B, S, H)[:, 0], p["pooler"]))
        pooled = dropout(pooled, 0.1, next(k))
        logits = pooled @ p["output_weights"].T + p["output_bias"]
        return cross_entropy(logits, features["label_ids"])

    def decays(path):
        names = [getattr(e, "key", "") for e in path]
        return not any(n in ("bias", "output_bias", "gamma", "beta") or n.endswith("_ln")
                       for n in names)

    def step(state, features):
        params = state["params"]
        key = jax.random.fold_in(state["key"], state["step"])
        rows = jnp.zeros(features["input_ids"].shape + (H,), jnp.float32)
        loss, (grads, row_grads) = jax.value_and_grad(loss_fn, argnums=(0, 1))(
            params, rows, features, key)
        squares = [jnp.sum(jnp.square(g)) for g in jax.tree.leaves(dict(grads, word=None))]
        norm = jnp.sqrt(sum(squares) + jnp.sum(jnp.square(row_grads)))
        grads = jax.tree.map(lambda g: g * (1.0 / jnp.maximum(norm, 1.0)), grads)
        gs = state["step"]
        lr = learning_rate * (1.0 - jnp.minimum(gs, num_train_steps) / num_train_steps)
        if num_warmup_steps:
            lr = jnp.where(gs < num_warmup_steps, learning_rate * gs / num_warmup_steps, lr)
        m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, state["m"], grads)
        v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * jnp.square(g), state["v"], grads)

        def update(path, p, m, v):
            u = m / (jnp.sqrt(v) + 1e-6)
            return p - lr * (u + 0.01 * p if decays(path) else u)

        params = jax.tree_util.tree_map_with_path(update, params, m, v)
        return dict(state, params=params, m=m, v=v, step=gs + 1), loss

    return HandModel(init, step, convolutional=False)


# ----------------------------------------------------------------------------
# The training loop.


def gather(data, rows):
    return jax.tree.map(lambda a: jnp.take(a, rows, axis=0), data)


class HandLoop:
    """Trains a `HandModel` on arrays, `loop` steps per loop.

    Args:
        model: the `HandModel`.
        data: the training arrays (`(features, labels)` or a features dict).
        batch: the batch size.
        loop: steps per loop.
        device_loop: "scan", "host" or "auto" (host on CPU for a
            convolutional model, else scan), as the library decides.
    """

    def __init__(self, model, data, batch, loop, device_loop="auto", seed=0):
        if device_loop == "auto":
            on_cpu = jax.default_backend() == "cpu"
            device_loop = "host" if on_cpu and model.convolutional else "scan"
        self.kind = device_loop
        self.data, self.batch, self.loop = data, batch, loop
        self.rng = np.random.default_rng(seed)
        state = dict(model.init(self.rng), step=np.zeros((), np.int32))
        self.state = jax.device_put(dict(state, key=jax.random.key(seed)))
        if self.kind == "scan":
            def program(state, data, indices):
                return lax.scan(lambda s, rows: model.step(s, gather(data, rows)), state, indices)
        else:
            def program(state, data, rows):
                return model.step(state, gather(data, rows))
        self.program = jax.jit(program, donate_argnums=0)
        self.specs = None  # the arguments' shapes, for `memory`

    def run(self, steps, on_loop_end):
        """Runs `steps` steps (a multiple of `loop`), one epoch over the data:
        `on_loop_end(losses)` after each loop, once its losses are on the host."""
        data = jax.device_put(self.data)
        rows = len(jax.tree.leaves(self.data)[0])
        order = self.rng.permutation(rows)[: steps * self.batch].astype(np.int32)
        for chunk in order.reshape(steps // self.loop, self.loop, self.batch):
            if self.specs is None:
                args = (self.state, data, chunk if self.kind == "scan" else chunk[0])
                self.specs = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), args)
            if self.kind == "scan":
                self.state, losses = self.program(self.state, data, chunk)
                losses = np.asarray(losses)
            else:
                losses = []
                for rows_ in chunk:
                    self.state, loss = self.program(self.state, data, rows_)
                    losses.append(loss)
                losses = np.array([np.asarray(x) for x in losses])
            on_loop_end(losses)

    def memory(self):
        """The compiled loop program's memory analysis."""
        return self.program.lower(*self.specs).compile().memory_analysis()
