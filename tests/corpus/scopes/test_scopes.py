"""The label scope of a document (``corpus/scopes/scopes.py``): stored in
doc.user_data, kept by a DocBin that stores user data, checked on the way in
and on the way out."""
import pytest
from spacy.tokens import Doc, DocBin, Span, SpanGroup

from spacy_imbalance.corpus.scopes.scopes import (
    SCOPE_KEY,
    get_label_scope,
    out_of_scope_spans,
    scope_problem,
    set_label_scope,
)


@pytest.fixture
def doc(nlp):
    return Doc(nlp.vocab, words=["Ann", "bought", "an", "iPhone", "."], ents=["B-PER", "O", "O", "B-PROD", "O"])


def test_scope_round_trips_through_user_data(doc):
    assert get_label_scope(doc) is None  # no scope: every type annotated
    set_label_scope(doc, ["PROD", "PER"])
    assert doc.user_data[SCOPE_KEY] == ["PER", "PROD"]
    assert get_label_scope(doc) == frozenset({"PER", "PROD"})
    assert get_label_scope(doc.copy()) == frozenset({"PER", "PROD"})


def test_scope_is_kept_by_a_docbin_that_stores_user_data(doc, nlp):
    set_label_scope(doc, {"PER", "PROD"})
    data = DocBin(docs=[doc], store_user_data=True).to_bytes()
    (read,) = DocBin().from_bytes(data).get_docs(nlp.vocab)
    assert read.user_data[SCOPE_KEY] == ("PER", "PROD")  # msgpack gives a tuple back
    assert get_label_scope(read) == frozenset({"PER", "PROD"})


def test_scope_is_lost_by_a_docbin_without_user_data_and_by_as_doc(doc, nlp):
    """What the module docstring warns of, and why ScopedCorpus sets the scope last."""
    set_label_scope(doc, {"PER", "PROD"})
    (read,) = DocBin(docs=[doc]).get_docs(nlp.vocab)
    assert get_label_scope(read) is None
    assert get_label_scope(doc[0:3].as_doc()) is None


@pytest.mark.parametrize(
    "labels,match",
    [
        ([], "a label scope needs at least one label, got none"),
        ("PER", r"a label scope is a list of labels, got the string 'PER': write \['PER'\]"),
        (["PER", ""], "a label is a non-empty string without spaces, got ''"),
        (["PER", "NEW YORK", 3], "a label is a non-empty string without spaces, got 'NEW YORK', 3"),
        (["PER", "ORG", "PER"], "a label scope names each label once, got 'PER' more than once"),
    ],
)
def test_set_label_scope_refuses_bad_labels(doc, labels, match):
    with pytest.raises(ValueError, match=match):
        set_label_scope(doc, labels)
    assert SCOPE_KEY not in doc.user_data  # nothing half set


@pytest.mark.parametrize("stored", ["PER", [], ("PER", 7)])
def test_get_label_scope_refuses_a_damaged_stored_value(doc, stored):
    doc.user_data[SCOPE_KEY] = stored
    with pytest.raises(ValueError, match=r"doc.user_data\['spacy-imbalance.label_scope'\] holds .*not a label scope"):
        get_label_scope(doc)


def test_scope_problem_names_the_entity_outside_the_scope(doc):
    assert scope_problem(doc, frozenset({"PER", "PROD"})) is None
    assert scope_problem(doc, frozenset({"PER"})) == (
        "the entity 'iPhone' (tokens 3-4, in doc.ents) has the label 'PROD', outside the label scope ['PER']; "
        "add the label to the scope or remove the entity"
    )
    assert scope_problem(doc, frozenset({"ORG"})).endswith("outside the label scope ['ORG'] (and 1 more); add the label to the scope or remove the entity")


def test_scope_problem_reads_the_gold_span_group(nlp):
    doc = Doc(nlp.vocab, words=["Ann", "bought", "an", "iPhone", "."])
    doc.spans["sc"] = SpanGroup(doc, name="sc", spans=[Span(doc, 0, 1, "PER"), Span(doc, 3, 4, "PROD")])
    assert scope_problem(doc, frozenset({"PER"})) is None  # only doc.ents without a key
    assert "'iPhone' (tokens 3-4, in doc.spans['sc']) has the label 'PROD'" in scope_problem(doc, frozenset({"PER"}), "sc")
    assert [(where, s.text) for where, s in out_of_scope_spans(doc, {"PER"}, "sc")] == [("doc.spans['sc']", "iPhone")]


def test_scope_problem_refuses_to_overwrite_another_scope(doc):
    set_label_scope(doc, ["PER", "PROD"])
    assert scope_problem(doc, frozenset({"PER", "PROD"})) is None
    assert scope_problem(doc, frozenset({"PER", "PROD", "ORG"})) == (
        "it already has the label scope ['PER', 'PROD'], not ['ORG', 'PER', 'PROD']"
    )
