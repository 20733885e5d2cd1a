"""What sampled_spancat draws with (spans/negatives/draws.py): the batch a
sampler sees, the candidates an update trains on, the run's stream and the
missampling counts."""
import numpy
import pytest
import spacy
from spacy.strings import hash_string
from thinc.api import NumpyOps

from spacy_imbalance.spans.candidates import enumerate_candidates
from spacy_imbalance.spans.gold import SpanTargets
from spacy_imbalance.spans.negatives import (
    AllNegatives,
    Missampling,
    NegativeDraws,
    TopNegativesV2,
    UniformNegativesV2,
    WeightedNegatives,
    check_sampler,
    sampling_batch,
    sentence_key,
    training_rows,
)
from spacy_imbalance.spans.negatives.draws import hash_text

OPS = NumpyOps()


class View:
    """What a model says of every candidate, recording what was asked."""

    def __init__(self, n: int) -> None:
        self.n, self.asked = n, []

    def logits(self):
        self.asked.append("logits")
        return numpy.zeros((self.n, 3), dtype="f")

    def vectors(self):
        self.asked.append("vectors")
        return numpy.ones((self.n, 4), dtype="f")

    def hidden(self):
        self.asked.append("hidden")
        return numpy.full((self.n, 2), 2.0, dtype="f")


@pytest.mark.parametrize(
    "sampler,asked",
    [(AllNegatives(), []), (WeightedNegatives(0.5), ["logits"]), (TopNegativesV2(0.5), ["hidden"]), (UniformNegativesV2(0.5), [])],
)
def test_a_sampler_gets_what_it_asks_for_and_nothing_else(sampler, asked):
    nlp = spacy.blank("en")
    docs = [nlp.make_doc("a b c"), nlp.make_doc("d e")]
    candidates = enumerate_candidates(OPS, [3, 2], 2)
    view = View(len(candidates))
    batch = sampling_batch(sampler, OPS, candidates, OPS.alloc1i(len(candidates)), view, step=7, docs=docs, seed=3)
    assert view.asked == asked and batch.step == 7
    assert (batch.probs is not None) == ("logits" in asked) and (batch.hidden is not None) == ("hidden" in asked)
    if "logits" in asked:  # the softmax of the logits
        numpy.testing.assert_allclose(batch.probs, 1 / 3)
    if sampler.needs_doc_keys:
        assert batch.doc_keys == [sentence_key(docs[0], 3), sentence_key(docs[1], 3)]
    else:
        assert batch.doc_keys is None


def test_no_candidates_ask_the_model_nothing():
    candidates = enumerate_candidates(OPS, [0], 2)
    view = View(0)
    sampling_batch(WeightedNegatives(0.5), OPS, candidates, OPS.alloc1i(0), view, step=0, docs=[], seed=0)
    assert view.asked == []


def test_a_sentence_key_follows_the_words_and_the_seed():
    nlp = spacy.blank("en")
    key = sentence_key(nlp.make_doc("Kate met Bob"), 1)
    # the key of spacy.strings.hash_string("Kate\x1fmet\x1fBob"): runs resumed across releases draw the same
    assert key == 3574137557749606803
    assert key == sentence_key(nlp.make_doc("Kate met Bob"), 1)
    assert key != sentence_key(nlp.make_doc("Kate met Bob"), 2) and key != sentence_key(nlp.make_doc("Kate met Rob"), 1)
    assert 0 <= key < 2**64


@pytest.mark.parametrize("text", ["", "ORTH", "PERSON", "Kate\x1fmet\x1fBob", "Zoë 😀"])
def test_the_typed_hash_is_spacys_hash_string(text):
    # issue 46: hash_string is untyped (Cython, left out of spacy/strings.pyi);
    # its typed stand-in hashes alike, symbols and the empty string included
    assert hash_text(text) == hash_string(text)


def test_an_update_trains_on_gold_drawn_and_known_negatives_once_each():
    classes = OPS.asarray1i([0, 2, 0, 0, -1, 1, 0])
    known = numpy.asarray([False, False, True, False, False, False, True])
    negatives = OPS.asarray1i([0, 2])
    assert training_rows(OPS, SpanTargets(classes, None, 2, 0), negatives).tolist() == [0, 1, 2, 5]
    assert training_rows(OPS, SpanTargets(classes, None, 2, 0, known), negatives).tolist() == [0, 1, 2, 5, 6]


def test_missampling_counts_since_the_last_reset_and_over_the_run():
    counts = Missampling()
    assert counts.count(None, OPS.asarray1i([0, 1]), [3, 9]) == [3, 9] and counts.rate() is None
    masked = numpy.asarray([True, False, True, False])
    assert counts.count(masked, OPS.asarray1i([0, 1, 3]), [3, 9]) == [4, 12]
    assert counts.count(masked, OPS.asarray1i([2]), [4, 12]) == [5, 13]
    assert counts.rate() == pytest.approx(2 / 4)
    assert counts.rate(reset=True) == pytest.approx(2 / 4) and counts.rate() is None


def test_a_reseeded_stream_draws_again_what_it_drew():
    candidates = enumerate_candidates(OPS, [6, 4], 3)
    classes = OPS.alloc1i(len(candidates))
    draws = NegativeDraws()
    assert draws.reseed(OPS, 11) == 11
    kwargs = dict(step=0, docs=[], seed=11)
    first = draws.draw(UniformNegativesV2(0.5, fixed=False), OPS, candidates, classes, View(len(candidates)), **kwargs)
    draws.reseed(OPS, 11)
    again = draws.draw(UniformNegativesV2(0.5, fixed=False), OPS, candidates, classes, View(len(candidates)), **kwargs)
    assert first.tolist() == again.tolist() and len(first) == 3 + 2
    numpy.random.seed(5)
    seed = draws.reseed(OPS)
    numpy.random.seed(5)
    assert seed == draws.reseed(OPS)  # a new seed follows numpy's global state (spacy train's seed)


def test_a_component_setting_that_is_no_sampler_is_named():
    with pytest.raises(ValueError, match=r"sampled_spancat 'x': negatives must be a sampler from spacy_imbalance.spans.negatives .* got dict"):
        check_sampler({"rate": 0.5}, "sampled_spancat 'x'")
