"""``spacy-imbalance.SubsampledCorpus.v1``: a training corpus of n sentences,
drawn uniformly or with a target share of entity tokens (the low-resource
and imbalanced settings of the AUC maximization paper, see
``spacy_imbalance.corpus.subsampling.subsampling``)."""
from pathlib import Path
from typing import Any, Iterator, List, Optional

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from ..source import ReaderT, SentenceReader, announce, reads_source
from .subsampling import check_subsample_settings, entity_token_share, subsample_indices

NAME = "spacy-imbalance.SubsampledCorpus.v1"


class SubsampledCorpus(SentenceReader):
    """Yield the Examples of the selected sentences, in corpus order.

    The selection is made on every call with a fresh ``random.Random(seed)``,
    so each epoch yields the same sentences, the ones `spacy-imbalance
    subsample` writes for the same corpus. The corpus is held in memory for
    one pass.
    """

    NAME = NAME

    def __init__(
        self,
        corpus: ReaderT,
        *,
        n_sentences: int,
        entity_token_ratio: Optional[float],
        seed: int,
        tolerance: float,
        **kwargs: Any,
    ) -> None:
        super().__init__(corpus, **kwargs)
        self.n_sentences = n_sentences
        self.entity_token_ratio = entity_token_ratio
        self.seed = seed
        self.tolerance = tolerance

    @staticmethod
    def check(*, n_sentences: int, entity_token_ratio: Optional[float], tolerance: float, **_: Any) -> None:
        # what needs no data; a corpus too small or a share it cannot reach fails on the first epoch
        check_subsample_settings(n_sentences, entity_token_ratio, tolerance)

    def transform(self, nlp: Language, sentences: List[Example]) -> Iterator[Example]:
        references = [eg.reference for eg in sentences]
        try:
            indices = subsample_indices(
                references,
                self.n_sentences,
                entity_token_ratio=self.entity_token_ratio,
                seed=self.seed,
                tolerance=self.tolerance,
                spans_key=self.spans_key,
            )
        except ValueError as err:
            raise ValueError(f"{NAME}: {err}") from None
        selected = [sentences[i] for i in indices]
        share = entity_token_share([eg.reference for eg in selected], self.spans_key)
        corpus_share = entity_token_share(references, self.spans_key)
        announce(
            f"SubsampledCorpus: {len(selected):,} of {len(references):,} sentences, "
            f"{100 * share:.2f} % entity tokens (corpus {100 * corpus_share:.2f} %)"
        )
        yield from selected


@registry.readers(NAME)
@reads_source
def create_subsampled_corpus_reader_v1(
    path: Optional[Path] = None,
    *,
    n_sentences: int,
    entity_token_ratio: Optional[float] = None,
    seed: int = 0,
    tolerance: float = 0.005,
    spans_key: Optional[str] = None,
    **source: Any,
) -> SubsampledCorpus:
    """Keep n sentences of a .spacy corpus, or of another reader.

    path, corpus, gold_preproc, max_length, limit, augmenter: the corpus to
        subsample, see ``reads_source``.
    n_sentences (int): how many sentences to keep (20, 50, ..., 1000 in the paper).
    entity_token_ratio (Optional[float]): a target share of entity tokens, a
        fraction in (0, 1) (0.05 for 5 %); None for a uniform sample.
    seed (int): seed of the selection.
    tolerance (float): largest accepted |share - target|, a fraction.
    spans_key (Optional[str]): gold from doc.spans[spans_key] instead of doc.ents.
    RETURNS (SubsampledCorpus): the reader.
    """
    return SubsampledCorpus.build(
        path, source, n_sentences=n_sentences, entity_token_ratio=entity_token_ratio, seed=seed, tolerance=tolerance,
        spans_key=spans_key,
    )
