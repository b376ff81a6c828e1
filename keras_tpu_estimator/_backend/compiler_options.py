"""XLA compiler options the library's loop programs compile with on CPU devices.

A training step reads each variable (its forward and backward products)
and writes its new value. XLA:CPU's copy insertion keeps a loop-carried
variable's old value alive with a copy whenever a read and the in-place
update are not ordered by data: a dense kernel whose input gradient
(`g @ W.T`) and update (`W - lr * ...`) do not depend on each other is
copied every step. For the corpus's cifar_keras (a 4096x512 dense kernel)
that is 8 MiB copied per step, for MNIST 12 MiB.

XLA's region-based analysis (`xla_cpu_copy_insertion_use_region_analysis`)
proves those reads come first in the program's order and drops the copies:
cifar_keras trained at 1.06x the steps per second and MNIST at 1.03x
(`docs/benchmarks.md`, issue 31's seventh pass). The values are the same:
only where the old value lives changes.

`for_devices` gives the options for a program on these devices: none off
CPU devices, with `KTE_XLA_CPU_OPTIONS=0`, or for an option the user set in
`XLA_FLAGS` (theirs stands).

```python
jax.jit(program, compiler_options=compiler_options.for_devices(mesh.devices.flat))
```
"""

import os

from keras_tpu_estimator._backend import switches

ENV_VAR = "KTE_XLA_CPU_OPTIONS"

CPU_OPTIONS = {"xla_cpu_copy_insertion_use_region_analysis": True}


def for_devices(devices):
    """The compiler options of a program that runs on `devices`.

    Args:
        devices: the devices the program runs on.

    Returns:
        A dict for `jax.jit(..., compiler_options=...)`, or None: on CPU
        devices `CPU_OPTIONS` less what `XLA_FLAGS` sets, unless
        `KTE_XLA_CPU_OPTIONS` is `"0"`/`"false"`/`"off"`/`"no"`.
    """
    devices = list(devices)
    if not devices or any(device.platform != "cpu" for device in devices):
        return None
    if switches.is_off(ENV_VAR):
        return None
    flags = os.environ.get("XLA_FLAGS", "")
    options = {name: value for name, value in CPU_OPTIONS.items() if f"--{name}" not in flags}
    return options or None
