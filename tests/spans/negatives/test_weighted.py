"""The weighted samplers: v1 (Eq. 14-16 as printed) and v2 (the non-entity
factor outside the exponential). Weights by hand, draw counts, the draw-rate
simulation (what v1 cannot do and v2 does), seeding and validation."""
import math
import re

import numpy
import pytest
import spacy
from spacy.training import Example
from spacy.util import fix_random_seed, registry
from thinc.api import Config

from spacy_imbalance.spans.negatives._base import make_generator
from spacy_imbalance.spans.negatives.draw_rates import draw_rates, synthetic_sentence
from spacy_imbalance.spans.negatives.temperature import ConstantTemperature
from spacy_imbalance.spans.negatives.uniform import UniformNegatives
from spacy_imbalance.spans.negatives.weighted import MIN_NON_ENTITY, WeightedNegatives, WeightedNegativesV2

from .test_negatives import OPS, check_sample, draw_frequencies, make_batch

T_START = math.sqrt(10)  # the schedule's first stage with its 10 stages


def v2(T, mu=8.0, rate=0.7):
    return WeightedNegativesV2(rate, mu, ConstantTemperature(T))


def test_v2_log_weights_by_hand():
    probs = numpy.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.7, 0.1], [0.0, 1.0, 0.0]])
    s = WeightedNegativesV2(mu=2.0).weights(probs, numpy)
    u2 = -(0.2 * math.log(0.2) + 0.7 * math.log(0.7) + 0.1 * math.log(0.1))
    expected = [
        0.0,  # easy: u = 0, 1 + v = 1
        math.log(2),  # hard: u = ln 2, v = 0 (a tie with O counts as O)
        u2 * 0.5**2 + 2 * math.log(0.5),  # 1 + v = 1 + 0.2 - 0.7
        2 * math.log(MIN_NON_ENTITY),  # a sure entity: 1 + v = 0, floored, so finite
    ]
    assert s.tolist() == pytest.approx(expected)
    # the weight at T = 1 is exp(r)·(1+v)^mu: v1's weight times the factor
    r = WeightedNegatives(mu=2.0).weights(probs[:3], numpy)
    assert numpy.exp(s[:3]).tolist() == pytest.approx((numpy.exp(r) * numpy.array([1.0, 1.0, 0.25])).tolist())


def test_v2_log_weights_of_the_synthetic_sentence_by_hand():
    probs, kinds = synthetic_sentence()
    s = v2(1.0).weights(probs.astype("float64"), numpy)
    # the entity: z = [0.02, 0.90, 0.016 x 5], 1 + v = 0.12
    u = -(0.02 * math.log(0.02) + 0.9 * math.log(0.9) + 5 * 0.016 * math.log(0.016))
    assert s[0] == pytest.approx(u * 0.12**8 + 8 * math.log(0.12))
    assert math.exp(s[0]) == pytest.approx(4.3e-8, rel=0.01)
    # a hard negative: z = [0.5, 0.3, 0.04 x 5], v = 0, so s = u
    u = -(0.5 * math.log(0.5) + 0.3 * math.log(0.3) + 5 * 0.04 * math.log(0.04))
    assert s[1] == pytest.approx(u) and math.exp(s[1]) == pytest.approx(3.86, abs=0.01)
    assert kinds[0] == "entity" and kinds[1] == "hard" and kinds[-1] == "easy"


def test_v2_without_the_guard_is_v1():
    """mu = 0 drops (1+v)^mu from both: the same keys, so the same sample."""
    batch = make_batch([10, 7], positives=[3])
    batch = batch._replace(probs=numpy.random.default_rng(0).dirichlet([1.0] * 4, size=len(batch.candidates)))
    a = WeightedNegatives(0.7, 0.0, ConstantTemperature(2.0)).sample(batch, make_generator(OPS, 5))
    b = v2(2.0, mu=0.0).sample(batch, make_generator(OPS, 5))
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("rate", [0.1, 0.35, 0.7, 1.0])
def test_v2_draws_ceil_rate_n_per_sentence(rate):
    """As the uniform sampler: ⌈rate·n⌉ per sentence (capped at its
    negatives), never a gold or unknown span, whatever the distributions,
    even when the gold and unknown spans are the likeliest non-entities."""
    batch = make_batch([10, 3, 7, 1], positives=[0, 5, 40], unknown=[1, 2])
    probs = numpy.random.default_rng(0).dirichlet([1.0, 1.0, 1.0], size=len(batch.candidates))
    probs[[0, 5, 40, 1, 2]] = [0.4, 0.3, 0.3]  # the highest weights, yet not eligible
    batch = batch._replace(probs=probs)
    chosen = v2(2.0, rate=rate).sample(batch, make_generator(OPS, 0))
    check_sample(batch, chosen)
    per_doc = numpy.bincount(batch.candidates.doc_ids[chosen], minlength=4)
    eligible = numpy.bincount(batch.candidates.doc_ids[batch.negatives], minlength=4)
    assert per_doc.tolist() == [min(math.ceil(round(rate * n, 9)), e) for n, e in zip([10, 3, 7, 1], eligible)]


def test_v2_draws_sure_entities_only_to_fill_the_quota():
    """A sentence whose negatives are all sure entities still gives its
    ⌈rate·n⌉: the floor keeps the keys finite and random."""
    batch = make_batch([6], max_width=2)  # 11 candidates, ⌈0.7·6⌉ = 5
    batch = batch._replace(probs=numpy.tile(numpy.array([0.0, 1.0], dtype="float32"), (11, 1)))
    draws = {tuple(v2(1.0).sample(batch, make_generator(OPS, seed)).tolist()) for seed in range(20)}
    assert all(len(d) == 5 for d in draws) and len(draws) > 10


def test_v2_draws_in_proportion_to_softmax_s_over_t():
    """One draw per sentence: P(candidate) = softmax(s/T) over its negatives."""
    batch = make_batch([2], max_width=2)  # 3 candidates, ⌈0.3·2⌉ = 1 draw
    probs = numpy.array([[1.0, 0.0], [0.5, 0.5], [0.25, 0.75]])
    sampler = WeightedNegativesV2(rate=0.3, mu=1.0, temperature=ConstantTemperature(0.5))
    s = sampler.weights(probs, numpy)
    expected = numpy.exp(s / 0.5) / numpy.exp(s / 0.5).sum()
    # by hand: weights [1, (e^(ln 2))^2, (e^(u·0.5)·0.5)^2] with u the third row's entropy
    u = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    w = [1.0, 4.0, math.exp(u) * 0.25]
    assert expected.tolist() == pytest.approx([x / sum(w) for x in w])
    batch = batch._replace(probs=probs)
    freq = draw_frequencies(sampler, batch, seed=3, n_draws=6000, n_chosen=1)
    assert freq == pytest.approx(expected, abs=0.025)


@pytest.fixture(scope="module")
def rates():
    """Draw rates of each kind of span on the synthetic sentence (20 tokens,
    132 candidates, 14 draws), 3000 samples each, at the schedule's first
    temperature (sqrt 10) and its last (1)."""
    probs, kinds = synthetic_sentence()
    result = {"uniform": draw_rates(UniformNegatives(0.7), probs, kinds)}
    for T in (T_START, 1.0):
        result["v1", T] = draw_rates(WeightedNegatives(0.7, 8.0, ConstantTemperature(T)), probs, kinds)
        result["v2", T] = draw_rates(v2(T), probs, kinds)
    return result


def test_simulation_uniform_draws_every_kind_alike(rates):
    for kind, rate in rates["uniform"].items():
        assert rate == pytest.approx(14 / 132, abs=0.02), kind


@pytest.mark.parametrize("T", [T_START, 1.0])
def test_simulation_v1_cannot_keep_a_confident_entity_out(rates, T):
    """As printed, the confident entity's weight is exp(0) = 1, an easy
    negative's: it is drawn about as often as under uniform sampling."""
    uniform = rates["uniform"]["entity"]
    assert rates["v1", T]["entity"] > 0.7 * uniform
    assert rates["v1", T]["entity"] == pytest.approx(rates["v1", T]["easy"], abs=0.025)


@pytest.mark.parametrize("T", [T_START, 1.0])
def test_simulation_v2_leaves_the_entity_out_and_prefers_hard_negatives(rates, T):
    uniform = rates["uniform"]
    assert rates["v2", T]["entity"] < 0.2 * uniform["entity"]
    assert rates["v2", T]["hard"] > 1.2 * rates["v2", T]["easy"]
    # easy negatives are still drawn, about as often as under uniform sampling
    assert rates["v2", T]["easy"] > 0.8 * uniform["easy"]
    # the hardness preference is v1's
    assert rates["v2", T]["hard"] == pytest.approx(rates["v1", T]["hard"], abs=0.03)


def test_simulation_is_deterministic():
    probs, kinds = synthetic_sentence()
    a = draw_rates(v2(T_START), probs, kinds, n_draws=50, seed=7)
    assert a == draw_rates(v2(T_START), probs, kinds, n_draws=50, seed=7)
    assert a != draw_rates(v2(T_START), probs, kinds, n_draws=50, seed=8)


@pytest.mark.parametrize("probs", [numpy.zeros(132, dtype="int64"), numpy.zeros((132, 7), dtype="int64")], ids=["1-d", "ints"])
def test_simulation_names_probs_that_are_no_distributions(probs):
    # issue 46: one value (or an int) per candidate passed the length check,
    # and a sampler that reads no probs (uniform) returned rates regardless
    _, kinds = synthetic_sentence()
    shape = re.escape(str(probs.shape))
    message = rf"^draw_rates: probs must be a 2-d float array \(a distribution per candidate\), got shape {shape} of int64$"
    with pytest.raises(ValueError, match=message):
        draw_rates(UniformNegatives(0.7), probs, kinds, n_draws=5)


def test_v1_weights_differ_by_at_most_k_and_v2_by_far_more():
    """exp(r/T) lies in [1, K^(1/T)] for any distributions over K labels;
    v2's weights are unbounded below."""
    K = 7
    probs = numpy.random.default_rng(0).dirichlet([0.3] * K, size=5000)
    probs = numpy.vstack([probs, synthetic_sentence()[0]])
    for T in (T_START, 1.0):
        w1 = numpy.exp(WeightedNegatives(mu=8.0).weights(probs, numpy) / T)
        assert w1.min() >= 1.0 - 1e-9 and w1.max() <= K ** (1 / T) + 1e-9
        w2 = numpy.exp(v2(T).weights(probs, numpy) / T)
        assert w2.max() <= K ** (1 / T) + 1e-9  # the hardness factor is the same
        assert w2.max() / w2.min() > 1e3 * K
    # the synthetic sentence: the entity weighs 4e-8 of an easy negative at T = 1
    sentence = synthetic_sentence()[0].astype("float64")
    w = numpy.exp(v2(1.0).weights(sentence, numpy))
    assert w[0] / w[-1] < 1e-7


def test_v2_is_near_uniform_at_a_high_temperature():
    probs, kinds = synthetic_sentence()
    rates = draw_rates(v2(1e6), probs, kinds, n_draws=1500)
    for kind, rate in rates.items():
        assert rate == pytest.approx(14 / 132, abs=0.03), kind


@pytest.mark.parametrize("cls", [WeightedNegatives, WeightedNegativesV2])
def test_uses_the_temperature_of_the_step(cls):
    seen = []
    sampler = cls(temperature=lambda step: seen.append(step) or 1.0)
    batch = make_batch([3], step=17)
    batch = batch._replace(probs=numpy.full((len(batch.candidates), 2), 0.5))
    sampler.sample(batch, make_generator(OPS, 0))
    assert seen == [17]


def test_v2_same_seed_same_sample():
    batch = make_batch([9, 5], positives=[2])
    batch = batch._replace(probs=numpy.random.default_rng(1).dirichlet([1.0] * 3, size=len(batch.candidates)))
    a, b, c = (v2(1.5, rate=0.5).sample(batch, make_generator(OPS, seed)) for seed in (42, 42, 43))
    assert a.tolist() == b.tolist() and a.tolist() != c.tolist()


def test_v2_needs_probs_and_a_positive_temperature():
    batch = make_batch([3])
    assert WeightedNegativesV2.needs_probs
    with pytest.raises(ValueError, match=r"weighted_negatives needs the model.s label distributions"):
        v2(1.0).sample(batch, make_generator(OPS, 0))
    batch = batch._replace(probs=numpy.full((len(batch.candidates), 2), 0.5))
    with pytest.raises(ValueError, match=r"temperature schedule gave 0.0 at step 0; it must be > 0"):
        WeightedNegativesV2(temperature=lambda step: 0.0).sample(batch, make_generator(OPS, 0))


def resolve(block: str):
    return registry.resolve(Config().from_str(f"[x]\n{block}"))["x"]


def test_v2_is_registered_beside_v1():
    sampler = resolve('@misc = "spacy-imbalance.weighted_negatives.v2"\nrate = 0.5\nmu = 4')
    assert type(sampler) is WeightedNegativesV2 and (sampler.rate, sampler.mu) == (0.5, 4.0)
    assert sampler.temperature(0) == pytest.approx(math.sqrt(10))  # sqrt_temperature.v1 by default
    assert type(resolve('@misc = "spacy-imbalance.weighted_negatives.v1"')) is WeightedNegatives


@pytest.mark.parametrize(
    "setting,message",
    [
        ("rate = 0", r"weighted_negatives.v2: rate must be in \(0, 1\], got 0"),
        ("rate = 1.5", r"weighted_negatives.v2: rate must be in \(0, 1\]"),
        ("mu = -1", r"weighted_negatives.v2: mu must be a number >= 0 \(the paper's 8\), got -1"),
        ("temperature = 2", r"temperature\tat root: 2 is not typing.Callable"),  # caught by the type hint
    ],
)
def test_v2_settings_are_validated(setting, message):
    with pytest.raises(ValueError, match=message):
        resolve(f'@misc = "spacy-imbalance.weighted_negatives.v2"\n{setting}')


@pytest.mark.parametrize("mu", [True, float("nan"), float("inf"), "8"])
def test_v2_mu_must_be_a_finite_number(mu):
    with pytest.raises(ValueError, match=r"weighted_negatives.v2: mu must be a number >= 0"):
        WeightedNegativesV2(mu=mu)


def test_v2_temperature_must_be_a_schedule():
    with pytest.raises(ValueError, match=r"weighted_negatives.v2: temperature must be a schedule of the step"):
        WeightedNegativesV2(temperature=2.0)


def test_v2_trains_sampled_spancat():
    """The component gives v2 the label distributions and trains on its sample."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sampled_spancat", config={"negatives": {"@misc": "spacy-imbalance.weighted_negatives.v2"}})
    data = [("Kate Bush sings in New York .", [(0, 9, "PER"), (19, 27, "LOC")]), ("Talk to Kate .", [(8, 12, "PER")])]
    examples = [Example.from_dict(nlp.make_doc(text), {"entities": ents}) for text, ents in data]
    fix_random_seed(0)
    optimizer = nlp.initialize(get_examples=lambda: examples)
    history = []
    for _ in range(30):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses, drop=0.0)
        history.append(losses["sampled_spancat"])
    assert history[-1] < 0.2 * history[0]
