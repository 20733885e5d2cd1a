"""``spacy-imbalance.weighted_negatives.v1``: the weighted, adaptive sampling
distribution of Li et al. (2022), Eq. 14-16.

From the model's own label distribution z over a candidate (O included):
u = -sum_l z_l ln z_l (entropy: a hard negative), v = z_O - max_l z_l (in
[-1, 0]; near -1 when the model thinks the span is an entity, so likely an
unlabeled one), r = u·(1 + v)^mu, and the sentence's ⌈rate·n⌉ negatives are
drawn without replacement from softmax(r / T) over its negative candidates.

Drawing k items without replacement from softmax(r/T), one at a time with
renormalisation over the remaining ones (the paper's S_k), has the same
distribution as taking the k largest r/T + Gumbel noise (Kool et al. 2019,
"Stochastic beams and where to find them"), which is one sort on the device.

``spacy-imbalance.weighted_negatives.v2`` keeps the printed formula's parts
and makes its stated intent work: see ``WeightedNegativesV2``.
"""
from typing import Any, Callable, Optional

from spacy.util import registry
from thinc.types import Floats1d, Floats2d, Ints1d

from ._base import PerSentenceSampler, SamplingBatch, check_correction, check_rate, uniform_keys
from .temperature import SqrtTemperature
from .uniform import DEFAULT_CORRECTION, DEFAULT_RATE

# The paper's grid-searched value (Sec. 5.1): a high mu keeps spans the model
# already scores as entities (v near -1) out of the sample.
DEFAULT_MU = 8.0


class WeightedNegatives(PerSentenceSampler):
    # ``draw_shares`` is the expected share: a weighted draw takes the same
    # ⌈rate·n⌉, only which ones differs (a span the model calls an entity is
    # drawn less than that share, an easy negative more)

    name = "weighted"
    needs_probs = True

    def __init__(
        self, rate: float = DEFAULT_RATE, mu: float = DEFAULT_MU, temperature: Optional[Callable[[int], float]] = None
    ) -> None:
        check_rate(rate, "weighted_negatives: rate")
        if isinstance(mu, bool) or not isinstance(mu, (int, float)) or not (mu >= 0):
            raise ValueError(f"weighted_negatives: mu must be >= 0, got {mu!r}")
        if temperature is None:
            temperature = SqrtTemperature()
        if not callable(temperature):
            raise ValueError(
                "weighted_negatives: temperature must be a schedule of the step, e.g. "
                '@misc = "spacy-imbalance.sqrt_temperature.v1"'
            )
        self.rate = rate
        self.mu = float(mu)
        self.temperature = temperature

    def weights(self, probs: Floats2d, xp: Any) -> Floats1d:
        """r of Eq. 16 for each row of label distributions (column 0 = O)."""
        # 0·ln 0 = 0: where() keeps log(0) = -inf out of the sum
        plogp = xp.where(probs > 0, probs * xp.log(xp.maximum(probs, 1e-30)), 0.0)
        uncertainty = -plogp.sum(axis=1)
        non_entity = probs[:, 0] - probs.max(axis=1)
        # 1 + v >= 0 up to rounding; clip so that a fractional mu stays real
        return uncertainty * xp.maximum(1.0 + non_entity, 0.0) ** self.mu

    def sample(self, batch: SamplingBatch, generator: Any) -> Ints1d:
        if batch.probs is None:
            raise ValueError("weighted_negatives needs the model's label distributions (SamplingBatch.probs)")
        ops = batch.ops
        xp = ops.xp
        temperature = float(self.temperature(batch.step))
        if not temperature > 0:
            raise ValueError(f"weighted_negatives: the temperature schedule gave {temperature!r} at step {batch.step}; it must be > 0")
        u = xp.asarray(uniform_keys(generator, len(batch.candidates)))
        # float32 draws stay below 1 - 2^-24, which caps the noise at 16.6:
        # a Gumbel tail of probability 6e-8 per candidate, not worth float64
        gumbel = -xp.log(-xp.log(xp.clip(u, 1e-12, 1.0 - 1e-12)))
        return self.top_per_sentence(batch, self.weights(batch.probs, xp) / temperature + gumbel)


@registry.misc("spacy-imbalance.weighted_negatives.v1")
def create_weighted_negatives_v1(
    rate: float = DEFAULT_RATE, mu: float = DEFAULT_MU, temperature: Optional[Callable[[int], float]] = None
) -> WeightedNegatives:
    """rate (float): negatives per token, in (0, 1] (as the uniform sampler,
    so that only the distribution differs). mu (float): >= 0, the paper's 8.
    temperature: T as a function of the step; null means
    ``spacy-imbalance.sqrt_temperature.v1`` with its defaults (the paper's
    sqrt(C - c) over spaCy's default 20000 steps)."""
    return WeightedNegatives(rate, mu, temperature)


# 1 + v is >= 0; at 0 (a span the model is sure is an entity) its log would be
# -inf, and keys of -inf would all tie. A floor keeps the keys finite, so such
# spans are still drawn at random among themselves, in the last resort.
MIN_NON_ENTITY = 1e-30


class WeightedNegativesV2(WeightedNegatives):
    """Eq. 14-16 of Li et al. (2022) with the non-entity factor outside the
    exponential, so that a likely unlabeled entity is really left out.

    As printed, e ∝ exp(r/T) with r = u·(1+v)^mu in [0, ln K] (K labels, O
    included): (1+v)^mu can only pull r down to 0, the r of an easy negative,
    so a span the model confidently calls an entity gets the weight
    exp(0) = 1 of an easy negative, and no two weights differ by more than a
    factor K^(1/T). The paper's aim (hard negatives often, likely entities
    rarely) cannot be met by any mu.

    v2 draws, per sentence and without replacement, from

        e ∝ [exp(r) · (1+v)^mu]^(1/T),   i.e. softmax(s / T) with
        s = u·(1+v)^mu + mu·ln(1+v)

    (u, v, r, mu and T as in v1). Each part keeps one role:

    * exp(r): the paper's hardness preference, unchanged. An easy negative
      (u near 0, v = 0) has weight near 1, a hard one (O still the argmax,
      high entropy) up to K: easy negatives keep being drawn, so the model
      keeps seeing O, and hard ones are drawn more often.
    * (1+v)^mu: the missampling guard, now a factor of the weight rather than
      of a bounded exponent. It is 1 while O is the model's argmax (v = 0)
      and goes to 0 as the model grows sure the span is an entity: with
      mu = 8, z_O = 0.02 and z_entity = 0.9 give (0.12)^8 ≈ 4e-8 at T = 1.
      The ratio between weights is no longer bounded by K.
    * T: tempers both, as Eq. 16 tempers r: T -> inf is uniform sampling,
      T = 1 the full weights. The paper's sqrt(C - c) schedule keeps its
      reason: early on the model's scores are unreliable, so both its
      hardness and its entity calls are trusted less (at T = sqrt(10) the
      entity above keeps (0.12)^(8/sqrt(10)) ≈ 0.005 of an easy negative's
      weight, against 4e-8 at T = 1).

    What it cannot tell apart, nor can the paper's formula: a span of gold
    class O that the model confidently calls an entity is either an
    unlabeled entity or a confident false positive. v2, like the paper with
    a high mu, trusts the model and leaves both out of the sample.
    """

    name = "weighted_v2"

    def __init__(
        self, rate: float = DEFAULT_RATE, mu: float = DEFAULT_MU, temperature: Optional[Callable[[int], float]] = None
    ) -> None:
        # v1 accepts mu = inf; here it would make every weight 0 or nan
        if isinstance(mu, bool) or not isinstance(mu, (int, float)) or not (0 <= mu < float("inf")):
            raise ValueError(f"weighted_negatives.v2: mu must be a number >= 0 (the paper's 8), got {mu!r}")
        try:
            super().__init__(rate, mu, temperature)
        except ValueError as err:  # v1's checks, named after this version
            raise ValueError(str(err).replace("weighted_negatives:", "weighted_negatives.v2:", 1)) from None

    def weights(self, probs: Floats2d, xp: Any) -> Floats1d:
        """s = u·(1+v)^mu + mu·ln(1+v) for each row of label distributions
        (column 0 = O): the log of the weight at T = 1, which v1's ``sample``
        divides by T and perturbs with Gumbel noise as it does r."""
        plogp = xp.where(probs > 0, probs * xp.log(xp.maximum(probs, 1e-30)), 0.0)
        uncertainty = -plogp.sum(axis=1)
        # 1 + v >= 0 up to rounding
        non_entity = xp.maximum(1.0 + probs[:, 0] - probs.max(axis=1), MIN_NON_ENTITY)
        return uncertainty * non_entity**self.mu + self.mu * xp.log(non_entity)


@registry.misc("spacy-imbalance.weighted_negatives.v2")
def create_weighted_negatives_v2(
    rate: float = DEFAULT_RATE, mu: float = DEFAULT_MU, temperature: Optional[Callable[[int], float]] = None
) -> WeightedNegativesV2:
    """Eq. 14-16 with the non-entity factor outside the exponential:
    negatives drawn ∝ [exp(u·(1+v)^mu) · (1+v)^mu]^(1/T), so that spans the
    model calls entities are left out (see ``WeightedNegativesV2``). rate
    (float): negatives per token, in (0, 1], as the uniform sampler. mu
    (float): >= 0, the paper's 8; 0 turns the guard off (and gives v1 with
    mu = 0). temperature: T as a function of the step; null means
    ``spacy-imbalance.sqrt_temperature.v1`` with its defaults."""
    return WeightedNegativesV2(rate, mu, temperature)


class WeightedNegativesV3(WeightedNegativesV2):
    """v2 with the prior correction at prediction (``correction``, as
    ``uniform_negatives.v2``), from the draw's expected share ⌈rate·n⌉ / c:
    the adaptive draw's share for a given span is not known at prediction."""

    name = "weighted_v3"

    def __init__(
        self,
        rate: float = DEFAULT_RATE,
        mu: float = DEFAULT_MU,
        temperature: Optional[Callable[[int], float]] = None,
        correction: float = DEFAULT_CORRECTION,
    ) -> None:
        try:
            super().__init__(rate, mu, temperature)
        except ValueError as err:
            raise ValueError(str(err).replace("weighted_negatives.v2:", "weighted_negatives.v3:").replace("weighted_negatives:", "weighted_negatives.v3:")) from None
        self.correction = check_correction(correction, "weighted_negatives.v3: correction")


@registry.misc("spacy-imbalance.weighted_negatives.v3")
def create_weighted_negatives_v3(
    rate: float = DEFAULT_RATE,
    mu: float = DEFAULT_MU,
    temperature: Optional[Callable[[int], float]] = None,
    correction: float = DEFAULT_CORRECTION,
) -> WeightedNegativesV3:
    """weighted_negatives.v2 with ``correction`` (float, in [0, 1]): the share
    of the sampling's odds inflation undone at prediction (see
    ``uniform_negatives.v2``)."""
    return WeightedNegativesV3(rate, mu, temperature, correction)
