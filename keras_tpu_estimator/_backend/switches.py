"""The environment switches of the CPU backend's settings: on unless set off.

`KTE_CPU_CONV` (`lowering`), `KTE_KEEP_HOST_MEMORY` (`host_memory`),
`KTE_XLA_CPU_OPTIONS` (`compiler_options`) and `KTE_TF_FFI` (`tf_ffi`) each
turn their setting off with
`0`, `false`, `off` or `no` (any case, spaces around ignored).

```python
if switches.is_off("KTE_CPU_CONV"):
    ...
```
"""

import os

OFF_VALUES = ("0", "false", "off", "no")


def is_off(name):
    """Whether the environment variable `name` switches its setting off.

    Args:
        name: the variable's name.

    Returns:
        True when it is set to one of `OFF_VALUES`; unset means on.
    """
    return os.environ.get(name, "1").strip().lower() in OFF_VALUES
