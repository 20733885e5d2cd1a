"""SpanScorer.v1: settings validation and the whole model's forward/backward
(its span representation layer: tests/layers/test_span_representation.py)."""
import numpy
import pytest
import spacy
from spacy.util import registry
from thinc.api import Config, NumpyOps

from spacy_imbalance.pipeline.sampled_spancat import DEFAULT_SAMPLED_SPANCAT_MODEL

OPS = NumpyOps()


@pytest.mark.parametrize(
    "setting,value,message",
    [
        ("representation", "mean", "'mean' is not typing.Literal"),
        ("hidden_width", 0, "hidden_width must be an integer >= 1"),
        ("dropout", 1.0, r"dropout must be in \[0, 1\)"),
        ("width_embedding", -3, "width_embedding must be an integer >= 1"),
    ],
)
def test_invalid_model_settings(setting, value, message):
    config = Config().from_str(DEFAULT_SAMPLED_SPANCAT_MODEL)
    config["model"][setting] = value
    with pytest.raises(ValueError, match=message):
        registry.resolve(config)


def test_whole_model_scores_every_candidate_and_backpropagates():
    config = Config().from_str(DEFAULT_SAMPLED_SPANCAT_MODEL)
    model = registry.resolve(config)["model"]
    model.get_ref("span_repr").set_dim("nV", 3)
    model.attrs["max_span_width"] = 3
    model.get_ref("output_layer").set_dim("nO", 4)
    nlp = spacy.blank("en")
    docs = [nlp.make_doc("one two three four"), nlp.make_doc(""), nlp.make_doc("five")]
    model.initialize(X=docs)
    output_layer = model.get_ref("output_layer")
    # the zero-initialised output layer would stop every gradient below it
    output_layer.set_param("W", numpy.random.default_rng(0).normal(size=(4, 256)).astype("f"))
    scores, backprop = model.begin_update(docs)
    assert scores.logits.shape == (4 + 3 + 2 + 1, 4)
    assert scores.candidates.doc_counts == [9, 0, 1]
    backprop(model.ops.alloc2f(*scores.logits.shape) + 1.0)
    tok2vec = model.get_ref("tok2vec")
    grads = [node.get_grad(name) for node in tok2vec.walk() for name in node.param_names if node.has_grad(name)]
    assert grads and any(float(numpy.abs(g).sum()) > 0 for g in grads)


def test_hidden_ref_is_the_output_layers_input():
    """``hidden`` (Top-Neg v2's space) is the scorer's first layer: the output
    layer applied to it gives the scorer's logits."""
    config = Config().from_str(DEFAULT_SAMPLED_SPANCAT_MODEL)
    model = registry.resolve(config)["model"]
    model.get_ref("span_repr").set_dim("nV", 3)
    model.attrs["max_span_width"] = 3
    model.get_ref("output_layer").set_dim("nO", 4)
    model.initialize(X=[spacy.blank("en").make_doc("one two three")])
    scorer, hidden, output_layer = (model.get_ref(name) for name in ("scorer", "hidden", "output_layer"))
    assert scorer.layers == [hidden, output_layer]
    output_layer.set_param("W", numpy.random.default_rng(0).normal(size=(4, 256)).astype("f"))
    X = numpy.random.default_rng(1).normal(size=(5, model.get_ref("span_repr").get_dim("nO"))).astype("f")
    H = hidden.predict(X)
    assert H.shape == (5, 256)
    numpy.testing.assert_allclose(output_layer.predict(H), scorer.predict(X), rtol=1e-5)
