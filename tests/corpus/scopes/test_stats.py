"""The label scopes in ``spacy-imbalance stats`` (issue 47): each scope and
its documents, each type counted in the documents that annotate it, and a
warning for every type some documents leave out. Counted by hand from the
corpus below."""
import json

import pytest
from spacy.tokens import Doc, DocBin, Span, SpanGroup

from spacy_imbalance.corpus.docs_io import write_docbin
from spacy_imbalance.corpus.scopes.scopes import SCOPE_KEY, set_label_scope
from spacy_imbalance.corpus.scopes.stats import ScopedTypeStats, scope_stats
from spacy_imbalance.corpus.stats import corpus_stats

from .._corpus import invoke, plain


@pytest.fixture
def docs(nlp):
    """Four documents, 16 tokens:

    0: PER/ORG scope, 5 tokens, PER "Ann", ORG "Acme Corp" (2 tokens)
    1: PER/ORG scope, 3 tokens, PER "Bob"
    2: PROD/LOC scope, 4 tokens, PROD "iPhone", LOC "Paris"
    3: no scope (every type), 4 tokens, PER "Eve", PROD "Pixel"
    """
    vocab = nlp.vocab
    people = [
        Doc(vocab, words=["Ann", "joined", "Acme", "Corp", "."], ents=["B-PER", "O", "B-ORG", "I-ORG", "O"]),
        Doc(vocab, words=["Bob", "left", "."], ents=["B-PER", "O", "O"]),
    ]
    products = Doc(vocab, words=["An", "iPhone", "in", "Paris"], ents=["O", "B-PROD", "O", "B-LOC"])
    complete = Doc(vocab, words=["Eve", "bought", "a", "Pixel"], ents=["B-PER", "O", "O", "B-PROD"])
    for doc in people:
        set_label_scope(doc, ["PER", "ORG"])
    set_label_scope(products, ["PROD", "LOC"])
    return [*people, products, complete]


def test_scope_stats_count_each_type_where_it_is_annotated(docs):
    s = scope_stats(docs)
    assert s.documents == 4
    assert s.scopes == [(["ORG", "PER"], 2), (None, 1), (["LOC", "PROD"], 1)]
    # PER: docs 0, 1, 3 (12 tokens), 3 mentions; PROD: docs 2, 3 (8 tokens), 2 mentions
    assert s.per_type == {
        "PER": ScopedTypeStats(docs=3, tokens=12, entity_tokens=3, mentions=3, token_pct=pytest.approx(25.0), docs_not_annotating=1),
        "ORG": ScopedTypeStats(docs=3, tokens=12, entity_tokens=2, mentions=1, token_pct=pytest.approx(100 * 2 / 12), docs_not_annotating=1),
        "PROD": ScopedTypeStats(docs=2, tokens=8, entity_tokens=2, mentions=2, token_pct=pytest.approx(25.0), docs_not_annotating=2),
        "LOC": ScopedTypeStats(docs=2, tokens=8, entity_tokens=1, mentions=1, token_pct=pytest.approx(12.5), docs_not_annotating=2),
    }
    assert list(s.per_type) == ["PER", "ORG", "PROD", "LOC"]  # most entity tokens first, then by name
    assert s.outside == []


def test_a_corpus_without_scopes_has_no_scope_statistics(docs):
    for doc in docs:
        doc.user_data.pop(SCOPE_KEY, None)
    assert scope_stats(docs) is None


def test_a_type_only_a_scope_names_is_listed_with_no_mention(nlp):
    doc = Doc(nlp.vocab, words=["Ann", "sings"], ents=["B-PER", "O"])
    set_label_scope(doc, ["PER", "ORG"])
    s = scope_stats([doc])
    assert s.per_type["ORG"] == ScopedTypeStats(docs=1, tokens=2, entity_tokens=0, mentions=0, token_pct=0.0, docs_not_annotating=0)


def test_an_entity_outside_its_scope_is_not_counted_but_named(docs):
    docs[1].ents = [Span(docs[1], 0, 1, "PER"), Span(docs[1], 1, 2, "PROD")]  # contradicts its PER/ORG scope
    s = scope_stats(docs)
    assert s.outside == [(1, "PROD")]
    assert s.per_type["PROD"].mentions == 2


def test_scope_stats_read_the_span_group(docs):
    doc = docs[2]
    doc.spans["sc"] = SpanGroup(doc, name="sc", spans=[Span(doc, 1, 2, "PROD"), Span(doc, 1, 4, "PROD")])
    s = scope_stats(docs, spans_key="sc")
    # overlapping spans of one type: their tokens once (1-3), each span a mention
    assert (s.per_type["PROD"].entity_tokens, s.per_type["PROD"].mentions) == (3, 2)
    # doc.ents are not read: the types of the scopes are listed, with no mention
    assert {label: t.mentions for label, t in s.per_type.items()} == {"PROD": 2, "LOC": 0, "ORG": 0, "PER": 0}


def test_the_stats_command_shows_the_scopes_and_warns_of_each_type_left_out(tmp_path, docs):
    path = tmp_path / "merged.spacy"
    write_docbin(docs, path)
    result = invoke("stats", path)
    assert result.exit_code == 0, result.output
    out = plain(result.output)
    # the corpus statistics as before, over every document
    assert "% entity tokens 50.00" in out  # 8 of 16
    assert "scope documents ORG, PER 2 all types 1 LOC, PROD 1" in out
    assert "Per type, counted only in the documents that annotate it" in out
    assert "PER 3 3 3 25.00" in out and "ORG 3 2 1 16.67" in out
    assert "PROD 2 2 2 25.00" in out and "LOC 2 1 1 12.50" in out
    assert (
        f"{path}: types outside the label scope of some documents: PER (1 of 4 documents), ORG (1 of 4 documents), "
        "PROD (2 of 4 documents), LOC (2 of 4 documents). Those documents do not annotate them, and a component that "
        "ignores label scopes (a naive merge, e.g. spaCy's ner or spancat) learns every such entity in them as "
        '"no entity"' in out
    )


def test_the_stats_command_json_has_the_scopes_and_warns_on_stderr(tmp_path, docs):
    path = tmp_path / "merged.spacy"
    write_docbin(docs, path)
    result = invoke("stats", path, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["tokens"] == 16 and data["per_type"]["PER"]["mentions"] == 3
    scopes = data["label_scopes"]
    assert scopes["documents"] == 4 and scopes["entities_outside_scope"] == 0
    assert scopes["scopes"] == [{"labels": ["ORG", "PER"], "docs": 2}, {"labels": None, "docs": 1}, {"labels": ["LOC", "PROD"], "docs": 1}]
    assert scopes["per_type"]["LOC"] == {
        "docs": 2, "tokens": 8, "entity_tokens": 1, "mentions": 1, "token_pct": 12.5, "docs_not_annotating": 2
    }
    assert f"⚠ {path}: types outside the label scope of some documents: PER (1 of 4 documents)" in result.stderr


def test_the_stats_of_a_corpus_without_scopes_are_as_before(tmp_path, nlp):
    docs = [Doc(nlp.vocab, words=["Ann", "sings"], ents=["B-PER", "O"])]
    path = tmp_path / "plain.spacy"
    write_docbin(docs, path)
    result = invoke("stats", path, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == corpus_stats(docs).to_dict()
    assert "label scopes" not in plain(invoke("stats", path).output)


def test_the_stats_command_names_the_document_of_a_damaged_scope(tmp_path, docs):
    docs[2].user_data[SCOPE_KEY] = "PROD"
    path = tmp_path / "damaged.spacy"
    DocBin(docs=docs, store_user_data=True).to_disk(path)
    result = invoke("stats", path)
    assert result.exit_code == 1
    assert (
        f"{path}: document 3: doc.user_data['spacy-imbalance.label_scope'] holds 'PROD', not a label scope "
        "(a list of labels)" in plain(result.output)
    )


def test_the_stats_command_names_entities_outside_their_scope(tmp_path, docs):
    docs[1].ents = [Span(docs[1], 0, 1, "PER"), Span(docs[1], 1, 2, "PROD")]
    path = tmp_path / "contradicting.spacy"
    write_docbin(docs, path)
    out = plain(invoke("stats", path).output)
    assert (
        f"{path}: 1 annotated entities have a type outside their document's label scope, which they contradict (not "
        "counted above): document 2 ('PROD'); add the type to the scope or remove the entity" in out
    )
