"""Importing the package: Keras runs on JAX whatever was imported before."""

import os
import subprocess
import sys
import textwrap

import pytest

# A tiny TPUEstimator trains, evaluates and exports after the imports.
_TRAIN = textwrap.dedent(
    """
    import keras_tpu_estimator as kte
    import keras, numpy as np, tempfile

    assert keras.backend.backend() == "jax", keras.backend.backend()

    def model_fn(features, labels, mode, params):
        dense = kte.get_or_create_layer("dense", lambda: keras.layers.Dense(1))
        loss = keras.ops.mean(keras.ops.square(dense(features)[:, 0] - labels))
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.SGD(0.1))

    def input_fn(params):
        x = np.ones((64, 3), "float32")
        return tf.data.Dataset.from_tensor_slices((x, x.sum(1))).repeat().batch(
            params["batch_size"], drop_remainder=True)

    estimator = kte.TPUEstimator(
        model_fn=model_fn, train_batch_size=8, eval_batch_size=8,
        config=kte.RunConfig(model_dir=tempfile.mkdtemp()))
    estimator.train(input_fn, max_steps=3)
    print("STEP", estimator.evaluate(input_fn, steps=1)["global_step"])
    """
)


def _run(code, keras_home, **env):
    # A fresh KERAS_HOME: Keras writes its default keras.json (backend
    # "tensorflow") there, whatever the user's own file says.
    environ = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    environ.update(env, KERAS_HOME=str(keras_home))
    return subprocess.run(
        [sys.executable, "-c", code], env=environ, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    "first_import",
    ["import tensorflow as tf", "import tensorflow.compat.v1 as tf"],
)
def test_tensorflow_imported_first_still_gives_keras_on_jax(first_import, tmp_path):
    result = _run(first_import + "\n" + _TRAIN, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "STEP 3" in result.stdout


def test_keras_bound_by_user_before_the_switch_is_named_in_a_warning(tmp_path):
    code = "import tensorflow, keras\nimport keras_tpu_estimator"
    result = _run(code, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "__main__" in result.stderr
    assert "Import keras_tpu_estimator before keras" in result.stderr


@pytest.mark.parametrize("backend", ["tensorflow", "numpy"])
def test_an_explicit_other_backend_is_a_clear_import_error(backend, tmp_path):
    result = _run("import tensorflow\nimport keras_tpu_estimator", tmp_path, KERAS_BACKEND=backend)
    assert result.returncode != 0
    assert f"KERAS_BACKEND={backend!r}" in result.stderr
    assert "Set KERAS_BACKEND=jax" in result.stderr
