"""``spacy-imbalance.ResampledCorpus.v1``: a training corpus in which every
sentence is repeated f_s times (sentence-level resampling, see
``spacy_imbalance.corpus.resampling.resampling``)."""
from pathlib import Path
from typing import Any, Iterator, List, Optional

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from ..source import ReaderT, SentenceReader, announce, reads_source
from .resampling import CountUnit, Method, sentence_weights


NAME = "spacy-imbalance.ResampledCorpus.v1"


class ResampledCorpus(SentenceReader):
    """Yield each sentence's Example f_s times, in corpus order.

    The frequencies are computed in a first pass over the whole training set
    (rareness needs every sentence), so the corpus is held in memory. The
    output is deterministic: the same corpus gives the same examples.
    """

    NAME = NAME

    def __init__(self, corpus: ReaderT, *, method: Method, count: CountUnit, **kwargs: Any) -> None:
        super().__init__(corpus, **kwargs)
        self.method = method
        self.count = count

    def transform(self, nlp: Language, sentences: List[Example]) -> Iterator[Example]:
        weights = sentence_weights(
            [eg.reference for eg in sentences], self.method, count=self.count, spans_key=self.spans_key
        )
        total = sum(weights)
        factor = total / len(weights) if weights else 1.0
        announce(f"ResampledCorpus: {self.method}, {len(weights):,} sentences in, {total:,} out (size x{factor:.2f})")
        for eg, weight in zip(sentences, weights):
            for _ in range(weight):
                yield eg


@registry.readers(NAME)
@reads_source
def create_resampled_corpus_reader_v1(
    path: Optional[Path] = None,
    *,
    method: Method = "sCR",
    count: CountUnit = "tokens",
    spans_key: Optional[str] = None,
    **source: Any,
) -> ResampledCorpus:
    """Resample the sentences of a .spacy corpus, or of another reader.

    path, corpus, gold_preproc, max_length, limit, augmenter: the corpus to
        resample, see ``reads_source``.
    method (str): "none", "sC", "sCR", "sCRD" or "nsCRD".
    count (str): what c(t, s) counts: "tokens" (the paper) or "mentions".
    spans_key (Optional[str]): gold from doc.spans[spans_key] instead of doc.ents.
    """
    return ResampledCorpus.build(path, source, method=method, count=count, spans_key=spans_key)
