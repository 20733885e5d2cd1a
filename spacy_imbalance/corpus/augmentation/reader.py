"""``spacy-imbalance.AugmentedCorpus.v1``: a training corpus in which every
sentence is followed by augmented copies of itself (Dai & Adel's simple data
augmentation for NER, see ``spacy_imbalance.corpus.augmentation.augmentation``)."""
from pathlib import Path
from typing import Any, Iterator, List, Optional

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from ..source import ReaderT, SentenceReader, announce, reads_source, example_like
from .augmentation import AugmentMethod, augmented_copies, validate_settings


NAME = "spacy-imbalance.AugmentedCorpus.v1"


class AugmentedCorpus(SentenceReader):
    """Yield each sentence's Example, then its ``n_copies`` augmented copies.

    The replacement pools are gathered in a first pass over the whole
    training set, so the corpus is held in memory. Every call starts from the
    same seed: each epoch sees the same copies, the ones `spacy-imbalance
    augment` writes for the same corpus and settings.
    """

    NAME = NAME

    def __init__(
        self, corpus: ReaderT, *, method: AugmentMethod, p: float, n_copies: int, seed: int, **kwargs: Any
    ) -> None:
        super().__init__(corpus, **kwargs)
        self.method = method
        self.p = p
        self.n_copies = n_copies
        self.seed = seed

    @staticmethod
    def check(*, method: AugmentMethod, p: float, n_copies: int, **_: Any) -> None:
        validate_settings(method, p, n_copies)

    def transform(self, nlp: Language, sentences: List[Example]) -> Iterator[Example]:
        copies = augmented_copies(
            [eg.reference for eg in sentences],
            self.method,
            p=self.p,
            n_copies=self.n_copies,
            seed=self.seed,
            spans_key=self.spans_key,
        )
        total = len(sentences) * (1 + self.n_copies)
        factor = total / len(sentences) if sentences else 1.0
        announce(
            f"AugmentedCorpus: {self.method} (p={self.p}), {len(sentences):,} sentences in, "
            f"{total:,} out (size x{factor:.2f})"
        )
        for eg, references in zip(sentences, copies):
            yield eg
            for reference in references:
                yield example_like(nlp, eg, reference)


@registry.readers(NAME)
@reads_source
def create_augmented_corpus_reader_v1(
    path: Optional[Path] = None,
    *,
    method: AugmentMethod = "all",
    p: float = 0.3,
    n_copies: int = 1,
    seed: int = 0,
    spans_key: Optional[str] = None,
    **source: Any,
) -> AugmentedCorpus:
    """Augment the sentences of a .spacy corpus, or of another reader.

    path, corpus, gold_preproc, max_length, limit, augmenter: the corpus to
        augment, see ``reads_source``.
    method (str): "label_wise_token_replacement", "mention_replacement",
        "shuffle_within_segments" or "all" (the three in turn, one copy).
    p (float): the probability of each replacement or shuffle, in [0, 1].
    n_copies (int): augmented copies per sentence, at least 1.
    seed (int): the seed of the augmentation, the same every epoch.
    spans_key (Optional[str]): gold from doc.spans[spans_key] instead of doc.ents.
    RETURNS (AugmentedCorpus): the reader.
    """
    return AugmentedCorpus.build(path, source, method=method, p=p, n_copies=n_copies, seed=seed, spans_key=spans_key)
