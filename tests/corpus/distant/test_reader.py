"""The DistantCorpus reader: the function's labels every epoch, its summary,
config resolution, nesting and settings validation."""
import re

import pytest
from spacy.tokens import Doc, Span
from spacy.util import registry
from spacy.vocab import Vocab

from spacy_imbalance.corpus.distant import DistantCorpus, create_distant_corpus_reader_v1, distant_supervision, label_quality
from spacy_imbalance.corpus.docs_io import copy_ents_to_spans, load_docs
from spacy_imbalance.corpus.subsampling.reader import create_subsampled_corpus_reader_v1

from .._corpus import assert_config_rejects, corpus_config, plain, write_docs

SENTENCES = [
    ("Kate lives in Paris", [(0, 1, "PER"), (3, 4, "LOC")]),
    ("Bob visited London and Paris", [(0, 1, "PER"), (2, 3, "LOC"), (4, 5, "LOC")]),
    ("New York Times reporters met Kate", [(0, 3, "ORG"), (5, 6, "PER")]),
    ("", []),
    ("the paris plaster", []),
    ("Jordan went to Jordan", [(0, 1, "PER"), (3, 4, "LOC")]),
] * 5


def make_corpus():
    vocab = Vocab()
    docs = []
    for text, ents in SENTENCES:
        doc = Doc(vocab, words=text.split())
        doc.set_ents([Span(doc, s, e, label=l) for s, e, l in ents], default="outside")
        docs.append(doc)
    copy_ents_to_spans(docs, "sc")
    return docs


def annotation(doc):
    return (
        [t.text for t in doc],
        [(t.ent_iob_, t.ent_type_) for t in doc],
        {key: [(s.start, s.end, s.label_) for s in group] for key, group in doc.spans.items()},
    )


@pytest.fixture(scope="module")
def corpus_path(tmp_path_factory):
    return write_docs(tmp_path_factory.mktemp("distant") / "train.spacy", make_corpus())


def test_distant_corpus_is_the_same_every_epoch_and_equals_the_function(corpus_path, nlp, capsys):
    reader = create_distant_corpus_reader_v1(corpus_path, dictionary_fraction=0.5, seed=4)
    first = [annotation(eg.reference) for eg in reader(nlp)]
    second = [annotation(eg.reference) for eg in reader(nlp)]
    assert first == second
    # spacy.Corpus skips empty docs
    gold = [doc for doc in load_docs(corpus_path) if len(doc)]
    expected, dictionary = distant_supervision(gold, 0.5, seed=4)
    assert first == [annotation(doc) for doc in expected]
    # the gold copied to "sc" is gone: it would leak the gold into training
    assert all(spans == {} for _, _, spans in first)
    quality = label_quality(gold, expected)
    assert reader.quality == quality and 0 < quality.n_correct < quality.n_gold
    list(create_distant_corpus_reader_v1(corpus_path, dictionary_fraction=0.5, seed=4)(nlp))
    out = plain(capsys.readouterr().out)
    assert out.count("DistantCorpus") == 1
    assert (
        f"DistantCorpus: dictionary of {len(dictionary)} entries from 50 % of the gold mentions; "
        f"labels P={100 * quality.precision:.1f} % R={100 * quality.recall:.1f} % "
        f"({quality.n_correct} of {quality.n_gold} gold entities found, {quality.n_distant} labelled) in 25 sentences"
    ) in out


def test_distant_corpus_full_dictionary_labels_every_gold_string(corpus_path, nlp):
    examples = list(create_distant_corpus_reader_v1(corpus_path, dictionary_fraction=1.0)(nlp))
    assert len(examples) == len(SENTENCES) - 5  # spacy.Corpus skips the empty docs
    by_text = {" ".join(t.text for t in eg.reference): [(e.text, e.label_) for e in eg.reference.ents] for eg in examples}
    assert by_text["the paris plaster"] == [("paris", "LOC")]  # a dictionary string where it is no entity
    assert by_text["Jordan went to Jordan"] == [("Jordan", "LOC"), ("Jordan", "LOC")]  # a tie: LOC < PER
    assert by_text["New York Times reporters met Kate"] == [("New York Times", "ORG"), ("Kate", "PER")]
    # the predicted docs keep their tokens and carry no annotation
    assert all(len(eg.predicted) == len(eg.reference) and not eg.predicted.ents for eg in examples)


def test_distant_corpus_from_config_wrapping_another_reader(corpus_path, nlp):
    config = corpus_config(
        ("DistantCorpus", "dictionary_fraction = 1.0", 'spans_key = "sc"'),
        ("SubsampledCorpus", "n_sentences = 10"),
        path=corpus_path,
    )
    reader = registry.resolve(config)["corpus"]
    assert isinstance(reader, DistantCorpus)
    examples = list(reader(nlp))
    assert len(examples) == 10
    for eg in examples:
        assert [(s.start, s.end, s.label_) for s in eg.reference.spans["sc"]] == [
            (e.start, e.end, e.label_) for e in eg.reference.ents
        ]


def test_distant_corpus_limit_and_max_length_reach_the_corpus(corpus_path, nlp):
    assert len(list(create_distant_corpus_reader_v1(corpus_path, limit=7)(nlp))) == 7
    # only "the paris plaster" is shorter than 4 tokens: no gold, said so
    with pytest.warns(UserWarning, match="has no gold entities: every distant label is O"):
        short = list(create_distant_corpus_reader_v1(corpus_path, max_length=4)(nlp))
    assert short and all(len(eg.reference) <= 4 for eg in short)


@pytest.mark.parametrize(
    "setting,message",
    [
        ("dictionary_fraction = 0", r"DistantCorpus.v1: dictionary_fraction must be a fraction in \(0, 1\]"),
        ("dictionary_fraction = 1.5", "DistantCorpus.v1: dictionary_fraction must be"),
        ("min_length = 0", r"DistantCorpus.v1: min_length must be an integer in \[1, 100\]"),
        # issue 31, L6: no entity name is a billion characters long
        ("min_length = 1000000000", r"DistantCorpus.v1: min_length must be an integer in \[1, 100\] .*got 1000000000"),
        # the type annotation catches it first, naming the setting too
        ("seed = 0.5", r"corpus -> seed\tat root: 0.5 is not <class 'int'>"),
    ],
)
def test_distant_corpus_config_rejects_bad_settings_at_resolve(corpus_path, setting, message):
    assert_config_rejects("DistantCorpus", setting, path=corpus_path, match=message)


# --- gold the reader cannot label from (issue 31, M8 and L6) -----------------


def test_distant_corpus_refuses_an_absent_spans_key(corpus_path, nlp):
    """It yielded no entity at all: the dictionary was drawn from nothing."""
    reader = create_distant_corpus_reader_v1(corpus_path, spans_key="nokey")
    message = f"spacy-imbalance.DistantCorpus.v1: {corpus_path}: no document has spans under spans_key 'nokey'; the span keys with spans are 'sc'"
    with pytest.raises(ValueError, match=re.escape(message)):
        list(reader(nlp))


def test_distant_corpus_refuses_ents_when_the_gold_is_a_span_group(tmp_path, nlp):
    doc = Doc(Vocab(), words=["Kate", "lives", "in", "Paris"])
    doc.spans["sc"] = [Span(doc, 0, 1, "PER"), Span(doc, 3, 4, "LOC")]
    path = write_docs(tmp_path / "spans.spacy", [doc])
    with pytest.raises(ValueError, match=r"DistantCorpus.v1: .*spans.spacy: no document has entities in doc.ents .*'sc'"):
        list(create_distant_corpus_reader_v1(path)(nlp))


def test_distant_corpus_refuses_a_min_length_that_empties_the_dictionary(corpus_path, nlp):
    """The longest gold name is "New York Times" (14 characters)."""
    assert list(create_distant_corpus_reader_v1(corpus_path, min_length=14, dictionary_fraction=1.0)(nlp))
    with pytest.raises(ValueError, match=r"DistantCorpus.v1: .*: the dictionary is empty: .*min_length = 15 .*lower min_length"):
        list(create_distant_corpus_reader_v1(corpus_path, min_length=15, dictionary_fraction=1.0)(nlp))


def test_distant_corpus_needs_a_path_or_a_corpus(corpus_path, tmp_path):
    with pytest.raises(ValueError, match="give exactly one of `path`"):
        create_distant_corpus_reader_v1()
    with pytest.raises(ValueError, match="give exactly one of `path`"):
        create_distant_corpus_reader_v1(corpus_path, corpus=create_subsampled_corpus_reader_v1(corpus_path, n_sentences=2))
    with pytest.raises(FileNotFoundError, match="DistantCorpus.v1: no such corpus path"):
        create_distant_corpus_reader_v1(tmp_path / "nope.spacy")
