"""``spacy-imbalance.uniform_negatives.v1``: negative sampling of Li et al.
(2021), ⌈rate·n⌉ negatives per sentence of n tokens, drawn uniformly without
replacement from the sentence's negative candidates (weighted negative
sampling paper, Sec. 2.4)."""
from typing import Any, Sequence

from spacy.util import registry
from thinc.types import Ints1d

from ._base import NegativeSampler, SamplingBatch, ceil_count, check_rate, sentence_counts, top_k_per_group, uniform_keys

# The default of the authors' released code (NegSampling-NER, main.py
# --negative_rate 0.7). With the sqrt(n) entity bound of the weighted paper
# (Eq. 5), ⌈0.7 n⌉ negatives are still a small share of the n(n+1)/2 spans, so
# an unlabeled entity is rarely drawn (Theorem 1), yet each sentence gives more
# negatives than positives.
DEFAULT_RATE = 0.7


class UniformNegatives(NegativeSampler):
    name = "uniform"

    def __init__(self, rate: float = DEFAULT_RATE) -> None:
        check_rate(rate, "uniform_negatives: rate")
        self.rate = rate

    def n_per_sentence(self, batch: SamplingBatch) -> Sequence[int]:
        return [ceil_count(self.rate, n) for n in batch.candidates.doc_lengths]

    def sample(self, batch: SamplingBatch, generator: Any) -> Ints1d:
        ops = batch.ops
        keys = ops.xp.asarray(uniform_keys(generator, len(batch.candidates)))
        k = sentence_counts(ops, batch, self.rate)
        return top_k_per_group(ops, keys, batch.candidates.doc_ids, batch.negatives, k)


@registry.misc("spacy-imbalance.uniform_negatives.v1")
def create_uniform_negatives_v1(rate: float = DEFAULT_RATE) -> UniformNegatives:
    """rate (float): negatives per token of the sentence, in (0, 1]."""
    return UniformNegatives(rate)
