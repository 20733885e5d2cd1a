"""``spacy-imbalance.top_negatives.v1``: Top-Neg (Xu et al. 2023, Eq. 3).

Each negative candidate gets Phi = its mean cosine similarity to all positive
spans of the batch, computed on the span representations s_ij that the
scorer takes as input (Eq. 1/3). A true negative resembles every entity type
a little; an unlabeled entity resembles its own type much more than the
others, so the negatives with the *highest* Phi are kept: the top
⌈ratio·N⌉ of the batch's N negatives. The mean of cosines is the dot product
of the normalised negative with the mean of the normalised positives, so the
cost is O(N·d), not O(N·M·d).

A batch without positive spans has no Phi; it falls back to a uniform sample
of the same size.

``spacy-imbalance.top_negatives.v2`` is the same sampler with Phi computed
where the authors' code computes it: on the scoring head's hidden layer (the
input of its output layer, the ``hidden`` ref of ``SpanScorer.v1``) instead
of the raw s_ij. That space is trained to separate the entity types, which
is what the paper's intuition (an unlabeled entity resembles its own type's
positives, not the others') relies on; in the raw [h_i; h_j; f(width)] the
width embedding and the tok2vec's generic features weigh as much.
"""
from typing import Any, Tuple

from spacy.util import registry
from thinc.types import Ints1d

from ._base import NegativeSampler, SamplingBatch, ceil_count, check_rate, top_k_per_group, uniform_keys

# The paper's setting (Sec. 3) and best value on CoNLL03 dev (Table 3: 3 %
# too few, 10 % lets false negatives in).
DEFAULT_RATIO = 0.05


class TopNegatives(NegativeSampler):
    name = "top"
    needs_vectors = True
    missing_input = "top_negatives needs the span representations (SamplingBatch.vectors)"

    def __init__(self, ratio: float = DEFAULT_RATIO) -> None:
        check_rate(ratio, "top_negatives: ratio")
        self.ratio = ratio

    def similarity(self, batch: SamplingBatch) -> Any:
        """Phi of Eq. 3 for every candidate (meaningful on negatives)."""
        vectors = batch.vectors
        if vectors is None:
            raise ValueError(self.missing_input)
        xp = batch.ops.xp
        norms = xp.sqrt((vectors * vectors).sum(axis=1, keepdims=True))
        unit = vectors / xp.maximum(norms, 1e-12)
        # the positives' mean without indexing by a mask, whose size the
        # host would have to wait for; counted in the vectors' float type
        # (an int64 count would promote the float32 mean to float64)
        positives = batch.positives
        n_positives = xp.maximum(xp.sum(positives, dtype=unit.dtype), 1)
        return unit @ (xp.where(positives.reshape((-1, 1)), unit, 0).sum(axis=0) / n_positives)

    def sample(self, batch: SamplingBatch, generator: Any) -> Ints1d:
        ops = batch.ops
        xp = ops.xp
        negatives = batch.negatives
        n_negatives, n_positives = _counts(batch)
        k = ceil_count(self.ratio, n_negatives)
        if n_positives:
            # without the vectors it needs, similarity raises missing_input
            keys = self.similarity(batch)
        else:
            keys = xp.asarray(uniform_keys(generator, len(batch.candidates)))
        groups = xp.zeros((len(batch.candidates),), dtype="int32")
        return top_k_per_group(ops, keys, groups, negatives, ops.asarray1i([k]))


def _counts(batch: SamplingBatch) -> Tuple[int, int]:
    """The batch's negatives and positives, in one copy from the device."""
    xp = batch.ops.xp
    counts = batch.ops.to_numpy(xp.stack([xp.sum(batch.negatives), xp.sum(batch.positives)]))
    return int(counts[0]), int(counts[1])


@registry.misc("spacy-imbalance.top_negatives.v1")
def create_top_negatives_v1(ratio: float = DEFAULT_RATIO) -> TopNegatives:
    """ratio (float): share of the batch's negatives kept, in (0, 1]."""
    return TopNegatives(ratio)


class TopNegativesV2(TopNegatives):
    """Top-Neg with Phi on the scoring head's hidden layer (``batch.hidden``),
    which the component computes in prediction mode (no dropout); Eq. 3, the
    ratio and the fallback are v1's."""

    name = "top_hidden"
    needs_vectors = False
    needs_hidden = True
    missing_input = "top_negatives.v2 needs the scoring head's hidden layer (SamplingBatch.hidden)"

    def similarity(self, batch: SamplingBatch) -> Any:
        """Phi of Eq. 3 on the hidden layer, for every candidate (meaningful on negatives)."""
        return super().similarity(batch._replace(vectors=batch.hidden))

    def sample(self, batch: SamplingBatch, generator: Any) -> Ints1d:
        return super().sample(batch._replace(vectors=batch.hidden), generator)


@registry.misc("spacy-imbalance.top_negatives.v2")
def create_top_negatives_v2(ratio: float = DEFAULT_RATIO) -> TopNegativesV2:
    """ratio (float): share of the batch's negatives kept, in (0, 1]. The
    similarity is computed on the scoring head's hidden layer, as in the
    authors' code, not on the span representations (v1)."""
    return TopNegativesV2(ratio)
