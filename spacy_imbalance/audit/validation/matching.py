"""Scoring spans against the hidden entities: precision and recall of a
selection, precision@k of a ranking, with exact boundaries, exact boundaries
and label, or token overlap."""
from collections import Counter
from typing import Any, Dict, List, Optional, Sequence, Tuple

# (doc, start, exclusive end, label)
SpanKey = Tuple[int, int, int, str]


MODES = ("exact", "exact_label", "overlap")


def overlaps(a: SpanKey, b: SpanKey) -> bool:
    """Whether two spans of one document share a token."""
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def _by_doc(spans: Sequence[SpanKey]) -> Dict[int, List[SpanKey]]:
    grouped: Dict[int, List[SpanKey]] = {}
    for span in spans:
        grouped.setdefault(span[0], []).append(span)
    return grouped


def _key(span: SpanKey, mode: str) -> Tuple[object, ...]:
    return span if mode == "exact_label" else span[:3]


def match_counts(predicted: Sequence[SpanKey], truth: Sequence[SpanKey], mode: str) -> Tuple[int, int]:
    """(predicted spans that match a true one, true spans matched by one).
    ``exact``: same document and boundaries; ``exact_label``: and label;
    ``overlap``: at least one token in common (any label)."""
    if mode == "overlap":
        truth_in, predicted_in = _by_doc(truth), _by_doc(predicted)
        hit_pred = sum(any(overlaps(s, t) for t in truth_in.get(s[0], ())) for s in predicted)
        hit_true = sum(any(overlaps(t, s) for s in predicted_in.get(t[0], ())) for t in truth)
        return hit_pred, hit_true
    true_keys = {_key(t, mode) for t in truth}
    pred_keys = {_key(s, mode) for s in predicted}
    return sum(_key(s, mode) in true_keys for s in predicted), sum(_key(t, mode) in pred_keys for t in truth)


def ratio(a: int, b: int) -> Optional[float]:
    return a / b if b else None


def selection_scores(predicted: Sequence[SpanKey], truth: Sequence[SpanKey]) -> Dict[str, Any]:
    """Precision and recall of a selection of spans, per matching mode."""
    scores: Dict[str, Any] = {"n": len(predicted)}
    for mode in MODES:
        hit_pred, hit_true = match_counts(predicted, truth, mode)
        scores[mode] = {"p": ratio(hit_pred, len(predicted)), "r": ratio(hit_true, len(truth))}
    return scores


def ranking_scores(ranked: Sequence[SpanKey], truth: Sequence[SpanKey], k: int) -> Dict[str, Any]:
    """Precision@k and recall@k of the top k of a ranking; a ranking shorter
    than k counts its missing places as misses. With exact matching both are
    hits / k when k is the number of true spans."""
    scores: Dict[str, Any] = {"k": k}
    for mode in MODES:
        hit_pred, hit_true = match_counts(list(ranked[:k]), truth, mode)
        scores[mode] = {"p": ratio(hit_pred, k), "r": ratio(hit_true, len(truth))}
    return scores


def recall_by_label(predicted: Sequence[SpanKey], truth: Sequence[SpanKey]) -> Dict[str, float]:
    """Share of each label's true spans found with exact boundaries."""
    found = {s[:3] for s in predicted}
    totals, hits = Counter(t[3] for t in truth), Counter(t[3] for t in truth if t[:3] in found)
    return {label: hits[label] / n for label, n in sorted(totals.items())}


def method_scores(selected: Sequence[SpanKey], ranked: Sequence[SpanKey], truth: Sequence[SpanKey]) -> Dict[str, Any]:
    """A method's selection (P/R) and ranking (P@k, k = the number hidden)."""
    return {"selected": selection_scores(selected, truth), "at_k": ranking_scores(ranked, truth, len(truth))}
