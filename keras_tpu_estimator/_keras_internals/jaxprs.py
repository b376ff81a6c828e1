"""Reading and cutting jaxprs: what a traced function binds, and only what some outputs need."""

from jax._src import core
from jax._src.interpreters import partial_eval


def uses_primitive(closed, name):
    """Whether `closed` (a `ClosedJaxpr`) or a jaxpr inside it binds the primitive `name`.

    Walks the equations and the jaxprs their parameters hold (`pjit`,
    `custom_vjp_call`, `scan`, `cond` branches, ...): printing a model's
    jaxpr to search it took 27 ms.
    """
    def jaxprs(value):
        if isinstance(value, core.ClosedJaxpr):
            yield value.jaxpr
        elif isinstance(value, core.Jaxpr):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                yield from jaxprs(item)

    pending, seen = [closed.jaxpr], set()
    while pending:
        jaxpr = pending.pop()
        if id(jaxpr) in seen:
            continue
        seen.add(id(jaxpr))
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == name:
                return True
            for value in eqn.params.values():
                pending.extend(jaxprs(value))
    return False


def jaxpr_outputs_only(closed, used):
    """`closed` (a `ClosedJaxpr`) cut to the outputs flagged in `used`, dead code removed.

    JAX's jaxpr dead-code elimination (`partial_eval.dce_jaxpr`): evaluating
    the result traces only what those outputs need. JAX keeps every
    operation with an effect (`jax.debug.print`, `io_callback`): those whose
    results the outputs do not need are dropped first, so a build pass's
    `tf1.Print` does not run when its variables are initialized.
    """
    jaxpr = closed.jaxpr
    needed = {v for v, u in zip(jaxpr.outvars, used) if u and isinstance(v, core.Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in needed for v in eqn.outvars):
            kept.append(eqn)
            needed.update(v for v in eqn.invars if isinstance(v, core.Var))
    kept.reverse()
    jaxpr = jaxpr.replace(eqns=kept, effects=core.join_effects(*(e.effects for e in kept)))
    jaxpr, _ = partial_eval.dce_jaxpr(jaxpr, list(used), instantiate=True)
    return closed.replace(jaxpr=jaxpr)
