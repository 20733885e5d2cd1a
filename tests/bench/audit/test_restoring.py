"""Restoring the suspects (bench/audit/restoring.py)."""
import pytest
import spacy
from spacy.tokens import Doc, Span

from bench.audit.restoring import recovered_share, restore


def test_audit_validation_recovered_share():
    assert recovered_share(full=0.40, masked=0.30, restored=0.35) == pytest.approx(0.5)
    assert recovered_share(full=0.40, masked=0.30, restored=0.28) == pytest.approx(-0.2)
    assert recovered_share(full=0.30, masked=0.30, restored=0.35) is None  # masking lost nothing


def test_audit_validation_restore_never_overlaps():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["Ann", "met", "Bob", "in", "New", "York", "today"])
    doc.ents = [Span(doc, 0, 1, label="PER")]
    suspects = [
        ((0, 0, 2, "ORG"), 0.9),  # overlaps the kept Ann: skipped
        ((0, 4, 6, "LOC"), 0.8),
        ((0, 5, 7, "LOC"), 0.7),  # overlaps the more probable New York: skipped
        ((0, 2, 3, "PER"), 0.6),
    ]
    restored, n = restore([doc], suspects)
    assert n == 2
    assert [(e.start, e.end, e.label_) for e in restored[0].ents] == [(0, 1, "PER"), (2, 3, "PER"), (4, 6, "LOC")]
    assert [(e.start, e.end) for e in doc.ents] == [(0, 1)]  # the input is not changed
