"""The AUC margin loss's parameter layer: its starting values and that it
refuses to be run as a layer."""
import pytest

from spacy_imbalance.layers.auc_margin_params import build_auc_margin_params


def test_parameters_start_at_the_met_margin():
    layer = build_auc_margin_params()
    layer.set_dim("nT", 3)
    layer.initialize()
    assert layer.get_param("a").tolist() == [1.0, 1.0, 1.0]
    assert layer.get_param("b").tolist() == [0.0, 0.0, 0.0]
    assert layer.attrs["auc_alpha"] == [0.0, 0.0, 0.0]
    assert sorted(layer.param_names) == ["a", "b"]


def test_it_has_no_forward_pass():
    layer = build_auc_margin_params()
    layer.set_dim("nT", 1)
    layer.initialize()
    with pytest.raises(NotImplementedError, match="no forward pass"):
        layer.predict(None)
