"""``spacy-imbalance.ScopedCorpus.v1``: a corpus whose documents annotate only
some entity types (their label scope, see ``spacy_imbalance.corpus.scopes.scopes``),
and ``spacy-imbalance.CombinedCorpus.v1``: several readers as one training corpus.

A config for two corpora annotated for different types::

    [corpora.train]
    @readers = "spacy-imbalance.CombinedCorpus.v1"

    [corpora.train.corpora.people]
    @readers = "spacy-imbalance.ScopedCorpus.v1"
    path = "corpus/people.spacy"
    labels = ["PER", "ORG"]

    [corpora.train.corpora.products]
    @readers = "spacy-imbalance.ScopedCorpus.v1"
    path = "corpus/products.spacy"
    labels = ["PRODUCT", "LOC"]
"""
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Corpus, Example
from spacy.util import registry
from spacy.vocab import Vocab

from ..docs_io import load_docs
from ..source import ConllCorpus, ReaderT, describe_source, reads_source, source_corpus, source_options
from .scopes import check_scope_labels, scope_problem, set_label_scope

SCOPED = "spacy-imbalance.ScopedCorpus.v1"
COMBINED = "spacy-imbalance.CombinedCorpus.v1"


class ScopedCorpus:
    """Yield the examples of ``corpus`` with the label scope set on every
    reference doc, in the order ``corpus`` gives them (one pass, streamed).

    The scope is set on the examples themselves, after sentence splitting
    and augmentation, which both drop ``doc.user_data``. A reference with an
    entity of a type outside the scope, or with another scope already, is a
    ValueError naming ``source`` and the example (counted from 0): the
    corpus contradicts its configuration, and dropping the entity would
    hide it.
    """

    NAME = SCOPED

    def __init__(self, corpus: ReaderT, *, scope: FrozenSet[str], spans_key: Optional[str] = None, source: str = "the corpus") -> None:
        self.corpus = corpus
        self.scope = scope
        self.spans_key = spans_key
        self.source = source

    def __call__(self, nlp: Language) -> Iterator[Example]:
        for i, eg in enumerate(self.corpus(nlp)):
            problem = scope_problem(eg.reference, self.scope, self.spans_key)
            if problem is not None:
                raise ValueError(f"{SCOPED}: {self.source}: example {i}: {problem}")
            set_label_scope(eg.reference, self.scope)
            yield eg


def _checked_docs(
    files: Iterable[Path], vocab: Vocab, scope: FrozenSet[str], spans_key: Optional[str], limit: int
) -> Iterator[Doc]:
    """The non-empty docs of ``files``, at most ``limit`` of them (0: all),
    each checked against ``scope`` first: an error names the file and the
    document's index in it (from 0), which the examples made from it no
    longer know."""
    n = 0
    for path in files:
        for index, doc in enumerate(load_docs(path, vocab)):
            problem = scope_problem(doc, scope, spans_key)
            if problem is not None:
                raise ValueError(f"{SCOPED}: {path}: document {index}: {problem}")
            if len(doc):
                yield doc
                n += 1
                if limit >= 1 and n >= limit:
                    return


class _ScopeCheckedDocBins(Corpus):
    """``spacy.Corpus`` over .spacy files whose docs are checked against the
    scope as they are read, so that an error names the file."""

    def __init__(self, path: Union[str, Path], *, scope: FrozenSet[str], spans_key: Optional[str], **options: Any) -> None:
        super().__init__(path, **options)
        self.scope = scope
        self.spans_key = spans_key

    def read_docbin(self, vocab: Vocab, locs: Iterable[Union[str, Path]]) -> Iterator[Doc]:
        return _checked_docs((Path(loc) for loc in locs), vocab, self.scope, self.spans_key, self.limit)


class _ScopeCheckedConll(ConllCorpus):
    """``ConllCorpus`` (one CoNLL file) with its docs checked as above."""

    def __init__(self, path: Union[str, Path], *, scope: FrozenSet[str], spans_key: Optional[str], **options: Any) -> None:
        super().__init__(path, **options)
        self.scope = scope
        self.spans_key = spans_key

    def read_conll(self, vocab: Vocab) -> Iterator[Doc]:
        return _checked_docs([Path(self.path)], vocab, self.scope, self.spans_key, self.limit)


def _scoped_source(
    path: Optional[Path], scope: FrozenSet[str], spans_key: Optional[str], *, corpus: Optional[ReaderT], **options: Any
) -> ReaderT:
    """What ``source_corpus`` gives, with the docs of a path checked in their files."""
    if path is None or corpus is not None:
        # a nested reader, or the error that exactly one of the two is needed
        return source_corpus(SCOPED, path, corpus, **options)
    if not Path(path).exists():
        raise FileNotFoundError(f"{SCOPED}: no such corpus path: {path}")
    is_conll = Path(path).is_file() and Path(path).suffix != ".spacy"
    reader = _ScopeCheckedConll if is_conll else _ScopeCheckedDocBins
    return reader(path, scope=scope, spans_key=spans_key, **options)


@registry.readers(SCOPED)
@reads_source
def create_scoped_corpus_reader_v1(
    path: Optional[Path] = None,
    *,
    labels: List[str],
    spans_key: Optional[str] = None,
    **source: Any,
) -> ScopedCorpus:
    """Read a corpus that annotates only the entity types ``labels``.

    path, corpus, gold_preproc, max_length, limit, augmenter: the corpus to
        scope, see ``reads_source``.
    labels (List[str]): the entity types annotated in every document; any
        other type may occur unannotated. Every annotated entity must have
        one of them.
    spans_key (Optional[str]): also check the gold of doc.spans[spans_key]
        (span components), besides doc.ents.
    RETURNS (ScopedCorpus): the reader.
    """
    try:
        scope = check_scope_labels(labels)
    except ValueError as err:
        raise ValueError(f"{SCOPED}: labels: {err}") from None
    scoped = _scoped_source(path, scope, spans_key, **source_options(SCOPED, source))
    return ScopedCorpus(scoped, scope=scope, spans_key=spans_key, source=describe_source(path))


class CombinedCorpus:
    """Yield every example of each reader in turn, the readers in the
    alphabetical order of their names (not the order of the config file,
    which a config can lose when it is rewritten), each reader's examples
    in its own order.

    ``spacy train`` shuffles the examples of each epoch anyway, so the order
    only matters when streaming (``max_epochs = -1``): then one reader's
    examples all come before the next one's.
    """

    NAME = COMBINED

    def __init__(self, corpora: Dict[str, ReaderT]) -> None:
        self.corpora = dict(sorted(corpora.items()))

    def __call__(self, nlp: Language) -> Iterator[Example]:
        for corpus in self.corpora.values():
            yield from corpus(nlp)


# Dict[str, Any], not Dict[str, ReaderT]: confection type-checks a dict argument
# before it resolves the reader blocks inside it, and a block is no callable;
# the check below is the validation.
@registry.readers(COMBINED)
def create_combined_corpus_reader_v1(corpora: Dict[str, Any]) -> CombinedCorpus:
    """Read several corpora as one, e.g. ``ScopedCorpus.v1`` readers of
    corpora annotated for different entity types.

    corpora (Dict[str, Callable]): the readers, by name (a config block each).
    RETURNS (CombinedCorpus): the reader.
    """
    if not corpora:
        raise ValueError(f"{COMBINED}: corpora is empty: give at least one reader, as a block [...corpora.NAME]")
    not_readers = sorted(name for name, corpus in corpora.items() if not callable(corpus))
    if not_readers:
        raise ValueError(
            f"{COMBINED}: corpora {', '.join(repr(n) for n in not_readers)} are no readers: "
            'give each one as a block with @readers (e.g. @readers = "spacy-imbalance.ScopedCorpus.v1")'
        )
    return CombinedCorpus(corpora)
