"""Top-Neg v2: Eq. 3 on the scoring head's hidden layer (v1's tests, on the
span representations, are in test_negatives.py)."""
import math

import numpy
import pytest
from spacy.util import registry
from thinc.api import Config, NumpyOps

from spacy_imbalance.spans.candidates import enumerate_candidates
from spacy_imbalance.spans.negatives import SamplingBatch, TopNegatives, TopNegativesV2, make_generator

OPS = NumpyOps()


def make_batch(lengths, max_width=1, positives=(), **kw):
    cands = enumerate_candidates(OPS, lengths, max_width)
    classes = numpy.zeros(len(cands), dtype="int32")
    classes[list(positives)] = 1
    return SamplingBatch(OPS, cands, classes, **kw)


def resolve(block: str):
    return registry.resolve(Config().from_str(f"[x]\n{block}"))["x"]


def test_v2_similarity_by_hand_on_the_hidden_layer():
    # candidates = the 4 tokens; 0 and 1 are positives
    hidden = numpy.array([[3.0, 0.0], [0.0, 2.0], [1.0, 1.0], [2.0, -2.0]], dtype="f")
    batch = make_batch([4], positives=[0, 1], hidden=hidden)
    phi = TopNegativesV2(ratio=0.5).similarity(batch)
    # mean cosine with the unit positives (1, 0) and (0, 1)
    assert phi[2] == pytest.approx((math.sqrt(0.5) + math.sqrt(0.5)) / 2)
    assert phi[3] == pytest.approx((math.sqrt(0.5) - math.sqrt(0.5)) / 2, abs=1e-7)
    assert TopNegativesV2(ratio=0.5).sample(batch, make_generator(OPS, 0)).tolist() == [2]


def test_v2_ranks_on_the_hidden_layer_not_on_the_span_representations():
    """The span representations say negative 3 resembles the positives, the
    hidden layer says negative 2 does: v1 keeps 3 and v2 keeps 2."""
    vectors = numpy.array([[1.0, 0.0], [1.0, 0.1], [-1.0, 0.0], [1.0, 0.05]], dtype="f")
    hidden = numpy.array([[1.0, 0.0], [1.0, 0.1], [1.0, 0.05], [-1.0, 0.0]], dtype="f")
    batch = make_batch([4], positives=[0, 1], vectors=vectors, hidden=hidden)
    assert TopNegatives(ratio=0.5).sample(batch, make_generator(OPS, 0)).tolist() == [3]
    assert TopNegativesV2(ratio=0.5).sample(batch, make_generator(OPS, 0)).tolist() == [2]


def test_v2_keeps_the_negatives_closest_to_the_positives():
    """Positives around one direction of a random hidden space, k negatives
    planted near it among noise: v2 keeps exactly the planted ones."""
    rng = numpy.random.default_rng(0)
    n, dim, k = 40, 16, 4
    direction = rng.normal(size=dim)
    hidden = rng.normal(size=(n, dim))
    positives, planted = [0, 1, 2], [10, 20, 30, 35]
    hidden[positives + planted] = direction + 0.1 * rng.normal(size=(len(positives) + len(planted), dim))
    batch = make_batch([n], positives=positives, hidden=hidden.astype("f"))
    sampler = TopNegativesV2(ratio=k / (n - len(positives)))
    assert sampler.sample(batch, make_generator(OPS, 0)).tolist() == planted
    phi = sampler.similarity(batch)
    others = [i for i in range(n) if i not in positives + planted]
    assert phi[planted].min() > phi[others].max()


def test_v2_ratio_is_per_batch_and_draws_only_negatives():
    batch = make_batch([6, 6], max_width=2, positives=[0, 5])
    batch = batch._replace(hidden=numpy.random.default_rng(1).normal(size=(len(batch.candidates), 5)).astype("f"))
    chosen = TopNegativesV2(ratio=0.25).sample(batch, make_generator(OPS, 0))
    assert len(chosen) == math.ceil(0.25 * (len(batch.candidates) - 2))
    assert (batch.classes[chosen] == 0).all() and chosen.tolist() == sorted(set(chosen.tolist()))


def test_v2_without_positives_falls_back_to_a_uniform_sample():
    batch = make_batch([6, 6], max_width=2)  # 22 negatives, no positive, no hidden layer
    sampler, generator = TopNegativesV2(ratio=0.1), make_generator(OPS, 0)
    draws = [tuple(sampler.sample(batch, generator).tolist()) for _ in range(50)]
    assert all(len(d) == 3 for d in draws)  # ⌈0.1·22⌉
    assert len(set(draws)) > 40  # random, not a fixed top


def test_v2_asks_for_the_hidden_layer_only():
    sampler = TopNegativesV2()
    assert (sampler.needs_hidden, sampler.needs_vectors, sampler.needs_probs, sampler.needs_model) == (True, False, False, True)
    assert not TopNegatives().needs_hidden
    with pytest.raises(ValueError, match="needs the scoring head's hidden layer"):
        sampler.sample(make_batch([3], positives=[0]), make_generator(OPS, 0))


def test_v2_registered_default_and_validation():
    sampler = resolve('@misc = "spacy-imbalance.top_negatives.v2"')
    assert isinstance(sampler, TopNegativesV2) and sampler.ratio == 0.05
    with pytest.raises(ValueError, match=r"ratio must be in \(0, 1\], got 1.5"):
        resolve('@misc = "spacy-imbalance.top_negatives.v2"\nratio = 1.5')


@pytest.mark.parametrize(
    "sampler,message",
    [
        (TopNegatives(), r"^top_negatives needs the span representations \(SamplingBatch\.vectors\)$"),
        (TopNegativesV2(), r"^top_negatives\.v2 needs the scoring head's hidden layer \(SamplingBatch\.hidden\)$"),
    ],
    ids=["v1", "v2"],
)
def test_similarity_without_its_vectors_is_named(sampler, message):
    # issue 46: similarity read batch.vectors unchecked (None * None, a TypeError)
    with pytest.raises(ValueError, match=message):
        sampler.similarity(make_batch([3], positives=[0]))


def test_similarity_stays_float32():
    # the positives are counted in the vectors' float type: an int64 count
    # would make the mean, and every Phi, float64
    vectors = numpy.array([[3.0, 0.0], [0.0, 2.0], [1.0, 1.0]], dtype="f")
    phi = TopNegatives().similarity(make_batch([3], positives=[0, 1], vectors=vectors))
    assert phi.dtype == numpy.float32 and phi[2] == pytest.approx(math.sqrt(0.5))
