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
"""
from typing import Any, Callable, Optional, Sequence

from spacy.util import registry
from thinc.types import Floats1d, Floats2d, Ints1d

from ._base import NegativeSampler, SamplingBatch, ceil_count, check_rate, sentence_counts, top_k_per_group, uniform_keys
from .temperature import SqrtTemperature
from .uniform import DEFAULT_RATE

# The paper's grid-searched value (Sec. 5.1): a high mu keeps spans the model
# already scores as entities (v near -1) out of the sample.
DEFAULT_MU = 8.0


class WeightedNegatives(NegativeSampler):
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

    def n_per_sentence(self, batch: SamplingBatch) -> Sequence[int]:
        return [ceil_count(self.rate, n) for n in batch.candidates.doc_lengths]

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
        gumbel = -xp.log(-xp.log(xp.clip(u, 1e-12, 1.0 - 1e-12)))
        keys = self.weights(batch.probs, xp) / temperature + gumbel
        k = sentence_counts(ops, batch, self.rate)
        return top_k_per_group(ops, keys, batch.candidates.doc_ids, batch.negatives, k)


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
