"""TF1 checkpoints: init_from_checkpoint (model_fn, scaffold_fn), warm start, the TF1 global step."""

import numpy as np
import pytest

import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1

from model_fns import store_value
from model_fns import write_tf1_checkpoint

KERNEL = np.arange(6, dtype="float32").reshape(3, 2) / 10
BIAS = np.array([0.5, -0.5], "float32")


@pytest.fixture(scope="module")
def tf1_checkpoint(tmp_path_factory):
    return write_tf1_checkpoint(str(tmp_path_factory.mktemp("tf1")), {
        "bert/dense/kernel": KERNEL,
        "bert/dense/bias": BIAS,
        "bert/pooler/kernel": np.ones((5, 5), "float32"),
    })


def _network(features):
    """`encoder/dense/{kernel,bias}` (2 units), `encoder/pooler/kernel` (2x2), `head/kernel`."""
    with tf1.variable_scope("encoder"):
        hidden = tf1.layers.dense(features["x"], 2, name="dense")
        pooled = tf1.layers.dense(hidden, 2, use_bias=False, name="pooler")
    return tf1.layers.dense(pooled, 1, use_bias=False, name="head")


def _make_model_fn(init, where="scaffold_fn", learning_rate=0.0):
    def model_fn(features, labels, mode, params):
        pred = _network(features)
        loss = tf1.reduce_mean(tf1.square(pred - labels))
        scaffold_fn = None
        if where == "model_fn":
            init()
        else:
            def scaffold_fn():
                init()
                return tf1.train.Scaffold()
        train_op = tf1.train.GradientDescentOptimizer(learning_rate).minimize(
            loss, global_step=tf1.train.get_or_create_global_step()
        )
        return kte.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, scaffold_fn=scaffold_fn)

    return model_fn


def _data():
    x = np.random.default_rng(0).normal(size=(16, 3)).astype("float32")
    return {"x": x}, x[:, :1]


def _trained(model_fn, steps=1):
    model = kte.EstimatorModel(model_fn, train_batch_size=16)
    model.compile()
    model.fit(_data(), epochs=steps, verbose=0)
    return model


@pytest.mark.parametrize("where", ["scaffold_fn", "model_fn"])
def test_init_from_checkpoint_maps_a_checkpoint_scope_onto_a_model_scope(tf1_checkpoint, where):
    model = _trained(_make_model_fn(
        lambda: tf1.train.init_from_checkpoint(tf1_checkpoint, {"bert/": "encoder/"}), where
    ))
    np.testing.assert_array_equal(store_value(model, "encoder/dense/kernel"), KERNEL)
    np.testing.assert_array_equal(store_value(model, "encoder/dense/bias"), BIAS)
    (report,) = model.init_from_checkpoint_reports
    assert report == kte.checkpoint.WarmStartReport(
        matched=["encoder/dense/kernel", "encoder/dense/bias"],
        unmatched=[],
        shape_mismatched=[("encoder/pooler/kernel", (2, 2), (5, 5))],
    )


def test_init_from_checkpoint_reports_model_variables_missing_from_the_checkpoint(tf1_checkpoint):
    model = _trained(_make_model_fn(
        lambda: tf1.train.init_from_checkpoint(tf1_checkpoint, {"/": "head/"})
    ))
    (report,) = model.init_from_checkpoint_reports
    assert report == kte.checkpoint.WarmStartReport([], ["head/kernel"], [])


def test_init_from_checkpoint_with_a_bert_style_name_map(tf1_checkpoint):
    def init():
        # BERT's get_assignment_map_from_checkpoint: same names, from list_variables.
        names = {name for name, _ in tf1.train.list_variables(tf1_checkpoint)}
        assignment_map = {}
        for var in tf1.trainable_variables():
            name = var.name.split(":")[0].replace("encoder/", "bert/", 1)
            if name in names and "pooler" not in name:
                assignment_map[name] = var
        tf1.train.init_from_checkpoint(tf1_checkpoint, assignment_map)

    model = _trained(_make_model_fn(init, where="model_fn"))
    np.testing.assert_array_equal(store_value(model, "encoder/dense/kernel"), KERNEL)
    assert model.init_from_checkpoint_reports[0].matched == [
        "encoder/dense/kernel", "encoder/dense/bias"
    ]


def test_init_from_checkpoint_sets_initial_values_only(tf1_checkpoint):
    model_fn = _make_model_fn(
        lambda: tf1.train.init_from_checkpoint(tf1_checkpoint, {"bert/": "encoder/"}),
        where="model_fn", learning_rate=0.1,
    )
    model = _trained(model_fn, steps=2)
    trained = store_value(model, "encoder/dense/kernel")
    assert not np.allclose(trained, KERNEL)
    model.evaluate(_data(), batch_size=16, verbose=0)  # Builds EVAL: model_fn asks again.
    np.testing.assert_array_equal(store_value(model, "encoder/dense/kernel"), trained)
    assert len(model.init_from_checkpoint_reports) == 2
    assert model.init_from_checkpoint_reports[1].matched == []  # Nothing new to initialize.


@pytest.mark.parametrize(
    "assignment_map, message",
    [
        (["bert/"], "`assignment_map` of init_from_checkpoint must be a dict"),
        ({"bert/dense/kernel": "encoder/dense/nothing"}, "is not a variable of the model"),
    ],
)
def test_init_from_checkpoint_rejects_bad_maps(tf1_checkpoint, assignment_map, message):
    model_fn = _make_model_fn(
        lambda: tf1.train.init_from_checkpoint(tf1_checkpoint, assignment_map)
    )
    with pytest.raises(ValueError, match=message):
        _trained(model_fn)


def test_init_from_checkpoint_of_a_missing_checkpoint_names_the_path(tmp_path):
    missing = str(tmp_path / "nothing" / "model.ckpt-1")
    model_fn = _make_model_fn(
        lambda: tf1.train.init_from_checkpoint(missing, {"/": "/"}), where="model_fn"
    )
    with pytest.raises(ValueError, match="No checkpoint found at .*nothing"):
        _trained(model_fn)


def test_init_from_checkpoint_outside_model_fn_is_an_error(tf1_checkpoint):
    with pytest.raises(RuntimeError, match="inside a model_fn"):
        tf1.train.init_from_checkpoint(tf1_checkpoint, {"/": "/"})


def test_list_and_load_variable_read_a_tf1_checkpoint(tf1_checkpoint):
    assert tf1.train.list_variables(tf1_checkpoint) == [
        ("bert/dense/bias", [2]), ("bert/dense/kernel", [3, 2]),
        ("bert/pooler/kernel", [5, 5]), ("global_step", []),
    ]
    np.testing.assert_array_equal(tf1.train.load_variable(tf1_checkpoint, "bert/dense/bias"), BIAS)
    assert int(tf1.train.load_variable(tf1_checkpoint, "global_step")) == 5000


def test_warm_start_never_loads_the_tf1_global_step(tf1_checkpoint):
    model = _trained(_make_model_fn(lambda: None, where="model_fn"))
    report = kte.checkpoint.warm_start(
        model, kte.WarmStartSettings(tf1_checkpoint, vars_to_warm_start=[".*"])
    )
    assert "global_step" not in report.matched + report.unmatched
    assert model.global_step == 1


def test_estimator_checkpoints_and_resumes_the_tf1_global_step(tmp_path):
    def input_fn(params):
        import tensorflow as tf

        dataset = tf.data.Dataset.from_tensor_slices(_data()).repeat()
        return dataset.batch(params["batch_size"], drop_remainder=True)

    def make():
        return kte.TPUEstimator(
            _make_model_fn(lambda: None, where="model_fn", learning_rate=0.1),
            config=kte.RunConfig(model_dir=str(tmp_path)), train_batch_size=16, eval_batch_size=16,
        )

    make().train(input_fn, steps=3)
    assert kte.checkpoint.load_variable(str(tmp_path), "global_step") == 3
    estimator = make()
    estimator.train(input_fn, steps=2)
    assert estimator.get_variable_value("global_step") == 5
    assert estimator.evaluate(input_fn, steps=1)["global_step"] == 5
