"""`tf.contrib.slim.nets`: slim's Inception networks, converted from the `tf_slim` package.

TF1's `tf.contrib.slim.nets.inception` (Inception v1-v3, with their
`*_arg_scope` and `*_base`) lives on in `tf_slim` on PyPI, written against
slim's layers. This module converts those files with the library's own
converter when a network is first asked for, so they build on compat.v1's
slim layers with slim's variable names (`InceptionV3/Conv2d_1a_3x3/weights`):
pre-trained slim checkpoints load as they did. The networks are
`tf_slim`'s own code, not a copy; install it with
`pip install "keras-tpu-estimator[slim]"` (or `pip install tf-slim`).

```python
def model_fn(features, labels, mode, params):
    with slim.arg_scope(slim.nets.inception.inception_v3_arg_scope()):
        logits, end_points = slim.nets.inception.inception_v3(
            features, num_classes=1001, is_training=mode == "train")
```
"""

import os
import sys
import threading
import types

# The networks offered, each converted from the tf_slim module of its name;
# `inception` holds the three under one namespace, as slim's does.
_NETS = ("inception_v1", "inception_v2", "inception_v3")
_INCEPTION = "inception"
_lock = threading.RLock()


def _source_file(name):
    try:
        import tf_slim.nets
    except ImportError as e:
        raise ImportError(
            f"tf.contrib.slim.nets.{name} is converted from the tf_slim package, which is "
            "not installed: pip install tf-slim") from e
    return os.path.join(os.path.dirname(tf_slim.nets.__file__), f"{name}.py")


def _converted(name):
    """The module of network file `name`, converted to compat.v1 and imported."""
    from keras_tpu_estimator.convert import convert_source

    path = _source_file(name)
    with open(path, encoding="utf-8") as f:
        result = convert_source(f.read(), filename=path)
    if result.errors:  # A tf_slim release this library does not know.
        raise ImportError(
            f"tf.contrib.slim.nets.{name}: tf_slim's {path} does not convert: "
            + "; ".join(e.message for e in result.errors[:3]))
    module = types.ModuleType(f"{__name__}.{name}", f"slim's {name}, converted from tf_slim")
    module.__file__ = path
    sys.modules[module.__name__] = module
    try:
        exec(compile(result.source, path, "exec"), module.__dict__)  # noqa: S102
    except BaseException:
        del sys.modules[module.__name__]
        raise
    return module


def _inception():
    module = types.ModuleType(f"{__name__}.{_INCEPTION}", "Inception v1-v3 under one namespace")
    for version in _NETS:
        net = __getattr__(version)
        for suffix in ("", "_arg_scope", "_base"):
            setattr(module, version + suffix, getattr(net, version + suffix))
    sys.modules[module.__name__] = module
    return module


def __getattr__(name):
    """Converts network module `name` on first use (PEP 562)."""
    if name not in _NETS and name != _INCEPTION:
        raise AttributeError(
            f"tf.contrib.slim.nets has no {name!r}: the networks offered are "
            f"{sorted(_NETS + (_INCEPTION,))}")
    with _lock:
        module = globals().get(name)
        if module is None:
            try:
                module = _inception() if name == _INCEPTION else _converted(name)
            except ImportError as e:  # `hasattr` (the converter's lookups) sees no such name.
                raise AttributeError(str(e)) from e
            globals()[name] = module
    return module
