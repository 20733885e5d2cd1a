"""The page's state read in Python (spacy_imbalance/review/state.py): the
JSONL the review server writes must be the page's own export (the browser
test compares the two); here what a browser cannot easily show."""
from spacy_imbalance.review.payload import review_data
from spacy_imbalance.review.state import check_state, decision_records

from .conftest import make_doc, suspect


def test_decision_records_cut_text_by_code_points():
    # spaCy's offsets count code points: an emoji before the span must not shift it
    doc = make_doc(["I", "\u2764\ufe0f\U0001F600", "Berlin", "today"], [])
    data = review_data([doc], [suspect(0, 2, 3, "LOC", 0.8)], ["LOC", "ORG"])
    state = check_state({"format": 1, "rows": [[0, "a", 1, 2, 3]]}, data)
    (record,) = decision_records(data, state)
    span = record["spans"][0]
    assert record["text"][span["start"] : span["end"]] == "Berlin" and span["label"] == "ORG"
    assert [token["text"] for token in record["tokens"]] == ["I", "\u2764\ufe0f\U0001F600", "Berlin", "today"]
    assert record["meta"]["original"]["label"] == "LOC"


def test_decision_records_keep_review_order_and_skip_undecided_rows():
    docs = [make_doc(["Anna", "in", "Paris"], []), make_doc(["Bob", "at", "Acme"], [])]
    # review order is by probability: Acme (0.9) first, then Paris (0.5), then Bob (0.4)
    data = review_data(docs, [suspect(0, 2, 3, "LOC", 0.5), suspect(1, 2, 3, "ORG", 0.9), suspect(1, 0, 1, "PER", 0.4)], ["LOC", "ORG", "PER"])
    state = check_state({"format": 1, "rows": [[2, "r", 2, 0, 1], [1, "", 0, 1, 3], [0, "i", 1, 2, 3]]}, data)
    records = decision_records(data, state)
    assert [(r["text"], r["answer"], r["spans"][0]["label"]) for r in records] == [
        ("Bob at Acme", "ignore", "ORG"), ("Bob at Acme", "reject", "PER"),
    ]
    assert records[0]["meta"] == {"doc": 1, "score": 0.9} and records[1]["spans"][0]["token_end"] == 0


def test_decision_records_write_scores_as_javascript_does():
    # JSON.stringify writes 1, not 1.0: the server's file is the page's export byte for byte
    import json

    doc = make_doc(["Anna", "in", "Paris"], [])
    data = review_data([doc], [suspect(0, 2, 3, "LOC", 1.0), suspect(0, 0, 1, "PER", 0.25)], ["LOC", "PER"])
    records = decision_records(data, check_state({"format": 1, "rows": [[0, "a", 0, 2, 3], [1, "r", 1, 0, 1]]}, data))
    assert ['"score":1}' in json.dumps(r["meta"], separators=(",", ":")) for r in records] == [True, False]
    assert records[1]["meta"]["score"] == 0.25
