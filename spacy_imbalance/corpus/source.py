"""What the corpus readers of this package share: each reads a .spacy path
like ``spacy.Corpus.v1`` (or a CoNLL file, as the commands do) or wraps
another reader (so they nest in a config), works sentence by sentence, and
turns edited gold Docs back into Examples."""
import inspect
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, ClassVar, Dict, Iterable, Iterator, List, Mapping, Optional, Set, Tuple, Type, TypeVar, Union

from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Corpus, Example
from spacy.util import ensure_path
from spacy.vocab import Vocab
from wasabi import msg

from .docs_io import load_docs
from .sentences import keep_label_scope, sentence_doc

ReaderT = Callable[[Language], Iterable[Example]]

_announced: Set[str] = set()


def announce(message: str) -> None:
    """Print a reader's summary once per process.

    Printed, not logged: `spacy train` shows the spacy logger's INFO only with
    -V, and what a reader did to the training set (size factor, entities
    masked) is what a user wants to see before training. Once per process,
    because `spacy train` builds the train reader twice (initialisation and
    training) and calls it every epoch.
    """
    if message not in _announced:
        _announced.add(message)
        msg.info(message)


def source_corpus(name: str, path: Optional[Path], corpus: Optional[ReaderT], **corpus_options: Any) -> ReaderT:
    """The reader to draw examples from: ``spacy.Corpus`` over ``path`` (as
    ``ScopeKeepingCorpus``, which keeps the docs' label scopes),
    ``ConllCorpus`` when ``path`` is a file that is not a .spacy file (the
    CoNLL files every command reads, which ``spacy.Corpus`` would skip with
    only its warning W090, giving 0 examples), or ``corpus`` itself. Exactly
    one of ``path`` and ``corpus`` must be given; ``corpus_options``
    (``gold_preproc``, ``max_length``, ``limit``, ``augmenter``, typed by
    ``SentenceReader.build``) go to the reader over ``path``."""
    if corpus is not None and path is None:
        return corpus
    if path is None or corpus is not None:
        raise ValueError(
            f"{name}: give exactly one of `path` (a .spacy file or folder, or a CoNLL file) or `corpus` (another reader)"
        )
    if not Path(path).exists():
        raise FileNotFoundError(f"{name}: no such corpus path: {path}")
    reader = ConllCorpus if Path(path).is_file() and Path(path).suffix != ".spacy" else ScopeKeepingCorpus
    return reader(path, **corpus_options)


def describe_source(path: Optional[Path]) -> str:
    """What a reader's messages call its data: the file, or the nested reader."""
    return str(path) if path is not None else "the corpus of its `corpus` reader"


# What every registered reader takes after its own settings to read its source
# (``source_corpus``): another reader, or spacy.Corpus.v1's options for its
# path. Part of each reader's config schema, so declared here once and added
# to every signature by ``reads_source``.
SOURCE_OPTIONS: Tuple[inspect.Parameter, ...] = tuple(
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
    for name, annotation, default in (
        ("corpus", Optional[ReaderT], None),
        ("gold_preproc", bool, False),
        ("max_length", int, 0),
        ("limit", int, 0),
        ("augmenter", Optional[Callable], None),
    )
)

CreateT = TypeVar("CreateT", bound=Callable[..., Any])


def reads_source(create: CreateT) -> CreateT:
    """A registered reader function with the source options at the end of its
    signature (the config schema spaCy validates against):

    path (Optional[Path]): a .spacy file or folder, read like spacy.Corpus.v1,
        or a CoNLL file; declared by ``create``, first.
    corpus (Optional[Callable]): another reader to read instead of ``path``.
    gold_preproc, max_length, limit, augmenter: as in spacy.Corpus.v1, for ``path``.

    ``create`` declares its own settings and takes these as ``**source``,
    which it hands on through ``source_options`` (``SentenceReader.build``
    does). ``create`` itself is returned, with the signature (and type hints)
    that ``inspect.signature`` and ``typing.get_type_hints``, so confection,
    read: no wrapper, so that spaCy finds the function where it is written.
    """
    declared = inspect.signature(create)
    own = [param for param in declared.parameters.values() if param.kind is not param.VAR_KEYWORD]
    if len(own) == len(declared.parameters):
        raise TypeError(f"{create.__qualname__} must take the source options as **source")
    signature = declared.replace(parameters=[*own, *SOURCE_OPTIONS])
    create.__signature__ = signature  # type: ignore[attr-defined]
    create.__annotations__ = {
        **{param.name: param.annotation for param in signature.parameters.values()},
        "return": signature.return_annotation,
    }
    return create


def source_options(name: str, given: Mapping[str, Any]) -> Dict[str, Any]:
    """The source options of a call to reader ``name`` (the ``**source`` of a
    ``reads_source`` function), each one not given at its default. A name
    that is none of them is a TypeError, as for any function: confection
    checks a config against the signature, but a direct call comes here."""
    unknown = sorted(set(given) - {param.name for param in SOURCE_OPTIONS})
    if unknown:
        raise TypeError(f"{name} got an unexpected keyword argument {unknown[0]!r}")
    return {param.name: given.get(param.name, param.default) for param in SOURCE_OPTIONS}


ReaderSelf = TypeVar("ReaderSelf", bound="SentenceReader")


class SentenceReader:
    """What every reader of this package does: on each call, read every
    sentence of its source (``spacy.Corpus`` over a path, a CoNLL file or
    another reader) into memory, then hand them to ``transform``.

    A reader is built by ``build``, which checks its settings once, before the
    corpus is touched (a bad setting fails when the config is resolved), and
    names the reader in every error. Subclasses set ``NAME`` (the registered
    name), override ``check`` for the settings that no corpus can make right
    and ``transform`` for what they do to the sentences.
    """

    NAME: ClassVar[str] = "spacy-imbalance reader"

    def __init__(self, corpus: ReaderT, *, spans_key: Optional[str] = None, source: str = "the corpus") -> None:
        self.corpus = corpus
        self.spans_key = spans_key
        # what messages call the data: the file, or the nested reader
        self.source = source

    @staticmethod
    def check(*args: Any, **settings: Any) -> None:
        """Raise a ValueError naming the first setting that is out of range.
        Called with the settings by name; each subclass names its own (the
        ``*args: Any, **settings: Any`` signature lets its override do so)."""

    def __call__(self, nlp: Language) -> Iterator[Example]:
        yield from self.transform(nlp, sentence_examples(self.corpus, nlp))

    def transform(self, nlp: Language, sentences: List[Example]) -> Iterator[Example]:
        raise NotImplementedError

    @classmethod
    def build(cls: Type[ReaderSelf], path: Optional[Path], source: Mapping[str, Any], **settings: Any) -> ReaderSelf:
        """The reader over ``path`` or ``source["corpus"]`` (exactly one),
        the rest of ``source`` (the options ``reads_source`` adds, checked by
        ``source_options``) applied to ``path``; ``settings`` are the reader's own."""
        try:
            cls.check(**settings)
        except ValueError as err:
            raise ValueError(f"{cls.NAME}: {err}") from None
        reader = source_corpus(cls.NAME, path, **source_options(cls.NAME, source))
        return cls(reader, source=describe_source(path), **settings)


class ScopeKeepingAugmenter:
    """An augmenter whose examples keep the label scope of the example they
    come from (spaCy's augmenters build new reference docs, without
    ``user_data``). A class, not a closure, so that it pickles."""

    def __init__(self, augmenter: Callable[[Language, Example], Iterable[Example]]) -> None:
        self.augmenter = augmenter

    def __call__(self, nlp: Language, example: Example) -> Iterator[Example]:
        for eg in self.augmenter(nlp, example):
            keep_label_scope(example.reference, eg.reference)
            yield eg


# Deserialised .spacy files, so that a reader called again in the same process
# (`spacy train` reads the train set several times to initialise, then once per
# epoch) copies Docs instead of reading the file again. Reading is the slow part:
# srsly looks its msgpack decoders up in the installed packages' entry points for
# every span group and user data it unpacks, three times per Doc, so with about
# a hundred distributions installed a tweet corpus reads tens of times slower
# than it copies. Keyed by the file's path, size and modification time and the vocab the
# Docs belong to; the most recent DOCBIN_CACHE_FILES files of at most
# DOCBIN_CACHE_BYTES each (a reader holds its sentences in memory anyway).
DOCBIN_CACHE_FILES = 8
DOCBIN_CACHE_BYTES = 64 * 2**20
_docbins: "OrderedDict[Tuple[str, int, int], Tuple[Vocab, List[Doc]]]" = OrderedDict()


def docbin_docs(path: Path, vocab: Vocab) -> Iterator[Doc]:
    """The Docs of the .spacy file ``path``, as ``DocBin().from_disk(path).get_docs(vocab)``
    gives them, each a fresh copy that its reader may change."""
    stat = path.stat()
    if stat.st_size > DOCBIN_CACHE_BYTES:  # streamed, as spaCy reads it
        yield from DocBin().from_disk(path).get_docs(vocab)
        return
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    cached = _docbins.get(key)
    if cached is not None and cached[0] is vocab:
        _docbins.move_to_end(key)
        yield from (doc.copy() for doc in cached[1])
        return
    docs = list(DocBin().from_disk(path).get_docs(vocab))
    try:
        copies = [doc.copy() for doc in docs]
    except ValueError:
        # Doc.copy refuses some Docs (spaCy's E1052: a zero-length span): not cached, and handed over as read, for
        # the reader to name what is wrong with them
        yield from docs
        return
    _docbins[key] = (vocab, docs)
    while len(_docbins) > DOCBIN_CACHE_FILES:
        _docbins.popitem(last=False)
    yield from copies


class ScopeKeepingCorpus(Corpus):
    """``spacy.Corpus`` whose examples keep the label scope stored in the
    docs they come from (a .spacy file written with user data): spaCy's
    sentence splitting (``gold_preproc``, ``max_length``) and its augmenters
    make new reference docs that have none, and a scoped sentence read
    without its scope would teach the other types as "no entity"."""

    def __init__(self, path: Union[str, Path], **options: Any) -> None:
        super().__init__(path, **options)
        self.augmenter = ScopeKeepingAugmenter(self.augmenter)

    def read_docbin(self, vocab: Vocab, locs: Iterable[Union[str, Path]]) -> Iterator[Doc]:
        # spacy.Corpus.read_docbin (its `limit` included, which stops each file, not the walk), reading through
        # the cache of docbin_docs
        i = 0
        for loc in locs:
            path = ensure_path(loc)
            if path.parts[-1].endswith(".spacy"):
                for doc in docbin_docs(path, vocab):
                    if len(doc):
                        yield doc
                        i += 1
                        if self.limit >= 1 and i >= self.limit:
                            break

    def make_examples(self, nlp: Language, reference_docs: Iterable[Doc]) -> Iterator[Example]:
        return self._scoped(super().make_examples, nlp, reference_docs)

    def make_examples_gold_preproc(self, nlp: Language, reference_docs: Iterable[Doc]) -> Iterator[Example]:
        return self._scoped(super().make_examples_gold_preproc, nlp, reference_docs)

    @staticmethod
    def _scoped(
        make: Callable[[Language, Iterable[Doc]], Iterator[Example]], nlp: Language, reference_docs: Iterable[Doc]
    ) -> Iterator[Example]:
        # one doc at a time, so that each example is known to come from it
        for reference in reference_docs:
            for eg in make(nlp, [reference]):
                keep_label_scope(reference, eg.reference)
                yield eg


class ConllCorpus(ScopeKeepingCorpus):
    """``spacy.Corpus`` over one CoNLL file (one Doc per sentence, read by
    ``load_docs`` as the commands read it), with spaCy's own example making:
    ``gold_preproc``, ``max_length``, ``limit`` and ``augmenter`` act as they
    do on a .spacy file."""

    def __call__(self, nlp: Language) -> Iterator[Example]:
        reference_docs = self.read_conll(nlp.vocab)
        if self.gold_preproc:
            examples = self.make_examples_gold_preproc(nlp, reference_docs)
        else:
            examples = self.make_examples(nlp, reference_docs)
        for example in examples:
            yield from self.augmenter(nlp, example)

    def read_conll(self, vocab: Vocab) -> Iterator[Doc]:
        """The file's non-empty Docs, at most ``limit`` of them (0: all), as
        ``Corpus.read_docbin`` gives a .spacy file's."""
        n = 0
        for doc in load_docs(self.path, vocab):
            if len(doc):
                yield doc
                n += 1
                if self.limit >= 1 and n >= self.limit:
                    return


def sentence_examples(corpus: ReaderT, nlp: Language) -> List[Example]:
    """All examples of a reader, split into sentences where boundaries are set."""
    sentences: List[Example] = []
    for eg in corpus(nlp):
        sentences.extend(split_example(eg))
    return sentences


def split_example(eg: Example) -> List[Example]:
    """``Example.split_sents`` keeping the reference's span groups and label
    scope (which ``Span.as_doc`` drops): one example per reference sentence
    that has predicted tokens aligned to it."""
    reference = eg.reference
    if not (len(reference) and reference.has_annotation("SENT_START")) or len(list(reference.sents)) == 1:
        return [eg]
    y2x = eg.alignment.y2x
    seen: Set[int] = set()
    out: List[Example] = []
    for sent in reference.sents:
        indices = [int(i) for i in y2x[sent.start : sent.end] if int(i) not in seen]
        if indices:
            predicted = eg.predicted[indices[0] : indices[-1] + 1].as_doc()
            out.append(Example(predicted, sentence_doc(reference, sent)))
            seen.update(indices)
    return out


def is_gold_tokenized(eg: Example) -> bool:
    return [t.text for t in eg.predicted] == [t.text for t in eg.reference]


def example_like(nlp: Language, source: Example, reference: Doc) -> Example:
    """An Example for an edited reference doc, tokenised the way ``source``
    was: with the gold tokens when its predicted doc had them (gold_preproc),
    else by the pipeline's tokenizer."""
    if is_gold_tokenized(source):
        words = [t.text for t in reference]
        spaces = [bool(t.whitespace_) for t in reference]
        predicted = Doc(nlp.vocab, words=words, spaces=spaces)
    else:
        predicted = nlp.make_doc(reference.text)
    return Example(predicted, reference)
