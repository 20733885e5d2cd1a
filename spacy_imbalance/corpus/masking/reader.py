"""``spacy-imbalance.MaskedCorpus.v1``: a training corpus with unlabeled
entities, each gold entity dropped with probability p (the synthetic datasets
of the weighted negative sampling paper, see ``spacy_imbalance.corpus.masking.masking``)."""
import warnings
from pathlib import Path
from typing import Any, Iterator, List, Optional

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..source import ReaderT, SentenceReader, announce, reads_source
from ..gold_checks import check_no_empty_spans, has_gold
from .masking import check_keys, check_probability, describe_masking, mask_entities, masking_counts, unmaskable_gold

NAME = "spacy-imbalance.MaskedCorpus.v1"


class MaskedCorpus(SentenceReader):
    """Yield every sentence's Example with some gold entities masked.

    Each call draws from a fresh ``random.Random(seed)`` over the sentences in
    corpus order, so every epoch masks the same entities, and the result
    equals `spacy-imbalance mask` on the same corpus. The corpus is held in
    memory for one pass. A ``spans_key`` that no sentence has (or empty
    doc.ents while a span group holds the gold) raises a ValueError naming
    ``source``: the model would train on the unmasked gold.
    """

    NAME = NAME

    def __init__(self, corpus: ReaderT, *, p: float, seed: int, masked_key: str, **kwargs: Any) -> None:
        super().__init__(corpus, **kwargs)
        self.p = p
        self.seed = seed
        self.masked_key = masked_key

    @staticmethod
    def check(*, p: float, spans_key: Optional[str], masked_key: str, **_: Any) -> None:
        check_probability(p)
        check_keys(spans_key, masked_key)

    def transform(self, nlp: Language, sentences: List[Example]) -> Iterator[Example]:
        references = [eg.reference for eg in sentences]
        self.check_gold(references)
        masked = mask_entities(
            references, self.p, seed=self.seed, spans_key=self.spans_key, masked_key=self.masked_key
        )
        n_entities, n_dropped = masking_counts(references, masked, spans_key=self.spans_key)
        announce(f"MaskedCorpus: {describe_masking(self.p, n_entities, n_dropped, len(masked))}")
        for eg, reference in zip(sentences, masked):
            # masking changes no token, so the predicted doc still fits
            yield Example(eg.predicted, reference)

    def check_gold(self, references: List[Doc]) -> None:
        """Refuse gold that masking cannot reach; warn when there is none."""
        check_no_empty_spans(references, f"{NAME}: {self.source}", unit="sentence")
        problem = unmaskable_gold(references, self.spans_key)
        if problem is not None:
            raise ValueError(f"{NAME}: {self.source}: {problem}")
        if not has_gold(references, self.spans_key):
            # legitimate, if pointless: a corpus without entities masks to itself
            warnings.warn(f"{NAME}: {self.source} has no gold entities: there is nothing to mask", stacklevel=2)


@registry.readers(NAME)
@reads_source
def create_masked_corpus_reader_v1(
    path: Optional[Path] = None,
    *,
    p: float,
    seed: int = 0,
    spans_key: Optional[str] = None,
    masked_key: str = "masked",
    **source: Any,
) -> MaskedCorpus:
    """Mask the gold entities of a .spacy corpus, or of another reader.

    path, corpus, gold_preproc, max_length, limit, augmenter: the corpus to
        mask, see ``reads_source``.
    p (float): the probability to drop each gold entity, in [0, 1].
    seed (int): seed of the draws; the same seed masks the same entities.
    spans_key (Optional[str]): gold from doc.spans[spans_key] instead of doc.ents.
    masked_key (str): the span group that records the dropped entities.
    RETURNS (MaskedCorpus): the reader.
    """
    return MaskedCorpus.build(path, source, p=p, seed=seed, spans_key=spans_key, masked_key=masked_key)
