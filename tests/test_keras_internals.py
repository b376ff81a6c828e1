"""Pins the Keras internals this library relies on (one test per reach)."""

import jax
import jax.numpy as jnp
import keras
import numpy as np
import pytest

from keras_tpu_estimator import _keras_internals


def test_bound_values_are_read_and_restored_even_on_error():
    variable = keras.Variable(1.0)
    with pytest.raises(RuntimeError):
        with _keras_internals.bound_values([variable], [np.float32(5.0)]):
            assert float(variable.value) == 5.0
            raise RuntimeError
    assert float(variable.value) == 1.0


def test_assignments_inside_bound_values_are_visible_then_undone():
    variable = keras.Variable(1.0)

    @jax.jit
    def f(x):
        with _keras_internals.bound_values([variable], [x]):
            variable.assign(variable.value * 3)
            return _keras_internals.current_values([variable])[0]

    assert float(f(2.0)) == 6.0
    assert float(variable.value) == 1.0


def test_optimizers_can_be_created_with_bound_values_under_jit():
    variable = keras.Variable(1.0)

    @jax.jit
    def f(x):
        with _keras_internals.bound_values([variable], [x]):
            return keras.optimizers.Adam(0.1).learning_rate.value + variable.value

    assert float(f(2.0)) == pytest.approx(2.1)


@pytest.mark.parametrize("training", [True, False])
def test_training_context_reaches_layers_called_from_a_function(training):
    layer = keras.layers.Dropout(0.999, seed=0)
    with _keras_internals.training_context(training):
        out = layer(np.ones((100,), "float32"))
    assert bool(np.any(np.asarray(out) == 0)) is training


def test_pinned_layer_path_holds_wherever_the_layer_is_called():
    layer = keras.layers.Dense(2, name="inner")
    _keras_internals.pin_layer_path(layer, "outer")
    with keras.name_scope("elsewhere"):
        layer(np.ones((1, 3), "float32"))
    assert layer.kernel.path == "outer/inner/kernel"


def test_current_scope_path_follows_name_scopes():
    with keras.name_scope("a"), keras.name_scope("b"):
        assert _keras_internals.current_scope_path() == "a/b"
    assert _keras_internals.current_scope_path() == ""


@pytest.mark.parametrize(
    "rate, expected",
    [(0.5, None), (lambda: 0.25, 0.25), (keras.optimizers.schedules.ExponentialDecay(1.0, 10, 0.5), None)],
    ids=["float", "callable", "schedule"],
)
def test_traced_learning_rate(rate, expected):
    assert _keras_internals.traced_learning_rate(keras.optimizers.SGD(rate)) == expected


def test_learning_rate_override_applies_then_restores():
    optimizer = keras.optimizers.SGD(1.0)
    variable = keras.Variable(1.0)
    optimizer.build([variable])
    with _keras_internals.learning_rate_override(optimizer, 0.5):
        optimizer.apply([keras.ops.ones(())], [variable])
    assert float(variable.value) == 0.5
    assert float(optimizer.learning_rate.value) == 1.0


def test_assignments_ignored_changes_no_variable_then_restores():
    variable = keras.Variable(np.ones((2,), "float32"))
    with _keras_internals.assignments_ignored():
        value = np.full((2,), 5.0, "float32")
        np.testing.assert_array_equal(variable.assign(value), value)
        variable.assign_add(np.ones((2,), "float32"))  # Keras's assign_add calls assign.
        variable.assign_sub(np.ones((2,), "float32"))
        optimizer = keras.optimizers.SGD(1.0)
        optimizer.apply([np.ones((2,), "float32")], [variable])
        np.testing.assert_array_equal(variable.value, np.ones(2))
        with pytest.raises(ValueError, match="shape"):
            variable.assign(np.ones((3,), "float32"))
    variable.assign(np.full((2,), 4.0, "float32"))
    np.testing.assert_array_equal(variable.value, np.full(2, 4.0))


def test_batch_moments_and_reduction_axes_of_batch_normalization():
    layer = keras.layers.BatchNormalization(axis=-1)
    inputs = np.random.default_rng(0).normal(size=(4, 3, 2, 5)).astype("float32")
    layer.build(inputs.shape)
    assert list(_keras_internals.batch_reduction_axes(layer)) == [0, 1, 2]
    mean, variance = _keras_internals.batch_moments(layer, inputs, None)
    np.testing.assert_allclose(mean, inputs.mean(axis=(0, 1, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(variance, inputs.var(axis=(0, 1, 2)), rtol=1e-5, atol=1e-6)


def test_top_level_name_scope_starts_paths_at_the_top_then_restores():
    with keras.name_scope("outer"):
        with _keras_internals.top_level_name_scope():
            assert _keras_internals.current_scope_path() == ""
            variable = keras.Variable(1.0, name="w")
        assert _keras_internals.current_scope_path() == "outer"
    assert variable.path == "w"


def test_tf1_iteration_raises_type_error_for_a_symbolic_leading_dimension_only():
    seen = []

    def f(x):
        with _keras_internals.tf1_iteration():
            seen.append(len(list(x[0])))  # A known length iterates as before.
            with pytest.raises(TypeError, match="only iterable when eager execution"):
                iter(x)
        with pytest.raises(jax.errors.InconclusiveDimensionOperation):
            iter(x)  # Outside the block: JAX's own error.
        return x

    (b,) = jax.export.symbolic_shape("b")
    jax.export.export(jax.jit(f))(jax.ShapeDtypeStruct((b, 3), "float32"))
    assert seen == [3]
    assert jax.core.Tracer.__iter__ is not _keras_internals.tracer_iteration._iter



def test_tracers_have_the_given_names_inside_tracer_names():
    names = []

    def f(x, y):
        with _keras_internals.tracer_names([(x, "input_ids")]):
            z = x * 2
            names.extend([x.name, y.name, z.name, y.name])
            return jnp.sum(z + y)  # Named tracers stay ordinary operands.

    assert float(jax.jit(f)(jnp.ones(3), jnp.ones(3))) == 9.0
    assert names == ["input_ids", "tensor", "tensor_1", "tensor"]


def test_tracers_have_no_name_outside_tracer_names():
    def f(x):
        with _keras_internals.tracer_names([(x, "x")]):
            pass
        return x.name

    with pytest.raises(AttributeError, match="has no attribute name"):
        jax.jit(f)(jnp.ones(3))
    assert "name" not in vars(jax.core.Tracer)


def _views():
    return _keras_internals.tracer_views(
        lambda shape: ("view", shape), lambda dtype: ("view", dtype),
        {"get_shape": lambda tracer: "method"})


def test_tracer_views_show_the_users_code_its_views_and_jax_its_own():
    seen = {}

    def f(x):
        with _views():
            seen["user"] = (x.shape, x.dtype, x.get_shape())
            y = jnp.reshape(x, (3, 2))  # JAX read x.shape itself.
        seen["jnp"] = y.shape
        return x

    jax.jit(f)(jnp.ones((2, 3)))
    assert seen["user"] == (("view", (2, 3)), ("view", np.dtype("float32")), "method")
    assert seen["jnp"] == (3, 2)


def test_tracer_views_give_an_exports_symbolic_dimension_tf1s_unknown_value():
    seen = []

    def f(x):
        with _views():
            seen.append(x.shape[1][0].value)  # The view got JAX's tuple: (b, 3).
        return x

    (b,) = jax.export.symbolic_shape("b")
    jax.export.export(jax.jit(f))(jax.ShapeDtypeStruct((b, 3), "float32"))
    assert seen == [None]


def test_tracer_views_are_gone_after_the_block():
    with _views():
        pass
    assert "get_shape" not in vars(jax.core.Tracer)
    assert not hasattr(jax.export.symbolic_shape("b")[0], "value")
    jax.jit(lambda x: x + len(x.shape))(jnp.ones(2))


def test_layers_have_tf1s_empty_updates_inside_the_block_only():
    layer = keras.layers.BatchNormalization()
    with _keras_internals.tf1_layer_updates():
        assert layer.updates == [] and layer.get_updates_for(None) == []
    assert not hasattr(layer, "updates")


@pytest.mark.filterwarnings("ignore:The `native_serialization` parameter is deprecated")
def test_hidden_endpoint_is_converted_but_not_a_signature(tmp_path):
    import tensorflow as tf

    dense = keras.layers.Dense(2)
    dense.build((None, 3))
    archive = keras.export.ExportArchive()
    archive.track(dense)
    converted = _keras_internals.hidden_endpoint(
        archive, "model", lambda x: dense(x), input_signature=[tf.TensorSpec((None, 3))]
    )

    @tf.function(input_signature=[tf.TensorSpec((None, 3), name="x")])
    def serve(x):
        return {"y": converted(x) + 1.0}

    serve.get_concrete_function()
    archive.add_endpoint("serve", serve)
    archive.write_out(str(tmp_path / "m"), verbose=False)
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert sorted(loaded.signatures) == ["serve", "serving_default"]
    x = np.ones((2, 3), "float32")
    np.testing.assert_allclose(
        loaded.signatures["serve"](x=tf.constant(x))["y"].numpy(), dense(x) + 1.0, atol=1e-6
    )


def test_stateless_scope_as_bound_values_allows_new_variables_then_restores():
    from keras.src.backend.common.stateless_scope import get_stateless_scope

    v = keras.Variable(1.0)
    with keras.StatelessScope(state_mapping=[(v, jnp.asarray(5.0))]) as scope:
        with pytest.raises(ValueError, match="stateless scope"):
            keras.Variable(0.0)
        with _keras_internals.stateless_scope_as_bound_values([v]):
            assert get_stateless_scope() is None
            assert float(v.value) == 5.0
            assert float(keras.Variable(2.0).value) == 2.0
            v.assign(7.0)
        assert get_stateless_scope() is scope
        assert float(v.value) == 5.0
    assert float(v.value) == 1.0


def test_saved_model_proto_parses_saved_model_pb(tmp_path):
    import tensorflow as tf

    module = tf.Module()
    module.f = tf.function(lambda x: x + 1.0, input_signature=[tf.TensorSpec((None,))])
    tf.saved_model.save(module, str(tmp_path), signatures=module.f)
    proto = _keras_internals.saved_model_proto()
    proto.ParseFromString((tmp_path / "saved_model.pb").read_bytes())
    assert "serving_default" in proto.meta_graphs[0].signature_def


@pytest.mark.parametrize("rate", [0.1, lambda: 0.2, keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)])
def test_raw_learning_rate_is_what_the_optimizer_was_given(rate):
    raw = _keras_internals.raw_learning_rate(keras.optimizers.SGD(rate))
    if isinstance(rate, float):
        assert isinstance(raw, keras.Variable) and float(raw.value) == pytest.approx(rate)
    else:
        assert raw is rate


def test_take_initial_epoch_reads_what_backup_and_restore_set_once(tmp_path):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    backup = keras.callbacks.BackupAndRestore(str(tmp_path), delete_checkpoint=False)
    model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=3, verbose=0, callbacks=[backup])
    fresh = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    fresh.compile(optimizer="sgd", loss="mse")
    backup.set_model(fresh)
    backup.on_train_begin()
    assert _keras_internals.take_initial_epoch(fresh) == 3
    assert _keras_internals.take_initial_epoch(fresh) is None


def test_mlir_context_reads_back_the_stablehlo_of_a_jax_export():
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    exported = jax.export.export(jax.jit(jax.numpy.sin))(jax.ShapeDtypeStruct((3,), "float32"))
    with _keras_internals.mlir_context():
        module = ir.Module.parse(
            stablehlo.deserialize_portable_artifact_str(exported.mlir_module_serialized)
        )
        assert "stablehlo.sine" in str(module)


def test_write_saved_model_fingerprint_hashes_the_saved_model_as_it_is(tmp_path):
    import tensorflow as tf

    module = tf.Module()
    module.f = tf.function(lambda x: x + 1.0, input_signature=[tf.TensorSpec((None,))])
    tf.saved_model.save(module, str(tmp_path), signatures=module.f)
    before = tf.saved_model.experimental.read_fingerprint(str(tmp_path)).signature_def_hash
    proto = _keras_internals.saved_model_proto()
    proto.ParseFromString((tmp_path / "saved_model.pb").read_bytes())
    proto.meta_graphs[0].signature_def["serving_default"].method_name = "tensorflow/serving/regress"
    (tmp_path / "saved_model.pb").write_bytes(proto.SerializeToString())
    _keras_internals.write_saved_model_fingerprint(str(tmp_path))
    assert tf.saved_model.experimental.read_fingerprint(str(tmp_path)).signature_def_hash != before


def test_initialize_random_seed_across_processes_keeps_a_seed_already_set():
    keras.utils.set_random_seed(7)
    expected = np.asarray(keras.random.uniform((3,)))
    keras.utils.set_random_seed(7)
    _keras_internals.initialize_random_seed_across_processes()
    assert np.array_equal(np.asarray(keras.random.uniform((3,))), expected)


def test_variables_created_lists_new_variables_and_set_initial_values_gives_them_values():
    with _keras_internals.variables_created() as created:
        variable = keras.Variable(np.zeros((2,), "float32"))
    assert created == [variable]
    assert _keras_internals.variable_sharding(variable) is None  # No distribution.
    _keras_internals.set_initial_values([variable], [np.ones((2,), "float32")])
    np.testing.assert_array_equal(np.asarray(variable), [1.0, 1.0])
    keras.Variable(np.zeros(()))  # After the block: not listed.
    assert created == [variable]


def test_jaxpr_outputs_only_keeps_the_flagged_outputs_and_what_they_need():
    constant = np.arange(3.0, dtype="float32")
    closed = jax.make_jaxpr(lambda: (jnp.sin(constant), jnp.cos(constant) * 2))()
    cut = _keras_internals.jaxpr_outputs_only(closed, [False, True])
    (value,) = jax.extend.core.jaxpr_as_fun(cut)()
    np.testing.assert_allclose(value, np.cos(constant) * 2, rtol=1e-6)
    assert "sin" not in str(cut.jaxpr)


def test_jaxpr_outputs_only_drops_effects_the_outputs_do_not_need():
    printed = []

    def traced():
        jax.debug.callback(lambda: printed.append(1))
        return (jnp.ones(2) * 3,)

    closed = jax.make_jaxpr(traced)()
    cut = _keras_internals.jaxpr_outputs_only(closed, [True])
    (value,) = jax.jit(jax.extend.core.jaxpr_as_fun(cut))()
    np.testing.assert_allclose(value, [3.0, 3.0])
    assert printed == [] and not cut.jaxpr.effects


def test_a_shared_patch_is_installed_by_the_first_block_and_removed_by_the_last():
    from keras_tpu_estimator._keras_internals.shared_patch import SharedPatch

    calls = []
    patch = SharedPatch(lambda *args: calls.append(("install", args)),
                        lambda: calls.append(("uninstall",)))
    with patch.active(1):
        with patch.active(2):
            assert calls == [("install", (1,))]
    assert calls == [("install", (1,)), ("uninstall",)]


def test_a_keras_initializer_draws_through_random_bits_of_a_constant_threefry_key():
    # What `batched_random` batches: Keras's seeds are concrete, wrapped as
    # threefry keys, and drawn by `random_bits` inside `jax.random`'s jits.
    closed = jax.make_jaxpr(lambda: keras.initializers.GlorotUniform(seed=1)((3, 4)))()
    (wrap,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "random_wrap"]
    assert wrap.params["impl"].name == "threefry2x32"
    assert wrap.invars[0] in closed.jaxpr.constvars
    calls = [e for e in closed.jaxpr.eqns if e.primitive.name == "jit"]
    assert [e.primitive.name for call in calls for e in call.params["jaxpr"].jaxpr.eqns
            if e.primitive.name == "random_bits"] == ["random_bits"]
    assert jax.config.jax_threefry_partitionable


def test_jax_compiles_through_compile_or_get_cached_with_a_closure_over_each_buffer_callback(
        monkeypatch):
    from jax._src import compiler
    from jax.experimental import buffer_callback

    from keras_tpu_estimator._keras_internals import callback_cache

    def on_host(ctx, out, x):
        np.asarray(out)[...] = np.asarray(x)

    seen = []
    original = compiler.compile_or_get_cached

    def spy(backend, computation, devices, options, host_callbacks, *rest, **kwargs):
        seen.extend(host_callbacks)
        return original(backend, computation, devices, options, host_callbacks, *rest, **kwargs)

    monkeypatch.setattr(compiler, "compile_or_get_cached", spy)
    spec = jax.ShapeDtypeStruct((3,), jnp.float32)
    jax.jit(lambda x: buffer_callback.buffer_callback(on_host, spec)(x) + 1)(jnp.zeros(3))
    assert [callback_cache.buffer_callback_function(c) for c in seen] == [on_host]


@pytest.mark.parametrize("make, expected", [
    (lambda x: jax.lax.conv(x, x, (1, 1), "SAME"), True),
    (lambda x: jax.jit(lambda y: jax.lax.conv(y, y, (1, 1), "SAME"))(x), True),
    (lambda x: jax.lax.scan(lambda c, _: (jax.lax.conv(c, c, (1, 1), "SAME"), None), x,
                            None, length=2)[0], True),
    (lambda x: jax.lax.cond(True, lambda y: jax.lax.conv(y, y, (1, 1), "SAME"),
                            lambda y: y, x), True),
    (lambda x: jax.grad(lambda y: jnp.sum(jax.nn.relu(y)))(x), False),
], ids=["top", "jit", "scan", "cond", "none"])
def test_uses_primitive_finds_it_in_every_jaxpr_a_jaxpr_holds(make, expected):
    closed = jax.make_jaxpr(make)(jnp.ones((1, 1, 3, 3)))
    assert _keras_internals.uses_primitive(closed, "conv_general_dilated") is expected


def test_tensorflow_keeps_its_eager_context_as_a_capsule_of_the_c_pointer():
    from keras_tpu_estimator._keras_internals import tf_eager_context  # noqa: PLC0415

    address = tf_eager_context.pointer()
    assert isinstance(address, int) and address != 0
    assert tf_eager_context.pointer() == address
