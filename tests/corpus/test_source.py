"""What the readers share (``corpus/source.py``): a CoNLL path reads as the
commands read it (issue 31, L3: it gave 0 examples and only spaCy's W090)."""
import inspect
import typing
import warnings

import pytest
from spacy.util import registry
from thinc.api import ConfigValidationError

from spacy_imbalance.corpus.source import ConllCorpus, source_corpus
from spacy_imbalance.corpus.conll import ConllFormatError
from spacy_imbalance.corpus.docs_io import load_docs

from ._corpus import corpus_config, count_docbin_reads, write_conll, write_docs

# four sentences, three with entities
CONLL = (
    "Kate\tB-PER\nlives\tO\nin\tO\nParis\tB-LOC\n\n"
    "Bob\tB-PER\nvisited\tO\nNew\tB-LOC\nYork\tI-LOC\n\n"
    "it\tO\nrains\tO\n\n"
    "Paris\tB-LOC\nsleeps\tO\n"
)

# each reader with settings that keep every sentence (or a known number)
READERS = {
    "MaskedCorpus": (["p = 0.0"], 4),
    "ResampledCorpus": (['method = "none"'], 4),
    "SubsampledCorpus": (["n_sentences = 3"], 3),
    "AugmentedCorpus": (["p = 0.0", "n_copies = 1"], 8),
    "DistantCorpus": (["dictionary_fraction = 1.0"], 4),
}


def _entities(examples):
    return [[(e.start, e.end, e.label_) for e in eg.reference.ents] for eg in examples]


@pytest.fixture
def conll_path(tmp_path):
    return write_conll(tmp_path, CONLL, "train.conll")


def _reader(name, settings, path):
    return registry.resolve(corpus_config((name, *settings), path=path))["corpus"]


@pytest.mark.parametrize("name", list(READERS))
def test_source_readers_read_a_conll_file_as_its_spacy_conversion(tmp_path, conll_path, nlp, name):
    settings, n_examples = READERS[name]
    spacy_path = write_docs(tmp_path / "train.spacy", load_docs(conll_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # W090 ("no .spacy files") among them
        from_conll = list(_reader(name, settings, conll_path)(nlp))
    from_spacy = list(_reader(name, settings, spacy_path)(nlp))
    assert len(from_conll) == n_examples
    assert [eg.reference.text for eg in from_conll] == [eg.reference.text for eg in from_spacy]
    assert _entities(from_conll) == _entities(from_spacy)


def test_source_conll_corpus_keeps_spacys_settings(conll_path, nlp):
    """limit, max_length and gold_preproc act as on a .spacy file."""
    source = source_corpus("test", conll_path, None, limit=2)
    assert isinstance(source, ConllCorpus)
    assert [eg.reference.text for eg in source(nlp)] == ["Kate lives in Paris", "Bob visited New York"]
    short = source_corpus("test", conll_path, None, max_length=3)
    assert [eg.reference.text for eg in short(nlp)] == ["it rains", "Paris sleeps"]
    gold = source_corpus("test", conll_path, None, gold_preproc=True)
    assert all([t.text for t in eg.predicted] == [t.text for t in eg.reference] for eg in gold(nlp))


def test_source_conll_errors_name_the_file_and_line(tmp_path, nlp):
    path = write_conll(tmp_path, "Kate\tB-PER\nlives\tX-Y\n", "bad.conll")
    reader = _reader("ResampledCorpus", ['method = "none"'], path)
    with pytest.raises(ConllFormatError, match="bad.conll"):
        list(reader(nlp))


def test_source_spacy_files_and_folders_still_read_by_spacy_corpus(tmp_path, conll_path, nlp):
    folder = tmp_path / "data"
    folder.mkdir()
    write_docs(folder / "train.spacy", load_docs(conll_path))
    source = source_corpus("test", folder, None)
    assert not isinstance(source, ConllCorpus)
    assert len(list(source(nlp))) == 4


# The released config schema of the readers (spaCy validates configs against
# these signatures), as they were before their source options got one home.
CALLABLE_READER = "Optional[Callable[[spacy.language.Language], Iterable[spacy.training.example.Example]]]"
SOURCE_OPTIONS = (
    f"corpus: {CALLABLE_READER} = None, gold_preproc: bool = False, max_length: int = 0, limit: int = 0, "
    "augmenter: Optional[Callable] = None"
)
SIGNATURES = {
    "AugmentedCorpus": (
        "method: Literal['label_wise_token_replacement', 'mention_replacement', 'shuffle_within_segments', 'all'] "
        "= 'all', p: float = 0.3, n_copies: int = 1, seed: int = 0, spans_key: Optional[str] = None",
        "augmentation",
    ),
    "DistantCorpus": (
        "dictionary_fraction: float = 0.5, seed: int = 0, min_length: int = 2, spans_key: Optional[str] = None",
        "distant",
    ),
    "MaskedCorpus": (
        "p: float, seed: int = 0, spans_key: Optional[str] = None, masked_key: str = 'masked'",
        "masking",
    ),
    "ResampledCorpus": (
        "method: Literal['none', 'sC', 'sCR', 'sCRD', 'nsCRD'] = 'sCR', count: Literal['tokens', 'mentions'] "
        "= 'tokens', spans_key: Optional[str] = None",
        "resampling",
    ),
    "ScopedCorpus": ("labels: List[str], spans_key: Optional[str] = None", "scopes"),
    "SubsampledCorpus": (
        "n_sentences: int, entity_token_ratio: Optional[float] = None, seed: int = 0, tolerance: float = 0.005, "
        "spans_key: Optional[str] = None",
        "subsampling",
    ),
}


@pytest.mark.parametrize("name", list(SIGNATURES))
def test_source_reader_signatures_are_the_released_schema(name):
    """Every reader keeps its signature: names, order, kinds, type hints and
    defaults, as ``inspect.signature`` (what confection builds the config
    schema from) and ``typing.get_type_hints`` (how it resolves the hints) see them."""
    own, package = SIGNATURES[name]
    func = registry.readers.get(f"spacy-imbalance.{name}.v1")
    signature = inspect.signature(func)
    returns = f"spacy_imbalance.corpus.{package}.reader.{name}"
    assert str(signature) == f"(path: Optional[pathlib.Path] = None, *, {own}, {SOURCE_OPTIONS}) -> {returns}"
    hints = typing.get_type_hints(func)
    assert hints == {
        **{p.name: p.annotation for p in signature.parameters.values()},
        "return": signature.return_annotation,
    }
    # what `spacy debug config --show-functions` prints: the reader's own module, file and line
    found = registry.readers.find(f"spacy-imbalance.{name}.v1")
    assert found["module"] == f"spacy_imbalance.corpus.{package}.reader"
    assert found["file"] == inspect.getsourcefile(inspect.getmodule(func))
    assert found["line_no"] == inspect.getsourcelines(func)[1]


@pytest.mark.parametrize("setting,match", [("limt = 2", "limt"), ('limit = "two"', "limit"), ("max_length = 1.5", "max_length")])
def test_source_options_are_validated_as_config(conll_path, setting, match):
    """The options ``reads_source`` adds are checked like the readers' own:
    a misspelt or mistyped one fails when the config is resolved."""
    config = corpus_config(("ResampledCorpus", setting), path=conll_path)
    with pytest.raises(ConfigValidationError, match=match):
        registry.resolve(config)


def test_source_options_bound_on_a_direct_call(conll_path, nlp):
    create = registry.readers.get("spacy-imbalance.ResampledCorpus.v1")
    with pytest.raises(TypeError, match="unexpected keyword argument 'limt'"):
        create(conll_path, limt=2)
    assert len(list(create(conll_path, method="none", limit=2)(nlp))) == 2


def _snapshot(examples):
    return [
        (eg.reference.text, [(e.start, e.end, e.label_) for e in eg.reference.ents],
         {key: [(s.start, s.end, s.label_) for s in group] for key, group in eg.reference.spans.items()},
         dict(eg.reference.user_data), [t.is_sent_start for t in eg.reference])
        for eg in examples
    ]


def test_source_a_spacy_file_read_again_is_copied_not_deserialised(tmp_path, conll_path, nlp, monkeypatch):
    # `spacy train` calls the train reader several times to initialise and once per epoch
    docs = load_docs(conll_path)
    docs[0].spans["sc"] = [docs[0][0:1]]
    docs[0].user_data["note"] = "kept"
    path = write_docs(tmp_path / "train.spacy", docs)
    reads = count_docbin_reads(monkeypatch)
    source = source_corpus("test", path, None)
    first = list(source(nlp))
    # a reader may change what it is given: the next read must not see it
    first[0].reference.ents = []
    first[0].reference.user_data["note"] = "changed"
    second, third = list(source(nlp)), list(source_corpus("test", path, None)(nlp))
    assert len(reads) == 1
    expected = _snapshot(spacy_corpus_examples(path, nlp))
    assert _snapshot(second) == _snapshot(third) == expected
    assert expected[0][1] == [(0, 1, "PER"), (3, 4, "LOC")] and expected[0][2] == {"sc": [(0, 1, "")]}
    assert expected[0][3]["note"] == "kept"
    assert second[0].reference is not third[0].reference


def spacy_corpus_examples(path, nlp, **options):
    from spacy.training import Corpus

    return list(Corpus(path, **options)(nlp))


def test_source_a_rewritten_file_or_another_vocab_is_read_again(tmp_path, conll_path, nlp, monkeypatch):
    import os

    import spacy

    path = write_docs(tmp_path / "train.spacy", load_docs(conll_path))
    reads = count_docbin_reads(monkeypatch)
    source = source_corpus("test", path, None)
    assert len(list(source(nlp))) == 4
    write_docs(path, load_docs(conll_path)[:2])
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))  # rewritten, whatever the clock's resolution
    assert len(list(source(nlp))) == 2 and len(reads) == 2
    other = spacy.blank("en")
    assert [eg.reference.vocab for eg in source(other)] == [other.vocab] * 2 and len(reads) == 3


def test_source_a_file_over_the_cache_bound_is_streamed_each_time(tmp_path, conll_path, nlp, monkeypatch):
    from spacy_imbalance.corpus import source as module

    path = write_docs(tmp_path / "train.spacy", load_docs(conll_path))
    monkeypatch.setattr(module, "DOCBIN_CACHE_BYTES", path.stat().st_size - 1)
    reads = count_docbin_reads(monkeypatch)
    reader = source_corpus("test", path, None)
    assert [len(list(reader(nlp))) for _ in range(2)] == [4, 4] and len(reads) == 2


def test_source_limit_reads_as_spacy_corpus(tmp_path, conll_path, nlp):
    folder = tmp_path / "data"
    folder.mkdir()
    write_docs(folder / "a.spacy", load_docs(conll_path))
    write_docs(folder / "b.spacy", load_docs(conll_path)[1:])
    for limit in (0, 2):
        ours = source_corpus("test", folder, None, limit=limit)
        assert _snapshot(ours(nlp)) == _snapshot(spacy_corpus_examples(folder, nlp, limit=limit))


def test_source_a_file_that_doc_copy_refuses_is_read_as_spacy_reads_it(tmp_path, nlp, monkeypatch):
    from spacy.tokens import Doc, Span

    doc = Doc(nlp.vocab, words=["Bob", "Lee", "runs"], ents=["B-PER", "I-PER", "O"])
    doc.spans["sc"] = [Span(doc, 0, 2, "PER"), Span(doc, 2, 2, "LOC")]  # zero-length: Doc.copy raises E1052
    path = write_docs(tmp_path / "zero.spacy", [doc])
    reads = count_docbin_reads(monkeypatch)
    reader = source_corpus("test", path, None)
    for _ in range(2):
        assert [[(s.start, s.end) for s in eg.reference.spans["sc"]] for eg in reader(nlp)] == [[(0, 2), (2, 2)]]
    assert len(reads) == 2
