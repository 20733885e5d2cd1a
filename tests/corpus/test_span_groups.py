"""Entities taken out of span groups (spacy_imbalance/corpus/span_groups.py)."""
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from spacy_imbalance.corpus.span_groups import drop_from_span_groups, span_key


def test_only_identical_spans_leave_and_skipped_groups_stay_whole():
    doc = Doc(Vocab(), words=["Ann", "of", "Acme", "in", "Rome"])
    doc.spans["sc"] = [Span(doc, 0, 1, "PER"), Span(doc, 2, 3, "ORG")]
    doc.spans["sc"].attrs["source"] = "gold"
    # the same extent with another label, and another extent with the same label: not the removed entity
    doc.spans["other"] = [Span(doc, 0, 1, "ORG"), Span(doc, 0, 2, "PER")]
    doc.spans["masked"] = [Span(doc, 0, 1, "PER")]
    untouched = doc.spans["other"]
    drop_from_span_groups(doc, {span_key(Span(doc, 0, 1, "PER"))}, skip=("masked", None))
    assert [span_key(s) for s in doc.spans["sc"]] == [(2, 3, "ORG")]
    assert doc.spans["sc"].attrs["source"] == "gold"
    assert [span_key(s) for s in doc.spans["other"]] == [(0, 1, "ORG"), (0, 2, "PER")]
    assert doc.spans["other"] is untouched
    assert [span_key(s) for s in doc.spans["masked"]] == [(0, 1, "PER")]
