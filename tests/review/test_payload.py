import pytest

from spacy_imbalance.audit.export import jsonl_records
from spacy_imbalance.review.payload import check_review_data, review_data

from .conftest import LABELS, make_doc, suspect


def phrase(data, record) -> str:
    doc = data["docs"][record["doc"]]
    tokens = doc["tokens"]
    return doc["text"][tokens[record["start"]][0] : tokens[record["end"] - 1][1]]


def test_suspects_come_most_probable_first_with_their_documents(small_corpus):
    docs, result = small_corpus
    data = review_data(docs, result.suspects, result.labels)
    assert [phrase(data, s) for s in data["suspects"]] == ["Berlin", "United Nations", "Acme Corp", "York", "on Friday", "The", "Monday"]
    assert [s["score"] for s in data["suspects"]] == [0.91, 0.85, 0.7, 0.62, 0.58, 0.55, 0.51]
    assert [data["labels"][s["label"]] for s in data["suspects"]] == ["LOC", "LOC", "ORG", "LOC", "DATE", "PER", "DATE"]
    assert data["labels"] == LABELS
    assert [d["index"] for d in data["docs"]] == [0, 1, 2]
    # the tokens suspects.jsonl has, as [start, end, ws]
    for doc, record in zip(data["docs"], jsonl_records(docs, result)):
        assert doc["text"] == record["text"]
        assert [[t["start"], t["end"], int(t["ws"])] for t in record["tokens"]] == [list(t) for t in doc["tokens"]]
    assert data["docs"][0]["ents"] == [{"start": 0, "end": 2, "label": LABELS.index("PER")}]


def test_ties_keep_corpus_order_and_documents_without_suspects_are_left_out():
    docs = [make_doc("a b c".split()), make_doc("d e f".split()), make_doc("g h i".split(), [(0, 1, "GPE")])]
    suspects = [suspect(2, 1, 2, "LOC", 0.6), suspect(2, 0, 1, "LOC", 0.6), suspect(0, 2, 3, "NEW", 0.6)]
    data = review_data(docs, suspects, ["LOC"])
    assert [(data["docs"][s["doc"]]["index"], s["start"]) for s in data["suspects"]] == [(0, 2), (2, 0), (2, 1)]
    assert [d["index"] for d in data["docs"]] == [0, 2]
    # a label only a suspect or a shown entity has can be chosen too
    assert data["labels"] == ["GPE", "LOC", "NEW"]


def test_the_key_names_the_data():
    docs = [make_doc("a b c".split())]
    key = review_data(docs, [suspect(0, 0, 1, "LOC", 0.6)], ["LOC"])["key"]
    assert key == review_data(docs, [suspect(0, 0, 1, "LOC", 0.6)], ["LOC"])["key"]
    assert key != review_data(docs, [suspect(0, 0, 1, "LOC", 0.7)], ["LOC"])["key"]
    assert key != review_data(docs, [suspect(0, 0, 2, "LOC", 0.6)], ["LOC"])["key"]
    assert key != review_data([make_doc("a b d".split())], [suspect(0, 0, 1, "LOC", 0.6)], ["LOC"])["key"]


@pytest.mark.parametrize("doc,start,end", [(0, 2, 4), (0, 1, 1), (1, 0, 1)])
def test_a_suspect_outside_its_document_is_refused(doc, start, end):
    with pytest.raises(ValueError, match="suspect"):
        review_data([make_doc("a b c".split())], [suspect(doc, start, end, "LOC", 0.6)], ["LOC"])


def test_what_the_audit_builds_passes_the_servers_check(small_corpus):
    """check_review_data (what the review server checks at start, issue 43,
    M13) takes every page the audit writes, as built and as read back."""
    import json

    docs, result = small_corpus
    data = review_data(docs, result.suspects, result.labels)
    assert check_review_data(data) is data
    assert check_review_data(json.loads(json.dumps(data))) == json.loads(json.dumps(data))
    with pytest.raises(ValueError, match=r"^its review data's suspects\[0\] has the score nan, not a probability$"):
        check_review_data({**data, "suspects": [{**data["suspects"][0], "score": float("nan")}]})
    with pytest.raises(ValueError, match=r"^its review data is a JSON list, not an object$"):
        check_review_data([])
