"""Splitting docs into sentences keeps their span groups (spaCy's
``Span.as_doc`` drops ``doc.spans``)."""
import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.corpus.source import sentence_examples, split_example
from spacy_imbalance.corpus.docs_io import load_docs, write_docbin
from spacy_imbalance.corpus.sentences import bio_tags, mention_bounds, sentence_docs


def two_sentences(vocab):
    doc = Doc(
        vocab, words=["Ann", "sings", ".", "Bob", "runs", "in", "Rome", "."],
        sent_starts=[True, False, False, True, False, False, False, False],
        ents=["B-PER", "O", "O", "B-PER", "O", "O", "B-LOC", "O"],
    )
    doc.spans["sc"] = list(doc.ents)
    doc.spans["masked"] = [Span(doc, 4, 5, "X")]
    return doc


def test_sentence_docs_keep_span_groups():
    first, second = sentence_docs(two_sentences(spacy.blank("en").vocab))
    assert [(s.text, s.label_) for s in first.spans["sc"]] == [("Ann", "PER")]
    assert [(s.text, s.label_) for s in second.spans["sc"]] == [("Bob", "PER"), ("Rome", "LOC")]
    assert list(first.spans["masked"]) == [] and [s.text for s in second.spans["masked"]] == ["runs"]


def test_sentence_docs_warn_about_spans_crossing_sentences():
    doc = two_sentences(spacy.blank("en").vocab)
    doc.spans["odd"] = [Span(doc, 2, 4, "X")]
    with pytest.warns(UserWarning, match="1 span"):
        sentence_docs(doc)


def test_split_example_keeps_span_groups_and_alignment():
    nlp = spacy.blank("en")
    doc = two_sentences(nlp.vocab)
    parts = split_example(Example(nlp.make_doc(doc.text), doc))
    assert [eg.predicted.text for eg in parts] == ["Ann sings . ", "Bob runs in Rome . "]
    assert [s.text for s in parts[1].reference.spans["sc"]] == ["Bob", "Rome"]
    assert [s.text for s in parts[1].reference.spans["masked"]] == ["runs"]


def test_sentence_examples_from_a_corpus_keep_span_groups(tmp_path):
    nlp = spacy.blank("en")
    write_docbin([two_sentences(nlp.vocab)], tmp_path / "two.spacy")
    from spacy.training import Corpus

    examples = sentence_examples(Corpus(tmp_path / "two.spacy"), nlp)
    assert [len(eg.reference.spans["sc"]) for eg in examples] == [1, 2]


def test_cli_commands_keep_span_groups_of_split_sentences(tmp_path):
    nlp = spacy.blank("en")
    write_docbin([two_sentences(nlp.vocab)], tmp_path / "two.spacy")
    result = CliRunner().invoke(app, ["resample", str(tmp_path / "two.spacy"), str(tmp_path / "out.spacy"), "--method", "none"])
    assert result.exit_code == 0, result.output
    docs = load_docs(tmp_path / "out.spacy")
    assert [[s.text for s in doc.spans["sc"]] for doc in docs] == [["Ann"], ["Bob", "Rome"]]


def test_bio_tags_and_mentions_round_trip():
    doc = two_sentences(spacy.blank("en").vocab)
    tags = bio_tags(doc)
    assert tags == ["B-PER", "O", "O", "B-PER", "O", "O", "B-LOC", "O"]
    assert mention_bounds(tags) == [(0, 1, "PER"), (3, 4, "PER"), (6, 7, "LOC")]
    # IOB1: an I- after O or after another type starts a new mention
    assert mention_bounds(["I-X", "I-X", "I-Y", "O", "I-Y"]) == [(0, 2, "X"), (2, 3, "Y"), (4, 5, "Y")]
    # missing annotation is neither entity nor O
    doc2 = Doc(doc.vocab, words=["a", "b"], ents=["B-X", ""])
    assert bio_tags(doc2) == ["B-X", ""]
    with pytest.raises(ValueError, match="overlapping spans"):
        doc.spans["ov"] = [Span(doc, 3, 5, "A"), Span(doc, 4, 6, "B")]
        bio_tags(doc, "ov")
