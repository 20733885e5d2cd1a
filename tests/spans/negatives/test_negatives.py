"""Negative samplers: counts, eligibility, distributions, schedules, seeding
and config validation."""
import math

import numpy
import pytest
from spacy.util import registry
from thinc.api import Config, NumpyOps

from spacy_imbalance.spans.candidates import enumerate_candidates
from spacy_imbalance.spans.negatives import (
    AllNegatives,
    ConstantTemperature,
    SamplingBatch,
    SqrtTemperature,
    TopNegatives,
    UniformNegatives,
    WeightedNegatives,
    make_generator,
)
from spacy_imbalance.spans.gold import UNKNOWN

OPS = NumpyOps()


def make_batch(lengths, max_width=4, positives=(), unknown=(), **kw):
    cands = enumerate_candidates(OPS, lengths, max_width)
    classes = numpy.zeros(len(cands), dtype="int32")
    classes[list(positives)] = 1
    classes[list(unknown)] = UNKNOWN
    return SamplingBatch(OPS, cands, classes, **kw)


def check_sample(batch, chosen):
    assert len(set(chosen.tolist())) == len(chosen), "drawn twice"
    assert (batch.classes[chosen] == 0).all(), "drew a gold span or an unknown one"
    assert list(chosen) == sorted(chosen)


def draw_frequencies(sampler, batch, seed, n_draws, n_chosen):
    """How often each candidate of ``batch`` is in ``n_draws`` samples from
    one generator seeded ``seed``, each sample ``n_chosen`` long: the
    distribution tests compare these with the probabilities by hand."""
    generator = make_generator(OPS, seed)
    counts = numpy.zeros(len(batch.candidates))
    for _ in range(n_draws):
        chosen = sampler.sample(batch, generator)
        assert len(chosen) == n_chosen
        counts[chosen] += 1
    return counts / n_draws


@pytest.mark.parametrize("rate", [0.1, 0.35, 0.7, 1.0])
def test_uniform_draws_ceil_rate_n_per_sentence(rate):
    batch = make_batch([10, 3, 7, 1], positives=[0, 5, 40], unknown=[1, 2])
    chosen = UniformNegatives(rate).sample(batch, make_generator(OPS, 0))
    check_sample(batch, chosen)
    per_doc = numpy.bincount(batch.candidates.doc_ids[chosen], minlength=4)
    eligible = numpy.bincount(batch.candidates.doc_ids[batch.negatives], minlength=4)
    expected = [min(math.ceil(round(rate * n, 9)), e) for n, e in zip([10, 3, 7, 1], eligible)]
    assert per_doc.tolist() == expected
    if rate == 0.7:
        assert per_doc[0] == 7  # not 8: 0.7 * 10 is 7.000000000000001 in floating point


def test_uniform_caps_at_the_negatives_a_sentence_has():
    batch = make_batch([2], max_width=2, positives=[0])  # 3 candidates, 2 negatives
    assert UniformNegatives(1.0).sample(batch, make_generator(OPS, 0)).tolist() == [1, 2]


def test_uniform_is_uniform():
    batch = make_batch([6], max_width=2, positives=[3])  # 11 candidates, 10 negatives, 5 drawn (⌈0.7·6⌉)
    freq = draw_frequencies(UniformNegatives(0.7), batch, seed=1, n_draws=4000, n_chosen=5)
    assert freq[3] == 0
    freq = numpy.delete(freq, 3)
    # each negative is in a sample with probability 5/10; sd of the mean ≈ 0.008
    assert numpy.abs(freq - 0.5).max() < 0.035


def test_all_negatives_takes_every_negative():
    batch = make_batch([5, 4], positives=[2], unknown=[7])
    chosen = AllNegatives().sample(batch, make_generator(OPS, 0))
    check_sample(batch, chosen)
    assert len(chosen) == len(batch.candidates) - 2


def test_weighted_r_is_eq_16_by_hand():
    probs = numpy.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.7, 0.1]])
    r = WeightedNegatives(mu=2.0).weights(probs, numpy)
    u1 = -2 * 0.5 * math.log(0.5)
    u2 = -(0.2 * math.log(0.2) + 0.7 * math.log(0.7) + 0.1 * math.log(0.1))
    assert r.tolist() == pytest.approx([0.0, u1 * 1.0**2, u2 * (1 + 0.2 - 0.7) ** 2])


@pytest.mark.parametrize("rate", [0.1, 0.35, 0.7, 1.0])
def test_weighted_draws_ceil_rate_n_per_sentence(rate):
    """As the uniform sampler: ⌈rate·n⌉ per sentence (capped at its
    negatives), never a gold or unknown span, whatever the distributions."""
    batch = make_batch([10, 3, 7, 1], positives=[0, 5, 40], unknown=[1, 2])
    probs = numpy.random.default_rng(0).dirichlet([1.0, 1.0, 1.0], size=len(batch.candidates))
    batch = batch._replace(probs=probs)
    chosen = WeightedNegatives(rate, mu=8.0, temperature=lambda step: 2.0).sample(batch, make_generator(OPS, 0))
    check_sample(batch, chosen)
    per_doc = numpy.bincount(batch.candidates.doc_ids[chosen], minlength=4)
    eligible = numpy.bincount(batch.candidates.doc_ids[batch.negatives], minlength=4)
    assert per_doc.tolist() == [min(math.ceil(round(rate * n, 9)), e) for n, e in zip([10, 3, 7, 1], eligible)]


def test_weighted_draws_in_proportion_to_softmax_r_over_t():
    """One draw per sentence: P(candidate) must be softmax(r/T) over its
    sentence's negatives (the Gumbel-top-k trick draws exactly that)."""
    batch = make_batch([2], max_width=2)  # 3 candidates
    # ⌈0.3·2⌉ = 1 draw; r = [0, ln 2, ln 2·(1 - 0.5)^1]
    probs = numpy.array([[1.0, 0.0], [0.5, 0.5], [0.25, 0.75]])
    sampler = WeightedNegatives(rate=0.3, mu=1.0, temperature=lambda step: 0.5)
    r = sampler.weights(probs, numpy)
    expected = numpy.exp(r / 0.5) / numpy.exp(r / 0.5).sum()
    batch = batch._replace(probs=probs)
    freq = draw_frequencies(sampler, batch, seed=3, n_draws=6000, n_chosen=1)
    assert freq == pytest.approx(expected, abs=0.025)
    # the high-r candidate gets most of the mass; a likely entity (r = 0) the least
    assert freq.argmax() == r.argmax() and freq.argmin() == 0


def test_weighted_high_mu_avoids_likely_entities():
    """Candidates the model calls entities (v near -1) are almost never drawn
    with mu = 8, although they are as uncertain as the others."""
    batch = make_batch([8], max_width=2)  # 15 candidates, ⌈0.7·8⌉ = 6 drawn
    probs = numpy.tile([0.4, 0.6], (15, 1))  # entity-like: v = -0.2
    probs[::2] = [0.6, 0.4]  # O-like, same entropy: v = 0
    batch = batch._replace(probs=probs)
    sampler = WeightedNegatives(rate=0.7, mu=8.0, temperature=lambda step: 0.05)
    generator = make_generator(OPS, 0)
    counts = numpy.zeros(15)
    for _ in range(500):
        counts[sampler.sample(batch, generator)] += 1
    assert counts[::2].sum() > 20 * counts[1::2].sum()


def test_sqrt_temperature_follows_its_schedule():
    schedule = SqrtTemperature(total_steps=100, n_epochs=4)
    assert [schedule(step) for step in (0, 24, 25, 50, 75, 99, 100, 10_000)] == pytest.approx(
        [2.0, 2.0, math.sqrt(3), math.sqrt(2), 1.0, 1.0, 1.0, 1.0]
    )


def test_top_neg_keeps_the_negatives_most_similar_to_all_positives():
    batch = make_batch([4], max_width=1, positives=[0, 1])  # candidates = tokens
    vectors = numpy.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0]])
    batch = batch._replace(vectors=vectors)
    sampler = TopNegatives(ratio=0.5)  # ⌈0.5·2⌉ = 1 of the 2 negatives
    phi = sampler.similarity(batch)
    assert phi[2] == pytest.approx(math.sqrt(0.5)) and phi[3] == pytest.approx(0.0)
    assert sampler.sample(batch, make_generator(OPS, 0)).tolist() == [2]


def test_top_neg_ratio_is_per_batch():
    batch = make_batch([6, 6], max_width=2, positives=[0])
    batch = batch._replace(vectors=numpy.random.default_rng(0).normal(size=(len(batch.candidates), 5)))
    chosen = TopNegatives(ratio=0.25).sample(batch, make_generator(OPS, 0))
    check_sample(batch, chosen)
    assert len(chosen) == math.ceil(0.25 * (len(batch.candidates) - 1))


def test_top_neg_without_positives_falls_back_to_a_uniform_sample():
    batch = make_batch([6, 6], max_width=2)  # 22 negatives, no positive, no vectors
    sampler, generator = TopNegatives(ratio=0.1), make_generator(OPS, 0)
    draws = [tuple(sampler.sample(batch, generator).tolist()) for _ in range(50)]
    assert all(len(d) == 3 for d in draws)  # ⌈0.1·22⌉
    assert len(set(draws)) > 40  # random, not a fixed top


def test_same_seed_same_sample():
    batch = make_batch([9, 5])
    a = UniformNegatives(0.5).sample(batch, make_generator(OPS, 42))
    b = UniformNegatives(0.5).sample(batch, make_generator(OPS, 42))
    c = UniformNegatives(0.5).sample(batch, make_generator(OPS, 43))
    assert a.tolist() == b.tolist() and a.tolist() != c.tolist()


def resolve(block: str):
    return registry.resolve(Config().from_str(f"[x]\n{block}"))["x"]


@pytest.mark.parametrize(
    "block,message",
    [
        ('@misc = "spacy-imbalance.uniform_negatives.v1"\nrate = 0', r"rate must be in \(0, 1\], got 0"),
        ('@misc = "spacy-imbalance.uniform_negatives.v1"\nrate = 1.5', r"rate must be in \(0, 1\]"),
        ('@misc = "spacy-imbalance.weighted_negatives.v1"\nrate = -0.1', r"rate must be in \(0, 1\]"),
        ('@misc = "spacy-imbalance.weighted_negatives.v1"\nmu = -1', "mu must be >= 0, got -1"),
        ('@misc = "spacy-imbalance.top_negatives.v1"\nratio = 0', r"ratio must be in \(0, 1\]"),
        ('@misc = "spacy-imbalance.sqrt_temperature.v1"\ntotal_steps = 0', "total_steps must be an integer >= 1"),
        ('@misc = "spacy-imbalance.constant_temperature.v1"\nvalue = 0', r"value must be in \[1e-06, 1e\+06\]"),
    ],
)
def test_invalid_settings_fail_at_config_resolution(block, message):
    with pytest.raises(ValueError, match=message):
        resolve(block)


@pytest.mark.parametrize("value", ["inf", "1e400", "nan", "1e-7", "2e6"])
def test_constant_temperature_is_finite_and_in_range(value):
    """Issue 31, L6: T = inf passed (r / T = 0: uniform sampling by another name)."""
    with pytest.raises(ValueError, match=r"constant_temperature: value must be in \[1e-06, 1e\+06\] .*got"):
        resolve(f'@misc = "spacy-imbalance.constant_temperature.v1"\nvalue = {value}')
    with pytest.raises(ValueError, match="constant_temperature: value must be in"):
        ConstantTemperature(float(value))


@pytest.mark.parametrize("value", [1e-6, 1.0, 1e6])
def test_constant_temperature_bounds_are_accepted(value):
    assert ConstantTemperature(value)(0) == value


def test_registered_defaults():
    assert resolve('@misc = "spacy-imbalance.uniform_negatives.v1"').rate == 0.7
    weighted = resolve('@misc = "spacy-imbalance.weighted_negatives.v1"')
    assert (weighted.rate, weighted.mu, weighted.temperature(0)) == (0.7, 8.0, math.sqrt(10))
    assert resolve('@misc = "spacy-imbalance.top_negatives.v1"').ratio == 0.05
