"""Registered scorers that add macro-averaged P/R/F to spaCy's micro scores.

Put them in a component's config and select checkpoints by macro-F1::

    [components.ner.scorer]
    @scorers = "spacy-imbalance.ents_macro_scorer.v1"

    [training.score_weights]
    ents_macro_f = 1.0
    ents_f = 0.0
"""
from typing import Any, Callable, Dict, Iterable, Optional

from spacy.training import Example
from spacy.util import registry

from .aggregate import scores_dict
from .counts import ents_counts, spans_counts


def ents_macro_score(
    examples: Iterable[Example], *, gold_key: Optional[str] = None, entities_key: Optional[str] = None, **kwargs: Any
) -> Dict[str, Any]:
    """Score ``doc.ents``: ``ents_p/_r/_f``, ``ents_per_type`` and
    ``ents_macro_p/_r/_f``. ``Pipe.score`` passes the component's cfg: a
    ``gold_key`` there (``sampled_spancat`` trained on ``doc.spans[gold_key]``)
    scores the predicted ents against that group, an ``entities_key`` (the
    component writes its entities there, beside another ner) scores that
    group instead of ``doc.ents``; other settings are ignored."""
    counts = ents_counts(examples, gold_key, entities_key)
    return scores_dict(counts.totals(), counts.labels, "ents")


def spans_macro_score(
    examples: Iterable[Example], *, spans_key: str = "sc", allow_overlap: bool = True, **kwargs: Any
) -> Dict[str, Any]:
    """Score ``doc.spans[spans_key]``: ``spans_<key>_p/_r/_f``,
    ``spans_<key>_per_type`` and ``spans_<key>_macro_p/_r/_f``. ``spans_key``
    and ``allow_overlap`` come from the span categorizer's cfg."""
    counts = spans_counts(examples, spans_key, allow_overlap=allow_overlap)
    return scores_dict(counts.totals(), counts.labels, f"spans_{spans_key}")


@registry.scorers("spacy-imbalance.ents_macro_scorer.v1")
def make_ents_macro_scorer_v1() -> Callable[..., Dict[str, Any]]:
    return ents_macro_score


@registry.scorers("spacy-imbalance.spans_macro_scorer.v1")
def make_spans_macro_scorer_v1() -> Callable[..., Dict[str, Any]]:
    return spans_macro_score
