"""The peer baseline, cleanlab: label issues among the tokens tagged O,
grouped into spans and ranked most likely missing first."""
import warnings
from typing import Any, Dict, Iterable, List, Sequence, Tuple

import numpy

from .matching import SpanKey


def group_flagged(
    issues: Iterable[Tuple[int, int]], given: Sequence[Sequence[int]], token_scores: Sequence[Sequence[float]], outside: int = 0
) -> List[Tuple[int, int, int, float]]:
    """Contiguous runs of flagged tokens whose given tag is O, as (doc, start,
    exclusive end, score): the run's lowest label-quality score. Most likely
    missing first (lowest score), then by position."""
    flagged: Dict[int, set] = {}
    for i, j in issues:
        if given[i][j] == outside:
            flagged.setdefault(int(i), set()).add(int(j))
    spans = []
    for i, tokens in flagged.items():
        ordered = sorted(tokens)
        start = prev = ordered[0]
        for j in ordered[1:] + [None]:
            if j is not None and j == prev + 1:
                prev = j
                continue
            spans.append((i, start, prev + 1, float(min(token_scores[i][start : prev + 1]))))
            if j is not None:
                start = prev = j
    return sorted(spans, key=lambda s: (s[3], s[0], s[1]))


def span_label(probs: numpy.ndarray, start: int, end: int, tags: Sequence[str]) -> str:
    """The label whose B- and I- probabilities sum highest over the span."""
    mass = probs[start:end].sum(axis=0)
    totals: Dict[str, float] = {}
    for tag, value in zip(tags, mass):
        if tag != "O":
            totals[tag[2:]] = totals.get(tag[2:], 0.0) + float(value)
    return max(sorted(totals), key=lambda label: totals[label])


def tag_columns(model_tags: Sequence[str], tags: Sequence[str]) -> List[int]:
    """For each tag of a fold model (BIO or BILUO, its own labels), its
    column among the corpus's BIO ``tags`` (L- adds to I-, U- to B-)."""
    index = {tag: i for i, tag in enumerate(tags)}
    bio = {"O": "O", "B": "B", "U": "B", "I": "I", "L": "I"}
    return [index["O"] if tag == "O" else index[f"{bio[tag[0]]}-{tag[2:]}"] for tag in model_tags]


def import_cleanlab() -> Any:
    try:
        from cleanlab.token_classification import filter as cl_filter, rank as cl_rank
    except ImportError:
        raise SystemExit(
            "The cleanlab baseline needs cleanlab: pip install 'spacy-imbalance[cleanlab]' (the `cleanlab` extra), "
            "or pip install 'cleanlab>=2.6'"
        )
    return cl_filter, cl_rank


def cleanlab_spans(given: List[List[int]], probs: List[numpy.ndarray], tags: Sequence[str]) -> Tuple[List[Tuple[SpanKey, float]], int]:
    """cleanlab's label issues among the tokens tagged O, as labelled spans
    ranked most likely missing first; and the number of flagged tokens."""
    cl_filter, cl_rank = import_cleanlab()
    docs = [i for i, g in enumerate(given) if len(g)]  # cleanlab takes no empty sentence
    labels, pred_probs = [given[i] for i in docs], [probs[i] for i in docs]
    with warnings.catch_warnings():
        # a class with few given tokens (a rare label's I- tag) is warned about once per class
        warnings.filterwarnings("ignore", message="May not flag all label issues", category=UserWarning)
        issues = cl_filter.find_label_issues(labels, pred_probs)
    _, token_scores = cl_rank.get_label_quality_scores(labels, pred_probs)
    scores = [numpy.asarray(s, dtype="float64") for s in token_scores]
    spans = [
        ((docs[i], s, e, span_label(pred_probs[i], s, e, tags)), q) for i, s, e, q in group_flagged(issues, labels, scores)
    ]
    return spans, len(issues)


def bio_tags(doc: Any, tags: List[str]) -> List[int]:
    index = {tag: i for i, tag in enumerate(tags)}
    ids = [0] * len(doc)
    for ent in doc.ents:
        ids[ent.start] = index[f"B-{ent.label_}"]
        for j in range(ent.start + 1, ent.end):
            ids[j] = index[f"I-{ent.label_}"]
    return ids
