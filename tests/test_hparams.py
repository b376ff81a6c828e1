"""`tf1.contrib.training.HParams`: TF1's hyper-parameter container and its `parse` grammar.

`tf.contrib` left TensorFlow with 2.0, so there is no live reference: the
expected values are TF1's documented semantics (the `HParams` and
`parse_values` docstrings of `tf.contrib.training`, TF 1.15) and the ways
the TPU programs use it (AmoebaNet, NAS-Net, RetinaNet, MnasNet).
"""

import json

import pytest

from keras_tpu_estimator.compat import v1 as tf1

HParams = tf1.contrib.training.HParams


def _hparams():
    return HParams(learning_rate=0.1, num_layers=3, use_bn=True, optimizer="sgd",
                   sizes=[64, 32], rates=[0.5])


def test_keywords_become_attributes_and_values():
    hparams = _hparams()
    assert hparams.learning_rate == 0.1 and hparams.sizes == [64, 32]
    assert hparams.values() == {"learning_rate": 0.1, "num_layers": 3, "use_bn": True,
                                "optimizer": "sgd", "sizes": [64, 32], "rates": [0.5]}
    assert "num_layers" in hparams and "missing" not in hparams


@pytest.mark.parametrize("text, expected", [
    ("learning_rate=0.3", {"learning_rate": 0.3}),
    ("learning_rate=1", {"learning_rate": 1.0}),            # float hparam from an int text
    ("num_layers=12", {"num_layers": 12}),
    ("num_layers = -4", {"num_layers": -4}),
    ("use_bn=false", {"use_bn": False}),
    ("use_bn=False", {"use_bn": False}),
    ("use_bn=0", {"use_bn": False}),
    ("use_bn=true", {"use_bn": True}),
    ("optimizer=adam_w", {"optimizer": "adam_w"}),
    ("sizes=[1,2,3]", {"sizes": [1, 2, 3]}),
    ("sizes=[1 2, 3]", {"sizes": [1, 2, 3]}),             # commas or spaces split lists
    ("rates=[1e-3,0.25]", {"rates": [1e-3, 0.25]}),
    ("learning_rate=0.5, num_layers=2,use_bn=false",
     {"learning_rate": 0.5, "num_layers": 2, "use_bn": False}),
    ("", {}),
])
def test_parse_overrides_by_type(text, expected):
    hparams = _hparams()
    assert hparams.parse(text) is hparams
    values = _hparams().values()
    values.update(expected)
    assert hparams.values() == values
    for name, value in expected.items():
        assert type(getattr(hparams, name)) is type(value)


@pytest.mark.parametrize("text, message", [
    ("num_layers=2.5", "Could not parse hparam 'num_layers' of type 'int' with value '2.5'"),
    ("use_bn=yes", "Could not parse hparam 'use_bn' of type 'bool' with value 'yes'"),
    ("learning_rate=fast", "Could not parse hparam 'learning_rate' of type 'float'"),
    ("sizes=[1,x]", "Could not parse hparam 'sizes' of type 'int' with value '1,x'"),
    ("unknown=1", "Unknown hyperparameter type for unknown"),
    ("num_layers=1,num_layers=2", "Multiple assignments to variable 'num_layers'"),
    ("sizes[0]=[1]", "Assignment of a list to a list index."),
    ("=3", "Malformed hyperparameter value: =3"),
    ("num_layers", "Malformed hyperparameter value: num_layers"),
    ("num_layers=1;use_bn=0", "Could not parse hparam 'num_layers'"),
    ("num_layers=2,sizes=3", "Must pass a list for multi-valued parameter: sizes."),
    ("num_layers=[2]", "Must not pass a list for single-valued parameter: num_layers"),
])
def test_parse_errors(text, message):
    with pytest.raises(ValueError, match=__import__("re").escape(message)):
        _hparams().parse(text)


def test_parse_values_returns_indexed_assignments_as_dicts():
    parsed = tf1.contrib.training.parse_values("x=5,L=[1,2],arr[1]=3",
                                               {"x": int, "L": int, "arr": int})
    assert parsed == {"x": 5, "L": [1, 2], "arr": {1: 3}}


@pytest.mark.parametrize("name, value, expected", [
    ("learning_rate", 2, 2.0),            # an int widens to a float
    ("num_layers", 7, 7),
    ("optimizer", "adam", "adam"),
    ("sizes", [8], [8]),
    ("rates", [1, 0.5], [1.0, 0.5]),
])
def test_set_hparam_casts_compatible_values(name, value, expected):
    hparams = _hparams()
    hparams.set_hparam(name, value)
    assert getattr(hparams, name) == expected
    assert type(getattr(hparams, name)) is type(expected)


@pytest.mark.parametrize("name, value", [
    ("num_layers", 2.5),        # no float to int
    ("use_bn", 1),              # no number to bool
    ("num_layers", True),       # no bool to int
    ("optimizer", 3),           # no number to string
    ("learning_rate", "0.1"),   # no string to number
])
def test_set_hparam_refuses_incompatible_types(name, value):
    with pytest.raises(ValueError, match=f"Could not cast hparam '{name}' of type"):
        _hparams().set_hparam(name, value)


def test_set_hparam_of_unknown_name_is_a_key_error():
    with pytest.raises(KeyError):
        _hparams().set_hparam("missing", 1)


def test_add_hparam_then_set_as_nasnet_does():
    hparams = _hparams()
    hparams.add_hparam("normal_cell_operations", ["separable_5x5_2", "none"])
    hparams.set_hparam("normal_cell_operations", ["avg_pool_3x3"])
    assert hparams.normal_cell_operations == ["avg_pool_3x3"]


@pytest.mark.parametrize("name, value, message", [
    ("values", 1, "Hyperparameter name is reserved: values"),
    ("num_layers", 4, "Hyperparameter name is reserved: num_layers"),
    ("empty", [], "Multi-valued hyperparameters cannot be empty: empty"),
])
def test_add_hparam_errors(name, value, message):
    with pytest.raises(ValueError, match=message):
        _hparams().add_hparam(name, value)


def test_none_valued_hparams_take_anything():
    hparams = HParams(checkpoint=None)
    hparams.set_hparam("checkpoint", "gs://bucket/model")
    assert hparams.checkpoint == "gs://bucket/model"


def test_override_from_dict_and_del_hparam():
    hparams = _hparams().override_from_dict({"num_layers": 5, "sizes": [1]})
    assert (hparams.num_layers, hparams.sizes) == (5, [1])
    hparams.del_hparam("sizes")
    hparams.del_hparam("never_there")
    assert "sizes" not in hparams and not hasattr(hparams, "sizes")


def test_json_round_trip_leaves_out_callables():
    hparams = _hparams()
    hparams.add_hparam("activation", max)
    text = hparams.to_json(sort_keys=True)
    assert json.loads(text) == {k: v for k, v in _hparams().values().items()}
    restored = HParams(learning_rate=0.0, num_layers=0, use_bn=False, optimizer="",
                       sizes=[0], rates=[0.0]).parse_json(text)
    assert restored.values() == _hparams().values()


@pytest.mark.parametrize("key, default, expected", [
    ("num_layers", None, 3),
    ("num_layers", 10, 3),
    ("missing", "x", "x"),
    ("sizes", [1], [64, 32]),
])
def test_get(key, default, expected):
    assert _hparams().get(key, default) == expected


@pytest.mark.parametrize("key, default", [("num_layers", "ten"), ("sizes", 1)])
def test_get_refuses_a_default_of_another_type(key, default):
    with pytest.raises(ValueError, match=f"Hparam '{key}' of type .* is incompatible"):
        _hparams().get(key, default)


def test_str_and_repr_list_sorted_values():
    hparams = HParams(b=1, a="x")
    assert str(hparams) == "[('a', 'x'), ('b', 1)]"
    assert repr(hparams) == "HParams([('a', 'x'), ('b', 1)])"


def test_hparam_def_is_refused_with_advice():
    with pytest.raises(ValueError, match="hparam_def=.*not supported.*parse_json"):
        HParams(hparam_def=object())


def test_model_structure_is_kept():
    hparams = HParams(model_structure="cells", a=1)
    assert hparams.get_model_structure() == "cells"
    hparams.set_model_structure("other")
    assert hparams.get_model_structure() == "other"
