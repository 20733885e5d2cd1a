"""``spacy-imbalance.DistantCorpus.v1``: a training corpus with distantly
supervised labels, BOND-style dictionary matching with a dictionary drawn from
the gold mentions (see ``spacy_imbalance.corpus.distant.distant``)."""
import warnings
from pathlib import Path
from typing import Any, Iterator, List, Optional

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from ..source import ReaderT, SentenceReader, announce, reads_source
from ..gold_checks import has_gold, unreachable_gold
from .distant import (
    DEFAULT_FRACTION,
    DEFAULT_MIN_LENGTH,
    LabelQuality,
    check_distant_settings,
    describe_distant,
    distant_supervision,
    label_quality,
)

NAME = "spacy-imbalance.DistantCorpus.v1"


class DistantCorpus(SentenceReader):
    """Yield every sentence's Example with its gold replaced by distant labels.

    Each call builds the dictionary again with a fresh ``random.Random(seed)``
    over the sentences in corpus order, so every epoch has the same labels.
    After a call, ``quality`` holds the labels' entity-level precision and
    recall against the gold (also printed once). The corpus is held in memory
    for one pass. Gold that is not where ``spans_key`` reads it (a key that
    no sentence has, or no entity in doc.ents while a span group holds the
    gold) or a dictionary left empty by ``min_length`` raises a ValueError
    naming ``source``: every label would be O. A corpus without any gold
    gives a warning.
    """

    NAME = NAME

    def __init__(
        self,
        corpus: ReaderT,
        *,
        dictionary_fraction: float,
        seed: int,
        min_length: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(corpus, **kwargs)
        self.dictionary_fraction = dictionary_fraction
        self.seed = seed
        self.min_length = min_length
        self.quality: Optional[LabelQuality] = None

    @staticmethod
    def check(*, dictionary_fraction: float, seed: int, min_length: int, **_: Any) -> None:
        check_distant_settings(dictionary_fraction, seed, min_length)

    def transform(self, nlp: Language, sentences: List[Example]) -> Iterator[Example]:
        references = [eg.reference for eg in sentences]
        problem = unreachable_gold(references, self.spans_key)
        if problem is not None:
            raise ValueError(f"{NAME}: {self.source}: {problem}: the dictionary would be empty and every label O")
        gold = has_gold(references, self.spans_key)
        if not gold:
            # legitimate, if pointless: every label O, as in the gold
            warnings.warn(f"{NAME}: {self.source} has no gold entities: every distant label is O", stacklevel=2)
        distant, dictionary = distant_supervision(
            references, self.dictionary_fraction, seed=self.seed, min_length=self.min_length, spans_key=self.spans_key
        )
        if gold and not dictionary:
            raise ValueError(
                f"{NAME}: {self.source}: the dictionary is empty: none of the drawn gold mentions is "
                f"min_length = {self.min_length} characters or longer, so every label would be O; lower min_length"
            )
        self.quality = label_quality(references, distant, spans_key=self.spans_key)
        announce(f"DistantCorpus: {describe_distant(self.dictionary_fraction, dictionary, self.quality, len(distant))}")
        for eg, reference in zip(sentences, distant):
            # relabelling changes no token, so the predicted doc still fits
            yield Example(eg.predicted, reference)


@registry.readers(NAME)
@reads_source
def create_distant_corpus_reader_v1(
    path: Optional[Path] = None,
    *,
    dictionary_fraction: float = DEFAULT_FRACTION,
    seed: int = 0,
    min_length: int = DEFAULT_MIN_LENGTH,
    spans_key: Optional[str] = None,
    **source: Any,
) -> DistantCorpus:
    """Relabel a .spacy corpus, or another reader, by dictionary matching.

    path, corpus, gold_preproc, max_length, limit, augmenter: the corpus to
        relabel, see ``reads_source``.
    dictionary_fraction (float): share of the gold mentions the dictionary is
        built from, in (0, 1].
    seed (int): seed of the draw; the same seed builds the same dictionary.
    min_length (int): shortest dictionary entry, in characters (2 skips
        one-character junk such as "a" or "-").
    spans_key (Optional[str]): gold from doc.spans[spans_key] instead of
        doc.ents; the distant labels go to both.
    RETURNS (DistantCorpus): the reader.
    """
    return DistantCorpus.build(
        path, source, dictionary_fraction=dictionary_fraction, seed=seed, min_length=min_length, spans_key=spans_key,
    )
