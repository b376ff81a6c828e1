"""Random initial values drawn by one threefry call instead of one per variable.

XLA:CPU compiles each `jax.random` call of a program as its own kernels:
about 0.2-0.4 s per call, whatever its size. A model's initial values call
it once per randomly initialized variable (each Keras initializer draws
from its own key), so a program of twenty layers spent four seconds
compiling them, more than TensorFlow needs to build and run the whole
step.

`batched_random_bits` evaluates a jaxpr with every `random_bits` whose key
is a constant (Keras's seeds are concrete when the build pass traces the
initializers) taken from one threefry call per `GROUP_ELEMENTS` elements
drawn: each key's counts are `0..size-1`, as `jax.random.bits` uses them,
laid end to end. With JAX's partitionable threefry
(`jax_threefry_partitionable`, the default), element `i` of
`jax.random.bits(key, shape)` depends only on the key and `i` (row-major),
so the values are bit for bit those of the calls it replaces;
`tests/test_batched_random.py` pins this against `jax.random.bits`. Any
other `random_bits` (a traced key, another PRNG implementation or bit
width, a draw inside a loop or conditional) runs as it was, and off the
CPU backend nothing changes.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import core

_JIT = "jit"  # The name `jax.jit`'s primitive prints as (`pjit` before JAX 0.7).
# Elements drawn per threefry call: a call holds about 28 bytes per element
# at once (both key words, the counts and their high words, both output words,
# the result), so 2**25 elements hold under 1 GB.
GROUP_ELEMENTS = 2**25


def _draws(jaxpr):
    """Whether `jaxpr` calls `random_bits`, directly or in a nested `jit`."""
    return any(eqn.primitive.name == "random_bits" or _is_draw_call(eqn) for eqn in jaxpr.eqns)


def _is_draw_call(eqn):
    """Whether `eqn` is a `jit` call whose body draws: it is evaluated inline."""
    return (eqn.primitive.name in (_JIT, "pjit") and "jaxpr" in eqn.params
            and _draws(eqn.params["jaxpr"].jaxpr))


def _batched_keys(closed):
    """The raw keys and shapes of the constant-key `random_bits` of `closed`,
    in evaluation order (nested `jit`s inlined), None for any other."""
    found = []

    def walk(jaxpr, values, keys):
        # `values`: var -> a concrete constant; `keys`: var -> the raw data
        # (uint32[2]) of a threefry key wrapped from a constant.
        for eqn in jaxpr.eqns:
            name = eqn.primitive.name
            if name == "random_wrap":
                raw = _value(eqn.invars[0], values)
                if (raw is not None and eqn.params["impl"].name == "threefry2x32"
                        and np.shape(raw) == (2,)):
                    keys[eqn.outvars[0]] = np.asarray(raw, np.uint32)
            elif name == "random_bits":
                key = keys.get(eqn.invars[0]) if isinstance(eqn.invars[0], core.Var) else None
                usable = (key is not None and eqn.params["bit_width"] == 32
                          and math.prod(eqn.params["shape"]) <= GROUP_ELEMENTS)
                found.append((key, tuple(eqn.params["shape"])) if usable else None)
            elif _is_draw_call(eqn):
                inner = eqn.params["jaxpr"]
                inner_values = dict(zip(inner.jaxpr.constvars, inner.consts))
                inner_keys = {}
                for var, outer in zip(inner.jaxpr.invars, eqn.invars):
                    value = _value(outer, values)
                    if value is not None:
                        inner_values[var] = value
                    if isinstance(outer, core.Var) and outer in keys:
                        inner_keys[var] = keys[outer]
                walk(inner.jaxpr, inner_values, inner_keys)

    walk(closed.jaxpr, dict(zip(closed.jaxpr.constvars, closed.consts)), {})
    return found


def _value(var, values):
    if isinstance(var, core.Literal):
        return var.val
    return values.get(var)


def segment_bits(keys, shapes):
    """`[jax.random.bits(key, shape) for key, shape in zip(keys, shapes)]`
    (32-bit, threefry keys given as raw `uint32[2]` data), by one threefry call.

    Args:
        keys: an `(n, 2)` uint32 array of raw keys.
        shapes: n shapes, of fewer than 2**32 elements in all.

    Returns:
        The n arrays of uint32 bits.
    """
    sizes = [math.prod(s) for s in shapes]
    total = sum(sizes)
    # Behind a barrier the keys are not constants to XLA: it would otherwise
    # fold the whole draw at compile time (a minute for 3M elements).
    keys = jax.lax.optimization_barrier(jnp.asarray(keys, jnp.uint32))
    key1, key2 = (jnp.concatenate([jnp.broadcast_to(keys[i, word], (size,))
                                   for i, size in enumerate(sizes)]) for word in (0, 1))
    counts = jnp.concatenate([jnp.arange(size, dtype=jnp.uint32) for size in sizes])
    high = jnp.zeros((total,), jnp.uint32)  # The counts' high words: all below 2**32.
    bits1, bits2 = jax.extend.random.threefry2x32_p.bind(
        key1, key2, high, counts)
    flat = bits1 ^ bits2  # As `jax.random.bits` combines them (32 bits).
    starts = np.cumsum([0] + sizes[:-1]).tolist()
    return [flat[start:start + size].reshape(shape)
            for start, size, shape in zip(starts, sizes, shapes)]


def _groups(draws, limit):
    """`draws` (key, shape) cut into consecutive groups of at most `limit`
    elements (a larger draw alone): what one call computes at a time."""
    groups, group, size = [], [], 0
    for key, shape in draws:
        if group and size + math.prod(shape) > limit:
            groups.append(group)
            group, size = [], 0
        group.append((key, shape))
        size += math.prod(shape)
    return groups + [group] if group else groups


def batched_random_bits(closed, group_elements=GROUP_ELEMENTS):
    """A function of no arguments computing `closed`'s outputs (a `ClosedJaxpr`
    of no inputs), its constant-key `random_bits` by one threefry call per
    `group_elements` elements drawn.

    On the CPU backend only (elsewhere XLA compiles a draw cheaply), with
    JAX's partitionable threefry, and for two draws or more; otherwise
    `jax.extend.core.jaxpr_as_fun(closed)`.
    """
    found = []
    if jax.default_backend() == "cpu" and jax.config.jax_threefry_partitionable:
        found = _batched_keys(closed)
    draws = [f for f in found if f is not None]
    if len(draws) < 2:
        return jax.extend.core.jaxpr_as_fun(closed)

    def run():
        drawn = iter([bits for group in _groups(draws, group_elements)
                      for bits in segment_bits(np.stack([k for k, _ in group]),
                                               [s for _, s in group])])
        plan = iter(found)

        def evaluate(jaxpr, consts, args):
            env = dict(zip(jaxpr.constvars, consts))
            env.update(zip(jaxpr.invars, args))
            read = lambda v: v.val if isinstance(v, core.Literal) else env[v]
            for eqn in jaxpr.eqns:
                invals = [read(v) for v in eqn.invars]
                if eqn.primitive.name == "random_bits" and next(plan) is not None:
                    outvals = [next(drawn)]
                elif _is_draw_call(eqn):
                    inner = eqn.params["jaxpr"]
                    outvals = evaluate(inner.jaxpr, inner.consts, invals)
                else:  # As `jax.core.eval_jaxpr` binds an equation.
                    with eqn.ctx.manager:
                        outvals = eqn.primitive.bind(
                            *invals, **eqn.primitive.get_bind_params(eqn.params))
                    if not eqn.primitive.multiple_results:
                        outvals = [outvals]
                env.update(zip(eqn.outvars, outvals))
            return [read(v) for v in jaxpr.outvars]

        return evaluate(closed.jaxpr, closed.consts, [])

    return run
