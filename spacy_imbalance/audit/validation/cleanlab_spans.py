"""The optional comparison, cleanlab: label issues among the tokens tagged O,
grouped into spans and ranked most likely missing first. cleanlab is an
optional dependency (the ``cleanlab`` extra)."""
import importlib
import warnings
from typing import Any, Dict, Iterable, List, Sequence, Set, Tuple

from spacy.tokens import Doc
from thinc.types import Floats2d

from .matching import SpanKey

CLEANLAB_EXTRA = "pip install 'spacy-imbalance[cleanlab]'"
# a flagged span of the O tokens: (doc, start, exclusive end, lowest label-quality score)
Flagged = Tuple[int, int, int, float]


def require_cleanlab() -> Tuple[Any, Any]:
    """cleanlab's token-classification ``filter`` and ``rank`` modules; an
    ImportError naming the extra when cleanlab is not installed."""
    try:
        # by name: cleanlab ships no type information, and the modules are used as they come
        return (importlib.import_module("cleanlab.token_classification.filter"),
                importlib.import_module("cleanlab.token_classification.rank"))
    except ImportError:
        raise ImportError(f"--cleanlab compares with cleanlab, which is not installed: {CLEANLAB_EXTRA}") from None


def _runs(tokens: Iterable[int]) -> List[Tuple[int, int]]:
    """Contiguous runs of token indices, as (start, exclusive end), in order."""
    runs: List[Tuple[int, int]] = []
    for j in sorted(tokens):
        if runs and runs[-1][1] == j:
            runs[-1] = (runs[-1][0], j + 1)
        else:
            runs.append((j, j + 1))
    return runs


def group_flagged(
    issues: Iterable[Tuple[int, int]], given: Sequence[Sequence[int]], token_scores: Sequence[Sequence[float]], outside: int = 0
) -> List[Flagged]:
    """Contiguous runs of flagged tokens whose given tag is O, as (doc, start,
    exclusive end, score): the run's lowest label-quality score. Most likely
    missing first (lowest score), then by position."""
    flagged: Dict[int, Set[int]] = {}
    for i, j in issues:
        if given[i][j] == outside:
            flagged.setdefault(int(i), set()).add(int(j))
    spans = [(i, start, end, float(min(token_scores[i][start:end]))) for i, tokens in flagged.items() for start, end in _runs(tokens)]
    return sorted(spans, key=lambda s: (s[3], s[0], s[1]))


def span_label(probs: Floats2d, start: int, end: int, tags: Sequence[str]) -> str:
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


def cleanlab_spans(given: List[List[int]], probs: List[Floats2d], tags: Sequence[str]) -> Tuple[List[Tuple[SpanKey, float]], int]:
    """cleanlab's label issues among the tokens tagged O, as labelled spans
    ranked most likely missing first; and the number of flagged tokens."""
    cl_filter, cl_rank = require_cleanlab()
    docs = [i for i, g in enumerate(given) if len(g)]  # cleanlab takes no empty sentence
    labels, pred_probs = [given[i] for i in docs], [probs[i] for i in docs]
    with warnings.catch_warnings():
        # a class with few given tokens (a rare label's I- tag) is warned about once per class
        warnings.filterwarnings("ignore", message="May not flag all label issues", category=UserWarning)
        issues = cl_filter.find_label_issues(labels, pred_probs)
    _, token_scores = cl_rank.get_label_quality_scores(labels, pred_probs)
    scores = [[float(value) for value in doc_scores] for doc_scores in token_scores]
    spans = [
        ((docs[i], s, e, span_label(pred_probs[i], s, e, tags)), q) for i, s, e, q in group_flagged(issues, labels, scores)
    ]
    return spans, len(issues)


def bio_tags(doc: Doc, tags: List[str]) -> List[int]:
    """The document's entities as BIO tag ids (columns of ``tags``)."""
    index = {tag: i for i, tag in enumerate(tags)}
    ids = [0] * len(doc)
    for ent in doc.ents:
        ids[ent.start] = index[f"B-{ent.label_}"]
        for j in range(ent.start + 1, ent.end):
            ids[j] = index[f"I-{ent.label_}"]
    return ids
