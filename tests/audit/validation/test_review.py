"""The simulated review loop (audit/validation/review.py): the reviewer's
decisions, and what apply-review makes of them."""
import spacy
from spacy.tokens import Span

from spacy_imbalance.audit.validation.review import decision_lines, simulated_review
from spacy_imbalance.review import apply_decisions, read_decisions


def test_the_reviewer_accepts_removed_entities_fixing_them_and_rejects_the_rest():
    truth = [(0, 1, 3, "PER"), (1, 0, 1, "LOC")]
    ranked = [
        (0, 1, 2, "ORG"),  # overlaps the removed PER: accepted as it (boundaries and label fixed)
        (0, 1, 3, "PER"),  # the same entity again: already accepted, skipped
        (1, 2, 3, "LOC"),  # no removed entity: rejected
        (1, 0, 1, "LOC"),  # the removed LOC exactly
        (1, 3, 4, "LOC"),  # beyond k = 4 spans: never read
    ]
    assert simulated_review(ranked, truth, k=4) == [
        ((0, 1, 3, "PER"), "accept"), ((1, 2, 3, "LOC"), "reject"), ((1, 0, 1, "LOC"), "accept"),
    ]


def test_the_decisions_read_back_as_the_review_page_exports_them(tmp_path):
    nlp = spacy.blank("en")
    docs = [nlp("I met Kate Bush today"), nlp("Paris is far away")]
    docs[1].ents = [Span(docs[1], 3, 4, label="LOC")]  # "away": an annotation the review leaves alone
    decisions = [((0, 2, 4, "PER"), "accept"), ((1, 2, 3, "LOC"), "reject"), ((1, 0, 1, "LOC"), "accept")]
    path = tmp_path / "decisions.jsonl"
    path.write_text("\n".join(decision_lines(docs, decisions)) + "\n", encoding="utf8")
    result = apply_decisions(docs, read_decisions(path).decisions, corpus="masked.spacy")
    reviewed = result.docs
    assert [(e.text, e.label_) for e in reviewed[0].ents] == [("Kate Bush", "PER")]
    assert [(e.text, e.label_) for e in reviewed[1].ents] == [("Paris", "LOC"), ("away", "LOC")]
    assert [s.text for s in reviewed[1].spans["incorrect_spans"]] == ["far"]
