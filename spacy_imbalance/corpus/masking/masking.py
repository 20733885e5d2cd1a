"""Synthetic unlabeled-entity datasets (Li et al., "Rethinking negative
sampling for unlabeled entity problem in NER", Sec. 2.2): every gold entity
of a well-annotated corpus is discarded with a masking probability p, and its
tokens are then annotated as non-entity, the way an annotator who missed it
would have left them."""
import random
from typing import Iterable, List, Optional, Sequence, Set, Tuple

from spacy.tokens import Doc, Span, SpanGroup

from ..gold_checks import check_no_empty_spans, unreachable_gold
from ..span_groups import SpanKey, drop_from_span_groups, span_key
from ..stats import gold_spans


def check_probability(p: float, name: str = "p") -> None:
    """Raise a ValueError naming the setting unless 0 <= p <= 1."""
    # `not (...)` also rejects NaN, which fails every comparison
    if not (0.0 <= p <= 1.0):
        raise ValueError(f"{name} must be a probability in [0, 1], got {p!r}")


def check_keys(spans_key: Optional[str], masked_key: str) -> None:
    """The masked group must be a group of its own, never the gold."""
    if not masked_key:
        raise ValueError("masked_key must be a non-empty span group name")
    if spans_key == masked_key:
        raise ValueError(
            f"masked_key and spans_key are both {masked_key!r}: the dropped entities "
            "need a span group other than the gold one"
        )


def unmaskable_gold(docs: Sequence[Doc], spans_key: Optional[str], setting: str = "spans_key") -> Optional[str]:
    """Why masking ``docs`` would mask nothing although they have gold to
    mask, or None. Masking would then return the gold unmasked, and a model
    trained on it would pass for one trained with unlabeled entities: a
    ``spans_key`` that no document has, or doc.ents empty (``spans_key``
    None) while a span group holds spans. A corpus without any span has
    nothing to mask, which is no error."""
    problem = unreachable_gold(docs, spans_key, setting)
    return None if problem is None else f"{problem}: masking would mask nothing and leave the gold unmasked"


def mask_entities(
    docs: Iterable[Doc],
    p: float,
    *,
    seed: int = 0,
    spans_key: Optional[str] = None,
    masked_key: str = "masked",
) -> List[Doc]:
    """Drop each gold entity independently with probability p.

    One ``random.Random(seed).random()`` draw per gold entity, in corpus order,
    decides (drop when below p), so the same corpus and seed give the same
    result. A dropped entity is removed from the gold and, as the identical
    span (same start, end and label), from doc.ents and from every other span
    group (e.g. "sc") except ``masked_key``; where it leaves doc.ents its
    tokens become O. It is appended to ``doc.spans[masked_key]``, so masking
    can be nested. No other token or span is changed.

    docs (Iterable[Doc]): gold docs; they are not modified.
    p (float): the masking probability, in [0, 1].
    seed (int): seed of the random draws.
    spans_key (Optional[str]): gold from doc.spans[spans_key] instead of doc.ents.
    masked_key (str): the span group that records the dropped entities.
    RETURNS (List[Doc]): masked copies of the docs, in the same order.
    """
    check_probability(p)
    check_keys(spans_key, masked_key)
    docs = list(docs)
    # Doc.copy fails on a zero-length span with spaCy's E1052, naming no doc
    check_no_empty_spans(docs, "mask_entities")
    rng = random.Random(seed)
    output = []
    for doc in docs:
        doc = doc.copy()
        gold = gold_spans(doc, spans_key)
        # random() is in [0, 1): p=0 drops nothing and p=1 everything
        drop = [rng.random() < p for _ in gold]
        dropped = [span for span, d in zip(gold, drop) if d]
        if dropped:
            kept = [span for span, d in zip(gold, drop) if not d]
            _remove(doc, dropped, kept, spans_key=spans_key, masked_key=masked_key)
        masked = list(doc.spans[masked_key]) if masked_key in doc.spans else []
        attrs = doc.spans[masked_key].attrs if masked_key in doc.spans else {}
        doc.spans[masked_key] = SpanGroup(doc, name=masked_key, attrs=attrs, spans=masked + dropped)
        output.append(doc)
    return output


def _remove(doc: Doc, dropped: List[Span], kept: List[Span], *, spans_key: Optional[str], masked_key: str) -> None:
    """Take the dropped gold spans out of doc.ents and of every span group."""
    # an entity listed twice in the gold, once kept and once dropped, stays
    # wherever else it is: the kept copy still says it is an entity
    gone: Set[SpanKey] = {span_key(span) for span in dropped} - {span_key(span) for span in kept}
    if spans_key is not None:
        group = doc.spans[spans_key]
        doc.spans[spans_key] = SpanGroup(doc, name=spans_key, attrs=group.attrs, spans=kept)
    outside = [span for span in doc.ents if span_key(span) in gone]
    if outside:
        # "unmodified": every other token keeps its annotation, missing included
        doc.set_ents([], outside=outside, default="unmodified")
    drop_from_span_groups(doc, gone, skip=(spans_key, masked_key))


def masking_counts(
    original: Iterable[Doc], masked: Iterable[Doc], *, spans_key: Optional[str] = None
) -> Tuple[int, int]:
    """How many gold entities the original corpus has and how many of them
    mask_entities dropped (counted from the gold, so nested masking does not
    count earlier rounds again).

    original (Iterable[Doc]): the docs given to mask_entities.
    masked (Iterable[Doc]): the docs it returned.
    spans_key (Optional[str]): as given to mask_entities.
    RETURNS (Tuple[int, int]): (number of entities, number dropped).
    """
    n_before = sum(len(gold_spans(doc, spans_key)) for doc in original)
    n_after = sum(len(gold_spans(doc, spans_key)) for doc in masked)
    return n_before, n_before - n_after


def describe_masking(p: float, n_entities: int, n_dropped: int, n_sentences: int) -> str:
    """One line for the reader and the CLI, e.g. ``p=0.5, 1,975 of 3,890
    entities masked (50.8 %) in 1,675 sentences``."""
    pct = 100.0 * n_dropped / n_entities if n_entities else 0.0
    return f"p={p:g}, {n_dropped:,} of {n_entities:,} entities masked ({pct:.1f} %) in {n_sentences:,} sentences"


__all__ = ["mask_entities", "masking_counts", "describe_masking", "check_probability", "unmaskable_gold"]
