"""Spans scored against the hidden entities (spacy_imbalance/audit/validation/matching.py)."""
import pytest

from spacy_imbalance.audit.validation.matching import match_counts, ranking_scores, recall_by_label, selection_scores

TRUTH = [(0, 1, 3, "PER"), (0, 5, 6, "LOC"), (1, 0, 2, "ORG")]
PREDICTED = [(0, 1, 3, "PER"), (0, 5, 6, "ORG"), (0, 7, 9, "LOC"), (1, 1, 2, "ORG")]


@pytest.mark.parametrize(
    "mode,expected",
    [
        # (0,1,3) and (0,5,6) have the true boundaries; (0,5,6) has the wrong label
        ("exact", (2, 2)),
        ("exact_label", (1, 1)),
        # (1,1,2) shares a token with (1,0,2): all three true spans are touched
        ("overlap", (3, 3)),
    ],
)
def test_audit_validation_match_counts(mode, expected):
    assert match_counts(PREDICTED, TRUTH, mode) == expected


def test_audit_validation_selection_scores():
    scores = selection_scores(PREDICTED, TRUTH)
    assert scores["n"] == 4
    assert scores["exact"] == {"p": 2 / 4, "r": 2 / 3}
    assert scores["exact_label"] == {"p": 1 / 4, "r": 1 / 3}
    assert scores["overlap"] == {"p": 3 / 4, "r": 3 / 3}
    empty = selection_scores([], TRUTH)
    assert empty["exact"] == {"p": None, "r": 0.0}


def test_audit_validation_precision_at_k():
    ranked = [(0, 7, 9, "LOC"), (0, 1, 3, "PER"), (1, 1, 2, "ORG"), (0, 5, 6, "LOC")]
    scores = ranking_scores(ranked, TRUTH, 3)
    # top 3: one exact hit; P@k = R@k when k is the number of true spans
    assert scores["k"] == 3 and scores["exact"] == {"p": 1 / 3, "r": 1 / 3}
    assert scores["overlap"] == {"p": 2 / 3, "r": 2 / 3}
    # a ranking shorter than k: the missing places are misses
    short = ranking_scores([(0, 1, 3, "PER")], TRUTH, 3)
    assert short["exact"] == {"p": 1 / 3, "r": 1 / 3}
    assert ranking_scores(ranked, [], 0)["exact"] == {"p": None, "r": None}


def test_audit_validation_recall_by_label():
    found = [(0, 1, 3, "LOC"), (1, 0, 2, "ORG")]  # boundaries count, not the label
    assert recall_by_label(found, TRUTH + [(2, 0, 1, "PER")]) == {"LOC": 0.0, "ORG": 1.0, "PER": 0.5}
