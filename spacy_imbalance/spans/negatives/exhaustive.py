"""``spacy-imbalance.all_negatives.v1``: every negative candidate, the
standard span model (Li et al. 2021 call it "w/o negative sampling";
Top-Neg's Table 2 "Span")."""
from typing import Any

from spacy.util import registry
from thinc.types import Ints1d

from ._base import NegativeSampler, SamplingBatch


class AllNegatives(NegativeSampler):
    name = "all"

    def sample(self, batch: SamplingBatch, generator: Any) -> Ints1d:
        xp = batch.ops.xp
        return xp.nonzero(batch.negatives)[0].astype("int32")


@registry.misc("spacy-imbalance.all_negatives.v1")
def create_all_negatives_v1() -> AllNegatives:
    return AllNegatives()
