"""The prior correction of uniform_negatives.v2 and weighted_negatives.v3
(values by hand, and a sampled model corrected back to the full-negative
one), and uniform_negatives.v2's draw kept per sentence."""
import math

import numpy
import pytest
from spacy.util import registry
from thinc.api import Config, NumpyOps

from spacy_imbalance.spans.candidates import covering_width, enumerate_candidates, n_candidates
from spacy_imbalance.spans.negatives import (
    SamplingBatch,
    UniformNegatives,
    UniformNegativesV2,
    WeightedNegativesV2,
    WeightedNegativesV3,
    make_generator,
)

OPS = NumpyOps()


def test_shift_by_hand():
    # 10 tokens, width 8: 8·10 - 28 = 52 candidates, ⌈0.7·10⌉ = 7 drawn;
    # 3 tokens: 6 candidates, ⌈2.1⌉ = 3 drawn; an empty doc: no candidate
    candidates = enumerate_candidates(OPS, [10, 3, 0], 8)
    assert candidates.doc_counts == [52, 6, 0]
    shift = UniformNegativesV2(0.7, correction=1.0).prior_shift(OPS, candidates)
    expected = [math.log(52 / 7)] * 52 + [math.log(6 / 3)] * 6
    numpy.testing.assert_allclose(shift, expected, rtol=1e-6)
    half = UniformNegativesV2(0.7, correction=0.5).prior_shift(OPS, candidates)
    numpy.testing.assert_allclose(half, numpy.asarray(expected) / 2, rtol=1e-6)
    # a draw that takes every candidate needs no correction (1 token: 1
    # candidate, 1 drawn); 2 tokens: 3 candidates, 2 drawn
    assert UniformNegativesV2(1.0, correction=1.0).prior_shift(OPS, enumerate_candidates(OPS, [1], 8)).tolist() == [0.0]
    numpy.testing.assert_allclose(UniformNegativesV2(1.0, correction=1.0).prior_shift(OPS, enumerate_candidates(OPS, [2], 8)), [math.log(3 / 2)] * 3, rtol=1e-6)


def test_released_samplers_and_zero_correction_shift_nothing():
    candidates = enumerate_candidates(OPS, [10], 8)
    assert UniformNegatives(0.7).prior_shift(OPS, candidates) is None
    assert WeightedNegativesV2(0.7).prior_shift(OPS, candidates) is None
    assert UniformNegativesV2(0.7, correction=0.0).prior_shift(OPS, candidates) is None
    # the adaptive sampler corrects by its expected share, as the uniform one
    numpy.testing.assert_allclose(
        WeightedNegativesV3(0.7, correction=1.0).prior_shift(OPS, candidates),
        UniformNegativesV2(0.7, correction=1.0).prior_shift(OPS, candidates),
    )


def _fit_logistic(x, y, weights=None, n_iter=3000, lr=0.5):
    """Logistic regression p(entity | x) = sigmoid(a x + b) by gradient descent."""
    a = b = 0.0
    w = numpy.ones_like(x) if weights is None else weights
    for _ in range(n_iter):
        p = 1.0 / (1.0 + numpy.exp(-(a * x + b)))
        g = (p - y) * w
        a -= lr * float((g * x).sum() / w.sum())
        b -= lr * float(g.sum() / w.sum())
    return a, b


def test_corrected_sampled_model_matches_the_full_negative_model():
    """A one-feature model of p(entity | x) fitted on gold spans plus the
    negatives UniformNegativesV2 draws, then corrected by its prior_shift,
    gives the probabilities of the same model fitted on every negative: the
    sampled fit alone overstates them several-fold."""
    rng = numpy.random.default_rng(0)
    lengths = [12] * 400
    candidates = enumerate_candidates(OPS, lengths, 6)
    n = len(candidates)
    # a known prior: entities are rare, and likelier as x grows
    x = rng.normal(size=n)
    p_true = 1.0 / (1.0 + numpy.exp(-(2.0 * x - 4.5)))
    classes = (rng.random(n) < p_true).astype("int32")
    sampler = UniformNegativesV2(0.7, correction=1.0, fixed=False)
    batch = SamplingBatch(OPS, candidates, classes)
    generator = make_generator(OPS, 0)
    # many draws, as many epochs: each fit row weighted by how often it was trained on
    seen = numpy.zeros(n)
    for _ in range(20):
        seen[sampler.sample(batch, generator)] += 1
    seen[classes > 0] = 20
    a_s, b_s = _fit_logistic(x, classes.astype(float), weights=seen + 1e-12)
    a_f, b_f = _fit_logistic(x, classes.astype(float))
    grid = numpy.linspace(0.5, 2.5, 9)
    full = 1.0 / (1.0 + numpy.exp(-(a_f * grid + b_f)))
    sampled = 1.0 / (1.0 + numpy.exp(-(a_s * grid + b_s)))
    # every doc has 12 tokens: one shift for all; O's logit += shift is the
    # entity's logit -= shift in a two-class model
    shift = float(sampler.prior_shift(OPS, candidates)[0])
    corrected = 1.0 / (1.0 + numpy.exp(-(a_s * grid + b_s - shift)))
    assert (sampled > 2 * full)[:3].all()
    numpy.testing.assert_allclose(corrected, full, rtol=0.15, atol=0.01)


def _masked_draws(sampler, n_epochs, seed=0, key_seed=0):
    """How often each negative of 50 ten-token sentences is drawn over
    ``n_epochs`` updates of the same sentences."""
    lengths = [10] * 50
    candidates = enumerate_candidates(OPS, lengths, 4)
    classes = numpy.zeros(len(candidates), dtype="int32")
    keys = [1000 * key_seed + i for i in range(50)]
    batch = SamplingBatch(OPS, candidates, classes, doc_keys=keys)
    generator = make_generator(OPS, seed)
    counts = numpy.zeros(len(candidates))
    for _ in range(n_epochs):
        counts[sampler.sample(batch, generator)] += 1
    return counts


def test_fixed_draw_is_the_same_every_epoch_so_the_cumulative_rate_is_the_per_draw_rate():
    fixed = _masked_draws(UniformNegativesV2(0.7, fixed=True), 13)
    assert set(numpy.unique(fixed).tolist()) == {0.0, 13.0}
    per_draw = 7 / n_candidates(10, 4)
    # every candidate stands for a missed entity: the share ever drawn
    assert (fixed > 0).mean() == pytest.approx(per_draw, abs=1e-9)
    fresh = _masked_draws(UniformNegativesV2(0.7, fixed=False), 13)
    # a fresh draw per update reaches 1 - (1 - s)^13 of them
    assert (fresh > 0).mean() == pytest.approx(1 - (1 - per_draw) ** 13, abs=0.05)
    # other sentences (keys) draw other negatives
    other = _masked_draws(UniformNegativesV2(0.7, fixed=True), 1, key_seed=1)
    assert not numpy.array_equal(other > 0, fixed > 0)


def test_fixed_draw_needs_sentence_keys():
    batch = SamplingBatch(OPS, enumerate_candidates(OPS, [5], 4), numpy.zeros(14, dtype="int32"))
    with pytest.raises(ValueError, match="doc_keys"):
        UniformNegativesV2(0.7, fixed=True).sample(batch, make_generator(OPS, 0))


@pytest.mark.parametrize(
    "name,settings,message",
    [
        ("uniform_negatives.v2", {"correction": 1.5}, "uniform_negatives.v2: correction"),
        ("uniform_negatives.v2", {"correction": float("nan")}, "uniform_negatives.v2: correction"),
        ("uniform_negatives.v2", {"fixed": "yes"}, "fixed"),  # the config schema names it
        ("uniform_negatives.v2", {"rate": 0.0}, "uniform_negatives.v2: rate"),
        ("weighted_negatives.v3", {"correction": -0.1}, "weighted_negatives.v3: correction"),
        ("weighted_negatives.v3", {"mu": -1.0}, "weighted_negatives.v3: mu"),
    ],
)
def test_settings_are_validated_by_name(name, settings, message):
    config = Config({"s": {"@misc": f"spacy-imbalance.{name}", **settings}})
    with pytest.raises(ValueError, match=message):
        registry.resolve(config)


@pytest.mark.parametrize(
    "widths,expected",
    [
        ([], 1),
        ([1] * 99 + [7], 1),  # 99 % are one token wide
        ([1] * 98 + [7, 7], 7),
        ([3, 1, 2, 2], 3),
        ([40] * 10, 16),  # within the bound
    ],
)
def test_covering_width(widths, expected):
    assert covering_width(widths) == expected
