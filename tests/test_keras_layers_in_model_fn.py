"""Keras layers created inside model_fn: kept by the store, given back, named as TF1 named them.

The expected names are those TensorFlow 2.15's `tf.compat.v1` graph gives
the same code (`tf.keras.layers.*` in a `tf.compat.v1.Graph`), checked
there once; the tests here need no TensorFlow 1.
"""

import os

import jax
import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
from keras_tpu_estimator import _keras_internals
from keras_tpu_estimator.model_fn import store as store_lib

from model_fns import estimator_config

TRAIN, EVAL, PREDICT = kte.ModeKeys.TRAIN, kte.ModeKeys.EVAL, kte.ModeKeys.PREDICT
SX = keras.KerasTensor((2, 8))
SIMAGES = keras.KerasTensor((2, 8, 8, 3))


def run(program, store, mode=TRAIN, building=True):
    """Calls `program` as model_fn code would be, against `store`."""
    with store_lib.model_fn_call(store, mode, building, 0, mode == TRAIN):
        return program()


def variable_paths(program):
    store = store_lib.VariableStore()
    run(program, store)
    return [v.path for v in store.variables]


class TwoDense(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = keras.layers.Dense(3)

    def call(self, x):
        return self.hidden(x)


def conv_then_depthwise():
    x = keras.layers.Conv2D(4, 3)(SIMAGES)
    keras.layers.DepthwiseConv2D(3)(x)


class OwnDepthwiseConv2D(keras.layers.DepthwiseConv2D):  # EfficientNet's subclass.
    pass


def own_depthwise():
    OwnDepthwiseConv2D(3, use_bias=False)(SIMAGES)


def dense_in_scopes():
    with tf1.variable_scope("a"):
        x = keras.layers.Dense(5)(SX)
        x = keras.layers.Dense(5)(x)
    with tf1.variable_scope("b"):
        x = keras.layers.Dense(5)(x)
    keras.layers.Dense(5)(x)


def tf_keras_layers():
    tf.keras.layers.Dense(2, use_bias=False)(tf.keras.layers.Dense(3, use_bias=False)(SX))


def explicit_name_twice():
    keras.layers.Dense(2, name="head", use_bias=False)(SX)
    keras.layers.Dense(2, name="head", use_bias=False)(SX)


def model_subclass_twice():
    TwoDense()(TwoDense()(SX))


def sequential():
    keras.Sequential([keras.layers.Dense(3), keras.layers.Dense(4)])(SX)


@pytest.mark.parametrize("program, expected", [
    (conv_then_depthwise, ["conv2d/kernel", "conv2d/bias",
                           "depthwise_conv2d/depthwise_kernel", "depthwise_conv2d/bias"]),
    (dense_in_scopes, ["a/dense/kernel", "a/dense/bias", "a/dense_1/kernel", "a/dense_1/bias",
                       "b/dense_2/kernel", "b/dense_2/bias", "dense_3/kernel", "dense_3/bias"]),
    (tf_keras_layers, ["dense/kernel", "dense_1/kernel"]),
    (own_depthwise, ["own_depthwise_conv2d/depthwise_kernel"]),
    (explicit_name_twice, ["head/kernel", "head_1/kernel"]),
    (model_subclass_twice, ["two_dense/dense/kernel", "two_dense/dense/bias",
                            "two_dense_1/dense_1/kernel", "two_dense_1/dense_1/bias"]),
    (sequential, ["sequential/dense/kernel", "sequential/dense/bias",
                  "sequential/dense_1/kernel", "sequential/dense_1/bias"]),
])
def test_variables_of_keras_layers_get_tf1_names(program, expected):
    assert variable_paths(program) == expected


@pytest.mark.parametrize("program", [dense_in_scopes, model_subclass_twice, sequential])
def test_names_are_the_same_in_every_call_whatever_keras_made_before(program):
    first = variable_paths(program)
    keras.layers.Dense(1)  # Keras's process-wide counters move on.
    TwoDense()
    assert first and variable_paths(program) == first


class TpuBatchNormalization(tf1.layers.BatchNormalization):
    pass


class Block(keras.layers.Layer):
    """EfficientNet's MBConvBlock shape: Keras convolutions and tf.layers batch norms."""

    def __init__(self, name):
        super().__init__(name=name)
        self.conv = keras.layers.Conv2D(4, 3, padding="same", use_bias=False)
        self.depthwise = keras.layers.DepthwiseConv2D(3, padding="same", use_bias=False)
        self.bn = TpuBatchNormalization(center=False, scale=False)

    def call(self, x, training=None):
        return self.bn(self.depthwise(self.conv(x)), training=training)


class EfficientNetLike(keras.Model):
    def __init__(self):
        super().__init__(name="efficientnet-b0")
        self.blocks = [Block(f"blocks_{i}") for i in range(2)]

    def call(self, x, training=None):
        for block in self.blocks:
            x = block(x, training=training)
        return x


def test_a_model_of_keras_and_tf1_layers_is_kept_with_tf1_keras_names():
    # TF 2.15's graph names: Keras layers under the name scopes of the layer
    # calls, tf.layers under the variable scopes, which a Keras call does not
    # open (`tpu_batch_normalization_1` at the top level).
    store = store_lib.VariableStore()
    images = np.ones((2, 8, 8, 3), "float32")
    run(lambda: EfficientNetLike()(SIMAGES, training=True), store)
    paths = [v.path for v in store.variables]
    run(lambda: EfficientNetLike()(images, training=True), store, building=False)
    assert [v.path for v in store.variables] == paths
    assert sorted(paths) == [
        "efficientnet-b0/blocks_0/conv2d/kernel",
        "efficientnet-b0/blocks_0/depthwise_conv2d/depthwise_kernel",
        "efficientnet-b0/blocks_1/conv2d_1/kernel",
        "efficientnet-b0/blocks_1/depthwise_conv2d_1/depthwise_kernel",
        "tpu_batch_normalization/moving_mean",
        "tpu_batch_normalization/moving_variance",
        "tpu_batch_normalization_1/moving_mean",
        "tpu_batch_normalization_1/moving_variance",
    ]


def test_later_calls_get_the_same_layer_objects_and_variables():
    store, layers = store_lib.VariableStore(), []

    def program():
        dense = keras.layers.Dense(3)
        dense(SX)
        layers.append(dense)

    run(program, store)
    before = list(store.variables)
    for mode, building in ((TRAIN, False), (EVAL, True), (PREDICT, False)):
        run(program, store, mode, building)
    assert all(layer is layers[0] for layer in layers)
    assert list(store.variables) == before


def test_a_layer_made_in_one_mode_only_does_not_shift_the_others():
    store, kernels = store_lib.VariableStore(), {}

    def program(mode):
        x = keras.layers.Dense(4)(SX)
        if mode == TRAIN:
            x = keras.layers.Dropout(0.5)(x)
        kernels[mode] = keras.layers.Dense(2)
        kernels[mode](x)

    for mode in (TRAIN, EVAL):
        run(lambda: program(mode), store, mode)
    assert kernels[TRAIN] is kernels[EVAL]


def test_a_new_layer_in_a_compiled_step_is_an_error():
    store = store_lib.VariableStore()
    run(lambda: keras.layers.Dense(3)(SX), store)

    def two():
        keras.layers.Dense(3)(SX)
        keras.layers.Dense(3)(SX)

    with pytest.raises(ValueError, match="the 2nd `Dense` in scope ''.*compiled 'train'"):
        run(two, store, building=False)


@pytest.mark.parametrize("second, difference", [
    (lambda: keras.layers.Dense(4)(SX), "(4,)"),
    (lambda: keras.layers.Dense(3, activation="relu")(SX), "'relu'"),
])
def test_a_layer_made_with_other_arguments_names_both(second, difference):
    store = store_lib.VariableStore()
    run(lambda: keras.layers.Dense(3)(SX), store)
    with pytest.raises(ValueError, match="with other arguments than in an earlier call") as error:
        run(second, store, building=False)
    earlier, now = str(error.value).split("earlier:")[1].split("now:")
    assert "(3,)" in earlier and difference in now
    assert "'dense'" in str(error.value)


def test_a_layer_of_another_class_in_the_same_place_names_both():
    store = store_lib.VariableStore()
    run(lambda: keras.layers.Dense(3, name="head")(SX), store)
    with pytest.raises(ValueError, match="`Dropout`.*earlier call created a `Dense`.*'head'"):
        run(lambda: keras.layers.Dropout(0.5, name="head")(SX), store, building=False)


def test_input_with_a_tensor_passes_it_through_in_the_build_and_the_trace():
    store = store_lib.VariableStore()
    assert run(lambda: keras.Input(tensor=SX), store) is SX

    def traced(x):
        return run(lambda: keras.layers.Dense(2)(keras.Input(tensor=x)), store, building=False)

    run(lambda: keras.layers.Dense(2)(keras.Input(tensor=SX)), store)
    assert jax.jit(traced)(np.ones((2, 8), "float32")).shape == (2, 2)


def test_sublayers_and_explicit_factories_belong_to_their_owner():
    store = store_lib.VariableStore()

    def program():
        TwoDense()(SX)
        kte.get_or_create_layer("head", lambda: keras.layers.Dense(2))(SX)

    run(program, store)
    assert list(store.created_layers) == ["two_dense", "head"]


def test_layers_made_outside_model_fn_are_not_captured():
    outside = keras.layers.Dense(2)
    store = store_lib.VariableStore()
    run(lambda: outside(SX), store)
    assert list(store.created_layers) == []


# -- Training, checkpoints, evaluation, prediction and export. ----------------

IMAGES = np.random.default_rng(0).normal(size=(64, 6, 6, 3)).astype("float32")
CLASSES = (IMAGES.mean(axis=(1, 2, 3)) > 0).astype("int32")
KERAS_VARIABLES = ["conv2d/kernel", "conv2d/bias", "depthwise_conv2d/depthwise_kernel",
                   "depthwise_conv2d/bias", "batch_normalization/gamma",
                   "batch_normalization/beta", "dense/kernel", "dense/bias"]


def images_input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": IMAGES}, CLASSES)).repeat()
    return dataset.batch(params["batch_size"], drop_remainder=True)


def keras_layers_model_fn(features, labels, mode, params):
    """cifar_keras's form: Keras layers made inside model_fn on `Input(tensor=...)`."""
    v = keras.Input(tensor=features["x"])
    v = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(v)
    v = keras.layers.DepthwiseConv2D(3, padding="same")(v)
    v = keras.layers.BatchNormalization()(v)
    logits = keras.layers.Dense(2)(keras.layers.Flatten()(v))
    if mode == PREDICT:
        return kte.TPUEstimatorSpec(mode, predictions={"logits": logits})
    loss = tf1.reduce_mean(
        tf1.nn.sparse_softmax_cross_entropy_with_logits(logits=logits, labels=labels))
    if params["keras_optimizer"]:
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=keras.optimizers.Adam(0.01))
    train_op = tf1.train.AdamOptimizer(0.01).minimize(
        loss, global_step=tf1.train.get_global_step())
    return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def keras_estimator(model_dir, keras_optimizer):
    return kte.TPUEstimator(
        model_fn=keras_layers_model_fn, config=estimator_config(model_dir, 4),
        params={"keras_optimizer": keras_optimizer},
        train_batch_size=16, eval_batch_size=16, predict_batch_size=16,
    )


@pytest.fixture(scope="module", params=[False, True], ids=["tf1_optimizer", "keras_optimizer"])
def trained(request, tmp_path_factory):
    model_dir = tmp_path_factory.mktemp("model")
    estimator = keras_estimator(model_dir, request.param)
    estimator.train(images_input_fn, max_steps=2)
    first = {name: estimator.get_variable_value(name) for name in KERAS_VARIABLES}
    estimator.train(images_input_fn, max_steps=6)
    return estimator, first


def test_checkpoints_hold_the_keras_layers_under_tf1_names(trained):
    estimator, _ = trained
    assert set(KERAS_VARIABLES) <= set(estimator.get_variable_names())
    assert "batch_normalization/moving_mean" in estimator.get_variable_names()


def test_training_updates_every_keras_layer(trained):
    estimator, first = trained
    for name in KERAS_VARIABLES:
        after = estimator.get_variable_value(name)
        assert np.abs(after - first[name]).max() > 0, name


def test_a_new_estimator_restores_the_keras_layers(trained):
    estimator, _ = trained
    again = keras_estimator(estimator.model_dir, keras_optimizer=False)
    predict_input = lambda params: tf.data.Dataset.from_tensor_slices(  # noqa: E731
        {"x": IMAGES[:16]}).batch(params["batch_size"])
    ours = [p["logits"] for p in estimator.predict(predict_input)]
    restored = [p["logits"] for p in again.predict(predict_input)]
    np.testing.assert_allclose(restored, ours, rtol=1e-6)


def test_evaluation_and_export_serve_the_trained_layers(trained, tmp_path):
    estimator, _ = trained
    assert np.isfinite(estimator.evaluate(images_input_fn, steps=2)["loss"])
    predict_input = lambda params: tf.data.Dataset.from_tensor_slices(  # noqa: E731
        {"x": IMAGES[:16]}).batch(params["batch_size"])
    predicted = np.stack([p["logits"] for p in estimator.predict(predict_input)])
    receiver_fn = kte.export.build_raw_serving_input_receiver_fn(
        {"x": tf.TensorSpec((None, 6, 6, 3), tf.float32)})
    path = estimator.export_saved_model(str(tmp_path), receiver_fn)
    served = tf.saved_model.load(path).signatures["serving_default"](x=tf.constant(IMAGES[:16]))
    np.testing.assert_allclose(served["logits"].numpy(), predicted, atol=1e-5)


# -- tf.keras.backend's learning phase. ---------------------------------------


@pytest.mark.parametrize("phase, kept", [(0, 1.0), (False, 1.0), (1, 0.5), (True, 0.5)])
def test_set_learning_phase_sets_training_of_the_layers_called_next(phase, kept):
    store = store_lib.VariableStore()
    ones = np.ones((64, 64), "float32")

    def program():
        tf1.keras_backend.set_learning_phase(phase)
        assert tf1.keras_backend.learning_phase() == int(phase)
        return keras.layers.Dropout(0.5)(ones)

    outputs = np.asarray(run(program, store, mode=TRAIN if not phase else EVAL))
    assert abs((outputs != 0).mean() - kept) < 0.1


def test_set_learning_phase_outside_model_fn_changes_nothing():
    tf1.keras_backend.set_learning_phase(0)
    store = store_lib.VariableStore()
    assert run(lambda: tf1.keras_backend.learning_phase(), store) == 1


def test_set_learning_phase_refuses_other_values():
    with pytest.raises(ValueError, match="set_learning_phase must be 0 or 1.*value=2"):
        tf1.keras_backend.set_learning_phase(2)


# -- The Keras internals this relies on (keras_tpu_estimator._keras_internals). ---


def test_object_names_count_automatic_names_in_the_given_counters():
    import collections

    with _keras_internals.object_names(collections.defaultdict(int)):
        names = [keras.layers.Dense(1).name for _ in range(2)]
        _keras_internals.reserve_object_name("dense_4")
        names.append(keras.layers.Dense(1).name)
    assert names == ["dense", "dense_1", "dense_5"]


def test_layer_constructions_reports_top_level_layers_after_their_init():
    seen = []

    def observer(cls, args, kwargs):
        return None, lambda layer, a, k: seen.append((layer.name, a, k, layer.built))

    with _keras_internals.layer_constructions(observer):
        TwoDense(name="outer")
        keras.layers.Dense(2, name="d")
        with _keras_internals.constructions_paused():
            keras.layers.Dense(2, name="paused")
    assert [name for name, *_ in seen] == ["outer", "d"]  # Not `TwoDense.hidden`.
    assert seen[1][1:] == ((2,), {"name": "d"}, False)
    assert type(keras.layers.Dense(1)) is keras.layers.Dense  # The hook is gone.


def test_layer_constructions_can_give_back_an_existing_layer_without_reinit():
    existing = keras.layers.Dense(3, name="kept")
    existing.build((None, 2))
    reports = []

    def observer(cls, args, kwargs):
        return existing, lambda layer, a, k: reports.append(a)

    with _keras_internals.layer_constructions(observer):
        again = keras.layers.Dense(5, name="ignored")
    assert again is existing and type(again) is keras.layers.Dense
    assert again.units == 3 and again.built and reports == [(5,)]


def test_after_build_runs_once_the_weights_exist_and_rename_variable_renames():
    layer = keras.layers.DepthwiseConv2D(3)
    _keras_internals.after_build(
        layer, lambda built: _keras_internals.rename_variable(built.kernel, "depthwise_kernel"))
    layer(np.ones((1, 5, 5, 2), "float32"))
    assert layer.kernel.path.endswith("/depthwise_kernel") and layer.kernel.name == "depthwise_kernel"


def test_set_training_changes_only_the_training_context_block():
    assert not _keras_internals.set_training(True)
    with _keras_internals.training_context(False):
        assert _keras_internals.set_training(True)
        assert _keras_internals.current_training() is True


def test_layer_tree_lists_a_layer_and_its_sublayers():
    model = TwoDense()
    assert _keras_internals.layer_tree(model) == [model, model.hidden]


def test_a_keras_models_updates_are_tf1s_empty_list_in_model_fn():
    seen = []

    def model_fn(features, labels, mode):
        model = keras.Sequential([keras.layers.Dense(2), keras.layers.BatchNormalization()])
        logits = model(features)
        seen.append(model.updates)  # MobileNet: control_dependencies(model.updates).
        return kte.TPUEstimatorSpec(mode, predictions={"y": logits})

    program = kte.EstimatorModel(model_fn, predict_batch_size=8)
    program.predict(np.ones((8, 3), "float32"), verbose=0)
    assert seen and all(updates == [] for updates in seen)
