"""Augmenters for ``spacy.Corpus.v1`` (the ``augmenter`` setting of any
corpus reader, ours included)."""
import warnings
from typing import Iterator, Optional

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from ..sentences import sentence_docs
from .undersampling import check_ratio, undersample_doc
from ..source import example_like


class BalancedUndersampler:
    """Replace each sentence by its balanced-undersampled version; sentences
    without an entity yield nothing. A class, not a closure, so that it
    pickles (multiprocessing, `spacy train` with several workers)."""

    def __init__(self, *, ratio: float, spans_key: Optional[str]) -> None:
        # when the config is resolved, not at the first sentence of training
        check_ratio(ratio, name="balanced_undersampling: ratio")
        self.ratio = ratio
        self.spans_key = spans_key
        self._warned = False

    def __call__(self, nlp: Language, example: Example) -> Iterator[Example]:
        for sentence in sentence_docs(example.reference):
            short, lost = undersample_doc(sentence, self.ratio, spans_key=self.spans_key)
            if lost and not self._warned:
                warnings.warn(
                    "balanced_undersampling: spans of span groups other than the gold lose tokens "
                    "and are left out of the shortened sentences",
                    stacklevel=2,
                )
                self._warned = True
            if short is not None:
                yield example_like(nlp, example, short)


@registry.augmenters("spacy-imbalance.balanced_undersampling.v1")
def create_balanced_undersampling_augmenter_v1(
    ratio: float = 3.0, spans_key: Optional[str] = None
) -> BalancedUndersampler:
    """Balanced undersampling (Akkasi et al. 2018) as an augmenter.

    ratio (float): keep ``ratio`` times as many tokens as a sentence has
        entity tokens (R = 3 in the paper); finite and >= 1.
    spans_key (Optional[str]): gold from doc.spans[spans_key] instead of doc.ents.
    """
    return BalancedUndersampler(ratio=ratio, spans_key=spans_key)
