"""Reviewed span decisions (issue 34): read from our review page, Prodigy,
doccano or Label Studio, and applied to a corpus (``spacy-imbalance
apply-review``)."""
from .apply import REJECTED_KEY, LabelCounts, Matched, Overlaps, ReviewConflict, ReviewResult, apply_decisions, match_decisions
from .decisions import Decision, DecisionFile, DecisionFormat, DecisionFormatError, detect_format, read_decisions
# the review page the audit writes (page.py), and the data it embeds (payload.py)
from .page import review_page
from .payload import ReviewData, review_data

__all__ = [
    "REJECTED_KEY",
    "Decision",
    "DecisionFile",
    "DecisionFormat",
    "DecisionFormatError",
    "LabelCounts",
    "Matched",
    "Overlaps",
    "ReviewConflict",
    "ReviewData",
    "ReviewResult",
    "apply_decisions",
    "detect_format",
    "match_decisions",
    "read_decisions",
    "review_data",
    "review_page",
]
