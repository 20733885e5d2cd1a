"""SpanScorer's sampled forward (``SampledSpans``): what ``select`` sees of
every candidate, the scoring of the selected ones alone, the head's own
dropout, and the features computed only when asked."""
import numpy
import pytest
import spacy
from spacy.util import registry
from thinc.api import Config, set_dropout_rate

from spacy_imbalance.models.span_scorer import (
    SampledScores,
    SampledSpans,
    candidate_features,
    candidate_hidden,
    candidate_logits,
    n_widths,
    set_max_width,
)
from spacy_imbalance.pipeline.sampled_spancat import DEFAULT_SAMPLED_SPANCAT_MODEL
from spacy_imbalance.spans.candidates import enumerate_candidates


def build(dropout: float = 0.1, initialize: bool = True):
    config = Config().from_str(DEFAULT_SAMPLED_SPANCAT_MODEL)
    config["model"]["dropout"] = dropout
    model = registry.resolve(config)["model"]
    set_max_width(model, 3)
    model.get_ref("output_layer").set_dim("nO", 3)
    nlp = spacy.blank("en")
    docs = [nlp.make_doc("one two three four"), nlp.make_doc("five six")]
    if initialize:
        model.initialize(X=docs)
        W = model.get_ref("output_layer").get_param("W")
        model.get_ref("output_layer").set_param("W", numpy.random.default_rng(0).normal(size=W.shape).astype("f"))
    return model, docs, enumerate_candidates(model.ops, [len(doc) for doc in docs], 3)


def test_the_selected_candidates_alone_are_scored_and_backpropagated():
    model, docs, candidates = build(dropout=0.0)
    seen = []

    def select(features):
        seen.append(features)
        return model.ops.asarray1i([0, 4, 9])

    set_dropout_rate(model, 0.0)
    scores, backprop = model.begin_update(SampledSpans(docs, candidates, select))
    assert isinstance(scores, SampledScores) and scores.selected.tolist() == [0, 4, 9]
    full = model.predict(docs).logits
    # three rows go through the head's matmuls in other BLAS blocks than all of them: float32 rounding then differs by
    # a few ulps of the largest terms (logits reach ~17), so a logit near zero needs a tolerance on that scale (CI saw
    # -0.017557 against -0.017571)
    scale = float(numpy.abs(full).max())
    numpy.testing.assert_allclose(scores.logits, full[[0, 4, 9]], rtol=1e-5, atol=1e-5 * scale)
    # what select saw: every candidate, without dropout, from the update's own token vectors
    (features,) = seen
    numpy.testing.assert_allclose(features.logits(), full, rtol=1e-6, atol=1e-6)
    numpy.testing.assert_array_equal(features.logits(), candidate_logits(model, features.tokens, candidates))
    numpy.testing.assert_array_equal(features.hidden(), candidate_hidden(model, features.tokens, candidates))
    assert features.vectors().shape == (len(candidates), model.get_ref("span_repr").get_dim("nO"))
    d_docs = backprop(model.ops.alloc2f(3, 3) + 1.0)
    assert d_docs is not None
    tok2vec = model.get_ref("tok2vec")
    assert any(float(numpy.abs(node.get_grad(name)).sum()) > 0 for node in tok2vec.walk() for name in node.param_names if node.has_grad(name))


def test_nothing_selected_scores_nothing():
    model, docs, candidates = build()
    head_calls = []
    head = model.get_ref("head")
    original = head._func
    head._func = lambda m, X, is_train: head_calls.append(1) or original(m, X, is_train)
    scores, backprop = model.begin_update(SampledSpans(docs, candidates, lambda features: model.ops.alloc1i(0)))
    assert scores.selected.shape == (0,) and scores.logits.shape == (0, 0) and head_calls == []
    with pytest.raises(ValueError, match="select chose no candidate"):
        backprop(scores.logits)


def test_training_keeps_the_heads_own_dropout():
    """[training] dropout (set on the whole model) is the encoder's; the
    sampled forward puts the head's own rate back."""
    model, docs, candidates = build(dropout=0.3)
    set_dropout_rate(model, 0.05)
    model.begin_update(SampledSpans(docs, candidates, lambda features: model.ops.asarray1i([1])))
    rates = {node.attrs["dropout_rate"] for node in model.get_ref("scorer").walk() if "dropout_rate" in node.attrs}
    assert rates == {0.3}


def test_features_run_the_tok2vec_once_and_only_when_asked(monkeypatch):
    """Outside training a sampler that needs no model output costs no
    encoding (and runs on an uninitialized model)."""
    model, docs, candidates = build()
    tok2vec = model.get_ref("tok2vec")
    calls, original = [], tok2vec._func
    monkeypatch.setattr(tok2vec, "_func", lambda m, X, is_train: calls.append((len(X), is_train)) or original(m, X, is_train))
    features = candidate_features(model, docs, candidates)
    assert calls == []
    numpy.testing.assert_array_equal(features.logits(), candidate_logits(model, features.tokens, candidates))
    features.hidden()
    assert calls == [(2, False)]


def test_the_width_embedding_follows_the_first_max_width():
    model, _, _ = build(initialize=False)
    assert n_widths(model) == 3 and model.attrs["max_span_width"] == 3
    set_max_width(model, 3)
    assert n_widths(model) == 3
