"""The AUC margin loss's parameter layer: its starting values and that it
refuses to be run as a layer."""
import pytest
from thinc.api import Adam

from spacy_imbalance.layers.auc_margin_params import build_auc_margin_params
from spacy_imbalance.models.two_task_tagger import get_alpha, set_alpha


def test_parameters_start_at_the_met_margin():
    layer = build_auc_margin_params()
    layer.set_dim("nT", 3)
    layer.initialize()
    assert layer.get_param("a").tolist() == [1.0, 1.0, 1.0]
    assert layer.get_param("b").tolist() == [0.0, 0.0, 0.0]
    assert layer.get_param("alpha").tolist() == [0.0, 0.0, 0.0]
    assert sorted(layer.param_names) == ["a", "alpha", "b"]


def test_the_optimizer_never_moves_alpha():
    """alpha is a param without a gradient: only the loss's ascent sets it."""
    layer = build_auc_margin_params()
    layer.set_dim("nT", 2)
    layer.initialize()
    layer.set_param("alpha", layer.ops.asarray1f([0.5, 0.25]))
    layer.inc_grad("a", layer.ops.asarray1f([1.0, 1.0]))
    layer.finish_update(Adam(0.1))
    assert layer.get_param("alpha").tolist() == [0.5, 0.25]
    assert layer.get_param("a").tolist() != [1.0, 1.0]


def test_alpha_of_a_pipeline_saved_with_alpha_as_an_attr():
    """Pipelines saved before alpha was a param kept it in attrs["auc_alpha"]."""
    layer = build_auc_margin_params()
    layer.set_dim("nT", 2)
    layer.attrs["auc_alpha"] = [0.5, 0.0]
    assert get_alpha(layer).tolist() == [0.5, 0.0]
    set_alpha(layer, layer.ops.asarray1f([0.25, 1.0]))
    assert get_alpha(layer).tolist() == [0.25, 1.0]


def test_it_has_no_forward_pass():
    layer = build_auc_margin_params()
    layer.set_dim("nT", 1)
    layer.initialize()
    with pytest.raises(NotImplementedError, match="no forward pass"):
        layer.predict(None)
